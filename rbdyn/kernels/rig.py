r"""Solfec-1.0's rigid-rotation schemes RIG_POS, RIG_NEG and RIG_IMP.

One step of size :math:`h` (Koziara & Bićanić 2010, where the schemes are
NEW1, NEW2 and NEW3; Solfec-1.0 ``bod.c``), in the symbols of the book's
notation and RIG methods pages (``book/notation.md``, ``book/methods/rig.md``,
which also take a step by hand and compare it with this code):

1. half step: :math:`\Lambda^{t+h/2} = \Lambda^t\exp[\tfrac h2\mathbf W^t]`,
   :math:`\mathbf x^{t+h/2} = \mathbf x^t + \tfrac h2\mathbf v^t`;
2. loads at the mid configuration: world force :math:`\mathbf f`, body
   torque :math:`\mathbf T`;
3. mid-step rate :math:`\mathbf W^{\mathrm{mid}} = \mathbf J^{-1}[\exp(-\tfrac h2\mathbf W^t)\mathbf J\mathbf W^t + \tfrac h2\mathbf T]`;
4. free velocities :math:`\mathbf W^{\mathrm{free}} = \mathbf W^t + h\mathbf J^{-1}[\mathbf T - \mathbf W^{\mathrm{mid}}\times\mathbf J\mathbf W^{\mathrm{mid}}]`
   (Solfec's :math:`\Omega_1`, ``W1`` in the code),
   :math:`\mathbf v^{t+h} = \mathbf v^t + \tfrac hm\mathbf f`, and the angular impulse
   :math:`\mathbf a = \exp(-\tfrac h2\mathbf W^t)\mathbf J\mathbf W^t + h\mathbf T` (``A``);
5. constraint reaction impulses add :math:`h\mathbf J^{-1}\mathbf r` to
   :math:`\mathbf W^{\mathrm{free}}` and :math:`h\mathbf r` to :math:`\mathbf a`
   (:math:`h\mathbf r` the body-frame moment impulse), and their force impulse
   over :math:`m` to :math:`\mathbf v^{t+h}`;
6. translation :math:`\mathbf x^{t+h} = \mathbf x^{t+h/2} + \tfrac h2\mathbf v^{t+h}`;
7. rotation :math:`\Lambda^{t+h} = \Lambda^{t+h/2}\exp[\tfrac h2\mathbf W^{\mathrm{free}}]`
   (RIG_IMP: :math:`\exp[\tfrac h2\mathbf W^{t+h}]`) and the new rate

   * RIG_POS: :math:`\mathbf W^{t+h} = \mathbf W^{\mathrm{free}}`;
   * RIG_NEG: :math:`\mathbf W^{t+h} = \mathbf J^{-1}\exp(-\tfrac h2\mathbf W^{\mathrm{free}})\,\mathbf a`;
   * RIG_IMP: :math:`\mathbf W^{t+h}` solves :math:`\exp(\tfrac h2\mathbf W)\mathbf J\mathbf W = \mathbf a`
     (3×3 Newton with the analytic derivative of the exponential map).

A pivoted body has no translation; its inertia is about the pivot.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from .._compile import njit, njit_inline
from ..constraints.assembly import gradient_into, residuals_into, scratch
from ..constraints.solve import lu_solve_inplace, solve_min_norm
from ..driver.report import (count_iterations, derive_stored, finish, fold_stored, record_due, schedule, start,
                            store, store_step)
from ..driver.status import STATUS_CONSTRAINT, STATUS_NEWTON, STATUS_NONFINITE, STATUS_OK, STATUS_REPORT, STATUS_SINGULAR
from ..model.arrays import body_loads_into, has_user_loads, user_loads_into, user_scratch
from ..so3 import (cross, dot3_add, exp_coefficients, exp_scaled, mat3, mat_mul, mat_T_vec, mat_vec, put_mat3, put_vec3,
                   reorthonormalized, rodrigues, solve3, vec3)
from .common import finite, row_finite

__all__ = ["RigState", "RigParams", "POS", "NEG", "IMP", "advance"]

#: The variants, ``RigParams.variant``: RIG_POS, RIG_NEG, RIG_IMP.
POS, NEG, IMP = 0, 1, 2


# A step allocates nothing: a body's state and its phases are values (the value forms of
# rbdyn.so3), and the constraint solve's arrays (:class:`RigWork`) are made once per kernel call.
# A body in no constraint is stepped on its own, start to end (one pass over its data per step,
# which keeps a system of many bodies in cache). The bodies of the constraints go through the
# phases together, because the constraint solver sits between the free velocity (3.-5.) and the
# final update (6.-7.). Both paths call the same per-body helpers, so a body's arithmetic is the
# same in both. Only body_loads_into is called as a module global (see
# rbdyn._compile.python_variant).
#
# exp(-h/2 hat(W)) is exp(h/2 hat(W))^T (to the bit, with Rodrigues' formula), so the
# exponential of the half step (E) also gives the pull-back of J W in phase 3, and in the final
# update one exponential serves both RIG_NEG's momentum correction and the rotation; RIG_IMP's
# Newton leaves the exponential of its solution in E for the rotation.


class RigState(NamedTuple):
    """The carried state: origin position, rotation, origin velocity, body rate (leading body
    axis), and the reaction impulses of the last step (the next solve's first guess)."""

    x: np.ndarray
    R: np.ndarray
    v: np.ndarray
    W: np.ndarray
    P: np.ndarray


class RigParams(NamedTuple):
    variant: int
    newton_tol: float
    newton_max_iter: int
    constraint_tol: float
    constraint_max_iter: int


class RigWork(NamedTuple):
    """The constraint solve's arrays, made once per kernel call.

    For the constrained bodies (local numbers ``local[i]`` of body ``i``): their half step
    (``x_half``, ``R_half``, ``E`` by body number), their free velocities and impulse (``v_free``,
    ``W1_free``, ``A_free``), the rate their last rotation update used (``W_rot``), the gradient at
    the mid and the end configuration (``B_mid``, ``B_end``, m x 6 nc), the sensitivity of the end
    configuration to a generalized impulse (``trans_sens`` per body, ``rot_sens`` (nc, 3, 3)), and
    the Newton system (``Z``, ``K`` and its copy for the LU factorization ``K_lu``, ``g``,
    ``floor``, ``delta``).
    """

    local: np.ndarray
    E: np.ndarray
    R_half: np.ndarray
    x_half: np.ndarray
    v_free: np.ndarray
    W1_free: np.ndarray
    A_free: np.ndarray
    W_rot: np.ndarray
    B_mid: np.ndarray
    B_end: np.ndarray
    Z: np.ndarray
    trans_sens: np.ndarray
    rot_sens: np.ndarray
    K: np.ndarray
    K_lu: np.ndarray
    g: np.ndarray
    floor: np.ndarray
    delta: np.ndarray


@njit_inline
def _work(n_bodies, c_bodies, n_rows):
    """The constraint solve's arrays (:class:`RigWork`) for ``n_bodies`` bodies, the constrained
    ones ``c_bodies`` and ``n_rows`` constraint rows."""
    nc = c_bodies.shape[0]
    local = np.full(n_bodies, -1, dtype=np.int64)
    for j in range(nc):
        local[c_bodies[j]] = j
    nbc = n_bodies if n_rows > 0 else 0  # by body number, for the constrained bodies only
    return RigWork(
        local=local, E=np.empty((nbc, 3, 3)), R_half=np.empty((nbc, 3, 3)), x_half=np.empty((nbc, 3)),
        v_free=np.empty((nc, 3)), W1_free=np.empty((nc, 3)), A_free=np.empty((nc, 3)), W_rot=np.empty((nc, 3)),
        B_mid=np.zeros((n_rows, 6 * nc)), B_end=np.zeros((n_rows, 6 * nc)), Z=np.zeros((n_rows, 6 * nc)),
        trans_sens=np.zeros(nc), rot_sens=np.zeros((nc, 3, 3)), K=np.empty((n_rows, n_rows)),
        K_lu=np.empty((n_rows, n_rows)), g=np.empty(n_rows), floor=np.empty(n_rows), delta=np.empty(n_rows))


@njit
def _newton_imp(J, A, Om, h, tol, max_iter):
    """Solve ``exp(h/2 hat(Om)) J Om = A`` from the guess ``Om``; returns ``(it, Om, E)``.

    ``it`` is the number of iterations, -1 if ``max|g| <= tol`` was not reached within
    ``max_iter`` iterations, or -2 as soon as the residual is not finite (nan or inf in the
    data). On success ``E`` is ``exp(h/2 hat(Om))`` of the solution.

    The derivative of ``g = exp(hat psi) J Om - A``, ``psi = h/2 Om``, is
    ``G = exp(hat psi) J + h/2 dexp_apply(psi, J Om) = E M`` with
    ``M = J - h/2 hat(J Om) J_r(psi)`` (so3.dexp_apply), so the Newton step
    ``G d = g`` is solved as ``M d = E^T g``.
    """
    half = 0.5 * h
    # Solfec's absolute level newton_tol*h/2 falls below the float spacing of
    # g ~ A for small h (1e-4 on the heavy top asks for 5e-17 at |A| = 50),
    # where no iterate can meet it; the level is therefore never taken below
    # a few ulp of |A|. Above that floor the test is exactly Solfec's.
    floor = 8.0 * 2.220446049250313e-16 * max(abs(A[0]), abs(A[1]), abs(A[2]))
    tol = max(tol, floor)
    E = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    for it in range(max_iter + 1):
        p0 = half * Om[0]
        p1 = half * Om[1]
        p2 = half * Om[2]
        a, b, c = exp_coefficients(p0 * p0 + p1 * p1 + p2 * p2)
        E = rodrigues(a, b, p0, p1, p2)
        j0, j1, j2 = mat_vec(J, Om)
        # g = E J Om - A with E J Om = J Om + (E - I) J Om and
        # (E - I) u = a psi×u + b psi×(psi×u). The tolerance can be below the
        # spacing of the floats near A (Solfec's heavy top: 1.5e-15 against
        # 7.1e-15 at |A| = 50), so that in effect the test asks E J Om to round
        # to A. E J Om is therefore evaluated as in twice the working precision
        # and rounded once (the small second term is accurate as it is): the
        # test then depends on the iterate, not on the round-off of evaluating
        # g, and the float nearest the root passes where the float spacing
        # allows it (with plain evaluation the Boxes box stalled once in 1e6
        # steps).
        u0 = p1 * j2 - p2 * j1
        u1 = p2 * j0 - p0 * j2
        u2 = p0 * j1 - p1 * j0
        g0 = dot3_add(J[0], J[1], J[2], Om, a * u0 + b * (p1 * u2 - p2 * u1)) - A[0]
        g1 = dot3_add(J[3], J[4], J[5], Om, a * u1 + b * (p2 * u0 - p0 * u2)) - A[1]
        g2 = dot3_add(J[6], J[7], J[8], Om, a * u2 + b * (p0 * u1 - p1 * u0)) - A[2]
        if abs(g0) <= tol and abs(g1) <= tol and abs(g2) <= tol:
            return it, Om, E
        if not np.isfinite(g0 + g1 + g2):
            return -2, Om, E
        if it == max_iter:
            break
        # J_r(psi) = I - b hat(psi) + c hat(psi)^2; column k of hat(JOm) J_r is JOm × J_r[:, k].
        Jr = rodrigues(-b, c, p0, p1, p2)
        M = _newton_matrix_imp(J, j0, j1, j2, half, Jr)
        e0, e1, e2 = mat_T_vec(E, (g0, g1, g2))
        d0, d1, d2 = solve3(M, e0, e1, e2)
        Om = (Om[0] - d0, Om[1] - d1, Om[2] - d2)
    return -1, Om, E


@njit_inline
def _newton_matrix_imp(J, j0, j1, j2, half, Jr):
    """``M = J - h/2 hat(J W) J_r`` (``j = J W``): column ``k`` of ``hat(j) J_r`` is ``j × J_r[:, k]``."""
    return (J[0] - half * (j1 * Jr[6] - j2 * Jr[3]), J[1] - half * (j1 * Jr[7] - j2 * Jr[4]),
            J[2] - half * (j1 * Jr[8] - j2 * Jr[5]),
            J[3] - half * (j2 * Jr[0] - j0 * Jr[6]), J[4] - half * (j2 * Jr[1] - j0 * Jr[7]),
            J[5] - half * (j2 * Jr[2] - j0 * Jr[8]),
            J[6] - half * (j0 * Jr[3] - j1 * Jr[0]), J[7] - half * (j0 * Jr[4] - j1 * Jr[1]),
            J[8] - half * (j0 * Jr[5] - j1 * Jr[2]))


@njit_inline
def _half_step(pivoted, x, R, v, W, h):
    """1. ``E = exp(h/2 hat(W))``, ``x_half = x + h/2 v``, ``R_half = R E`` of one body."""
    half = 0.5 * h
    E = exp_scaled(half, W)
    x_half = x if pivoted != 0 else (x[0] + half * v[0], x[1] + half * v[1], x[2] + half * v[2])
    return E, x_half, mat_mul(R, E)


@njit_inline
def _free(mass, J, J_inv, pivoted, R_half, v, W, F, T, E, h):
    """3.-4. the free velocities ``v``, ``W1`` and the impulse ``A`` of one body, ``(v, W1, A)``.

    ``E`` is ``exp(h/2 hat(W))`` of the half step.
    """
    half = 0.5 * h
    tb = mat_T_vec(R_half, T)  # body torque
    b = mat_T_vec(E, mat_vec(J, W))  # b = exp(-h/2 hat W) J W
    a = (b[0] + half * tb[0], b[1] + half * tb[1], b[2] + half * tb[2])
    A = (b[0] + h * tb[0], b[1] + h * tb[1], b[2] + h * tb[2])
    b = mat_vec(J_inv, a)  # b = W_mid
    a = cross(b, mat_vec(J, b))  # a = W_mid × J W_mid
    b = mat_vec(J_inv, (tb[0] - a[0], tb[1] - a[1], tb[2] - a[2]))
    W1 = (W[0] + h * b[0], W[1] + h * b[1], W[2] + h * b[2])
    if pivoted == 0:
        hm = h / mass
        v = (v[0] + hm * F[0], v[1] + hm * F[1], v[2] + hm * F[2])
    return v, W1, A


@njit_inline
def _update(J, J_inv, pivoted, variant, x_half, R_half, v, W1, A, h, tol, max_iter):
    """6.-7. translation and the scheme's rotation update of one body: ``(it, x, R, W, W_rot)``.

    ``it`` is the Newton iterations (0 for the explicit variants) or the code of
    :func:`_newton_imp` (-1, -2; then ``R`` is not updated); ``W_rot`` the rate the rotation used.
    """
    half = 0.5 * h
    it = 0
    x = x_half if pivoted != 0 else (x_half[0] + half * v[0], x_half[1] + half * v[1], x_half[2] + half * v[2])
    if variant == POS:
        # The new rate and the rotation's are W1.
        E = exp_scaled(half, W1)
        W = W1
    elif variant == NEG:
        # The rotation uses W1; the new rate is J^{-1} exp(-h/2 hat W1) A.
        E = exp_scaled(half, W1)
        W = mat_vec(J_inv, mat_T_vec(E, A))
    else:
        it, W, E = _newton_imp(J, A, W1, h, tol, max_iter)
    R = reorthonormalized(mat_mul(R_half, E)) if it >= 0 else R_half
    return it, x, R, W, (W1 if variant != IMP else W)


# -- constraints -------------------------------------------------------------
#
# Position level, as Solfec's rod: the reactions are impulses P (one per residual row) applied
# at the mid-step configuration, along the rows of the constraint gradient B there; a body
# receives the generalized impulse B_mid^T P (world force and moment), which enters its free
# velocity and impulse,
#     v = v_free + (1/m) B_t^T P,  W1 = W1_free + J^-1 tau,  A = A_free + tau,  tau = R_half^T B_r^T P,
# so the solver sees Solfec's linear velocity-reaction map. P is chosen so that the *end-of-step*
# configuration, computed by the scheme's own update, satisfies every residual: g(P) = 0, by
# Newton's method with the exact derivative of the update,
#     dg/dP = B_end D B_mid^T,  D = diag((h/2)/m I, (h/2) R_end J_r(h/2 W_rot) C R_half^T) per body,
# C = dW_rot/dtau: J^-1 for RIG_POS and RIG_NEG (the rotation uses W1) and M^-1 E^T for RIG_IMP
# (the derivative of its implicit equation, see _newton_imp). Nothing here knows a constraint
# kind: the residuals and gradients come through rbdyn.constraints.assembly.


@njit_inline
def _rotation_sensitivity(variant, J, J_inv, W_rot, h):
    """``Q = J_r(h/2 W_rot) C`` for one body (see the comment above); ``W_rot`` is the rate the
    rotation used."""
    half = 0.5 * h
    p0, p1, p2 = half * W_rot[0], half * W_rot[1], half * W_rot[2]
    a, b, c = exp_coefficients(p0 * p0 + p1 * p1 + p2 * p2)
    Jr = rodrigues(-b, c, p0, p1, p2)
    if variant != IMP:
        return mat_mul(Jr, J_inv)
    return _implicit_sensitivity(J, W_rot, half, rodrigues(a, b, p0, p1, p2), Jr)


@njit
def _implicit_sensitivity(J, W_rot, half, E, Jr):
    """RIG_IMP's ``Q = J_r C`` with ``C = M^-1 E^T``, ``M = J - h/2 hat(J W) J_r`` (the same
    expressions as in :func:`_newton_imp`, so the same bits), solved column by column."""
    j0, j1, j2 = mat_vec(J, W_rot)
    M = _newton_matrix_imp(J, j0, j1, j2, half, Jr)
    c00, c01, c02 = solve3(M, E[0], E[1], E[2])  # column k of M^-1 E^T: M^-1 (row k of E)
    c10, c11, c12 = solve3(M, E[3], E[4], E[5])
    c20, c21, c22 = solve3(M, E[6], E[7], E[8])
    return mat_mul(Jr, (c00, c10, c20, c01, c11, c21, c02, c12, c22))


@njit_inline
def _reaction_on_body(B, j, P):
    """``B[:, 6j:6j+6]^T P``: the generalized impulse (world force, world moment) of body ``j``."""
    l0 = l1 = l2 = l3 = l4 = l5 = 0.0
    c = 6 * j
    for r in range(B.shape[0]):
        p = P[r]
        l0 += B[r, c] * p
        l1 += B[r, c + 1] * p
        l2 += B[r, c + 2] * p
        l3 += B[r, c + 3] * p
        l4 += B[r, c + 4] * p
        l5 += B[r, c + 5] * p
    return (l0, l1, l2), (l3, l4, l5)


@njit_inline
def _with_impulse(pivoted, inv_m, R_half, J_inv, f, mom, v, W1, A):
    """One body's velocity, free rate and impulse with the generalized impulse (world force
    ``f``, world moment ``mom``) added: ``(v, W1, A)``."""
    if pivoted == 0:
        v = (v[0] + inv_m * f[0], v[1] + inv_m * f[1], v[2] + inv_m * f[2])
    tau = mat_T_vec(R_half, mom)  # body moment
    d = mat_vec(J_inv, tau)
    return v, (W1[0] + d[0], W1[1] + d[1], W1[2] + d[2]), (A[0] + tau[0], A[1] + tau[1], A[2] + tau[2])


@njit_inline
def _world_sensitivity(R_end, Q, R_half, h):
    """``(h/2) R_end Q R_half^T``: a world moment impulse at mid step to the end rotation."""
    T = mat_mul(R_end, Q)
    s = 0.5 * h
    return (s * (T[0] * R_half[0] + T[1] * R_half[1] + T[2] * R_half[2]),
            s * (T[0] * R_half[3] + T[1] * R_half[4] + T[2] * R_half[5]),
            s * (T[0] * R_half[6] + T[1] * R_half[7] + T[2] * R_half[8]),
            s * (T[3] * R_half[0] + T[4] * R_half[1] + T[5] * R_half[2]),
            s * (T[3] * R_half[3] + T[4] * R_half[4] + T[5] * R_half[5]),
            s * (T[3] * R_half[6] + T[4] * R_half[7] + T[5] * R_half[8]),
            s * (T[6] * R_half[0] + T[7] * R_half[1] + T[8] * R_half[2]),
            s * (T[6] * R_half[3] + T[7] * R_half[4] + T[8] * R_half[5]),
            s * (T[6] * R_half[6] + T[7] * R_half[7] + T[8] * R_half[8]))


@njit
def _newton_matrix(B_mid, B_end, trans_sens, rot_sens, crow, cbody, local, Z, K):
    """``K = B_end D B_mid^T`` with ``D`` per body ``diag(trans_sens I, rot_sens)``, through ``Z = B_mid D^T``.

    A row of ``B_end`` is zero outside the columns of its constraint's (at most two) bodies, so
    each entry of ``K`` sums over those twelve columns only, in ascending order: the same terms
    in the same order as the sum over every column, hence the same bits.
    """
    m, n6 = B_mid.shape
    for r in range(m):
        for j in range(n6 // 6):
            for c in range(3):
                Z[r, 6 * j + c] = trans_sens[j] * B_mid[r, 6 * j + c]
            for c in range(3):
                Z[r, 6 * j + 3 + c] = (rot_sens[j, c, 0] * B_mid[r, 6 * j + 3] + rot_sens[j, c, 1] * B_mid[r, 6 * j + 4]
                                       + rot_sens[j, c, 2] * B_mid[r, 6 * j + 5])
    for k in range(cbody.shape[0]):
        ja = local[cbody[k, 0]] if cbody[k, 0] >= 0 else -1
        jb = local[cbody[k, 1]] if cbody[k, 1] >= 0 else -1
        lo, hi = min(ja, jb), max(ja, jb)  # -1: the world, which has no columns
        for r in range(crow[k], crow[k + 1]):
            for c in range(m):
                acc = 0.0
                if lo >= 0:
                    for q in range(6 * lo, 6 * lo + 6):
                        acc += B_end[r, q] * Z[c, q]
                if hi > lo:
                    for q in range(6 * hi, 6 * hi + 6):
                        acc += B_end[r, q] * Z[c, q]
                K[r, c] = acc


@njit
def _steps(model, functions, state, params, t0, h, k0, k1, out, mon):
    """Steps ``k0 .. k1 - 1`` (step ``k`` starts at ``t0 + k h``), recording through the
    driver; returns ``(status, k)`` with ``k`` the first step not completed (see
    :mod:`rbdyn.integrators.base`).

    Every array is bound here, once per call: the loops below read no record. A body's state
    and phases are values; the Newton iteration of RIG_IMP, the constraint assembly and the
    linear solves are called.
    """
    x, R, v, W, P = state
    mass, J, J_inv, pivoted, _ = model[0]
    ckind, cbody, cdata, crow, c_bodies, u_bodies = model[2]  # Constraints
    variant, newton_tol, max_iter, ctol, cmax = params
    tol = newton_tol * 0.5 * h
    every, n_steps, active, counts, iterations, steps, pending = schedule(out, mon)
    user = has_user_loads(model)
    uscr = user_scratch()
    wk = _work(x.shape[0], c_bodies, P.shape[0])
    local, E, R_half, x_half = wk.local, wk.E, wk.R_half, wk.x_half
    v_free, W1_free, A_free, W_rot = wk.v_free, wk.W1_free, wk.A_free, wk.W_rot
    B_mid, B_end, Z, trans_sens, rot_sens = wk.B_mid, wk.B_end, wk.Z, wk.trans_sens, wk.rot_sens
    K, K_lu, g, floor, delta = wk.K, wk.K_lu, wk.g, wk.floor, wk.delta
    cs, Ba, Bb = scratch()
    if k0 == 0:
        code = start(model, functions, x, R, v, W, out, mon)
        if code != 0:
            return code, 0
    nr = P.shape[0]
    half = 0.5 * h
    for k in range(k0, k1):
        t = t0 + k * h
        iters = 0
        if nr > 0:
            # 1.-4. the constrained bodies' half step, loads and free velocities
            for j in range(c_bodies.shape[0]):
                i = c_bodies[j]
                p = pivoted[i]
                Ji, Ji_inv, vi, Wi = mat3(J, i), mat3(J_inv, i), vec3(v, i), vec3(W, i)
                Ei, xh, Rh = _half_step(p, vec3(x, i), mat3(R, i), vi, Wi, h)
                F, T = body_loads_into(model, i, t + half, xh, Rh, vi, Wi)
                if user:
                    F, T = user_loads_into(model, functions, i, t + half, xh, Rh, vi, Wi, F, T, uscr)
                vf, W1f, Af = _free(mass[i], Ji, Ji_inv, p, Rh, vi, Wi, F, T, Ei, h)
                put_vec3(x_half, i, xh)
                put_mat3(R_half, i, Rh)
                put_mat3(E, i, Ei)
                put_vec3(v_free, j, vf)
                put_vec3(W1_free, j, W1f)
                put_vec3(A_free, j, Af)
                trans_sens[j] = 0.0 if p != 0 else half / mass[i]
            # 5. the gradient at the mid configuration: the reactions' directions
            gradient_into(ckind, cbody, cdata, crow, x_half, R_half, pivoted, local, B_mid, cs, Ba, Bb)
            status = STATUS_CONSTRAINT
            for it in range(cmax + 1):
                # 6.-7. every constrained body's update with the reactions P
                for j in range(c_bodies.shape[0]):
                    i = c_bodies[j]
                    p = pivoted[i]
                    Ji, Ji_inv, Rh = mat3(J, i), mat3(J_inv, i), mat3(R_half, i)
                    f, mom = _reaction_on_body(B_mid, j, P)
                    vi, W1i, Ai = _with_impulse(p, 1.0 / mass[i], Rh, Ji_inv, f, mom, vec3(v_free, j),
                                                vec3(W1_free, j), vec3(A_free, j))
                    n_it, xi, Ri, Wi, Wr = _update(Ji, Ji_inv, p, variant, vec3(x_half, i), Rh, vi, W1i, Ai, h, tol,
                                                   max_iter)
                    if n_it < 0:
                        status = STATUS_NEWTON if n_it == -1 else STATUS_NONFINITE
                        break
                    iters += n_it
                    put_vec3(W_rot, j, Wr)  # the rate of the rotation, for its sensitivity
                    put_vec3(x, i, xi)
                    put_mat3(R, i, Ri)
                    put_vec3(v, i, vi)
                    put_vec3(W, i, Wi)
                if status == STATUS_NEWTON or status == STATUS_NONFINITE:
                    break
                residuals_into(ckind, cbody, cdata, crow, x, R, g, floor, cs)
                done = True
                for r in range(nr):
                    if not np.isfinite(g[r]):
                        status = STATUS_NONFINITE
                    if abs(g[r]) > max(ctol, floor[r]):
                        done = False
                if status == STATUS_NONFINITE:
                    break
                if done:
                    status = STATUS_OK
                    break
                if it == cmax:
                    break
                iters += 1
                # Newton: dg/dP = B_end D B_mid^T, with the sensitivities of the last update (only
                # now: most steps pass on their first update and need none)
                for j in range(c_bodies.shape[0]):
                    i = c_bodies[j]
                    Q = _rotation_sensitivity(variant, mat3(J, i), mat3(J_inv, i), vec3(W_rot, j), h)
                    put_mat3(rot_sens, j, _world_sensitivity(mat3(R, i), Q, mat3(R_half, i), h))
                gradient_into(ckind, cbody, cdata, crow, x, R, pivoted, local, B_end, cs, Ba, Bb)
                _newton_matrix(B_mid, B_end, trans_sens, rot_sens, crow, cbody, local, Z, K)
                for r in range(nr):
                    delta[r] = -g[r]
                    for c in range(nr):
                        K_lu[r, c] = K[r, c]
                # a pivot below 1e-10 of the largest entry: the rows repeat each other (a closed loop)
                if not lu_solve_inplace(K_lu, delta, 1e-10):
                    # redundant constraints (a closed loop): the minimum-norm increment
                    for r in range(nr):
                        delta[r] = -g[r]
                    if not solve_min_norm(K, delta, 1e-10):
                        status = STATUS_SINGULAR
                        break
                for r in range(nr):
                    P[r] += delta[r]
            if status != STATUS_OK:
                return status, k
            for j in range(c_bodies.shape[0]):
                if not row_finite(c_bodies[j], x, R, v, W):
                    return STATUS_NONFINITE, k
        # the bodies in no constraint, each from start to end
        for ju in range(u_bodies.shape[0]):
            i = u_bodies[ju]
            p = pivoted[i]
            Ji, Ji_inv, vi, Wi = mat3(J, i), mat3(J_inv, i), vec3(v, i), vec3(W, i)
            Ei, xh, Rh = _half_step(p, vec3(x, i), mat3(R, i), vi, Wi, h)
            # loads from the kernel itself, so that the Python variant for callbacks sees them
            F, T = body_loads_into(model, i, t + half, xh, Rh, vi, Wi)
            if user:
                F, T = user_loads_into(model, functions, i, t + half, xh, Rh, vi, Wi, F, T, uscr)
            vi, W1i, Ai = _free(mass[i], Ji, Ji_inv, p, Rh, vi, Wi, F, T, Ei, h)
            it, xi, Ri, Wi, _ = _update(Ji, Ji_inv, p, variant, xh, Rh, vi, W1i, Ai, h, tol, max_iter)
            if it < 0:
                return (STATUS_NEWTON if it == -1 else STATUS_NONFINITE), k
            put_vec3(x, i, xi)
            put_mat3(R, i, Ri)
            put_vec3(v, i, vi)
            put_vec3(W, i, Wi)
            if not finite(xi, Ri, vi, Wi):
                return STATUS_NONFINITE, k
            iters += it
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
