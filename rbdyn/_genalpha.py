r"""The Lie-group generalized-α method with index-3 constraints (Kynema's form).

One step of size :math:`h` from :math:`t_n` to :math:`t_{n+1}` in inertial
coordinates (Brüls, Cardona & Arnold 2012; Arnold & Brüls 2007), as the
Kynema code implements it:

* configuration per body: origin position :math:`x` and rotation
  :math:`R`; velocity :math:`v = (\dot x, \omega)` with :math:`\omega` the
  *spatial* angular velocity (``omega_world = R omega_body``); true
  accelerations :math:`\dot v`, algorithmic accelerations :math:`a`, and one
  Lagrange multiplier per constraint residual, :math:`\lambda`;
* coefficients from the spectral radius at infinity :math:`\rho_\infty`:
  :math:`\alpha_m = \frac{2\rho_\infty-1}{\rho_\infty+1}`,
  :math:`\alpha_f = \frac{\rho_\infty}{\rho_\infty+1}`,
  :math:`\gamma = \tfrac12 + \alpha_f - \alpha_m`,
  :math:`\beta = \tfrac14(\gamma+\tfrac12)^2`;
* predictor: :math:`\dot v \leftarrow 0`, :math:`\lambda \leftarrow 0`,
  :math:`a \leftarrow (\alpha_f\dot v_n - \alpha_m a_n)/(1-\alpha_m)`,
  :math:`v \leftarrow v_n + h(1-\gamma)a_n + h\gamma a`,
  :math:`\Delta q \leftarrow v_n + h(\tfrac12-\beta)a_n + h\beta a`;
  the configuration is :math:`x = x_n + h\Delta q_x`,
  :math:`R = \exp(h\widetilde{\Delta q_\omega})R_n` (left multiplication);
* Newton corrector on the equations of motion at :math:`t_{n+1}` with the
  true accelerations, :math:`M\dot v + g(q, v) - f(t_{n+1}, q) + B^T\lambda = 0`,
  and the position constraints :math:`\Phi(q) = 0`, with the iteration matrix
  :math:`[\beta' M + \gamma' G + K T^T,\ B^T;\ B T^T,\ 0]`,
  :math:`\beta' = \frac{1-\alpha_m}{h^2\beta(1-\alpha_f)}`,
  :math:`\gamma' = \frac{\gamma}{h\beta}`, :math:`T = T(h\Delta q_\omega)` the
  tangent operator (:func:`rbdyn.so3.tangent_operator`); the equilibrium rows
  are multiplied by :math:`\beta h^2` (and the multipliers' increments divided
  by it) for conditioning. An increment :math:`\Delta x` updates
  :math:`\Delta q \mathrel{+}= \Delta x/h`, :math:`v \mathrel{+}= \gamma'\Delta x`,
  :math:`\dot v \mathrel{+}= \beta'\Delta x`;
* convergence (Arnold & Hante 2017): the root mean square of
  :math:`\Delta x_i/(atol + rtol|h\Delta q_i|)` and
  :math:`\Delta\lambda_i/(atol + rtol|\lambda_i|)`, taken with the values
  before the increment, is at most 1; the increment of the last iteration is
  applied;
* finally :math:`a \mathrel{+}= \frac{1-\alpha_f}{1-\alpha_m}\dot v`.

A rigid body's residual is written about its origin in world components:
:math:`m\ddot x - f` and :math:`\rho\dot\omega + \omega\times\rho\omega - \tau`
with :math:`\rho = RJR^T` (for a free body the origin is the mass centre; a
pivoted body has the rotation rows only, with :math:`J` about the pivot).
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np

from ._constraints import blocks_call, kind_gradient, kind_velocity_product, lu_solve_inplace, pose_into, solve_min_norm
from ._data import body_loads_into, eval_loads, user_loads_into
from ._driver import STATUS_REPORT, count_iterations, report, start
from ._errors import InputError
from ._jit import borrow, njit, njit_inline, quiet
from ._scheme import STATUS_CONSTRAINT, STATUS_NEWTON, STATUS_NONFINITE, STATUS_OK, STATUS_SINGULAR, Scheme, _callback_loads, _isfinite
from ._small import body_finite, exp_scaled_into, matmul_into, reorthonormalize, rodrigues_into, solve3, sub_hat
from .constraints._base import MAX_ROWS, SCRATCH_VECTORS
from .so3 import _sinc_coeffs

__all__ = ["GenAlpha", "gen_alpha_coefficients", "consistent_accelerations"]


def gen_alpha_coefficients(rho_inf: float) -> tuple[float, float, float, float]:
    """``(alpha_m, alpha_f, gamma, beta)`` of the generalized-α method for ``rho_inf``.

    Chung & Hulbert's optimal choice for a spectral radius ``rho_inf`` at
    infinite frequency (second order, maximal high-frequency dissipation).
    """
    rho = float(rho_inf)
    alpha_m = (2.0 * rho - 1.0) / (rho + 1.0)
    alpha_f = rho / (rho + 1.0)
    gamma = 0.5 + alpha_f - alpha_m
    beta = 0.25 * (gamma + 0.5) ** 2
    return alpha_m, alpha_f, gamma, beta


# -- layout --------------------------------------------------------------------
#
# A step allocates nothing: the scratch (GenAlphaWork) is made once per run. Bodies in at
# least one constraint form one coupled group, solved with one dense matrix of their unknowns
# (6 for a free body, 3 for a pivoted one) and the constraint rows; every other body is
# stepped on its own, start to end (a diagonal translation and a 3x3 rotation solve per
# iteration, its loads evaluated at every iteration). Each group has its own convergence test,
# so that the motion of a body does not depend on the unrelated bodies of the system; the
# step's iteration count is the largest of the groups'. Only body_loads_into is called as a
# module global (see rbdyn._jit.python_variant).
#
# Velocities, accelerations and Newton increments are in world components,
# in the order (translation, rotation); a pivoted body's translation
# entries stay zero.


class GenAlphaState(NamedTuple):
    """The state, the algorithmic and the true accelerations (N, 6), and the multipliers."""

    x: np.ndarray
    R: np.ndarray
    v: np.ndarray
    W: np.ndarray
    acc: np.ndarray
    vd: np.ndarray
    lam: np.ndarray


class GenAlphaParams(NamedTuple):
    alpha_m: float
    alpha_f: float
    gamma: float
    beta: float
    newton_atol: float
    newton_rtol: float
    newton_max_iter: int


class BodyScratch(NamedTuple):
    """3x3 and vector scratch of one body's Newton iteration."""

    rho: np.ndarray
    G: np.ndarray
    K: np.ndarray
    Jl: np.ndarray
    S: np.ndarray
    H: np.ndarray
    res: np.ndarray
    y: np.ndarray
    w: np.ndarray
    p: np.ndarray
    q: np.ndarray
    r: np.ndarray
    f: np.ndarray


class CoupledScratch(NamedTuple):
    """Scratch of the coupled group's assembly: inertia and gyroscopic matrices of its bodies,
    and the constraint dispatch's (two poses, the gradient rows, the 12 x 12 stiffness)."""

    rho_b: np.ndarray
    G_b: np.ndarray
    xa: np.ndarray
    Ra: np.ndarray
    xb: np.ndarray
    Rb: np.ndarray
    s: np.ndarray
    Ba: np.ndarray
    Bb: np.ndarray
    Kc: np.ndarray
    cfloor: np.ndarray
    S_copy: np.ndarray
    rhs_copy: np.ndarray


class GenAlphaWork(NamedTuple):
    """Scratch of a run. ``coef`` holds alpha_m, alpha_f, gamma, beta, beta', gamma' and the
    conditioner beta h^2 of the run's step; ``dof`` the first unknown of each coupled body
    (-1 for the others), ``n_dof`` the coupled group's body unknowns."""

    coef: np.ndarray
    dof: np.ndarray
    n_dof: int
    F: np.ndarray
    T: np.ndarray
    V: np.ndarray
    dq: np.ndarray
    x0: np.ndarray
    R0: np.ndarray
    E: np.ndarray
    S: np.ndarray
    rhs: np.ndarray
    loads: np.ndarray
    body: BodyScratch
    coupled: CoupledScratch


def make_work(model, n_rows) -> GenAlphaWork:
    """Scratch for ``model`` with ``n_rows`` constraint rows."""
    pivoted = model.bodies.pivoted
    nb = pivoted.shape[0]
    dof = np.full(nb, -1, dtype=np.int64)
    nd = 0
    for i in model.constraints.c_bodies:
        dof[i] = nd
        nd += 6 if pivoted[i] == 0 else 3
    nt = nd + n_rows
    m3 = lambda: np.empty((3, 3))  # noqa: E731
    v3 = lambda: np.empty(3)  # noqa: E731
    nc = nb if n_rows else 0
    return GenAlphaWork(
        np.empty(7), dof, nd,
        np.empty((nb, 3)), np.empty((nb, 3)), np.empty((nb, 6)), np.empty((nb, 6)), np.empty((nb, 3)),
        np.empty((nb, 3, 3)), m3(), np.empty((nt, nt)), np.empty(nt), np.empty((4, 3)),
        BodyScratch(m3(), m3(), m3(), m3(), m3(), m3(), np.empty(6), np.empty(6), v3(), v3(), v3(), v3(), v3()),
        CoupledScratch(np.empty((nc, 3, 3)), np.empty((nc, 3, 3)), v3(), m3(), v3(), m3(),
                       np.empty((SCRATCH_VECTORS, 3)), np.empty((MAX_ROWS, 6)), np.empty((MAX_ROWS, 6)),
                       np.empty((12, 12)), np.empty(nt), np.empty((nt, nt)),
                       np.empty(nt)),
    )


@njit_inline
def _body_terms(model, i, R, V, vd, F, T, rho, G, K, res, w, p, q, H):
    """Inertia ``rho = R J R^T``, gyroscopic matrix ``G``, stiffness ``K`` and
    residual ``res`` (translation, rotation) of body ``i``.

    ``K`` is the derivative of the inertial residual with respect to a
    spatial rotation increment. The loads add no stiffness: the moments of
    forces applied away from the body origin (gravity on a pivoted body,
    point forces) depend on the rotation, but leaving that out changes only
    the rate of Newton's method, not its solution, and keeps the iteration
    the same for a built-in load and the same load given as a Python
    callback. ``w``, ``p``, ``q`` are 3-vector scratch, ``H`` 3x3 scratch.
    """
    mass, J, pivoted = model.bodies.mass, model.bodies.inertia, model.bodies.pivoted
    Ri = R[i]
    matmul_into(Ri, J[i], H)
    for a in range(3):
        for b in range(3):
            rho[a, b] = H[a, 0] * Ri[b, 0] + H[a, 1] * Ri[b, 1] + H[a, 2] * Ri[b, 2]
    for a in range(3):
        w[a] = V[i, 3 + a]
    for a in range(3):
        p[a] = rho[a, 0] * w[0] + rho[a, 1] * w[1] + rho[a, 2] * w[2]  # rho omega
        q[a] = rho[a, 0] * vd[i, 3] + rho[a, 1] * vd[i, 4] + rho[a, 2] * vd[i, 5]  # rho omega_dot
    # residual
    if pivoted[i] == 0:
        for a in range(3):
            res[a] = mass[i] * vd[i, a] - F[i, a]
    else:
        for a in range(3):
            res[a] = 0.0
    res[3] = q[0] + (w[1] * p[2] - w[2] * p[1]) - T[i, 0]
    res[4] = q[1] + (w[2] * p[0] - w[0] * p[2]) - T[i, 1]
    res[5] = q[2] + (w[0] * p[1] - w[1] * p[0]) - T[i, 2]
    # G = hat(w) rho - hat(rho w); H = rho hat(w) - hat(rho w)
    for b in range(3):
        G[0, b] = w[1] * rho[2, b] - w[2] * rho[1, b]
        G[1, b] = w[2] * rho[0, b] - w[0] * rho[2, b]
        G[2, b] = w[0] * rho[1, b] - w[1] * rho[0, b]
    for a in range(3):
        # row a of rho hat(w): (rho[a] x ... ) -> rho[a, :] @ hat(w)
        H[a, 0] = rho[a, 1] * w[2] - rho[a, 2] * w[1]
        H[a, 1] = rho[a, 2] * w[0] - rho[a, 0] * w[2]
        H[a, 2] = rho[a, 0] * w[1] - rho[a, 1] * w[0]
    sub_hat(G, p)
    sub_hat(H, p)
    # K = rho hat(wd) - hat(rho wd) + hat(w) H
    wd0, wd1, wd2 = vd[i, 3], vd[i, 4], vd[i, 5]
    for a in range(3):
        K[a, 0] = rho[a, 1] * wd2 - rho[a, 2] * wd1
        K[a, 1] = rho[a, 2] * wd0 - rho[a, 0] * wd2
        K[a, 2] = rho[a, 0] * wd1 - rho[a, 1] * wd0
    sub_hat(K, q)
    for b in range(3):
        K[0, b] += w[1] * H[2, b] - w[2] * H[1, b]
        K[1, b] += w[2] * H[0, b] - w[0] * H[2, b]
        K[2, b] += w[0] * H[1, b] - w[1] * H[0, b]


@njit_inline
def _place(i, pivoted, x0, R0, dq, h, x, R, V, v, W, E):
    """Configuration of body ``i`` from the step's start and ``dq``; its
    origin velocity ``v`` and body rate ``W`` from ``V``. ``E`` is 3x3 scratch."""
    exp_scaled_into(h, dq[i, 3:], E)
    matmul_into(E, R0[i], R[i])
    if pivoted[i] == 0:
        for a in range(3):
            x[i, a] = x0[i, a] + h * dq[i, a]
            v[i, a] = V[i, a]
    Ri = R[i]
    for a in range(3):
        W[i, a] = Ri[0, a] * V[i, 3] + Ri[1, a] * V[i, 4] + Ri[2, a] * V[i, 5]


@njit_inline
def _predict(i, pivoted, coef, h, x, R, v, W, acc, vd, V, dq, x0, R0, E):
    """Start of a step for body ``i``: save its configuration, predict it, place it."""
    am, af, gamma, beta = coef[0], coef[1], coef[2], coef[3]
    Ri = R[i]
    for a in range(3):
        x0[i, a] = x[i, a]
        for b in range(3):
            R0[i, a, b] = Ri[a, b]
        V[i, a] = v[i, a] if pivoted[i] == 0 else 0.0
        V[i, 3 + a] = Ri[a, 0] * W[i, 0] + Ri[a, 1] * W[i, 1] + Ri[a, 2] * W[i, 2]
    for c in range(6):
        a_old = acc[i, c]
        a_new = (af * vd[i, c] - am * a_old) / (1.0 - am)
        v_old = V[i, c]
        V[i, c] = v_old + h * (1.0 - gamma) * a_old + h * gamma * a_new
        dq[i, c] = v_old + h * (0.5 - beta) * a_old + h * beta * a_new
        acc[i, c] = a_new
        vd[i, c] = 0.0
    _place(i, pivoted, x0, R0, dq, h, x, R, V, v, W, E)


@njit_inline
def _apply_increment(i, pivoted, y, j0, h, bp, gp, dq, V, vd):
    """Add the Newton increment ``y[j0:]`` of body ``i`` to ``dq``, ``V``, ``vd``."""
    c0 = 3 if pivoted[i] != 0 else 0
    for c in range(c0, 6):
        d = y[j0 + c - c0]
        dq[i, c] += d / h
        V[i, c] += gp * d
        vd[i, c] += bp * d


@njit_inline
def _increment_error(i, pivoted, y, j0, h, dq, atol, rtol):
    """Sum of the squared scaled increments of body ``i`` (before the update)."""
    c0 = 3 if pivoted[i] != 0 else 0
    s = 0.0
    for c in range(c0, 6):
        e = y[j0 + c - c0] / (atol + rtol * abs(h * dq[i, c]))
        s += e * e
    return s


@njit_inline
def _left_jacobian_into(h, dq, i, out):
    """``out = J_l(h dq_omega) = T(h dq_omega)^T`` of body ``i``."""
    p0, p1, p2 = h * dq[i, 3], h * dq[i, 4], h * dq[i, 5]
    _, b, c = _sinc_coeffs(p0 * p0 + p1 * p1 + p2 * p2)
    rodrigues_into(b, c, p0, p1, p2, out)


@njit_inline
def _single_body(model, i, coef, h, atol, rtol, x0, R0, x, R, v, W, V, vd, dq, F, T, scr):
    """One Newton iteration of an unconstrained body; returns its error measure
    (the increment is applied), or nan for a non-finite or singular system."""
    (rho, G, K, Jl, S, H, res, y, w, p, q, r, f) = scr
    mass, pivoted = model.bodies.mass, model.bodies.pivoted
    bp, gp = coef[4], coef[5]
    _body_terms(model, i, R, V, vd, F, T, rho, G, K, res, w, p, q, H)
    _left_jacobian_into(h, dq, i, Jl)
    matmul_into(K, Jl, S)
    for a in range(3):
        for b in range(3):
            S[a, b] += bp * rho[a, b] + gp * G[a, b]
    d0, d1, d2 = solve3(S, -res[3], -res[4], -res[5])
    n = 3
    if pivoted[i] == 0:
        n = 6
        inv = 1.0 / (bp * mass[i])
        for a in range(3):
            y[a] = -res[a] * inv
        y[3], y[4], y[5] = d0, d1, d2
    else:
        y[0], y[1], y[2] = d0, d1, d2
    s = _increment_error(i, pivoted, y, 0, h, dq, atol, rtol)
    if not np.isfinite(s):
        return np.nan
    _apply_increment(i, pivoted, y, 0, h, bp, gp, dq, V, vd)
    _place(i, pivoted, x0, R0, dq, h, x, R, V, v, W, H)
    return math.sqrt(s / n)


@njit_inline
def _coupled(model, coef, h, atol, rtol, dof, nd, x0, R0, x, R, v, W, V, vd, lam, dq, F, T, S, rhs, scr, cscr):
    """One Newton iteration of the constrained bodies and the multipliers.

    Returns the error measure (the increment is applied); -1 when the matrix cannot be solved
    even for the minimum-norm increment (no rank at all, or not finite; redundant constraints
    are solved, see below); -2 once converged on constraints that contradict each other; or nan.
    """
    (rho, G, K, Jl, S3, H, res, y, w, p, q, r, f) = scr
    (rho_b, G_b, xa, Ra, xb, Rb, cs, Ba, Bb, Kc, cfloor, S_copy, rhs_copy) = cscr
    mass, pivoted = model.bodies.mass, model.bodies.pivoted
    cons = model.constraints
    kind, body, row = cons.kind, cons.body, cons.row
    bodies = cons.c_bodies
    bp, gp, cond = coef[4], coef[5], coef[6]
    nt = S.shape[0]
    for a in range(nt):
        rhs[a] = 0.0
        for b in range(nt):
            S[a, b] = 0.0
    # 1. bodies: residual and the rotation stiffness (derivatives w.r.t. spatial increments)
    for i in bodies:
        _body_terms(model, i, R, V, vd, F, T, rho_b[i], G_b[i], K, res, w, p, q, H)
        j = dof[i]
        th = j + (3 if pivoted[i] == 0 else 0)
        if pivoted[i] == 0:
            for a in range(3):
                rhs[j + a] = cond * res[a]
        for a in range(3):
            rhs[th + a] = cond * res[3 + a]
            for b in range(3):
                S[th + a, th + b] += cond * K[a, b]
    # 2. constraints: residuals, gradient B, forces B^T lambda and their stiffness, from the kinds
    for k in range(kind.shape[0]):
        pose_into(x, R, body[k, 0], xa, Ra)
        pose_into(x, R, body[k, 1], xb, Rb)
        r0 = row[k]
        n_rows = row[k + 1] - r0
        cr = nd + r0
        for a in range(12):
            for b in range(12):
                Kc[a, b] = 0.0
        blocks_call(kind[k], cons.data, k, xa, Ra, xb, Rb, rhs, cfloor, nd + r0, Ba, Bb, lam, r0, Kc, cs)
        for side in range(2):
            i = body[k, side]
            if i < 0:
                continue
            B = Ba if side == 0 else Bb
            j = dof[i]
            free = pivoted[i] == 0
            th = j + (3 if free else 0)
            for q in range(n_rows):
                lq = lam[r0 + q]
                for a in range(3):
                    if free:
                        S[cr + q, j + a] += B[q, a]
                        S[j + a, cr + q] += B[q, a]
                        rhs[j + a] += cond * B[q, a] * lq
                    S[cr + q, th + a] += B[q, 3 + a]
                    S[th + a, cr + q] += B[q, 3 + a]
                    rhs[th + a] += cond * B[q, 3 + a] * lq
            # stiffness of the reactions, rows of this side against the columns of both sides
            for side2 in range(2):
                i2 = body[k, side2]
                if i2 < 0:
                    continue
                j2 = dof[i2]
                free2 = pivoted[i2] == 0
                for a in range(6):
                    if a < 3 and not free:
                        continue
                    ra_ = j + a if free else j + a - 3
                    for b in range(6):
                        if b < 3 and not free2:
                            continue
                        cb_ = j2 + b if free2 else j2 + b - 3
                        S[ra_, cb_] += cond * Kc[6 * side + a, 6 * side2 + b]
    # 3. rotation columns: spatial increment = T^T (h d dq) = J_l (h d dq)
    for i in bodies:
        _left_jacobian_into(h, dq, i, Jl)
        th = dof[i] + (3 if pivoted[i] == 0 else 0)
        for a in range(nt):
            s0, s1, s2 = S[a, th], S[a, th + 1], S[a, th + 2]
            for b in range(3):
                S[a, th + b] = s0 * Jl[0, b] + s1 * Jl[1, b] + s2 * Jl[2, b]
    # 4. mass and gyroscopic terms
    for i in bodies:
        j = dof[i]
        if pivoted[i] == 0:
            for a in range(3):
                S[j + a, j + a] += cond * bp * mass[i]
            j += 3
        for a in range(3):
            for b in range(3):
                S[j + a, j + b] += cond * (bp * rho_b[i, a, b] + gp * G_b[i, a, b])
    for a in range(nt):
        rhs[a] = -rhs[a]
    for a in range(nt):
        rhs_copy[a] = rhs[a]
        for b in range(nt):
            S_copy[a, b] = S[a, b]
    contradicting = False
    if not lu_solve_inplace(S, rhs, 1e-13):  # (scaled by beta h^2: constraint rows are O(1), inertia O(1))
        # redundant constraints (a closed loop): the minimum-norm increment
        for a in range(nt):
            rhs[a] = rhs_copy[a]
        if not solve_min_norm(S_copy, rhs, 1e-12):
            return -1.0
        # Rows that repeat each other are met by the least-squares increment up to a remainder of
        # second order in the residual; rows that contradict each other are not met at all (the
        # remainder is as large as the residual). Told apart once the iteration has converged.
        c_max, e_max = 0.0, 0.0
        for a in range(nd, nt):
            e = -rhs_copy[a]
            for b in range(nt):
                e += S_copy[a, b] * rhs[b]
            if abs(rhs_copy[a]) > 100.0 * cfloor[a]:
                c_max = max(c_max, abs(rhs_copy[a]))
                e_max = max(e_max, abs(e))
        contradicting = c_max > 0.0 and e_max > 0.5 * c_max
    # error measure (before the update), then the update
    s = 0.0
    for i in bodies:
        s += _increment_error(i, pivoted, rhs, dof[i], h, dq, atol, rtol)
    for a in range(nt - nd):
        rhs[nd + a] /= cond
        e = rhs[nd + a] / (atol + rtol * abs(lam[a]))
        s += e * e
    if not np.isfinite(s):
        return np.nan
    if contradicting and s <= nt:  # converged (the caller's test is sqrt(s / nt) <= 1)
        return -2.0
    for i in bodies:
        _apply_increment(i, pivoted, rhs, dof[i], h, bp, gp, dq, V, vd)
        _place(i, pivoted, x0, R0, dq, h, x, R, V, v, W, H)
    for a in range(nt - nd):
        lam[a] += rhs[nd + a]
    return math.sqrt(s / nt)


@njit_inline
def _finish(i, coef, R, V, W, acc, vd):
    """End of a step for body ``i``: algorithmic accelerations, rotation kept on SO(3)."""
    ratio = (1.0 - coef[1]) / (1.0 - coef[0])
    for c in range(6):
        acc[i, c] += ratio * vd[i, c]
    reorthonormalize(R[i])
    Ri = R[i]
    for a in range(3):
        W[i, a] = Ri[0, a] * V[i, 3] + Ri[1, a] * V[i, 4] + Ri[2, a] * V[i, 5]


@njit_inline
def _set_coefficients(coef, params, h):
    am, af, gamma, beta = params.alpha_m, params.alpha_f, params.gamma, params.beta
    coef[0], coef[1], coef[2], coef[3] = am, af, gamma, beta
    coef[4] = (1.0 - am) / (h * h * beta * (1.0 - af))  # beta'
    coef[5] = gamma / (h * beta)  # gamma'
    coef[6] = beta * h * h  # conditioner


@njit_inline
def _loads_of(model, i, t, x, R, v, W, F, T, scr, user):
    body_loads_into(model, i, t, x[i], R[i], v[i], W[i], F[i], T[i])
    if user:
        user_loads_into(model, i, t, x[i], R[i], v[i], W[i], F[i], T[i], scr)


@njit_inline
def _step(model, x, R, v, W, acc, vd, lam, wk, coef, atol, rtol, max_iter, user, t, h):
    """One generalized-alpha step of every body; returns ``(status, iterations)``, the
    iterations being the largest of the groups'."""
    pivoted = model.bodies.pivoted
    cons = model.constraints
    F, T, V, dq, x0, R0 = wk.F, wk.T, wk.V, wk.dq, wk.x0, wk.R0
    t1 = t + h
    m = lam.shape[0]
    iters = 0
    if m > 0:
        # the coupled group: the constrained bodies and the multipliers
        for i in cons.c_bodies:
            _predict(i, pivoted, coef, h, x, R, v, W, acc, vd, V, dq, x0, R0, wk.E)
        for a in range(m):
            lam[a] = 0.0
        converged = False
        for it in range(max_iter):
            iters = it + 1
            # loads at the current iterate and t_{n+1}
            for i in cons.c_bodies:
                _loads_of(model, i, t1, x, R, v, W, F, T, wk.loads, user)
            err = _coupled(model, coef, h, atol, rtol, wk.dof, wk.n_dof, x0, R0, x, R, v, W, V, vd, lam, dq, F, T,
                           wk.S, wk.rhs, wk.body, wk.coupled)
            if err == -1.0:
                return STATUS_SINGULAR, iters
            if err == -2.0:  # converged on constraints that contradict each other
                return STATUS_CONSTRAINT, iters
            if err <= 1.0:
                converged = True
                break
            if not np.isfinite(err):
                return STATUS_NONFINITE, iters
        if not converged:
            return STATUS_NEWTON, iters
        for i in cons.c_bodies:
            _finish(i, coef, R, V, W, acc, vd)
            if not body_finite(x[i], R[i], v[i], W[i]):
                return STATUS_NONFINITE, iters
    for i in cons.u_bodies:
        _predict(i, pivoted, coef, h, x, R, v, W, acc, vd, V, dq, x0, R0, wk.E)
        converged = False
        n_it = 0
        for it in range(max_iter):
            n_it = it + 1
            _loads_of(model, i, t1, x, R, v, W, F, T, wk.loads, user)
            err = _single_body(model, i, coef, h, atol, rtol, x0, R0, x, R, v, W, V, vd, dq, F, T, wk.body)
            if not np.isfinite(err):
                return STATUS_NONFINITE, max(iters, n_it)
            if err <= 1.0:
                converged = True
                break
        iters = max(iters, n_it)
        if not converged:
            return STATUS_NEWTON, iters
        _finish(i, coef, R, V, W, acc, vd)
        if not body_finite(x[i], R[i], v[i], W[i]):
            return STATUS_NONFINITE, iters
    return STATUS_OK, iters


@njit
def advance(model, state, work, params, t0, h, k0, k1, out, mon):
    """Steps ``k0 .. k1 - 1`` (step ``k`` starts at ``t0 + k h``), recording through the
    driver; returns ``(status, k)`` with ``k`` the first step not completed."""
    # every array borrowed, once (see rbdyn._jit.borrow): the loop below counts no references
    model, state, work, out, mon = borrow(model), borrow(state), borrow(work), borrow(out), borrow(mon)
    if k0 == 0:
        code = start(model, state, out, mon)
        if code != 0:
            return code, 0
    x, R, v, W, acc, vd, lam = state.x, state.R, state.v, state.W, state.acc, state.vd, state.lam
    coef = work.coef
    _set_coefficients(coef, params, h)
    atol, rtol, max_iter = params.newton_atol, params.newton_rtol, params.newton_max_iter
    user = model.loads.user_start[-1] > 0
    for k in range(k0, k1):
        status, iters = _step(model, x, R, v, W, acc, vd, lam, work, coef, atol, rtol, max_iter, user, t0 + k * h, h)
        if status != STATUS_OK:
            return status, k
        # after the step (written out here, not in a helper that takes the structs: see _scheme)
        count_iterations(out.iteration_counts, out.iterations, out.every, k, iters)
        if not report(model, state, out, mon, k, t0 + (k + 1) * h):
            return STATUS_REPORT, k
    return STATUS_OK, k1


# -- consistent initial accelerations ------------------------------------------------


def _hat(a):
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def consistent_accelerations(system, state, t=0.0):
    """Accelerations and multipliers that satisfy the equations of motion and
    the second derivative of the constraints at ``state``.

    Returns ``(vd, lam)``: ``vd`` of shape (N, 6) holds the origin
    acceleration and the spatial angular acceleration of every body (world
    components; zero translation for pivoted bodies), ``lam`` the
    multipliers in the sign convention of the scheme (the reaction on the
    first body of a constraint is ``-B^T lam``).
    """
    x, R, v, W = (np.array(a, dtype=float, copy=True) for a in state)
    model = system.model
    mass, J, pivoted = model.bodies.mass, model.bodies.inertia, model.bodies.pivoted
    nb = x.shape[0]
    F = np.zeros((nb, 3))
    T = np.zeros((nb, 3))
    scratch = np.empty((4, 3))
    if system.callbacks:
        loads = _callback_loads(system)
        for i in range(nb):
            loads(model, i, t, x[i], R[i], v[i], W[i], F[i], T[i])
            if model.loads.user_start[i + 1] > model.loads.user_start[i]:
                user_loads_into(model, i, t, x[i], R[i], v[i], W[i], F[i], T[i], scratch)
    else:  # in one compiled call: a call per body from Python costs the unboxing of the model
        eval_loads(model, float(t), x, R, v, W, F, T, scratch)
    omega = np.einsum("bij,bj->bi", R, W)
    vd = np.zeros((nb, 6))
    rho = np.einsum("bij,bjk,blk->bil", R, J, R)
    torque = T - np.cross(omega, np.einsum("bij,bj->bi", rho, omega))
    free = ~np.asarray(pivoted, dtype=bool)
    vd[free, :3] = F[free] / mass[free, None]
    if nb:
        vd[:, 3:] = np.linalg.solve(rho, torque[:, :, None])[:, :, 0]
    m = sum(c.n_eq for c in system.constraints)
    if m == 0:
        return vd, np.zeros(0)
    bodies = list(model.constraints.c_bodies)
    dof, nd = {}, 0
    for i in bodies:
        dof[i] = nd
        nd += 3 if pivoted[i] else 6
    A = np.zeros((nd + m, nd + m))
    b = np.zeros(nd + m)
    for i in bodies:
        j = dof[i]
        if not pivoted[i]:
            A[j : j + 3, j : j + 3] = mass[i] * np.eye(3)
            b[j : j + 3] = F[i]
            j += 3
        A[j : j + 3, j : j + 3] = rho[i]
        b[j : j + 3] = torque[i]
    cons = model.constraints
    xa, Ra, xb, Rb = np.empty(3), np.empty((3, 3)), np.empty(3), np.empty((3, 3))
    Ba, Bb, cs, gam = np.zeros((MAX_ROWS, 6)), np.zeros((MAX_ROWS, 6)), np.zeros((SCRATCH_VECTORS, 3)), np.zeros(m)
    zero = np.zeros(3)
    with quiet():
        for k in range(cons.kind.shape[0]):
            ia, ib = cons.body[k]
            pose_into(x, R, ia, xa, Ra)
            pose_into(x, R, ib, xb, Rb)
            va, wa = (v[ia], omega[ia]) if ia >= 0 else (zero, zero)
            vb, wb = (v[ib], omega[ib]) if ib >= 0 else (zero, zero)
            r0, r1 = cons.row[k], cons.row[k + 1]
            kind_gradient(cons.kind[k], cons.data, k, xa, Ra, xb, Rb, Ba, Bb, cs)
            kind_velocity_product(cons.kind[k], cons.data, k, xa, Ra, np.ascontiguousarray(va), np.ascontiguousarray(wa),
                                  xb, Rb, np.ascontiguousarray(vb), np.ascontiguousarray(wb), gam, r0, cs)
            b[nd + r0: nd + r1] = -gam[r0:r1]  # B vd = -gamma
            for i, B in ((ia, Ba), (ib, Bb)):
                if i < 0:
                    continue
                j = dof[i]
                if not pivoted[i]:
                    A[nd + r0: nd + r1, j: j + 3] += B[: r1 - r0, :3]
                    j += 3
                A[nd + r0: nd + r1, j: j + 3] += B[: r1 - r0, 3:]
    A[:nd, nd:] = A[nd:, :nd].T
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
        raise InputError("system", "the initial accelerations overflow: give masses, inertias and velocities of "
                                   "moderate size")
    if np.linalg.cond(A) < 1e12:
        sol = np.linalg.solve(A, b)
    else:  # redundant constraints (a closed loop): the minimum-norm multipliers
        sol = np.linalg.lstsq(A, b, rcond=1e-12)[0]
    for i in bodies:
        j = dof[i]
        if not pivoted[i]:
            vd[i, :3] = sol[j : j + 3]
            j += 3
        vd[i, 3:] = sol[j : j + 3]
    return vd, sol[nd:]


# -- the scheme --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class GenAlpha(Scheme):
    r"""Lie-group generalized-α with index-3 constraints, as Kynema implements it.

    The method of Brüls, Cardona & Arnold (2012) in inertial coordinates:
    spatial angular velocities, rotations updated by left multiplication
    :math:`R_{n+1} = \exp(h\widetilde{\Delta q})R_n`, equilibrium enforced at
    :math:`t_{n+1}` with the true accelerations, algorithmic accelerations
    that carry the α-weighting, and every constraint of the system
    (every registered constraint kind, to the world or between bodies) enforced at
    position level with Lagrange multipliers (index 3). Each step solves the
    equations with Newton's method and the tangent operator of
    Géradin & Cardona, the equilibrium rows scaled by :math:`\beta h^2`
    (Bottasso, Dopico & Trainelli 2008), and stops with the test of Arnold &
    Hante (2017). Initial accelerations and multipliers are made consistent
    with the equations of motion in ``init``.

    The iteration matrix has the exact derivatives of the inertial and
    gyroscopic terms and of the constraint forces (:math:`K^\Phi`). The loads
    enter the residual only: the moment of a force applied away from the
    body origin (gravity on a pivoted body, a point force) depends on the
    rotation, and leaving that stiffness out costs Newton's method its
    quadratic rate only when that moment matters next to the inertia
    (:math:`\beta h^2 \|\partial\tau/\partial\theta\| \not\ll \|J\|`);
    in exchange a built-in load and the same load given as a Python
    callback take identical iterations.

    Second order for free, pivoted and constrained bodies. Nothing is
    conserved exactly except what every step keeps to round-off: the linear
    momentum of a system without external forces (translation is a linear
    Newmark scheme and internal reactions cancel) and the orthonormality of
    :math:`R`. For :math:`\rho_\infty < 1` the high frequencies are damped;
    :math:`\rho_\infty = 1` is the non-dissipative (trapezoidal) member.

    Parameters
    ----------
    rho_inf : float
        Spectral radius at infinite frequency, in [0, 1] (Kynema's tests: 0.9).
    newton_atol, newton_rtol : float
        Absolute (> 0) and relative (>= 0) tolerances of the convergence test
        (Kynema: 1e-5 and 1e-3). The absolute one has the units of the
        position increments (metres, radians) and of the multipliers.
    newton_max_iter : int
        Newton iterations allowed per step; more is a
        :class:`~rbdyn.NumericalError`.

    Notes
    -----
    The carry is ``(x, R, v, W, a, vd, lam)``: the state, the algorithmic
    and the true accelerations (N, 6) in world components (origin
    acceleration, spatial angular acceleration) and the multipliers of the
    last step (reaction on a constraint's first body: ``-B^T lam``).

    References
    ----------
    * O. Brüls, A. Cardona, M. Arnold, "Lie group generalized-α time
      integration of constrained flexible multibody systems", Mechanism and
      Machine Theory 48:121–137, 2012.
    * M. Arnold, O. Brüls, "Convergence of the generalized-α scheme for
      constrained mechanical systems", Multibody System Dynamics
      18(2):185–202, 2007.
    * C. L. Bottasso, D. Dopico, L. Trainelli, "On the optimal scaling of
      index three DAEs in multibody dynamics", Multibody System Dynamics
      19:3–20, 2008.
    * M. Arnold, S. Hante, "Implementation details of a generalized-α
      differential-algebraic equation Lie group method", Journal of
      Computational and Nonlinear Dynamics 12(2):021002, 2017.
    * M. Géradin, A. Cardona, *Flexible Multibody Dynamics: A Finite
      Element Approach*, Wiley, 2001 (the tangent operator).
    * Kynema (formerly OpenTurbine), https://github.com/kynema/kynema: the
      heavy-top regression test this implementation reproduces.
    """

    rho_inf: float = 0.9
    newton_atol: float = 1e-5
    newton_rtol: float = 1e-3
    newton_max_iter: int = 10

    name = "gen_alpha"
    description = "Lie-group generalized-alpha (Bruls, Cardona & Arnold 2012; Kynema): implicit, index-3 constraints, order 2"
    reference = (
        "O. Brüls, A. Cardona and M. Arnold, Lie group generalized-α time integration of constrained "
        "flexible multibody systems, Mechanism and Machine Theory 48:121-137, 2012"
    )
    label = "Lie group generalized-α"
    order = 2
    implicit = True
    conserves = frozenset({"linear momentum", "orthonormality"})
    energy = "not conserved"
    symmetric = False
    supports_constraints = True
    constrained_order = 2
    kernel = advance

    def __post_init__(self):
        value = self.rho_inf
        bad = isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating))
        if bad or not _isfinite(value) or not 0.0 <= value <= 1.0:
            raise InputError(f"scheme.{self.name}.rho_inf", f"must be a number in [0, 1], got {value!r}")
        self._check_positive("newton_atol")
        rtol = self.newton_rtol
        bad = isinstance(rtol, bool) or not isinstance(rtol, (int, float, np.integer, np.floating))
        if bad or not _isfinite(rtol) or rtol < 0:
            raise InputError(f"scheme.{self.name}.newton_rtol", f"must be a finite number >= 0, got {rtol!r}")
        self._check_positive("newton_max_iter", integer=True)

    @property
    def coefficients(self) -> tuple[float, float, float, float]:
        """``(alpha_m, alpha_f, gamma, beta)`` for :attr:`rho_inf`."""
        return gen_alpha_coefficients(self.rho_inf)

    def params(self):
        return GenAlphaParams(*self.coefficients, float(self.newton_atol), float(self.newton_rtol),
                              int(self.newton_max_iter))

    def init(self, system, state):
        """The state plus consistent accelerations: ``(x, R, v, W, acc, vd, lam)``
        with ``acc = vd`` (see :func:`consistent_accelerations`)."""
        x, R, v, W = (np.array(a, dtype=float, copy=True) for a in state)
        vd, lam = consistent_accelerations(system, (x, R, v, W))
        return GenAlphaState(x, R, v, W, vd.copy(), vd, lam)

    def work(self, system, state):
        return make_work(system.model, state.lam.shape[0])
