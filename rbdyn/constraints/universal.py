r"""The universal joint (Cardan joint): two bodies share a point, and an axis fixed in one stays
perpendicular to an axis fixed in the other; the world can be one of them.

Residual (4 rows): the gap :math:`\mathbf{d} = \boldsymbol\xi_a - \boldsymbol\xi_b` of the shared
point (3 rows, metres) and :math:`\mathbf{u}\cdot\mathbf{w}` (1 row, dimensionless), with
:math:`\mathbf{u} = \Lambda_a\mathbf{e}_a` the cross's arm fixed in body *a* and
:math:`\mathbf{w} = \Lambda_b\mathbf{e}_b` its arm fixed in body *b*: the bodies turn freely about
the two arms and about nothing else (two relative rotations, no relative translation).

References
----------
* P. E. Nikravesh, *Computer-Aided Analysis of Mechanical Systems*, Prentice Hall, 1988,
  ch. 11 (the universal joint as a spherical joint and one perpendicularity condition).
"""

from __future__ import annotations

import dataclasses

from .base import AxisPair, compiled_functions

__all__ = ["UniversalJoint"]


# The data row: s_a 0:3, s_b 3:6, e_a 6:9, e_b 9:12. Scratch rows: the point pair's 0-2, the arm u
# of a in 4, the arm w of b in 5.
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
        geo.body_vector(Rb, data, k, 9, s, _W)
        g[r0 + 3] = s[_U, 0] * s[_W, 0] + s[_U, 1] * s[_W, 1] + s[_U, 2] * s[_W, 2]
        floor[r0 + 3] = 16.0 * geo.EPS

    def gradient(data, k, xa, Ra, xb, Rb, Ba, Bb, s):
        geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        geo.coincident_gradient(s, Ba, Bb, 0)
        geo.body_vector(Ra, data, k, 6, s, _U)
        geo.body_vector(Rb, data, k, 9, s, _W)
        geo.perpendicular_gradient(s, _U, _W, Ba, Bb, 3)

    def stiffness(data, k, xa, Ra, xb, Rb, lam, r0, K, s):
        geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        geo.coincident_stiffness(s, lam, r0, K)
        geo.body_vector(Ra, data, k, 6, s, _U)
        geo.body_vector(Rb, data, k, 9, s, _W)
        geo.perpendicular_stiffness(s, _U, _W, lam[r0 + 3], K)

    def velocity_product(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s):
        geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        geo.coincident_velocity_product(s, wa, wb, gam, r0)
        geo.body_vector(Ra, data, k, 6, s, _U)
        geo.body_vector(Rb, data, k, 9, s, _W)
        gam[r0 + 3] += geo.perpendicular_velocity_product(s, _U, wa, _W, wb)

    return residual, gradient, stiffness, velocity_product


@dataclasses.dataclass(frozen=True, eq=False)
class UniversalJoint(AxisPair):
    """A universal (Cardan) joint: a shared point, and an arm of each body kept perpendicular.

    A point of ``body`` is kept on a point of ``other`` (or of the world), and an arm of the cross
    fixed in ``body`` perpendicular to an arm fixed in ``other``.

    Residual (4 equations): the gap of the two points (3 rows, as :class:`SphericalJoint`) and
    ``(R_a e_a) . (R_b e_b)`` (1 row). The bodies keep two relative rotations, about the two arms.

    Parameters
    ----------
    body, point_body, other, other_point
        As for :class:`SphericalJoint`: the joint's centre.
    axis_body : array_like, (3,)
        The arm fixed in *a*, in *a*'s body frame (default the body's z axis); normalised.
    other_axis : array_like, (3,), optional
        The arm fixed in *b*, in *b*'s body frame (or in the world); must be perpendicular to
        ``axis_body`` at t = 0. By default a direction perpendicular to it at t = 0: the image of
        ``axis_body x c`` with ``c`` the axis of *a*'s frame least aligned with ``axis_body``.

    References
    ----------
    * P. E. Nikravesh, *Computer-Aided Analysis of Mechanical Systems*, Prentice Hall, 1988,
      ch. 11.
    """

    kind = "universal"
    n_eq = 4
    functions = compiled_functions(_define)
    parallel = False

    def data(self):
        row = super().data()
        row[6:9] = self.axis_body
        row[9:12] = self.other_axis
        return row
