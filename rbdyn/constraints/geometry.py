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

The bodies' poses are values (``xa`` a 3-vector, ``Ra`` a 3x3 matrix as 9 floats, row by row:
the value forms of :mod:`rbdyn.so3`); the results are written with scalars and element access
into caller-owned arrays: nothing is allocated and no array view is made. The vectors live in
rows of the kind's scratch ``s`` (:data:`SCRATCH_VECTORS` x 3), by this convention: ``s[0]``, ``s[1]`` the arms :math:`\mathbf{r}_a`, :math:`\mathbf{r}_b` of the
point pair, ``s[2]`` its gap :math:`\mathbf{d}`, ``s[3]`` the rod's direction
:math:`\mathbf{n}`; a kind puts its perpendicular pair's vectors in other rows and names them.
A point pair's points are the first six numbers of the kind's data row (``s_a``, then ``s_b``).

References
----------
* M. Géradin, A. Cardona, *Flexible Multibody Dynamics: A Finite Element Approach*, Wiley,
  2001, ch. 5 (joints as algebraic constraints, their gradients and stiffness).
* P. E. Nikravesh, *Computer-Aided Analysis of Mechanical Systems*, Prentice Hall, 1988,
  ch. 11 (the spherical, revolute and fixed joints as point and perpendicularity conditions).
"""

from __future__ import annotations

import numpy as np

from .._compile import njit_inline

#: The unit round-off of float64: a residual is resolved to 16 of it times its scale.
EPS = 2.220446049250313e-16

ARM_A, ARM_B, GAP, DIRECTION = 0, 1, 2, 3  # the rows of ``s`` the point pair fills


@njit_inline
def body_vector(R, data, k, c, s, row):
    """``s[row] = R @ data[k, c:c+3]``: a body-fixed vector of the data row in world components."""
    e0, e1, e2 = data[k, c], data[k, c + 1], data[k, c + 2]
    s[row, 0] = R[0] * e0 + R[1] * e1 + R[2] * e2
    s[row, 1] = R[3] * e0 + R[4] * e1 + R[5] * e2
    s[row, 2] = R[6] * e0 + R[7] * e1 + R[8] * e2


@njit_inline
def _hat_into(a0, a1, a2, out, scale, r0, c0):
    """``out[r0:r0+3, c0:c0+3] += scale * hat(a)``."""
    out[r0 + 0, c0 + 1] -= scale * a2
    out[r0 + 0, c0 + 2] += scale * a1
    out[r0 + 1, c0 + 0] += scale * a2
    out[r0 + 1, c0 + 2] -= scale * a0
    out[r0 + 2, c0 + 0] -= scale * a1
    out[r0 + 2, c0 + 1] += scale * a0


@njit_inline
def _hat_hat_into(a0, a1, a2, b0, b1, b2, out, scale, r0, c0):
    """``out[r0:r0+3, c0:c0+3] += scale * hat(a) hat(b)`` (``= scale (b a^T - (a.b) I)``)."""
    ab = a0 * b0 + a1 * b1 + a2 * b2
    out[r0 + 0, c0 + 0] += scale * (b0 * a0 - ab)
    out[r0 + 0, c0 + 1] += scale * (b0 * a1)
    out[r0 + 0, c0 + 2] += scale * (b0 * a2)
    out[r0 + 1, c0 + 0] += scale * (b1 * a0)
    out[r0 + 1, c0 + 1] += scale * (b1 * a1 - ab)
    out[r0 + 1, c0 + 2] += scale * (b1 * a2)
    out[r0 + 2, c0 + 0] += scale * (b2 * a0)
    out[r0 + 2, c0 + 1] += scale * (b2 * a1)
    out[r0 + 2, c0 + 2] += scale * (b2 * a2 - ab)


# -- the point pair -------------------------------------------------------------------------------


@njit_inline
def point_pair(xa, Ra, xb, Rb, data, k, s):
    """World arms ``s[0] = Ra s_a``, ``s[1] = Rb s_b`` (``s_a = data[k, 0:3]``,
    ``s_b = data[k, 3:6]``) and the gap ``s[2] = (xa + ra) - (xb + rb)``; returns the largest
    coordinate involved (for the residual's round-off floor)."""
    body_vector(Ra, data, k, 0, s, ARM_A)
    body_vector(Rb, data, k, 3, s, ARM_B)
    scale = 0.0
    for i in range(3):
        pa = (xa[0] if i == 0 else (xa[1] if i == 1 else xa[2])) + s[ARM_A, i]
        pb = (xb[0] if i == 0 else (xb[1] if i == 1 else xb[2])) + s[ARM_B, i]
        s[GAP, i] = pa - pb
        scale = max(scale, abs(pa), abs(pb))
    return scale


@njit_inline
def coincident_gradient(s, Ba, Bb, r0):
    """Rows ``r0 .. r0+2`` of ``d = 0``: ``Ba = [I, -hat(ra)]``, ``Bb = [-I, hat(rb)]``."""
    for i in range(3):
        for j in range(6):
            Ba[r0 + i, j] = 0.0
            Bb[r0 + i, j] = 0.0
        Ba[r0 + i, i] = 1.0
        Bb[r0 + i, i] = -1.0
    _hat_into(s[ARM_A, 0], s[ARM_A, 1], s[ARM_A, 2], Ba, -1.0, r0, 3)
    _hat_into(s[ARM_B, 0], s[ARM_B, 1], s[ARM_B, 2], Bb, 1.0, r0, 3)


@njit_inline
def coincident_stiffness(s, lam, r0, K):
    """``K += d(B^T lam)/dq`` of ``d = 0``: the moments ``ra x lam`` and ``-rb x lam`` turn
    with the bodies (``hat(lam) hat(ra)`` and ``-hat(lam) hat(rb)``)."""
    f0, f1, f2 = lam[r0], lam[r0 + 1], lam[r0 + 2]
    _hat_hat_into(f0, f1, f2, s[ARM_A, 0], s[ARM_A, 1], s[ARM_A, 2], K, 1.0, 3, 3)
    _hat_hat_into(f0, f1, f2, s[ARM_B, 0], s[ARM_B, 1], s[ARM_B, 2], K, -1.0, 9, 9)


@njit_inline
def _centripetal(w0, w1, w2, r0, r1, r2):
    """``w x (w x r)``, as three scalars."""
    c0 = w1 * r2 - w2 * r1
    c1 = w2 * r0 - w0 * r2
    c2 = w0 * r1 - w1 * r0
    return w1 * c2 - w2 * c1, w2 * c0 - w0 * c2, w0 * c1 - w1 * c0


@njit_inline
def coincident_velocity_product(s, wa, wb, gam, r0):
    """``gam[r0:r0+3] += wa x (wa x ra) - wb x (wb x rb)``."""
    a0, a1, a2 = _centripetal(wa[0], wa[1], wa[2], s[ARM_A, 0], s[ARM_A, 1], s[ARM_A, 2])
    b0, b1, b2 = _centripetal(wb[0], wb[1], wb[2], s[ARM_B, 0], s[ARM_B, 1], s[ARM_B, 2])
    gam[r0 + 0] += a0
    gam[r0 + 1] += a1
    gam[r0 + 2] += a2
    gam[r0 + 0] -= b0
    gam[r0 + 1] -= b1
    gam[r0 + 2] -= b2


@njit_inline
def rod_direction(s):
    """``s[3] = d/|d|`` of the gap ``s[2]``; returns ``|d|`` (0, and a zero direction, when the
    ends meet)."""
    dist = np.sqrt(s[GAP, 0] * s[GAP, 0] + s[GAP, 1] * s[GAP, 1] + s[GAP, 2] * s[GAP, 2])
    for i in range(3):
        s[DIRECTION, i] = s[GAP, i] / dist if dist > 0.0 else 0.0
    return dist


@njit_inline
def distance_gradient(s, Ba, Bb, r0):
    """Row ``r0`` of ``|d| - l = 0`` (``n = s[3]``): ``Ba = [n^T, (ra x n)^T]``,
    ``Bb = -[n^T, (rb x n)^T]``."""
    n0, n1, n2 = s[DIRECTION, 0], s[DIRECTION, 1], s[DIRECTION, 2]
    for side in range(2):
        row = ARM_A if side == 0 else ARM_B
        sg = 1.0 if side == 0 else -1.0
        r0_, r1_, r2_ = s[row, 0], s[row, 1], s[row, 2]
        if side == 0:
            Ba[r0, 0], Ba[r0, 1], Ba[r0, 2] = n0, n1, n2
            Ba[r0, 3] = r1_ * n2 - r2_ * n1
            Ba[r0, 4] = r2_ * n0 - r0_ * n2
            Ba[r0, 5] = r0_ * n1 - r1_ * n0
        else:
            Bb[r0, 0], Bb[r0, 1], Bb[r0, 2] = sg * n0, sg * n1, sg * n2
            Bb[r0, 3] = sg * (r1_ * n2 - r2_ * n1)
            Bb[r0, 4] = sg * (r2_ * n0 - r0_ * n2)
            Bb[r0, 5] = sg * (r0_ * n1 - r1_ * n0)


@njit_inline
def distance_stiffness(s, dist, lam, K):
    """``K += d(B^T lam)/dq`` of ``|d| - l``: the force ``lam n`` turns with ``d`` and its
    moments with the bodies (``P = (I - n n^T) lam/|d|``, ``dd = [I, -hat(ra), -I, hat(rb)] dq``).
    (Only generalized-α's iteration matrix needs it, once per constraint and iteration.)"""
    n0, n1, n2 = s[DIRECTION, 0], s[DIRECTION, 1], s[DIRECTION, 2]
    ra0, ra1, ra2 = s[ARM_A, 0], s[ARM_A, 1], s[ARM_A, 2]
    rb0, rb1, rb2 = s[ARM_B, 0], s[ARM_B, 1], s[ARM_B, 2]
    # D = P [I, -hat(ra), -I, hat(rb)]  (3 x 12); (P hat(r))[i, j] = P[i] . (column j of hat(r))
    D = np.empty((3, 12))
    for i in range(3):
        ni = n0 if i == 0 else (n1 if i == 1 else n2)
        P0 = lam * ((1.0 if i == 0 else 0.0) - ni * n0) / dist
        P1 = lam * ((1.0 if i == 1 else 0.0) - ni * n1) / dist
        P2 = lam * ((1.0 if i == 2 else 0.0) - ni * n2) / dist
        D[i, 0], D[i, 1], D[i, 2] = P0, P1, P2
        D[i, 6], D[i, 7], D[i, 8] = -P0, -P1, -P2
        D[i, 3] = -(P1 * ra2 - P2 * ra1)
        D[i, 4] = -(P2 * ra0 - P0 * ra2)
        D[i, 5] = -(P0 * ra1 - P1 * ra0)
        D[i, 9] = P1 * rb2 - P2 * rb1
        D[i, 10] = P2 * rb0 - P0 * rb2
        D[i, 11] = P0 * rb1 - P1 * rb0
    for side in range(2):
        row = ARM_A if side == 0 else ARM_B
        r0_, r1_, r2_ = s[row, 0], s[row, 1], s[row, 2]
        sg = 1.0 if side == 0 else -1.0
        t0, q0 = 6 * side, 6 * side + 3
        for j in range(12):
            for i in range(3):
                K[t0 + i, j] += sg * D[i, j]
            # moment rows: hat(r) D
            K[q0 + 0, j] += sg * (r1_ * D[2, j] - r2_ * D[1, j])
            K[q0 + 1, j] += sg * (r2_ * D[0, j] - r0_ * D[2, j])
            K[q0 + 2, j] += sg * (r0_ * D[1, j] - r1_ * D[0, j])
        _hat_hat_into(sg * lam * n0, sg * lam * n1, sg * lam * n2, r0_, r1_, r2_, K, 1.0, q0, q0)


@njit_inline
def distance_velocity_product(s, va, wa, vb, wb, dist):
    """``g'' - B nu'`` of ``|d| - l``: ``n . (wa x (wa x ra) - wb x (wb x rb)) + (|d'|^2 - (n.d')^2)/|d|``."""
    n0, n1, n2 = s[DIRECTION, 0], s[DIRECTION, 1], s[DIRECTION, 2]
    ra0, ra1, ra2 = s[ARM_A, 0], s[ARM_A, 1], s[ARM_A, 2]
    rb0, rb1, rb2 = s[ARM_B, 0], s[ARM_B, 1], s[ARM_B, 2]
    a0, a1, a2 = _centripetal(wa[0], wa[1], wa[2], ra0, ra1, ra2)
    b0, b1, b2 = _centripetal(wb[0], wb[1], wb[2], rb0, rb1, rb2)
    # d' = (va + wa x ra) - (vb + wb x rb)
    dd0 = (va[0] + (wa[1] * ra2 - wa[2] * ra1)) - (vb[0] + (wb[1] * rb2 - wb[2] * rb1))
    dd1 = (va[1] + (wa[2] * ra0 - wa[0] * ra2)) - (vb[1] + (wb[2] * rb0 - wb[0] * rb2))
    dd2 = (va[2] + (wa[0] * ra1 - wa[1] * ra0)) - (vb[2] + (wb[0] * rb1 - wb[1] * rb0))
    nd = n0 * dd0 + n1 * dd1 + n2 * dd2
    return (n0 * (a0 - b0) + n1 * (a1 - b1) + n2 * (a2 - b2)
            + (dd0 * dd0 + dd1 * dd1 + dd2 * dd2 - nd * nd) / dist)


# -- the perpendicular pair ------------------------------------------------------------------------


@njit_inline
def perpendicular_gradient(s, iu, iw, Ba, Bb, r0):
    """Row ``r0`` of ``u . w = 0`` (``u = s[iu]``, ``w = s[iw]``): ``Ba = [0, (u x w)^T]``,
    ``Bb = [0, (w x u)^T]``."""
    u0, u1, u2 = s[iu, 0], s[iu, 1], s[iu, 2]
    w0, w1, w2 = s[iw, 0], s[iw, 1], s[iw, 2]
    c0 = u1 * w2 - u2 * w1
    c1 = u2 * w0 - u0 * w2
    c2 = u0 * w1 - u1 * w0
    for j in range(3):
        Ba[r0, j] = 0.0
        Bb[r0, j] = 0.0
    Ba[r0, 3], Ba[r0, 4], Ba[r0, 5] = c0, c1, c2
    Bb[r0, 3], Bb[r0, 4], Bb[r0, 5] = -c0, -c1, -c2


@njit_inline
def perpendicular_stiffness(s, iu, iw, lam, K):
    """``K += d(B^T lam)/dq`` of ``u . w``: ``lam [hat(w)hat(u), -hat(u)hat(w); -hat(w)hat(u), hat(u)hat(w)]``
    on the rotation blocks."""
    u0, u1, u2 = s[iu, 0], s[iu, 1], s[iu, 2]
    w0, w1, w2 = s[iw, 0], s[iw, 1], s[iw, 2]
    _hat_hat_into(w0, w1, w2, u0, u1, u2, K, lam, 3, 3)
    _hat_hat_into(u0, u1, u2, w0, w1, w2, K, -lam, 3, 9)
    _hat_hat_into(w0, w1, w2, u0, u1, u2, K, -lam, 9, 3)
    _hat_hat_into(u0, u1, u2, w0, w1, w2, K, lam, 9, 9)


@njit_inline
def perpendicular_velocity_product(s, iu, wa, iw, wb):
    """``(u . w)'' - B nu'``: ``(wa x (wa x u)) . w + 2 (wa x u) . (wb x w) + u . (wb x (wb x w))``."""
    u0, u1, u2 = s[iu, 0], s[iu, 1], s[iu, 2]
    w0, w1, w2 = s[iw, 0], s[iw, 1], s[iw, 2]
    au0 = wa[1] * u2 - wa[2] * u1
    au1 = wa[2] * u0 - wa[0] * u2
    au2 = wa[0] * u1 - wa[1] * u0
    bw0 = wb[1] * w2 - wb[2] * w1
    bw1 = wb[2] * w0 - wb[0] * w2
    bw2 = wb[0] * w1 - wb[1] * w0
    aau0 = wa[1] * au2 - wa[2] * au1
    aau1 = wa[2] * au0 - wa[0] * au2
    aau2 = wa[0] * au1 - wa[1] * au0
    bbw0 = wb[1] * bw2 - wb[2] * bw1
    bbw1 = wb[2] * bw0 - wb[0] * bw2
    bbw2 = wb[0] * bw1 - wb[1] * bw0
    return (aau0 * w0 + aau1 * w1 + aau2 * w2) + 2.0 * (au0 * bw0 + au1 * bw1 + au2 * bw2) \
        + (u0 * bbw0 + u1 * bbw1 + u2 * bbw2)
