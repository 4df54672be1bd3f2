r"""The spherical joint: a point of one body held at a point of another body or of the world.

Residual (3 rows, metres): :math:`\mathbf{d} = \boldsymbol\xi_a - \boldsymbol\xi_b`, with
:math:`\boldsymbol\xi = \mathbf{x} + \Lambda\mathbf{s}` the two points (:mod:`.geometry`).
"""

from __future__ import annotations

import dataclasses

from .base import Constraint, compiled_functions

__all__ = ["SphericalJoint"]


def _define():
    """The kind's four compiled functions (see :mod:`.base`), defined on first use: the geometry they
    call is compiled code, and importing or listing the kinds needs no compiler."""
    from . import geometry as geo  # (a module in the closure: the compiled functions are cached on disk)

    def residual(data, k, xa, Ra, xb, Rb, g, floor, r0, s):
        scale = geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        for i in range(3):
            g[r0 + i] = s[geo.GAP, i]
            floor[r0 + i] = 16.0 * geo.EPS * scale

    def gradient(data, k, xa, Ra, xb, Rb, Ba, Bb, s):
        geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        geo.coincident_gradient(s, Ba, Bb, 0)

    def stiffness(data, k, xa, Ra, xb, Rb, lam, r0, K, s):
        geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        geo.coincident_stiffness(s, lam, r0, K)

    def velocity_product(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s):
        geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        geo.coincident_velocity_product(s, wa, wb, gam, r0)

    return residual, gradient, stiffness, velocity_product


@dataclasses.dataclass(frozen=True, eq=False)
class SphericalJoint(Constraint):
    """A body point kept at a fixed world point or at a point of ``other``.

    Residual (3 equations): ``(x_a + R_a p_a) - (x_b + R_b p_b)``, or minus the
    world point ``other_point`` when ``other`` is None. With ``other_point``
    omitted the joint holds the points where they are at t = 0.
    """

    kind = "spherical"
    n_eq = 3
    functions = compiled_functions(_define)
