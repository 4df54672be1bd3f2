r"""The revolute joint (hinge): two bodies share a point and an axis; the world can be one of them.

Residual (5 rows): the gap :math:`\mathbf{d} = \boldsymbol\xi_a - \boldsymbol\xi_b` of the shared
point (3 rows, metres) and :math:`\mathbf{u}\cdot\mathbf{w}_1`, :math:`\mathbf{u}\cdot\mathbf{w}_2`
(2 rows, dimensionless), with :math:`\mathbf{u} = \Lambda_a\mathbf{e}_a` the hinge axis of body *a*
and :math:`\mathbf{w}_{1,2} = \Lambda_b\mathbf{e}_{b,1,2}` two directions of body *b*
perpendicular to its axis: the axes stay parallel and the bodies turn freely about them.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .base import AxisPair, compiled_functions, perpendicular_basis

__all__ = ["RevoluteJoint"]


# The data row: s_a 0:3, s_b 3:6, e_a 6:9, e_b1 9:12, e_b2 12:15. Scratch rows: the point pair's
# 0-2, the axis u of a in 4, a direction w of b in 5.
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
        geo.body_vector(Ra, data, k, 6, s, _U)
        for c in range(2):
            geo.body_vector(Rb, data, k, 9 + 3 * c, s, _W)
            g[r0 + 3 + c] = s[_U, 0] * s[_W, 0] + s[_U, 1] * s[_W, 1] + s[_U, 2] * s[_W, 2]
            floor[r0 + 3 + c] = 16.0 * geo.EPS

    def gradient(data, k, xa, Ra, xb, Rb, Ba, Bb, s):
        geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        geo.coincident_gradient(s, Ba, Bb, 0)
        geo.body_vector(Ra, data, k, 6, s, _U)
        for c in range(2):
            geo.body_vector(Rb, data, k, 9 + 3 * c, s, _W)
            geo.perpendicular_gradient(s, _U, _W, Ba, Bb, 3 + c)

    def stiffness(data, k, xa, Ra, xb, Rb, lam, r0, K, s):
        geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        geo.coincident_stiffness(s, lam, r0, K)
        geo.body_vector(Ra, data, k, 6, s, _U)
        for c in range(2):
            geo.body_vector(Rb, data, k, 9 + 3 * c, s, _W)
            geo.perpendicular_stiffness(s, _U, _W, lam[r0 + 3 + c], K)

    def velocity_product(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s):
        geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        geo.coincident_velocity_product(s, wa, wb, gam, r0)
        geo.body_vector(Ra, data, k, 6, s, _U)
        for c in range(2):
            geo.body_vector(Rb, data, k, 9 + 3 * c, s, _W)
            gam[r0 + 3 + c] += geo.perpendicular_velocity_product(s, _U, wa, _W, wb)

    return residual, gradient, stiffness, velocity_product


@dataclasses.dataclass(frozen=True, eq=False)
class RevoluteJoint(AxisPair):
    """A hinge: a point and an axis of ``body`` kept on a point and an axis of ``other`` (or the world).

    Parameters
    ----------
    body, point_body, other, other_point
        As for :class:`SphericalJoint`: the shared point.
    axis_body : array_like, (3,)
        The hinge axis in *a*'s body frame (default the body's z axis); normalised.
    other_axis : array_like, (3,), optional
        The axis in *b*'s body frame (or in the world); by default where *a*'s axis points
        at t = 0. The two must be parallel at t = 0.
    """

    kind = "revolute"
    n_eq = 5
    functions = compiled_functions(_define)

    def data(self):
        row = super().data()
        row[6:9] = self.axis_body
        b1, b2 = perpendicular_basis(self.other_axis)
        row[9:12] = b1
        row[12:15] = b2
        return row
