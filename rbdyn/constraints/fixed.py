r"""The fixed joint (weld): two bodies, or a body and the world, keep their relative pose.

Residual (6 rows): the gap :math:`\mathbf{d}` of a shared point (3 rows, metres) and three
perpendicularity rows (dimensionless) :math:`\mathbf{u}_1\cdot\mathbf{w}_2`,
:math:`\mathbf{u}_2\cdot\mathbf{w}_3`, :math:`\mathbf{u}_3\cdot\mathbf{w}_1` between body *a*'s
axes :math:`\mathbf{u}_k = \Lambda_a\mathbf{e}_k` and the axes :math:`\mathbf{w}_k` of body *b*
that coincide with them at t = 0: for a small relative rotation
:math:`\boldsymbol\delta` the three rows are :math:`\boldsymbol\delta\cdot\mathbf{w}_3`,
:math:`\boldsymbol\delta\cdot\mathbf{w}_1`, :math:`\boldsymbol\delta\cdot\mathbf{w}_2`, so they
lock every relative rotation.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._validate import store
from .base import Constraint, compiled_functions

__all__ = ["FixedJoint"]

_PAIRS = ((0, 1), (1, 2), (2, 0))  # rows u_1.w_2, u_2.w_3, u_3.w_1


# The data row: s_a 0:3, s_b 3:6, a's axes 6:15, b's axes 15:24 (three each, one after the other).
# Scratch rows: the point pair's 0-2, a's axis u in 4, b's axis w in 5.
_U, _W = 4, 5


def _define():
    """The kind's four compiled functions (see :mod:`.base`), defined on first use: the geometry they
    call is compiled code, and importing or listing the kinds needs no compiler."""
    from . import geometry as geo  # (a module in the closure: the compiled functions are cached on disk)

    def residual(data, k, xa, Ra, xb, Rb, g, floor, r0, s):
        scale = geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        for i in range(3):
            g[r0 + i] = s[geo.GAP, i]
            floor[r0 + i] = 16.0 * geo.EPS * scale
        for c in range(3):
            ia, ib = _PAIRS[c]
            geo.body_vector(Ra, data, k, 6 + 3 * ia, s, _U)
            geo.body_vector(Rb, data, k, 15 + 3 * ib, s, _W)
            g[r0 + 3 + c] = s[_U, 0] * s[_W, 0] + s[_U, 1] * s[_W, 1] + s[_U, 2] * s[_W, 2]
            floor[r0 + 3 + c] = 16.0 * geo.EPS

    def gradient(data, k, xa, Ra, xb, Rb, Ba, Bb, s):
        geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        geo.coincident_gradient(s, Ba, Bb, 0)
        for c in range(3):
            ia, ib = _PAIRS[c]
            geo.body_vector(Ra, data, k, 6 + 3 * ia, s, _U)
            geo.body_vector(Rb, data, k, 15 + 3 * ib, s, _W)
            geo.perpendicular_gradient(s, _U, _W, Ba, Bb, 3 + c)

    def stiffness(data, k, xa, Ra, xb, Rb, lam, r0, K, s):
        geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        geo.coincident_stiffness(s, lam, r0, K)
        for c in range(3):
            ia, ib = _PAIRS[c]
            geo.body_vector(Ra, data, k, 6 + 3 * ia, s, _U)
            geo.body_vector(Rb, data, k, 15 + 3 * ib, s, _W)
            geo.perpendicular_stiffness(s, _U, _W, lam[r0 + 3 + c], K)

    def velocity_product(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s):
        geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        geo.coincident_velocity_product(s, wa, wb, gam, r0)
        for c in range(3):
            ia, ib = _PAIRS[c]
            geo.body_vector(Ra, data, k, 6 + 3 * ia, s, _U)
            geo.body_vector(Rb, data, k, 15 + 3 * ib, s, _W)
            gam[r0 + 3 + c] += geo.perpendicular_velocity_product(s, _U, wa, _W, wb)

    return residual, gradient, stiffness, velocity_product


@dataclasses.dataclass(frozen=True, eq=False)
class FixedJoint(Constraint):
    """A weld: ``body`` keeps the pose relative to ``other`` (or the world) it has at t = 0.

    Parameters
    ----------
    body, point_body, other, other_point
        As for :class:`SphericalJoint`: the point the two share.
    """

    #: *a*'s axes in *b*'s frame at t = 0 (column k: axis k), filled in when a system resolves it.
    axes_b: np.ndarray | None = dataclasses.field(default=None, init=False, repr=False)

    kind = "fixed"
    n_eq = 6
    functions = compiled_functions(_define)

    def _resolve_kind(self, where, origins, R0):
        xa, Ra, xb, Rb = self.frames(origins, R0)
        store(self, axes_b=Rb.T @ Ra)

    def data(self):
        row = super().data()
        row[6:15] = np.eye(3).ravel()  # a's axes e_1, e_2, e_3 in a's frame, one after the other
        row[15:24] = self.axes_b.T.ravel()
        return row
