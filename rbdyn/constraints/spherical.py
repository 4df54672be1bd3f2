r"""The spherical joint: a point of one body held at a point of another body or of the world.

Residual (3 rows, metres): :math:`\mathbf{d} = \boldsymbol\xi_a - \boldsymbol\xi_b`, with
:math:`\boldsymbol\xi = \mathbf{x} + \Lambda\mathbf{s}` the two points (:mod:`._blocks`).
"""

from __future__ import annotations

import dataclasses

from ._base import Constraint, compiled_kind
from ._blocks import coincident_gradient, coincident_stiffness, coincident_velocity_product, point_pair

__all__ = ["SphericalJoint"]

_EPS = 2.220446049250313e-16


@dataclasses.dataclass(frozen=True, eq=False)
class SphericalJoint(Constraint):
    """A body point kept at a fixed world point or at a point of ``other``.

    Residual (3 equations): ``(x_a + R_a p_a) - (x_b + R_b p_b)``, or minus the
    world point ``other_point`` when ``other`` is None. With ``other_point``
    omitted the joint holds the points where they are at t = 0.
    """

    kind = "spherical"
    n_eq = 3


def residual(data, k, xa, Ra, xb, Rb, g, floor, r0, s):
    scale = point_pair(xa, Ra, data[k, 0:3], xb, Rb, data[k, 3:6], s[0], s[1], s[2])
    for i in range(3):
        g[r0 + i] = s[2, i]
        floor[r0 + i] = 16.0 * _EPS * scale


def gradient(data, k, xa, Ra, xb, Rb, Ba, Bb, s):
    point_pair(xa, Ra, data[k, 0:3], xb, Rb, data[k, 3:6], s[0], s[1], s[2])
    coincident_gradient(s[0], s[1], Ba, Bb, 0)


def stiffness(data, k, xa, Ra, xb, Rb, lam, r0, K, s):
    point_pair(xa, Ra, data[k, 0:3], xb, Rb, data[k, 3:6], s[0], s[1], s[2])
    coincident_stiffness(s[0], s[1], lam, r0, K)


def velocity_product(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s):
    point_pair(xa, Ra, data[k, 0:3], xb, Rb, data[k, 3:6], s[0], s[1], s[2])
    coincident_velocity_product(s[0], wa, s[1], wb, gam, r0)


KIND = compiled_kind("spherical", SphericalJoint, residual, gradient, stiffness, velocity_product)
