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

from ._base import Constraint, compiled_kind
from ._blocks import (body_vector, coincident_gradient, coincident_stiffness, coincident_velocity_product,
                      perpendicular_gradient, perpendicular_stiffness, perpendicular_velocity_product, point_pair)

__all__ = ["FixedJoint"]

_EPS = 2.220446049250313e-16
_PAIRS = ((0, 1), (1, 2), (2, 0))  # rows u_1.w_2, u_2.w_3, u_3.w_1


@dataclasses.dataclass(frozen=True, eq=False)
class FixedJoint(Constraint):
    """A weld: ``body`` keeps the pose relative to ``other`` (or the world) it has at t = 0.

    Parameters
    ----------
    body, point_body, other, other_point
        As for :class:`SphericalJoint`: the point the two share.
    """

    kind = "fixed"
    n_eq = 6

    def _resolve_kind(self, where, origins, R0):
        xa, Ra, xb, Rb = self.frames(origins, R0)
        object.__setattr__(self, "_axes_b", Rb.T @ Ra)  # column k: a's axis k in b's frame at t = 0

    def data(self):
        row = super().data()
        row[6:15] = np.eye(3).ravel()  # a's axes e_1, e_2, e_3 in a's frame, one after the other
        row[15:24] = self._axes_b.T.ravel()
        return row


# The data row: s_a 0:3, s_b 3:6, a's axes 6:15, b's axes 15:24 (three each, one after the other).


def residual(data, k, xa, Ra, xb, Rb, g, floor, r0, s):
    scale = point_pair(xa, Ra, data[k, 0:3], xb, Rb, data[k, 3:6], s[0], s[1], s[2])
    for i in range(3):
        g[r0 + i] = s[2, i]
        floor[r0 + i] = 16.0 * _EPS * scale
    for c in range(3):
        ia, ib = _PAIRS[c]
        body_vector(Ra, data[k, 6 + 3 * ia: 9 + 3 * ia], s[3])
        body_vector(Rb, data[k, 15 + 3 * ib: 18 + 3 * ib], s[4])
        g[r0 + 3 + c] = s[3, 0] * s[4, 0] + s[3, 1] * s[4, 1] + s[3, 2] * s[4, 2]
        floor[r0 + 3 + c] = 16.0 * _EPS


def gradient(data, k, xa, Ra, xb, Rb, Ba, Bb, s):
    point_pair(xa, Ra, data[k, 0:3], xb, Rb, data[k, 3:6], s[0], s[1], s[2])
    coincident_gradient(s[0], s[1], Ba, Bb, 0)
    for c in range(3):
        ia, ib = _PAIRS[c]
        body_vector(Ra, data[k, 6 + 3 * ia: 9 + 3 * ia], s[3])
        body_vector(Rb, data[k, 15 + 3 * ib: 18 + 3 * ib], s[4])
        perpendicular_gradient(s[3], s[4], Ba, Bb, 3 + c)


def stiffness(data, k, xa, Ra, xb, Rb, lam, r0, K, s):
    point_pair(xa, Ra, data[k, 0:3], xb, Rb, data[k, 3:6], s[0], s[1], s[2])
    coincident_stiffness(s[0], s[1], lam, r0, K)
    for c in range(3):
        ia, ib = _PAIRS[c]
        body_vector(Ra, data[k, 6 + 3 * ia: 9 + 3 * ia], s[3])
        body_vector(Rb, data[k, 15 + 3 * ib: 18 + 3 * ib], s[4])
        perpendicular_stiffness(s[3], s[4], lam[r0 + 3 + c], K)


def velocity_product(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s):
    point_pair(xa, Ra, data[k, 0:3], xb, Rb, data[k, 3:6], s[0], s[1], s[2])
    coincident_velocity_product(s[0], wa, s[1], wb, gam, r0)
    for c in range(3):
        ia, ib = _PAIRS[c]
        body_vector(Ra, data[k, 6 + 3 * ia: 9 + 3 * ia], s[3])
        body_vector(Rb, data[k, 15 + 3 * ib: 18 + 3 * ib], s[4])
        gam[r0 + 3 + c] += perpendicular_velocity_product(s[3], wa, s[4], wb)


KIND = compiled_kind("fixed", FixedJoint, residual, gradient, stiffness, velocity_product)
