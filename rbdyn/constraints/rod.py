r"""The rigid rod: two points kept at a fixed distance.

Residual (1 row, metres): :math:`\lvert\mathbf{d}\rvert - \ell` with
:math:`\mathbf{d} = \boldsymbol\xi_a - \boldsymbol\xi_b` (:mod:`.geometry`).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .._errors import InputError
from .._validate import store
from .base import Constraint, compiled_functions

__all__ = ["Rod"]


def _define():
    """The kind's four compiled functions (see :mod:`.base`), defined on first use: the geometry they
    call is compiled code, and importing or listing the kinds needs no compiler."""
    from . import geometry as geo  # (a module in the closure: the compiled functions are cached on disk)

    def residual(data, k, xa, Ra, xb, Rb, g, floor, r0, s):
        scale = geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        g[r0] = np.sqrt(s[geo.GAP, 0] * s[geo.GAP, 0] + s[geo.GAP, 1] * s[geo.GAP, 1] + s[geo.GAP, 2] * s[geo.GAP, 2]) - data[k, 6]
        floor[r0] = 16.0 * geo.EPS * (scale + data[k, 6])

    def gradient(data, k, xa, Ra, xb, Rb, Ba, Bb, s):
        geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        geo.rod_direction(s)  # a rod whose ends meet has no direction: zero rows, which the solvers find singular
        geo.distance_gradient(s, Ba, Bb, 0)

    def stiffness(data, k, xa, Ra, xb, Rb, lam, r0, K, s):
        geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        dist = geo.rod_direction(s)
        if dist > 0.0:
            geo.distance_stiffness(s, dist, lam[r0], K)

    def velocity_product(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s):
        geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        dist = geo.rod_direction(s)
        if dist > 0.0:
            gam[r0] += geo.distance_velocity_product(s, va, wa, vb, wb, dist)

    return residual, gradient, stiffness, velocity_product


@dataclasses.dataclass(frozen=True, eq=False)
class Rod(Constraint):
    """A massless rigid rod of fixed ``length`` between two points.

    Residual (1 equation): ``|(x_a + R_a p_a) - (x_b + R_b p_b)| - length``.
    ``other_point`` is the world point of the fixed end when ``other`` is
    None (then required), else a point of ``other`` in its body frame
    (default: its origin). ``length`` defaults to the distance at t = 0.
    """

    length: float | None = None

    kind = "rod"
    placement_key = "length"
    n_eq = 1
    functions = compiled_functions(_define)
    keys = Constraint.keys | {"length"}

    def __post_init__(self):
        super().__post_init__()
        if self.length is not None:
            v = self.length
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise InputError("constraint.rod.length", f"must be a number, got {v!r}")
            try:
                ok = math.isfinite(float(v)) and float(v) > 0 and math.isfinite(1.0 / float(v))
            except OverflowError:
                ok = False
            if not ok:
                raise InputError("constraint.rod.length", f"must be a finite number > 0 with a finite inverse, got {v!r}")
            store(self, length=float(v))

    @classmethod
    def random_keys(cls, rng, to_world):
        # a rod to the world needs its fixed end; a random one is off the body's point
        return {"other_point": rng.normal(size=3)} if to_world else {}

    def _resolve(self, index, where, origins, R0):
        self._bind(index, where)
        if self.other_point is None:
            if self.other is None:
                raise InputError(f"{where}.other_point", "a rod to the world needs the world point of its fixed end")
            # a rod's far end defaults to the other body's origin
            store(self, other_point=np.zeros(3))
        super()._resolve(index, where, origins, R0)

    def _resolve_kind(self, where, origins, R0):
        if self.length is None:
            xa, Ra, xb, Rb = self.frames(origins, R0)
            d = (xa + Ra @ self.point_body) - (xb + Rb @ self.other_point)
            if np.linalg.norm(d) <= 1e-9 * (1.0 + np.max(np.abs(origins))):
                raise InputError(f"{where}.length", "the rod's end points coincide at t = 0: give a length > 0")
            store(self, length=float(np.linalg.norm(d)))

    def data(self):
        row = super().data()
        row[6] = self.length
        return row

    def size(self, x, R):
        return super().size(x, R) + self.length

    @classmethod
    def _number_keys(cls):
        return ("length",)
