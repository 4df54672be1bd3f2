r"""The prismatic joint (slider): a body slides along an axis of another body, or of the world,
without turning relative to it.

Residual (5 rows): two **point-on-line** rows (metres)
:math:`\mathbf{d}\cdot\mathbf{w}_1`, :math:`\mathbf{d}\cdot\mathbf{w}_2`, with
:math:`\mathbf{d} = \boldsymbol\xi_a - \boldsymbol\xi_b` the gap of a point of *a* from a point of
the line of *b* and :math:`\mathbf{w}_{1,2} = \Lambda_b\mathbf{k}_{1,2}` two directions of *b*
perpendicular to the slide axis :math:`\mathbf{e}_b` and to each other: the point of *a* stays on
the line; and three perpendicularity rows (dimensionless)
:math:`(\Lambda_a\mathbf{p}_1)\cdot(\Lambda_b\mathbf{k}_2)`,
:math:`(\Lambda_a\mathbf{p}_2)\cdot(\Lambda_b\mathbf{e}_b)`,
:math:`(\Lambda_a\mathbf{p}_3)\cdot(\Lambda_b\mathbf{k}_1)`, with
:math:`\mathbf{p}_{1,2,3}` the directions of *a* that coincide at t = 0 with
:math:`\mathbf{k}_1, \mathbf{k}_2, \mathbf{e}_b`: for a small relative rotation
:math:`\boldsymbol\delta` they are :math:`\boldsymbol\delta\cdot\Lambda_b\mathbf{e}_b`,
:math:`\boldsymbol\delta\cdot\Lambda_b\mathbf{k}_1`, :math:`\boldsymbol\delta\cdot\Lambda_b\mathbf{k}_2`
and lock every relative rotation (as in the fixed joint).

A point-on-line row :math:`g = \mathbf{d}\cdot\mathbf{w}` is the one row here that the geometry
module does not hold, written out below: with :math:`\mathbf{r}_a = \Lambda_a\mathbf{s}_a` and
:math:`\mathbf{p} = \boldsymbol\xi_a - \mathbf{x}_b` (the arm from *b*'s origin to *a*'s point),

* gradient: :math:`\mathbf{B}_a = [\mathbf{w}^T, (\mathbf{r}_a\times\mathbf{w})^T]`,
  :math:`\mathbf{B}_b = [-\mathbf{w}^T, (\mathbf{w}\times\mathbf{p})^T]` (the direction turns with
  *b*: :math:`\delta\mathbf{w} = \delta\boldsymbol\theta_b\times\mathbf{w}`);
* stiffness, for a multiplier :math:`\lambda`: the force :math:`\lambda\mathbf{w}` on *a* and
  :math:`-\lambda\mathbf{w}` on *b* turn with *b* (:math:`\mp\lambda\hat{\mathbf{w}}`), the moment
  :math:`\lambda\mathbf{r}_a\times\mathbf{w}` turns with both bodies
  (:math:`\lambda\hat{\mathbf{w}}\hat{\mathbf{r}}_a`, :math:`-\lambda\hat{\mathbf{r}}_a\hat{\mathbf{w}}`)
  and the moment :math:`\lambda\mathbf{w}\times\mathbf{p}` with the motion of both
  (:math:`\lambda\hat{\mathbf{w}}[I, -\hat{\mathbf{r}}_a, -I]` and
  :math:`\lambda\hat{\mathbf{p}}\hat{\mathbf{w}}`);
* velocity product: :math:`\mathbf{w}\cdot(\boldsymbol\omega_a\times(\boldsymbol\omega_a\times\mathbf{r}_a)
  - \boldsymbol\omega_b\times(\boldsymbol\omega_b\times\mathbf{r}_b))
  + 2\dot{\mathbf{d}}\cdot(\boldsymbol\omega_b\times\mathbf{w})
  + \mathbf{d}\cdot(\boldsymbol\omega_b\times(\boldsymbol\omega_b\times\mathbf{w}))`.

References
----------
* P. E. Nikravesh, *Computer-Aided Analysis of Mechanical Systems*, Prentice Hall, 1988,
  ch. 11 (the translational joint as parallelism and perpendicularity conditions).
* M. Géradin, A. Cardona, *Flexible Multibody Dynamics: A Finite Element Approach*, Wiley,
  2001, ch. 5.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._validate import store
from .base import AxisPair, compiled_functions, perpendicular_basis

__all__ = ["PrismaticJoint"]

# The data row: s_a 0:3, s_b 3:6; a's directions p_1, p_2, p_3 at 6:9, 9:12, 12:15; b's k_1, k_2,
# e_b at 15:18, 18:21, 21:24. Scratch rows: the point pair's 0-2, a's direction u in 4, b's
# direction w in 5.
_U, _W = 4, 5
_PAIRS = ((0, 1), (1, 2), (2, 0))  # rows p_1.k_2, p_2.e_b, p_3.k_1 (b's directions k_1, k_2, e_b: 0, 1, 2)


def _define():
    """The kind's four compiled functions (see :mod:`.base`), defined on first use: the geometry they
    call is compiled code, and importing or listing the kinds needs no compiler."""
    from . import geometry as geo  # (a module in the closure: the compiled functions are cached on disk)

    def residual(data, k, xa, Ra, xb, Rb, g, floor, r0, s):
        scale = geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        for c in range(2):  # the point on the line
            geo.body_vector(Rb, data, k, 15 + 3 * c, s, _W)
            g[r0 + c] = s[geo.GAP, 0] * s[_W, 0] + s[geo.GAP, 1] * s[_W, 1] + s[geo.GAP, 2] * s[_W, 2]
            floor[r0 + c] = 16.0 * geo.EPS * scale
        for c in range(3):  # no relative rotation
            ia, ib = _PAIRS[c]
            geo.body_vector(Ra, data, k, 6 + 3 * ia, s, _U)
            geo.body_vector(Rb, data, k, 15 + 3 * ib, s, _W)
            g[r0 + 2 + c] = s[_U, 0] * s[_W, 0] + s[_U, 1] * s[_W, 1] + s[_U, 2] * s[_W, 2]
            floor[r0 + 2 + c] = 16.0 * geo.EPS

    def gradient(data, k, xa, Ra, xb, Rb, Ba, Bb, s):
        geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        for c in range(2):
            geo.body_vector(Rb, data, k, 15 + 3 * c, s, _W)
            w0, w1, w2 = s[_W, 0], s[_W, 1], s[_W, 2]
            r0_, r1_, r2_ = s[geo.ARM_A, 0], s[geo.ARM_A, 1], s[geo.ARM_A, 2]
            # p = xi_a - x_b = d + r_b
            p0 = s[geo.GAP, 0] + s[geo.ARM_B, 0]
            p1 = s[geo.GAP, 1] + s[geo.ARM_B, 1]
            p2 = s[geo.GAP, 2] + s[geo.ARM_B, 2]
            Ba[c, 0], Ba[c, 1], Ba[c, 2] = w0, w1, w2
            Ba[c, 3] = r1_ * w2 - r2_ * w1
            Ba[c, 4] = r2_ * w0 - r0_ * w2
            Ba[c, 5] = r0_ * w1 - r1_ * w0
            Bb[c, 0], Bb[c, 1], Bb[c, 2] = -w0, -w1, -w2
            Bb[c, 3] = w1 * p2 - w2 * p1
            Bb[c, 4] = w2 * p0 - w0 * p2
            Bb[c, 5] = w0 * p1 - w1 * p0
        for c in range(3):
            ia, ib = _PAIRS[c]
            geo.body_vector(Ra, data, k, 6 + 3 * ia, s, _U)
            geo.body_vector(Rb, data, k, 15 + 3 * ib, s, _W)
            geo.perpendicular_gradient(s, _U, _W, Ba, Bb, 2 + c)

    def stiffness(data, k, xa, Ra, xb, Rb, lam, r0, K, s):
        geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        ra0, ra1, ra2 = s[geo.ARM_A, 0], s[geo.ARM_A, 1], s[geo.ARM_A, 2]
        p0 = s[geo.GAP, 0] + s[geo.ARM_B, 0]
        p1 = s[geo.GAP, 1] + s[geo.ARM_B, 1]
        p2 = s[geo.GAP, 2] + s[geo.ARM_B, 2]
        for c in range(2):
            geo.body_vector(Rb, data, k, 15 + 3 * c, s, _W)
            w0, w1, w2 = s[_W, 0], s[_W, 1], s[_W, 2]
            lc = lam[r0 + c]
            # rows (x_a, th_a, x_b, th_b) = (0, 3, 6, 9) of the reaction, columns likewise
            geo._hat_into(w0, w1, w2, K, -lc, 0, 9)                        # force on a: lam w
            geo._hat_hat_into(w0, w1, w2, ra0, ra1, ra2, K, lc, 3, 3)      # moment on a: lam r_a x w
            geo._hat_hat_into(ra0, ra1, ra2, w0, w1, w2, K, -lc, 3, 9)
            geo._hat_into(w0, w1, w2, K, lc, 6, 9)                         # force on b: -lam w
            geo._hat_into(w0, w1, w2, K, lc, 9, 0)                         # moment on b: lam w x p
            geo._hat_hat_into(w0, w1, w2, ra0, ra1, ra2, K, -lc, 9, 3)
            geo._hat_into(w0, w1, w2, K, -lc, 9, 6)
            geo._hat_hat_into(p0, p1, p2, w0, w1, w2, K, lc, 9, 9)
        for c in range(3):
            ia, ib = _PAIRS[c]
            geo.body_vector(Ra, data, k, 6 + 3 * ia, s, _U)
            geo.body_vector(Rb, data, k, 15 + 3 * ib, s, _W)
            geo.perpendicular_stiffness(s, _U, _W, lam[r0 + 2 + c], K)

    def velocity_product(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s):
        geo.point_pair(xa, Ra, xb, Rb, data, k, s)
        ra0, ra1, ra2 = s[geo.ARM_A, 0], s[geo.ARM_A, 1], s[geo.ARM_A, 2]
        rb0, rb1, rb2 = s[geo.ARM_B, 0], s[geo.ARM_B, 1], s[geo.ARM_B, 2]
        # d'' at zero accelerations: wa x (wa x ra) - wb x (wb x rb)
        a0, a1, a2 = geo._centripetal(wa[0], wa[1], wa[2], ra0, ra1, ra2)
        b0, b1, b2 = geo._centripetal(wb[0], wb[1], wb[2], rb0, rb1, rb2)
        # d' = (va + wa x ra) - (vb + wb x rb)
        dd0 = (va[0] + (wa[1] * ra2 - wa[2] * ra1)) - (vb[0] + (wb[1] * rb2 - wb[2] * rb1))
        dd1 = (va[1] + (wa[2] * ra0 - wa[0] * ra2)) - (vb[1] + (wb[2] * rb0 - wb[0] * rb2))
        dd2 = (va[2] + (wa[0] * ra1 - wa[1] * ra0)) - (vb[2] + (wb[0] * rb1 - wb[1] * rb0))
        for c in range(2):
            geo.body_vector(Rb, data, k, 15 + 3 * c, s, _W)
            w0, w1, w2 = s[_W, 0], s[_W, 1], s[_W, 2]
            # w' = wb x w, w'' = wb x (wb x w)
            e0 = wb[1] * w2 - wb[2] * w1
            e1 = wb[2] * w0 - wb[0] * w2
            e2 = wb[0] * w1 - wb[1] * w0
            f0, f1, f2 = geo._centripetal(wb[0], wb[1], wb[2], w0, w1, w2)
            gam[r0 + c] += (w0 * (a0 - b0) + w1 * (a1 - b1) + w2 * (a2 - b2)
                            + 2.0 * (dd0 * e0 + dd1 * e1 + dd2 * e2)
                            + s[geo.GAP, 0] * f0 + s[geo.GAP, 1] * f1 + s[geo.GAP, 2] * f2)
        for c in range(3):
            ia, ib = _PAIRS[c]
            geo.body_vector(Ra, data, k, 6 + 3 * ia, s, _U)
            geo.body_vector(Rb, data, k, 15 + 3 * ib, s, _W)
            gam[r0 + 2 + c] += geo.perpendicular_velocity_product(s, _U, wa, _W, wb)

    return residual, gradient, stiffness, velocity_product


@dataclasses.dataclass(frozen=True, eq=False)
class PrismaticJoint(AxisPair):
    """A slider: ``body`` slides along a line of ``other`` (or of the world) without turning.

    A point of ``body`` is kept on the line, and the orientation of ``body`` relative to
    ``other`` as it is at t = 0.

    Residual (5 equations): the gap of the two points along two directions of *b* perpendicular to
    the slide axis (2 rows, metres), and three perpendicularity rows that lock the relative
    rotation (as in :class:`FixedJoint`). The bodies keep one relative motion: a translation along
    the axis.

    Parameters
    ----------
    body, point_body
        Body *a* and its point that slides on the line (default: its origin).
    other : str, optional
        Body *b*, which carries the line; the world when omitted.
    other_point : array_like, (3,), optional
        A point of the line, in *b*'s frame from its origin (or in the world); by default where
        *a*'s point is at t = 0.
    axis_body : array_like, (3,)
        The slide axis in *a*'s body frame (default the body's z axis); normalised.
    other_axis : array_like, (3,), optional
        The slide axis in *b*'s body frame (or in the world): the line's direction; by default
        where ``axis_body`` points at t = 0. The two must be parallel at t = 0.

    References
    ----------
    * P. E. Nikravesh, *Computer-Aided Analysis of Mechanical Systems*, Prentice Hall, 1988,
      ch. 11.
    """

    #: *a*'s axes in *b*'s frame at t = 0 (column k: axis k), filled in when a system resolves it.
    axes_b: np.ndarray | None = dataclasses.field(default=None, init=False, repr=False)

    kind = "prismatic"
    n_eq = 5
    functions = compiled_functions(_define)

    def _resolve_kind(self, where, origins, R0):
        super()._resolve_kind(where, origins, R0)
        xa, Ra, xb, Rb = self.frames(origins, R0)
        store(self, axes_b=Rb.T @ Ra)

    def data(self):
        row = super().data()
        k1, k2 = perpendicular_basis(self.other_axis)
        for c, q in enumerate((k1, k2, self.other_axis)):
            row[6 + 3 * c: 9 + 3 * c] = self.axes_b.T @ q   # the same direction in a's frame, as at t = 0
            row[15 + 3 * c: 18 + 3 * c] = q
        return row
