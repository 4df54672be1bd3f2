"""Compiled pieces every scheme family's step shares."""

from __future__ import annotations

import numpy as np

from .._compile import njit_inline

__all__ = ["finite", "row_finite"]


@njit_inline
def finite(x, R, v, W):
    """True when no entry of one body's state (3-vectors ``x``, ``v``, ``W`` and the 3x3 ``R``,
    values as in :mod:`rbdyn.so3`) is nan or inf."""
    s = x[0] + x[1] + x[2] + v[0] + v[1] + v[2] + W[0] + W[1] + W[2]
    s += R[0] + R[1] + R[2]
    s += R[3] + R[4] + R[5]
    s += R[6] + R[7] + R[8]
    return np.isfinite(s)


@njit_inline
def row_finite(i, x, R, v, W):
    """:func:`finite` of body ``i``'s rows of the state arrays (the same sum in the same order)."""
    s = x[i, 0] + x[i, 1] + x[i, 2] + v[i, 0] + v[i, 1] + v[i, 2] + W[i, 0] + W[i, 1] + W[i, 2]
    for a in range(3):
        s += R[i, a, 0] + R[i, a, 1] + R[i, a, 2]
    return np.isfinite(s)
