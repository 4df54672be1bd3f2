r"""Compiled geometry shared by the constraint kinds: a point pair and a perpendicular pair.

Every kind is built from two kinds of rows, with the conventions of the book's notation page:

* the **point pair**: a point :math:`\mathbf{s}_a` fixed in body *a* and a point
  :math:`\mathbf{s}_b` fixed in body *b* (or in the world), at
  :math:`\boldsymbol\xi = \mathbf{x} + \Lambda\mathbf{s}`; the joint keeps
  :math:`\mathbf{d} = \boldsymbol\xi_a - \boldsymbol\xi_b = \mathbf{0}` (three rows), the rod
  keeps :math:`\lvert\mathbf{d}\rvert = \ell` (one row);
* the **perpendicular pair**: a direction :math:`\mathbf{e}_a` fixed in body *a* and
  :math:`\mathbf{e}_b` fixed in body *b*, at :math:`\mathbf{u} = \Lambda_a\mathbf{e}_a`,
  :math:`\mathbf{w} = \Lambda_b\mathbf{e}_b`; the row keeps :math:`\mathbf{u}\cdot\mathbf{w} = 0`
  (a hinge has two, a weld three).

Derivatives are taken with respect to the world increments of each body,
:math:`\delta\mathbf{x}` and :math:`\delta\boldsymbol\theta` with
:math:`\Lambda \leftarrow \exp[\delta\boldsymbol\theta]\Lambda`, in the order
(:math:`\delta\mathbf{x}_a, \delta\boldsymbol\theta_a, \delta\mathbf{x}_b, \delta\boldsymbol\theta_b`):

* gradient rows :math:`\mathbf{B}` of the residual;
* stiffness :math:`\partial(\mathbf{B}^T\boldsymbol\lambda)/\partial(\ldots)`, the derivative of
  the generalized reaction of multipliers :math:`\boldsymbol\lambda` (12 x 12);
* the velocity product :math:`\gamma`: the part of :math:`\ddot g` that does not contain the
  accelerations, :math:`\ddot g = \mathbf{B}\dot{\boldsymbol\nu} + \gamma`.

A body point moves by :math:`\delta\boldsymbol\xi = \delta\mathbf{x} + \delta\boldsymbol\theta\times\mathbf{r}`
(:math:`\mathbf{r} = \Lambda\mathbf{s}`), so its rotation block is :math:`-\hat{\mathbf{r}}`; the
moment of a force :math:`\mathbf{f}` there changes by
:math:`\partial(\mathbf{r}\times\mathbf{f})/\partial\boldsymbol\theta = \hat{\mathbf{f}}\hat{\mathbf{r}}`.
Everything is written with scalars into caller-owned arrays: nothing is allocated.

References
----------
* M. Géradin, A. Cardona, *Flexible Multibody Dynamics: A Finite Element Approach*, Wiley,
  2001, ch. 5 (joints as algebraic constraints, their gradients and stiffness).
* P. E. Nikravesh, *Computer-Aided Analysis of Mechanical Systems*, Prentice Hall, 1988,
  ch. 11 (the spherical, revolute and fixed joints as point and perpendicularity conditions).
"""

from __future__ import annotations

import numpy as np

from .._jit import njit

_EPS = 2.220446049250313e-16


@njit
def body_vector(R, s, out):
    """``out = R s``."""
    out[0] = R[0, 0] * s[0] + R[0, 1] * s[1] + R[0, 2] * s[2]
    out[1] = R[1, 0] * s[0] + R[1, 1] * s[1] + R[1, 2] * s[2]
    out[2] = R[2, 0] * s[0] + R[2, 1] * s[1] + R[2, 2] * s[2]


@njit
def _hat_into(a, out, scale, r0, c0):
    """``out[r0:r0+3, c0:c0+3] += scale * hat(a)``."""
    out[r0 + 0, c0 + 1] -= scale * a[2]
    out[r0 + 0, c0 + 2] += scale * a[1]
    out[r0 + 1, c0 + 0] += scale * a[2]
    out[r0 + 1, c0 + 2] -= scale * a[0]
    out[r0 + 2, c0 + 0] -= scale * a[1]
    out[r0 + 2, c0 + 1] += scale * a[0]


@njit
def _hat_hat_into(a, b, out, scale, r0, c0):
    """``out[r0:r0+3, c0:c0+3] += scale * hat(a) hat(b)`` (``= scale (b a^T - (a.b) I)``)."""
    ab = a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
    for i in range(3):
        for j in range(3):
            out[r0 + i, c0 + j] += scale * (b[i] * a[j] - (ab if i == j else 0.0))


# -- the point pair -------------------------------------------------------------------------------


@njit
def point_pair(xa, Ra, sa, xb, Rb, sb, ra, rb, d):
    """World arms ``ra = Ra sa``, ``rb = Rb sb`` and the gap ``d = (xa + ra) - (xb + rb)``;
    returns the largest coordinate involved (for the residual's round-off floor)."""
    body_vector(Ra, sa, ra)
    body_vector(Rb, sb, rb)
    scale = 0.0
    for i in range(3):
        pa = xa[i] + ra[i]
        pb = xb[i] + rb[i]
        d[i] = pa - pb
        scale = max(scale, abs(pa), abs(pb))
    return scale


@njit
def coincident_gradient(ra, rb, Ba, Bb, r0):
    """Rows ``r0 .. r0+2`` of ``d = 0``: ``Ba = [I, -hat(ra)]``, ``Bb = [-I, hat(rb)]``."""
    for i in range(3):
        for j in range(6):
            Ba[r0 + i, j] = 0.0
            Bb[r0 + i, j] = 0.0
        Ba[r0 + i, i] = 1.0
        Bb[r0 + i, i] = -1.0
    _hat_into(ra, Ba, -1.0, r0, 3)
    _hat_into(rb, Bb, 1.0, r0, 3)


@njit
def coincident_stiffness(ra, rb, lam, r0, K):
    """``K += d(B^T lam)/dq`` of ``d = 0``: the moments ``ra x lam`` and ``-rb x lam`` turn
    with the bodies (``hat(lam) hat(ra)`` and ``-hat(lam) hat(rb)``)."""
    f = np.empty(3)
    for i in range(3):
        f[i] = lam[r0 + i]
    _hat_hat_into(f, ra, K, 1.0, 3, 3)
    _hat_hat_into(f, rb, K, -1.0, 9, 9)


@njit
def coincident_velocity_product(ra, wa, rb, wb, gam, r0):
    """``gam[r0:r0+3] = wa x (wa x ra) - wb x (wb x rb)``."""
    for side in range(2):
        r = ra if side == 0 else rb
        w = wa if side == 0 else wb
        sg = 1.0 if side == 0 else -1.0
        c0 = w[1] * r[2] - w[2] * r[1]
        c1 = w[2] * r[0] - w[0] * r[2]
        c2 = w[0] * r[1] - w[1] * r[0]
        gam[r0 + 0] += sg * (w[1] * c2 - w[2] * c1)
        gam[r0 + 1] += sg * (w[2] * c0 - w[0] * c2)
        gam[r0 + 2] += sg * (w[0] * c1 - w[1] * c0)


@njit
def distance_gradient(ra, rb, n, Ba, Bb, r0):
    """Row ``r0`` of ``|d| - l = 0`` (``n = d/|d|``): ``Ba = [n^T, (ra x n)^T]``, ``Bb = -[n^T, (rb x n)^T]``."""
    for side in range(2):
        r = ra if side == 0 else rb
        B = Ba if side == 0 else Bb
        sg = 1.0 if side == 0 else -1.0
        B[r0, 0] = sg * n[0]
        B[r0, 1] = sg * n[1]
        B[r0, 2] = sg * n[2]
        B[r0, 3] = sg * (r[1] * n[2] - r[2] * n[1])
        B[r0, 4] = sg * (r[2] * n[0] - r[0] * n[2])
        B[r0, 5] = sg * (r[0] * n[1] - r[1] * n[0])


@njit
def distance_stiffness(ra, rb, n, dist, lam, K):
    """``K += d(B^T lam)/dq`` of ``|d| - l``: the force ``lam n`` turns with ``d`` and its
    moments with the bodies (``P = (I - n n^T) lam/|d|``, ``dd = [I, -hat(ra), -I, hat(rb)] dq``)."""
    P = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            P[i, j] = lam * ((1.0 if i == j else 0.0) - n[i] * n[j]) / dist
    # D = P [I, -hat(ra), -I, hat(rb)]  (3 x 12)
    D = np.zeros((3, 12))
    for i in range(3):
        for j in range(3):
            D[i, j] = P[i, j]
            D[i, 6 + j] = -P[i, j]
    for i in range(3):  # -P hat(ra) and P hat(rb); (P hat(r))[i, j] = P[i] . (column j of hat(r))
        D[i, 3] = -(P[i, 1] * ra[2] - P[i, 2] * ra[1])
        D[i, 4] = -(P[i, 2] * ra[0] - P[i, 0] * ra[2])
        D[i, 5] = -(P[i, 0] * ra[1] - P[i, 1] * ra[0])
        D[i, 9] = P[i, 1] * rb[2] - P[i, 2] * rb[1]
        D[i, 10] = P[i, 2] * rb[0] - P[i, 0] * rb[2]
        D[i, 11] = P[i, 0] * rb[1] - P[i, 1] * rb[0]
    for side in range(2):
        r = ra if side == 0 else rb
        sg = 1.0 if side == 0 else -1.0
        t0, q0 = 6 * side, 6 * side + 3
        for j in range(12):
            for i in range(3):
                K[t0 + i, j] += sg * D[i, j]
            # moment rows: hat(r) D
            K[q0 + 0, j] += sg * (r[1] * D[2, j] - r[2] * D[1, j])
            K[q0 + 1, j] += sg * (r[2] * D[0, j] - r[0] * D[2, j])
            K[q0 + 2, j] += sg * (r[0] * D[1, j] - r[1] * D[0, j])
        f = np.empty(3)
        for i in range(3):
            f[i] = sg * lam * n[i]
        _hat_hat_into(f, r, K, 1.0, q0, q0)


@njit
def distance_velocity_product(ra, va, wa, rb, vb, wb, n, dist):
    """``g'' - B nu'`` of ``|d| - l``: ``n . (wa x (wa x ra) - wb x (wb x rb)) + (|d'|^2 - (n.d')^2)/|d|``."""
    acc = np.zeros(3)
    coincident_velocity_product(ra, wa, rb, wb, acc, 0)
    dd = np.empty(3)
    for i in range(3):
        dd[i] = (va[i] + (wa[(i + 1) % 3] * ra[(i + 2) % 3] - wa[(i + 2) % 3] * ra[(i + 1) % 3])) \
            - (vb[i] + (wb[(i + 1) % 3] * rb[(i + 2) % 3] - wb[(i + 2) % 3] * rb[(i + 1) % 3]))
    nd = n[0] * dd[0] + n[1] * dd[1] + n[2] * dd[2]
    return n[0] * acc[0] + n[1] * acc[1] + n[2] * acc[2] + (dd[0] * dd[0] + dd[1] * dd[1] + dd[2] * dd[2] - nd * nd) / dist


# -- the perpendicular pair ------------------------------------------------------------------------


@njit
def perpendicular_gradient(u, w, Ba, Bb, r0):
    """Row ``r0`` of ``u . w = 0``: ``Ba = [0, (u x w)^T]``, ``Bb = [0, (w x u)^T]``."""
    c0 = u[1] * w[2] - u[2] * w[1]
    c1 = u[2] * w[0] - u[0] * w[2]
    c2 = u[0] * w[1] - u[1] * w[0]
    for j in range(3):
        Ba[r0, j] = 0.0
        Bb[r0, j] = 0.0
    Ba[r0, 3], Ba[r0, 4], Ba[r0, 5] = c0, c1, c2
    Bb[r0, 3], Bb[r0, 4], Bb[r0, 5] = -c0, -c1, -c2


@njit
def perpendicular_stiffness(u, w, lam, K):
    """``K += d(B^T lam)/dq`` of ``u . w``: ``lam [hat(w)hat(u), -hat(u)hat(w); -hat(w)hat(u), hat(u)hat(w)]``
    on the rotation blocks."""
    _hat_hat_into(w, u, K, lam, 3, 3)
    _hat_hat_into(u, w, K, -lam, 3, 9)
    _hat_hat_into(w, u, K, -lam, 9, 3)
    _hat_hat_into(u, w, K, lam, 9, 9)


@njit
def perpendicular_velocity_product(u, wa, w, wb):
    """``(u . w)'' - B nu'``: ``(wa x (wa x u)) . w + 2 (wa x u) . (wb x w) + u . (wb x (wb x w))``."""
    au0 = wa[1] * u[2] - wa[2] * u[1]
    au1 = wa[2] * u[0] - wa[0] * u[2]
    au2 = wa[0] * u[1] - wa[1] * u[0]
    bw0 = wb[1] * w[2] - wb[2] * w[1]
    bw1 = wb[2] * w[0] - wb[0] * w[2]
    bw2 = wb[0] * w[1] - wb[1] * w[0]
    aau0 = wa[1] * au2 - wa[2] * au1
    aau1 = wa[2] * au0 - wa[0] * au2
    aau2 = wa[0] * au1 - wa[1] * au0
    bbw0 = wb[1] * bw2 - wb[2] * bw1
    bbw1 = wb[2] * bw0 - wb[0] * bw2
    bbw2 = wb[0] * bw1 - wb[1] * bw0
    return (aau0 * w[0] + aau1 * w[1] + aau2 * w[2]) + 2.0 * (au0 * bw0 + au1 * bw1 + au2 * bw2) \
        + (u[0] * bbw0 + u[1] * bbw1 + u[2] * bbw2)
