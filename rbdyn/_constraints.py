r"""Constraint data for the compiled kernels, and the geometry they share.

A constraint ties a point of body ``a`` (``point_body``, body frame,
relative to the body origin) to a point of body ``b`` or to a fixed world
point. :attr:`rbdyn.System.model` carries them as a :class:`Constraints`
named tuple:

==============  =============================================
field           content
==============  =============================================
``kind``        (nc,) int: ``KIND_SPHERICAL`` or ``KIND_ROD``
``body``        (nc, 2) int: bodies ``a``, ``b`` (-1: world)
``point``       (nc, 2, 3): body-frame points (world point for ``b = -1``)
``length``      (nc,): rod length (0 for a joint)
``row``         (nc + 1,) int: first residual row of each
``c_bodies``    int: bodies in at least one constraint
``u_bodies``    int: the other bodies
==============  =============================================

Residuals (position level, metres): a spherical joint has the three
components of the gap :math:`d = p_a - p_b`, a rod the single
:math:`|d| - \ell`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._jit import njit_inline

KIND_SPHERICAL = 0
KIND_ROD = 1


class Constraints(NamedTuple):
    kind: np.ndarray
    body: np.ndarray
    point: np.ndarray
    length: np.ndarray
    row: np.ndarray
    c_bodies: np.ndarray
    u_bodies: np.ndarray

_EPS = 2.220446049250313e-16


def pack_constraints(constraints, n_bodies: int) -> Constraints:
    """The :class:`Constraints` of a system from its resolved constraints."""
    nc = len(constraints)
    kind = np.zeros(nc, dtype=np.int64)
    body = np.full((nc, 2), -1, dtype=np.int64)
    point = np.zeros((nc, 2, 3))
    length = np.zeros(nc)
    row = np.zeros(nc + 1, dtype=np.int64)
    for k, c in enumerate(constraints):
        kind[k] = KIND_ROD if c.kind == "rod" else KIND_SPHERICAL
        body[k] = (c._i, c._j)
        point[k, 0] = c.point_body
        point[k, 1] = c.other_point
        length[k] = c.length if c.kind == "rod" else 0.0
        row[k + 1] = row[k] + c.n_eq
    involved = np.zeros(n_bodies, dtype=bool)
    involved[body[body >= 0]] = True
    c_bodies = np.flatnonzero(involved).astype(np.int64)
    u_bodies = np.flatnonzero(~involved).astype(np.int64)
    return Constraints(kind, body, point, length, row, c_bodies, u_bodies)


@njit_inline
def point_into(x, R, i, p, out):
    """``out = x[i] + R[i] p`` (world point of body ``i``), or ``p`` for ``i = -1``."""
    if i < 0:
        out[0], out[1], out[2] = p[0], p[1], p[2]
    else:
        Ri = R[i]
        for r in range(3):
            out[r] = x[i, r] + (Ri[r, 0] * p[0] + Ri[r, 1] * p[1] + Ri[r, 2] * p[2])


@njit_inline
def gap_into(model, x, R, k, pa, pb, d):
    """End points ``pa``, ``pb`` (world) of constraint ``k`` and ``d = pa - pb``; returns |d|."""
    body, point = model.constraints.body, model.constraints.point
    point_into(x, R, body[k, 0], point[k, 0], pa)
    point_into(x, R, body[k, 1], point[k, 1], pb)
    for r in range(3):
        d[r] = pa[r] - pb[r]
    return np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])


@njit_inline
def residuals_into(model, x, R, g, tol_floor, pa, pb, d):
    """Every residual into ``g`` and, into ``tol_floor``, the smallest error
    float64 can resolve for it (16 ulp of the coordinates involved)."""
    kind, length, row = model.constraints.kind, model.constraints.length, model.constraints.row
    for k in range(kind.shape[0]):
        dist = gap_into(model, x, R, k, pa, pb, d)
        scale = 0.0
        for r in range(3):
            scale = max(scale, abs(pa[r]), abs(pb[r]))
        r0 = row[k]
        if kind[k] == KIND_ROD:
            g[r0] = dist - length[k]
            tol_floor[r0] = 16.0 * _EPS * (scale + length[k])
        else:
            for r in range(3):
                g[r0 + r] = d[r]
                tol_floor[r0 + r] = 16.0 * _EPS * scale


@njit_inline
def lu_solve_inplace(K, b, pivot_tol):
    """Solve ``K y = b`` by Gaussian elimination with partial pivoting.

    ``K`` and ``b`` are overwritten (``b`` by the solution). Returns False,
    leaving them garbage, when a pivot is below ``pivot_tol`` times the
    largest entry of ``K`` (a singular or numerically rank-deficient system).
    """
    n = b.shape[0]
    big = 0.0
    for i in range(n):
        for j in range(n):
            big = max(big, abs(K[i, j]))
    if not big > 0.0:
        return False
    for col in range(n):
        p = col
        for i in range(col + 1, n):
            if abs(K[i, col]) > abs(K[p, col]):
                p = i
        if not abs(K[p, col]) > pivot_tol * big:
            return False
        if p != col:
            for j in range(n):
                K[col, j], K[p, j] = K[p, j], K[col, j]
            b[col], b[p] = b[p], b[col]
        for i in range(col + 1, n):
            f = K[i, col] / K[col, col]
            if f != 0.0:
                for j in range(col, n):
                    K[i, j] -= f * K[col, j]
                b[i] -= f * b[col]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= K[i, j] * b[j]
        b[i] = s / K[i, i]
    return True
