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

import math
from typing import NamedTuple

import numpy as np

from .._compile import njit, njit_inline, quiet
from .._errors import InputError
from ..constraints.assembly import blocks_into, kind_gradient, kind_velocity_product, pose, scratch
from ..constraints.base import MAX_ROWS, SCRATCH_VECTORS
from ..constraints.solve import lu_solve_inplace, solve_min_norm
from ..driver.report import (count_iterations, derive_stored, finish, fold_stored, record_due, schedule, start,
                            store, store_step)
from ..driver.status import STATUS_CONSTRAINT, STATUS_NEWTON, STATUS_NONFINITE, STATUS_OK, STATUS_REPORT, STATUS_SINGULAR
from ..model.arrays import body_loads_into, eval_loads, has_user_loads, user_loads_into, user_scratch
from ..so3 import (exp_coefficients, exp_scaled, mat3, mat_mul, mat_T_vec, mat_vec, minus_hat, put_mat3, put_vec3,
                   reorthonormalized, rodrigues, solve3, vec3)
from .callbacks import callback_loads
from .common import row_finite

__all__ = ["GenAlphaState", "GenAlphaParams", "advance", "consistent_accelerations"]


# -- layout --------------------------------------------------------------------
#
# A step allocates nothing: a body's terms are values (the value forms of rbdyn.so3), and the
# arrays of the step (GenAlphaWork) are made once per kernel call. Bodies in at
# least one constraint form one coupled group, solved with one dense matrix of their unknowns
# (6 for a free body, 3 for a pivoted one) and the constraint rows; every other body is
# stepped on its own, start to end (a diagonal translation and a 3x3 rotation solve per
# iteration, its loads evaluated at every iteration). Each group has its own convergence test,
# so that the motion of a body does not depend on the unrelated bodies of the system; the
# step's iteration count is the largest of the groups'. Only body_loads_into is called as a
# module global (see rbdyn._compile.python_variant).
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


class CoupledScratch(NamedTuple):
    """Scratch of the coupled group's assembly: inertia and gyroscopic matrices of its bodies,
    the constraint assembly's scratch (:class:`rbdyn.constraints.assembly.Scratch`), the 12 x 12
    stiffness of one constraint, the round-off floor of the residuals, copies of the matrix and
    the right-hand side for the minimum-norm solve."""

    rho_b: np.ndarray
    G_b: np.ndarray
    assembly: tuple
    Kc: np.ndarray
    cfloor: np.ndarray
    S_copy: np.ndarray
    rhs_copy: np.ndarray


class GenAlphaWork(NamedTuple):
    """The arrays of a kernel call. ``coef`` holds alpha_m, alpha_f, gamma, beta, beta', gamma'
    and the conditioner beta h^2 of the run's step; ``dof`` the first unknown of each coupled body
    (-1 for the others), ``n_dof`` the coupled group's body unknowns; ``F``, ``T`` the loads,
    ``V`` the velocities, ``dq`` the increments, ``x0``, ``R0`` the configuration at the step's
    start, of every body; ``S``, ``rhs`` the coupled group's Newton system."""

    coef: np.ndarray
    dof: np.ndarray
    n_dof: int
    F: np.ndarray
    T: np.ndarray
    V: np.ndarray
    dq: np.ndarray
    x0: np.ndarray
    R0: np.ndarray
    S: np.ndarray
    rhs: np.ndarray
    coupled: CoupledScratch


@njit_inline
def _work(pivoted, c_bodies, n_rows):
    """The arrays of a kernel call (:class:`GenAlphaWork`) for bodies ``pivoted`` (0/1), the
    constrained ones ``c_bodies`` and ``n_rows`` constraint rows."""
    nb = pivoted.shape[0]
    dof = np.full(nb, -1, dtype=np.int64)
    nd = 0
    for j in range(c_bodies.shape[0]):
        dof[c_bodies[j]] = nd
        nd += 6 if pivoted[c_bodies[j]] == 0 else 3
    nt = nd + n_rows
    nc = nb if n_rows > 0 else 0
    coupled = CoupledScratch(rho_b=np.empty((nc, 3, 3)), G_b=np.empty((nc, 3, 3)), assembly=scratch(),
                             Kc=np.empty((12, 12)), cfloor=np.empty(nt), S_copy=np.empty((nt, nt)),
                             rhs_copy=np.empty(nt))
    return GenAlphaWork(coef=np.empty(7), dof=dof, n_dof=nd, F=np.empty((nb, 3)), T=np.empty((nb, 3)),
                        V=np.empty((nb, 6)), dq=np.empty((nb, 6)), x0=np.empty((nb, 3)), R0=np.empty((nb, 3, 3)),
                        S=np.empty((nt, nt)), rhs=np.empty(nt), coupled=coupled)


@njit_inline
def _times_hat(M, u):
    """``M hat(u)``."""
    return (M[1] * u[2] - M[2] * u[1], M[2] * u[0] - M[0] * u[2], M[0] * u[1] - M[1] * u[0],
            M[4] * u[2] - M[5] * u[1], M[5] * u[0] - M[3] * u[2], M[3] * u[1] - M[4] * u[0],
            M[7] * u[2] - M[8] * u[1], M[8] * u[0] - M[6] * u[2], M[6] * u[1] - M[7] * u[0])


@njit_inline
def _hat_times(u, M):
    """``hat(u) M``."""
    return (u[1] * M[6] - u[2] * M[3], u[1] * M[7] - u[2] * M[4], u[1] * M[8] - u[2] * M[5],
            u[2] * M[0] - u[0] * M[6], u[2] * M[1] - u[0] * M[7], u[2] * M[2] - u[0] * M[8],
            u[0] * M[3] - u[1] * M[0], u[0] * M[4] - u[1] * M[1], u[0] * M[5] - u[1] * M[2])


@njit_inline
def _times_transposed(A, B):
    """``A B^T``."""
    return (A[0] * B[0] + A[1] * B[1] + A[2] * B[2], A[0] * B[3] + A[1] * B[4] + A[2] * B[5],
            A[0] * B[6] + A[1] * B[7] + A[2] * B[8],
            A[3] * B[0] + A[4] * B[1] + A[5] * B[2], A[3] * B[3] + A[4] * B[4] + A[5] * B[5],
            A[3] * B[6] + A[4] * B[7] + A[5] * B[8],
            A[6] * B[0] + A[7] * B[1] + A[8] * B[2], A[6] * B[3] + A[7] * B[4] + A[8] * B[5],
            A[6] * B[6] + A[7] * B[7] + A[8] * B[8])


@njit_inline
def _body_terms(mass, J, pivoted, R, w, vd_t, wd, F, T):
    """Inertia ``rho = R J R^T``, gyroscopic matrix ``G``, stiffness ``K`` and residual ``res``
    (translation, rotation: ``(res_t, res_r)``) of one body: ``(rho, G, K, res_t, res_r)``.

    ``w`` is the spatial angular velocity, ``vd_t`` and ``wd`` the true accelerations
    (translation, rotation), ``F``, ``T`` the loads. ``K`` is the derivative of the inertial
    residual with respect to a spatial rotation increment. The loads add no stiffness: the
    moments of forces applied away from the body origin (gravity on a pivoted body, point
    forces) depend on the rotation, but leaving that out changes only the rate of Newton's
    method, not its solution, and keeps the iteration the same for a built-in load and the same
    load given as a Python callback.
    """
    rho = _times_transposed(mat_mul(R, J), R)
    p = mat_vec(rho, w)  # rho omega
    q = mat_vec(rho, wd)  # rho omega_dot
    if pivoted == 0:
        res_t = (mass * vd_t[0] - F[0], mass * vd_t[1] - F[1], mass * vd_t[2] - F[2])
    else:
        res_t = (0.0, 0.0, 0.0)
    res_r = (q[0] + (w[1] * p[2] - w[2] * p[1]) - T[0], q[1] + (w[2] * p[0] - w[0] * p[2]) - T[1],
             q[2] + (w[0] * p[1] - w[1] * p[0]) - T[2])
    # G = hat(w) rho - hat(rho w); H = rho hat(w) - hat(rho w)
    G = minus_hat(_hat_times(w, rho), p)
    H = minus_hat(_times_hat(rho, w), p)
    # K = rho hat(wd) - hat(rho wd) + hat(w) H
    K0 = minus_hat(_times_hat(rho, wd), q)
    wH = _hat_times(w, H)
    K = (K0[0] + wH[0], K0[1] + wH[1], K0[2] + wH[2], K0[3] + wH[3], K0[4] + wH[4], K0[5] + wH[5],
         K0[6] + wH[6], K0[7] + wH[7], K0[8] + wH[8])
    return rho, G, K, res_t, res_r


@njit_inline
def _terms_of(model, i, R, V, vd, F, T):
    """:func:`_body_terms` of body ``i`` from the step's arrays."""
    mass, J, _, pivoted, _ = model[0]
    return _body_terms(mass[i], mat3(J, i), pivoted[i], mat3(R, i), (V[i, 3], V[i, 4], V[i, 5]),
                       (vd[i, 0], vd[i, 1], vd[i, 2]), (vd[i, 3], vd[i, 4], vd[i, 5]), vec3(F, i), vec3(T, i))


@njit_inline
def _place(i, pivoted, x0, R0, dq, h, x, R, V, v, W):
    """Configuration of body ``i`` from the step's start and ``dq``; its origin velocity ``v``
    and body rate ``W`` from ``V``."""
    Ri = mat_mul(exp_scaled(h, (dq[i, 3], dq[i, 4], dq[i, 5])), mat3(R0, i))
    put_mat3(R, i, Ri)
    if pivoted[i] == 0:
        for a in range(3):
            x[i, a] = x0[i, a] + h * dq[i, a]
            v[i, a] = V[i, a]
    put_vec3(W, i, mat_T_vec(Ri, (V[i, 3], V[i, 4], V[i, 5])))


@njit_inline
def _predict(i, pivoted, coef, h, x, R, v, W, acc, vd, V, dq, x0, R0):
    """Start of a step for body ``i``: save its configuration, predict it, place it."""
    am, af, gamma, beta = coef[0], coef[1], coef[2], coef[3]
    for a in range(3):
        x0[i, a] = x[i, a]
        for b in range(3):
            R0[i, a, b] = R[i, a, b]
        V[i, a] = v[i, a] if pivoted[i] == 0 else 0.0
        V[i, 3 + a] = R[i, a, 0] * W[i, 0] + R[i, a, 1] * W[i, 1] + R[i, a, 2] * W[i, 2]
    for c in range(6):
        a_old = acc[i, c]
        a_new = (af * vd[i, c] - am * a_old) / (1.0 - am)
        v_old = V[i, c]
        V[i, c] = v_old + h * (1.0 - gamma) * a_old + h * gamma * a_new
        dq[i, c] = v_old + h * (0.5 - beta) * a_old + h * beta * a_new
        acc[i, c] = a_new
        vd[i, c] = 0.0
    _place(i, pivoted, x0, R0, dq, h, x, R, V, v, W)


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
def _left_jacobian(h, dq, i):
    """``J_l(h dq_omega) = T(h dq_omega)^T`` of body ``i``."""
    p0, p1, p2 = h * dq[i, 3], h * dq[i, 4], h * dq[i, 5]
    _, b, c = exp_coefficients(p0 * p0 + p1 * p1 + p2 * p2)
    return rodrigues(b, c, p0, p1, p2)


@njit_inline
def _single_body(model, i, coef, h, atol, rtol, x0, R0, x, R, v, W, V, vd, dq, F, T):
    """One Newton iteration of an unconstrained body; returns its error measure
    (the increment is applied), or nan for a non-finite or singular system."""
    mass, pivoted = model[0][0], model[0][3]  # Bodies.mass, Bodies.pivoted
    bp, gp = coef[4], coef[5]
    rho, G, K, res_t, res_r = _terms_of(model, i, R, V, vd, F, T)
    S = mat_mul(K, _left_jacobian(h, dq, i))
    S = (S[0] + (bp * rho[0] + gp * G[0]), S[1] + (bp * rho[1] + gp * G[1]), S[2] + (bp * rho[2] + gp * G[2]),
         S[3] + (bp * rho[3] + gp * G[3]), S[4] + (bp * rho[4] + gp * G[4]), S[5] + (bp * rho[5] + gp * G[5]),
         S[6] + (bp * rho[6] + gp * G[6]), S[7] + (bp * rho[7] + gp * G[7]), S[8] + (bp * rho[8] + gp * G[8]))
    d0, d1, d2 = solve3(S, -res_r[0], -res_r[1], -res_r[2])
    if pivoted[i] == 0:
        n = 6
        inv = 1.0 / (bp * mass[i])
        y = (-res_t[0] * inv, -res_t[1] * inv, -res_t[2] * inv, d0, d1, d2)
    else:
        n = 3
        y = (d0, d1, d2, 0.0, 0.0, 0.0)
    s = _increment_error(i, pivoted, y, 0, h, dq, atol, rtol)
    if np.isfinite(s):
        _apply_increment(i, pivoted, y, 0, h, bp, gp, dq, V, vd)
        _place(i, pivoted, x0, R0, dq, h, x, R, V, v, W)
    return math.sqrt(s / n) if np.isfinite(s) else np.nan


@njit
def _coupled(model, coef, h, atol, rtol, dof, nd, x0, R0, x, R, v, W, V, vd, lam, dq, F, T, S, rhs, cscr):
    """One Newton iteration of the constrained bodies and the multipliers.

    Returns the error measure (the increment is applied); -1 when the matrix cannot be solved
    even for the minimum-norm increment (no rank at all, or not finite; redundant constraints
    are solved, see below); -2 once converged on constraints that contradict each other; or nan.
    """
    rho_b, G_b, (cs, Ba, Bb), Kc, cfloor, S_copy, rhs_copy = cscr
    mass, _, _, pivoted, _ = model[0]
    kind, body, data, row, bodies, _ = model[2]  # Constraints
    bp, gp, cond = coef[4], coef[5], coef[6]
    nt = S.shape[0]
    for a in range(nt):
        rhs[a] = 0.0
        for b in range(nt):
            S[a, b] = 0.0
    # 1. bodies: residual and the rotation stiffness (derivatives w.r.t. spatial increments)
    for jb in range(bodies.shape[0]):
        i = bodies[jb]
        rho, G, K, res_t, res_r = _terms_of(model, i, R, V, vd, F, T)
        put_mat3(rho_b, i, rho)
        put_mat3(G_b, i, G)
        j = dof[i]
        th = j + (3 if pivoted[i] == 0 else 0)
        if pivoted[i] == 0:
            for a in range(3):
                rhs[j + a] = cond * res_t[a]
        for a in range(3):
            rhs[th + a] = cond * res_r[a]
            for b in range(3):
                S[th + a, th + b] += cond * K[3 * a + b]
    # 2. constraints: residuals, gradient B, forces B^T lambda and their stiffness, from the kinds
    for k in range(kind.shape[0]):
        r0 = row[k]
        n_rows = row[k + 1] - r0
        cr = nd + r0
        for a in range(12):
            for b in range(12):
                Kc[a, b] = 0.0
        blocks_into(kind, body, data, k, x, R, rhs, cfloor, nd + r0, lam, r0, Kc, cs, Ba, Bb)
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
    for jb in range(bodies.shape[0]):
        i = bodies[jb]
        Jl = _left_jacobian(h, dq, i)
        th = dof[i] + (3 if pivoted[i] == 0 else 0)
        for a in range(nt):
            s0, s1, s2 = S[a, th], S[a, th + 1], S[a, th + 2]
            for b in range(3):
                S[a, th + b] = s0 * Jl[b] + s1 * Jl[3 + b] + s2 * Jl[6 + b]
    # 4. mass and gyroscopic terms
    for jb in range(bodies.shape[0]):
        i = bodies[jb]
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
    for jb in range(bodies.shape[0]):
        i = bodies[jb]
        s += _increment_error(i, pivoted, rhs, dof[i], h, dq, atol, rtol)
    for a in range(nt - nd):
        rhs[nd + a] /= cond
        e = rhs[nd + a] / (atol + rtol * abs(lam[a]))
        s += e * e
    if not np.isfinite(s):
        return np.nan
    if contradicting and s <= nt:  # converged (the caller's test is sqrt(s / nt) <= 1)
        return -2.0
    for jb in range(bodies.shape[0]):
        i = bodies[jb]
        _apply_increment(i, pivoted, rhs, dof[i], h, bp, gp, dq, V, vd)
        _place(i, pivoted, x0, R0, dq, h, x, R, V, v, W)
    for a in range(nt - nd):
        lam[a] += rhs[nd + a]
    return math.sqrt(s / nt)


@njit_inline
def _finish(i, coef, R, V, W, acc, vd):
    """End of a step for body ``i``: algorithmic accelerations, rotation kept on SO(3)."""
    ratio = (1.0 - coef[1]) / (1.0 - coef[0])
    for c in range(6):
        acc[i, c] += ratio * vd[i, c]
    Ri = reorthonormalized(mat3(R, i))
    put_mat3(R, i, Ri)
    put_vec3(W, i, mat_T_vec(Ri, (V[i, 3], V[i, 4], V[i, 5])))


@njit_inline
def _set_coefficients(coef, params, h):
    am, af, gamma, beta = params[0], params[1], params[2], params[3]  # GenAlphaParams
    coef[0], coef[1], coef[2], coef[3] = am, af, gamma, beta
    coef[4] = (1.0 - am) / (h * h * beta * (1.0 - af))  # beta'
    coef[5] = gamma / (h * beta)  # gamma'
    coef[6] = beta * h * h  # conditioner


@njit
def _steps(model, functions, state, params, t0, h, k0, k1, out, mon):
    """Steps ``k0 .. k1 - 1`` (step ``k`` starts at ``t0 + k h``), recording through the
    driver; returns ``(status, k)`` with ``k`` the first step not completed (see
    :mod:`rbdyn.integrators.base`).

    A step's iterations count the largest of the groups'. Every array is bound here, once per
    call, and the loops call nothing but the coupled group's iteration: a call with arrays
    costs reference counting.
    """
    x, R, v, W, acc, vd, lam = state
    _, _, _, _, atol, rtol, max_iter = params
    pivoted = model[0][3]  # Bodies.pivoted
    c_bodies, u_bodies = model[2][4], model[2][5]  # Constraints.c_bodies, u_bodies
    every, n_steps, active, counts, iterations, steps, pending = schedule(out, mon)
    user = has_user_loads(model)
    uscr = user_scratch()
    wk = _work(pivoted, c_bodies, lam.shape[0])
    coef, F, T, V, dq, x0, R0 = wk.coef, wk.F, wk.T, wk.V, wk.dq, wk.x0, wk.R0
    _set_coefficients(coef, params, h)
    m = lam.shape[0]
    if k0 == 0:
        code = start(model, functions, x, R, v, W, out, mon)
        if code != 0:
            return code, 0
    for k in range(k0, k1):
        t1 = t0 + k * h + h
        iters = 0
        if m > 0:
            # the coupled group: the constrained bodies and the multipliers
            for jb in range(c_bodies.shape[0]):
                _predict(c_bodies[jb], pivoted, coef, h, x, R, v, W, acc, vd, V, dq, x0, R0)
            for a in range(m):
                lam[a] = 0.0
            status = STATUS_NEWTON
            for it in range(max_iter):
                iters = it + 1
                # loads at the current iterate and t_{n+1}
                for jb in range(c_bodies.shape[0]):
                    i = c_bodies[jb]
                    xi, Ri, vi, Wi = vec3(x, i), mat3(R, i), vec3(v, i), vec3(W, i)
                    f, tau = body_loads_into(model, i, t1, xi, Ri, vi, Wi)
                    if user:
                        f, tau = user_loads_into(model, functions, i, t1, xi, Ri, vi, Wi, f, tau, uscr)
                    put_vec3(F, i, f)
                    put_vec3(T, i, tau)
                err = _coupled(model, coef, h, atol, rtol, wk.dof, wk.n_dof, x0, R0, x, R, v, W, V, vd, lam, dq, F, T,
                               wk.S, wk.rhs, wk.coupled)
                if err == -1.0:
                    status = STATUS_SINGULAR
                elif err == -2.0:  # converged on constraints that contradict each other
                    status = STATUS_CONSTRAINT
                elif err <= 1.0:
                    status = STATUS_OK
                elif not np.isfinite(err):
                    status = STATUS_NONFINITE
                if status != STATUS_NEWTON:
                    break
            if status != STATUS_OK:
                return status, k
            for jb in range(c_bodies.shape[0]):
                i = c_bodies[jb]
                _finish(i, coef, R, V, W, acc, vd)
                if not row_finite(i, x, R, v, W):
                    return STATUS_NONFINITE, k
        for ju in range(u_bodies.shape[0]):
            i = u_bodies[ju]
            _predict(i, pivoted, coef, h, x, R, v, W, acc, vd, V, dq, x0, R0)
            converged = False
            n_it = 0
            for it in range(max_iter):
                n_it = it + 1
                xi, Ri, vi, Wi = vec3(x, i), mat3(R, i), vec3(v, i), vec3(W, i)
                f, tau = body_loads_into(model, i, t1, xi, Ri, vi, Wi)
                if user:
                    f, tau = user_loads_into(model, functions, i, t1, xi, Ri, vi, Wi, f, tau, uscr)
                put_vec3(F, i, f)
                put_vec3(T, i, tau)
                err = _single_body(model, i, coef, h, atol, rtol, x0, R0, x, R, v, W, V, vd, dq, F, T)
                if not np.isfinite(err):
                    return STATUS_NONFINITE, k
                if err <= 1.0:
                    converged = True
                    break
            iters = max(iters, n_it)
            if not converged:
                return STATUS_NEWTON, k
            _finish(i, coef, R, V, W, acc, vd)
            if not row_finite(i, x, R, v, W):
                return STATUS_NONFINITE, k
        count_iterations(counts, iterations, every, k, iters)
        if active != 0 and store_step(steps, pending, k, t0 + (k + 1) * h, x, R, v, W):
            bad = fold_stored(model, functions, mon)  # a block of steps, while in the cache
            if bad >= 0:
                return STATUS_REPORT, bad
        if record_due(every, n_steps, k) and store(out, k, t0 + (k + 1) * h, x, R, v, W):
            bad = derive_stored(model, functions, out, k)  # a block of stored rows, while in the cache
            if bad >= 0:
                return STATUS_REPORT, bad
    return STATUS_OK, k1


@njit
def advance(model, functions, state, params, t0, h, k0, k1, out, mon):
    """The steps, then the driver's :func:`~rbdyn.driver.report.finish` (the rows and monitor
    steps stored since the last block), in one compiled call."""
    code, k = _steps(model, functions, state, params, t0, h, k0, k1, out, mon)
    return finish(model, functions, out, mon, code, k)


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
    if system.callbacks:
        loads = callback_loads(system)
        for i in range(nb):
            xi, Ri, vi, Wi = tuple(x[i]), tuple(R[i].ravel()), tuple(v[i]), tuple(W[i])
            f, tau = loads(system.kernel_model, i, float(t), xi, Ri, vi, Wi)
            if model.loads.user_start[i + 1] > model.loads.user_start[i]:
                f, tau = user_loads_into(system.kernel_model, system.load_functions, i, float(t), xi, Ri, vi, Wi, f, tau,
                                         user_scratch())
            F[i], T[i] = f, tau
    else:  # in one compiled call: a call per body from Python costs the unboxing of the model
        eval_loads(system.kernel_model, system.load_functions, float(t), x, R, v, W, F, T)
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
    Ba, Bb, cs, gam = np.zeros((MAX_ROWS, 6)), np.zeros((MAX_ROWS, 6)), np.zeros((SCRATCH_VECTORS, 3)), np.zeros(m)
    zero = np.zeros(3)
    with quiet():
        for k in range(cons.kind.shape[0]):
            ia, ib = cons.body[k]
            xa, Ra = pose(x, R, ia)
            xb, Rb = pose(x, R, ib)
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
