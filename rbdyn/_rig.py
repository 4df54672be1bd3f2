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

from ._constraints import gradient_into, lu_solve_inplace, residuals_into, solve_min_norm
from ._data import body_loads_into, user_loads_into
from ._driver import count_iterations, report, start
from ._jit import borrow, njit, njit_inline
from ._driver import STATUS_REPORT
from ._scheme import STATUS_CONSTRAINT, STATUS_NEWTON, STATUS_NONFINITE, STATUS_OK, STATUS_SINGULAR, Scheme
from ._small import (body_finite, cross_into, dot3_add, exp_scaled_into, matmul_into, matvec_into, reorthonormalize,
                     rmatvec_into, rodrigues_into, solve3)
from .constraints._base import MAX_ROWS, SCRATCH_VECTORS
from .so3 import _sinc_coeffs

__all__ = ["RigPos", "RigNeg", "RigImp"]

_POS, _NEG, _IMP = 0, 1, 2


# A step allocates nothing: its scratch (:class:`RigWork`) is made once per run and the 3x3
# algebra is written out (helpers in _small). A body in no constraint is stepped on its own,
# start to end, with scratch of its own size (one pass over its data per step, which keeps a
# system of many bodies in cache). The bodies of the constraints go through the phases
# together, because the constraint solver sits between the free velocity (3.-5.) and the final
# update (6.-7.). Both paths call the same per-body helpers, so a body's arithmetic is the same
# in both. Only body_loads_into is called as a module global (see rbdyn._jit.python_variant).
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
    """Scratch of a run: one body's (``*1``), and the constraint solve's.

    The solve keeps, for the constrained bodies (local numbers ``local[i]`` of body ``i``),
    their half step (``x_half``, ``R_half``, ``E`` by body number), their free velocities and
    impulse (``v_free``, ``W1_free``, ``A_free``), the rate their last rotation update used
    (``W_rot``), the gradient at the mid and the end
    configuration (``B_mid``, ``B_end``, m x 6 nc), the sensitivity of the end configuration to
    a generalized impulse (``trans_sens`` per body, ``rot_sens`` (nc, 3, 3)), and the Newton
    system (``Z``, ``K`` and its copy for the LU factorization ``K_lu``, ``g``, ``floor``, ``delta``).
    """

    x1: np.ndarray
    R1: np.ndarray
    v1: np.ndarray
    W1s: np.ndarray
    J1: np.ndarray
    J_inv1: np.ndarray
    E1: np.ndarray
    R_half1: np.ndarray
    x_half1: np.ndarray
    W1_1: np.ndarray
    A1: np.ndarray
    F1: np.ndarray
    T1: np.ndarray
    Jr: np.ndarray
    M: np.ndarray
    Q: np.ndarray
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    Om: np.ndarray
    L: np.ndarray
    loads: np.ndarray
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
    xa: np.ndarray
    Ra: np.ndarray
    xb: np.ndarray
    Rb: np.ndarray
    s: np.ndarray
    Ba: np.ndarray
    Bb: np.ndarray


def make_work(model, n_rows: int) -> RigWork:
    """Scratch for ``model`` with ``n_rows`` constraint rows."""
    nb = model.bodies.mass.shape[0]
    c_bodies = model.constraints.c_bodies
    nc = c_bodies.shape[0]
    local = np.full(nb, -1, dtype=np.int64)
    local[c_bodies] = np.arange(nc)
    m3 = lambda: np.empty((3, 3))  # noqa: E731
    v3 = lambda: np.empty(3)  # noqa: E731
    nbc = nb if n_rows else 0  # by body number, for the constrained bodies only
    return RigWork(
        v3(), m3(), v3(), v3(), m3(), m3(), m3(), m3(), v3(), v3(), v3(), v3(), v3(), m3(), m3(), m3(),
        v3(), v3(), v3(), v3(), np.empty(6), np.empty((4, 3)), local,
        np.empty((nbc, 3, 3)), np.empty((nbc, 3, 3)), np.empty((nbc, 3)),
        np.empty((nc, 3)), np.empty((nc, 3)), np.empty((nc, 3)), np.empty((nc, 3)),
        np.zeros((n_rows, 6 * nc)), np.zeros((n_rows, 6 * nc)), np.zeros((n_rows, 6 * nc)),
        np.zeros(nc), np.zeros((nc, 3, 3)),
        np.empty((n_rows, n_rows)), np.empty((n_rows, n_rows)), np.empty(n_rows), np.empty(n_rows), np.empty(n_rows),
        v3(), m3(), v3(), m3(), np.empty((SCRATCH_VECTORS, 3)), np.empty((MAX_ROWS, 6)), np.empty((MAX_ROWS, 6)),
    )


@njit_inline
def _newton_imp(J, A, Om, h, tol, max_iter, E, Jr, M):
    """Solve ``exp(h/2 hat(Om)) J Om = A`` in place from the guess ``Om``.

    Returns the number of iterations, -1 if ``max|g| <= tol`` was not
    reached within ``max_iter`` iterations, or -2 as soon as the residual
    is not finite (nan or inf in the data). On success ``E`` holds
    ``exp(h/2 hat(Om))`` of the solution; ``Jr``, ``M`` are 3x3 scratch.

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
    for it in range(max_iter + 1):
        p0 = half * Om[0]
        p1 = half * Om[1]
        p2 = half * Om[2]
        a, b, c = _sinc_coeffs(p0 * p0 + p1 * p1 + p2 * p2)
        rodrigues_into(a, b, p0, p1, p2, E)
        j0 = J[0, 0] * Om[0] + J[0, 1] * Om[1] + J[0, 2] * Om[2]
        j1 = J[1, 0] * Om[0] + J[1, 1] * Om[1] + J[1, 2] * Om[2]
        j2 = J[2, 0] * Om[0] + J[2, 1] * Om[1] + J[2, 2] * Om[2]
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
        g0 = dot3_add(J[0, 0], J[0, 1], J[0, 2], Om, a * u0 + b * (p1 * u2 - p2 * u1)) - A[0]
        g1 = dot3_add(J[1, 0], J[1, 1], J[1, 2], Om, a * u1 + b * (p2 * u0 - p0 * u2)) - A[1]
        g2 = dot3_add(J[2, 0], J[2, 1], J[2, 2], Om, a * u2 + b * (p0 * u1 - p1 * u0)) - A[2]
        if abs(g0) <= tol and abs(g1) <= tol and abs(g2) <= tol:
            return it
        if not np.isfinite(g0 + g1 + g2):
            return -2
        if it == max_iter:
            break
        # J_r(psi) = I - b hat(psi) + c hat(psi)^2; column k of hat(JOm) J_r is JOm × J_r[:, k].
        rodrigues_into(-b, c, p0, p1, p2, Jr)
        for k in range(3):
            r0, r1, r2 = Jr[0, k], Jr[1, k], Jr[2, k]
            M[0, k] = J[0, k] - half * (j1 * r2 - j2 * r1)
            M[1, k] = J[1, k] - half * (j2 * r0 - j0 * r2)
            M[2, k] = J[2, k] - half * (j0 * r1 - j1 * r0)
        e0 = E[0, 0] * g0 + E[1, 0] * g1 + E[2, 0] * g2
        e1 = E[0, 1] * g0 + E[1, 1] * g1 + E[2, 1] * g2
        e2 = E[0, 2] * g0 + E[1, 2] * g1 + E[2, 2] * g2
        d0, d1, d2 = solve3(M, e0, e1, e2)
        Om[0] -= d0
        Om[1] -= d1
        Om[2] -= d2
    return -1


@njit_inline
def _half_step(pivoted, x, R, v, W, h, E, x_half, R_half):
    """1. ``E = exp(h/2 hat(W))``, ``R_half = R E``, ``x_half = x + h/2 v`` of one body."""
    half = 0.5 * h
    exp_scaled_into(half, W, E)
    matmul_into(R, E, R_half)
    if pivoted == 0:
        for k in range(3):
            x_half[k] = x[k] + half * v[k]
    else:
        for k in range(3):
            x_half[k] = x[k]


@njit_inline
def _free(mass, J, J_inv, pivoted, R_half, v, W, F, T, E, h, W1, A, tb, a, b):
    """3.-4. free velocities ``W1``, ``v`` and the impulse ``A`` of one body.

    ``E`` is ``exp(h/2 hat(W))`` of the half step; ``tb``, ``a``, ``b`` are
    3-vector scratch.
    """
    half = 0.5 * h
    rmatvec_into(R_half, T, tb)  # body torque
    matvec_into(J, W, a)
    rmatvec_into(E, a, b)  # b = exp(-h/2 hat W) J W
    for k in range(3):
        a[k] = b[k] + half * tb[k]
        A[k] = b[k] + h * tb[k]
    matvec_into(J_inv, a, b)  # b = W_mid
    matvec_into(J, b, a)
    cross_into(b, a, a)  # a = W_mid × J W_mid
    for k in range(3):
        a[k] = tb[k] - a[k]
    matvec_into(J_inv, a, b)
    for k in range(3):
        W1[k] = W[k] + h * b[k]
    if pivoted == 0:
        hm = h / mass
        for k in range(3):
            v[k] += hm * F[k]


@njit_inline
def _update(J, J_inv, pivoted, variant, x, R, v, W, x_half, R_half, W1, A, h, tol, max_iter, E, Jr, M, a, Om):
    """6.-7. translation and the scheme's rotation update of one body.

    Returns the Newton iterations (0 for the explicit variants) or the code
    of :func:`_newton_imp` (-1, -2). On return ``E`` is the exponential of
    the rotation's second half step. ``Jr``, ``M`` are 3x3 scratch, ``a``,
    ``Om`` 3-vector scratch.
    """
    half = 0.5 * h
    it = 0
    if pivoted == 0:
        for k in range(3):
            x[k] = x_half[k] + half * v[k]
    if variant == _POS:
        # The new rate and the rotation's are W1.
        exp_scaled_into(half, W1, E)
        for k in range(3):
            W[k] = W1[k]
    elif variant == _NEG:
        # The rotation uses W1; the new rate is J^{-1} exp(-h/2 hat W1) A.
        exp_scaled_into(half, W1, E)
        rmatvec_into(E, A, a)
        matvec_into(J_inv, a, W)
    else:
        for k in range(3):
            Om[k] = W1[k]
        it = _newton_imp(J, A, Om, h, tol, max_iter, E, Jr, M)
        if it < 0:
            return it
        for k in range(3):
            W[k] = Om[k]
    matmul_into(R_half, E, R)
    reorthonormalize(R)
    return it


@njit_inline
def copy_in(i, x, R, v, W, J, J_inv, x1, R1, v1, W1, J1, J_inv1):
    """Body ``i``'s state and inertia into one body's scratch (element by element: no views)."""
    for a in range(3):
        x1[a] = x[i, a]
        v1[a] = v[i, a]
        W1[a] = W[i, a]
        for b in range(3):
            R1[a, b] = R[i, a, b]
            J1[a, b] = J[i, a, b]
            J_inv1[a, b] = J_inv[i, a, b]


@njit_inline
def copy_out(i, x1, R1, v1, W1, x, R, v, W):
    """One body's scratch state back into body ``i``'s rows."""
    for a in range(3):
        x[i, a] = x1[a]
        v[i, a] = v1[a]
        W[i, a] = W1[a]
        for b in range(3):
            R[i, a, b] = R1[a, b]


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
# kind: the residuals and gradients come through rbdyn._constraints.


@njit_inline
def _rotation_sensitivity(variant, J, J_inv, W_rot, h, E, Q, Jr, M, col):
    """``Q = J_r(h/2 W_rot) C`` for one body (see the comment above).

    ``W_rot`` is the rate the rotation used; ``E`` is scratch (its exponential, for RIG_IMP:
    the same expression as in :func:`_newton_imp`, so the same bits).
    """
    half = 0.5 * h
    p0, p1, p2 = half * W_rot[0], half * W_rot[1], half * W_rot[2]
    a, b, c = _sinc_coeffs(p0 * p0 + p1 * p1 + p2 * p2)
    rodrigues_into(-b, c, p0, p1, p2, Jr)
    if variant != _IMP:
        matmul_into(Jr, J_inv, Q)
        return
    rodrigues_into(a, b, p0, p1, p2, E)
    # C = M^-1 E^T, M = J - h/2 hat(J W) J_r, solved column by column.
    j0 = J[0, 0] * W_rot[0] + J[0, 1] * W_rot[1] + J[0, 2] * W_rot[2]
    j1 = J[1, 0] * W_rot[0] + J[1, 1] * W_rot[1] + J[1, 2] * W_rot[2]
    j2 = J[2, 0] * W_rot[0] + J[2, 1] * W_rot[1] + J[2, 2] * W_rot[2]
    for k in range(3):
        r0, r1, r2 = Jr[0, k], Jr[1, k], Jr[2, k]
        M[0, k] = J[0, k] - half * (j1 * r2 - j2 * r1)
        M[1, k] = J[1, k] - half * (j2 * r0 - j0 * r2)
        M[2, k] = J[2, k] - half * (j0 * r1 - j1 * r0)
    for k in range(3):
        c0, c1, c2 = solve3(M, E[k, 0], E[k, 1], E[k, 2])  # column k of M^-1 E^T
        col[0], col[1], col[2] = c0, c1, c2
        for r in range(3):
            Q[r, k] = Jr[r, 0] * col[0] + Jr[r, 1] * col[1] + Jr[r, 2] * col[2]


@njit_inline
def _reaction_on_body(B, j, P, L):
    """``L = B[:, 6j:6j+6]^T P``: the generalized impulse (world force, world moment) of body ``j``."""
    for c in range(6):
        acc = 0.0
        for r in range(B.shape[0]):
            acc += B[r, 6 * j + c] * P[r]
        L[c] = acc


@njit_inline
def _impulse_into(pivoted, inv_m, R_half, J_inv, L, v, W1, A, tau):
    """Add the generalized impulse ``L`` to one body's velocity, free rate and impulse."""
    if pivoted == 0:
        for k in range(3):
            v[k] += inv_m * L[k]
    for k in range(3):  # body moment
        tau[k] = R_half[0, k] * L[3] + R_half[1, k] * L[4] + R_half[2, k] * L[5]
    for k in range(3):
        W1[k] += J_inv[k, 0] * tau[0] + J_inv[k, 1] * tau[1] + J_inv[k, 2] * tau[2]
        A[k] += tau[k]


@njit_inline
def _world_sensitivity(R_end, Q, R_half, h, out, tmp):
    """``out = (h/2) R_end Q R_half^T``: a world moment impulse at mid step to the end rotation."""
    matmul_into(R_end, Q, tmp)
    for r in range(3):
        for c in range(3):
            out[r, c] = 0.5 * h * (tmp[r, 0] * R_half[c, 0] + tmp[r, 1] * R_half[c, 1] + tmp[r, 2] * R_half[c, 2])


@njit_inline
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


@njit_inline
def _load_phase(i, j, x_half, R_half, E, v_free, W1_free, A_free, x_half1, R_half1, E1, v1, W11, A1):
    """Body ``i``'s (local ``j``) half step and free velocities into one body's scratch."""
    for a in range(3):
        x_half1[a] = x_half[i, a]
        v1[a] = v_free[j, a]
        W11[a] = W1_free[j, a]
        A1[a] = A_free[j, a]
        for b in range(3):
            R_half1[a, b] = R_half[i, a, b]
            E1[a, b] = E[i, a, b]


@njit_inline
def _store_phase(i, j, x_half1, R_half1, E1, v1, W11, A1, x_half, R_half, E, v_free, W1_free, A_free):
    """The converse of :func:`_load_phase`."""
    for a in range(3):
        x_half[i, a] = x_half1[a]
        v_free[j, a] = v1[a]
        W1_free[j, a] = W11[a]
        A_free[j, a] = A1[a]
        for b in range(3):
            R_half[i, a, b] = R_half1[a, b]
            E[i, a, b] = E1[a, b]


@njit
def advance(model, state, work, params, t0, h, k0, k1, out, mon):
    """Steps ``k0 .. k1 - 1`` (step ``k`` starts at ``t0 + k h``), recording through the
    driver; returns ``(status, k)`` with ``k`` the first step not completed (see
    :mod:`rbdyn._scheme`).

    Every array is bound here, once per call, and the helpers take arrays only: numba counts
    references to a view or a struct bound inside the loop, or passed to a function that is not
    a leaf, which would cost a small body more than its arithmetic. For the same reason the
    constraint solve is written out here rather than in a function of its own.
    """
    # every array borrowed, once (see rbdyn._jit.borrow): the loop below counts no references
    model, state, work, out, mon = borrow(model), borrow(state), borrow(work), borrow(out), borrow(mon)
    if k0 == 0:
        code = start(model, state, out, mon)
        if code != 0:
            return code, 0
    x, R, v, W, P = borrow(state.x), borrow(state.R), borrow(state.v), borrow(state.W), borrow(state.P)
    mass, J = borrow(model.bodies.mass), borrow(model.bodies.inertia)
    J_inv, pivoted = borrow(model.bodies.inertia_inv), borrow(model.bodies.pivoted)
    cons = model.constraints
    c_bodies, u_bodies = borrow(cons.c_bodies), borrow(cons.u_bodies)
    ckind, cbody, cdata, crow = borrow(cons.kind), borrow(cons.body), borrow(cons.data), borrow(cons.row)
    variant = params.variant
    tol = params.newton_tol * 0.5 * h
    max_iter = params.newton_max_iter
    ctol, cmax = params.constraint_tol, params.constraint_max_iter
    user = model.loads.user_start[-1] > 0
    # one body's scratch
    wk = work
    x1, R1, v1, W1, J1, J_inv1 = borrow(wk.x1), borrow(wk.R1), borrow(wk.v1), borrow(wk.W1s), borrow(wk.J1), \
        borrow(wk.J_inv1)
    E1, x_half1, R_half1, Wf1 = borrow(wk.E1), borrow(wk.x_half1), borrow(wk.R_half1), borrow(wk.W1_1)
    A1, F1, T1 = borrow(wk.A1), borrow(wk.F1), borrow(wk.T1)
    Jr, M, Q, sa, sb, sc = borrow(wk.Jr), borrow(wk.M), borrow(wk.Q), borrow(wk.a), borrow(wk.b), borrow(wk.c)
    Om, L, lscr = borrow(wk.Om), borrow(wk.L), borrow(wk.loads)
    # the constraint solve's
    local, E, R_half, x_half = borrow(wk.local), borrow(wk.E), borrow(wk.R_half), borrow(wk.x_half)
    v_free, W1_free, A_free, W_rot = borrow(wk.v_free), borrow(wk.W1_free), borrow(wk.A_free), borrow(wk.W_rot)
    B_mid, B_end, Z = borrow(wk.B_mid), borrow(wk.B_end), borrow(wk.Z)
    trans_sens, rot_sens = borrow(wk.trans_sens), borrow(wk.rot_sens)
    K, K_lu, g, floor, delta = borrow(wk.K), borrow(wk.K_lu), borrow(wk.g), borrow(wk.floor), borrow(wk.delta)
    xa, Ra, xb, Rb = borrow(wk.xa), borrow(wk.Ra), borrow(wk.xb), borrow(wk.Rb)
    cs, Ba, Bb = borrow(wk.s), borrow(wk.Ba), borrow(wk.Bb)
    nr = P.shape[0]
    half = 0.5 * h
    for k in range(k0, k1):
        t = t0 + k * h
        iters = 0
        if nr > 0:
            # 1.-4. the constrained bodies' half step, loads and free velocities
            for j in range(c_bodies.shape[0]):
                i = c_bodies[j]
                copy_in(i, x, R, v, W, J, J_inv, x1, R1, v1, W1, J1, J_inv1)
                p = pivoted[i]
                _half_step(p, x1, R1, v1, W1, h, E1, x_half1, R_half1)
                body_loads_into(model, i, t + half, x_half1, R_half1, v1, W1, F1, T1)
                if user:
                    user_loads_into(model, i, t + half, x_half1, R_half1, v1, W1, F1, T1, lscr)
                _free(mass[i], J1, J_inv1, p, R_half1, v1, W1, F1, T1, E1, h, Wf1, A1, sa, sb, sc)
                _store_phase(i, j, x_half1, R_half1, E1, v1, Wf1, A1, x_half, R_half, E, v_free, W1_free, A_free)
                trans_sens[j] = 0.0 if p != 0 else half / mass[i]
            # 5. the gradient at the mid configuration: the reactions' directions
            gradient_into(ckind, cbody, cdata, crow, x_half, R_half, pivoted, local, B_mid, Ba, Bb, xa, Ra, xb, Rb, cs)
            status = STATUS_CONSTRAINT
            for it in range(cmax + 1):
                # 6.-7. every constrained body's update with the reactions P
                for j in range(c_bodies.shape[0]):
                    i = c_bodies[j]
                    p = pivoted[i]
                    copy_in(i, x, R, v, W, J, J_inv, x1, R1, v1, W1, J1, J_inv1)
                    _load_phase(i, j, x_half, R_half, E, v_free, W1_free, A_free, x_half1, R_half1, E1, v1, Wf1, A1)
                    _reaction_on_body(B_mid, j, P, L)
                    _impulse_into(p, 1.0 / mass[i], R_half1, J_inv1, L, v1, Wf1, A1, sa)
                    n_it = _update(J1, J_inv1, p, variant, x1, R1, v1, W1, x_half1, R_half1, Wf1, A1, h, tol, max_iter,
                                   E1, Jr, M, sa, Om)
                    if n_it < 0:
                        status = STATUS_NEWTON if n_it == -1 else STATUS_NONFINITE
                        break
                    iters += n_it
                    for a in range(3):  # the rate of the rotation, for its sensitivity
                        W_rot[j, a] = Wf1[a] if variant != _IMP else W1[a]
                    copy_out(i, x1, R1, v1, W1, x, R, v, W)
                if status == STATUS_NEWTON or status == STATUS_NONFINITE:
                    break
                residuals_into(ckind, cbody, cdata, crow, x, R, g, floor, xa, Ra, xb, Rb, cs)
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
                    copy_in(i, x, R, v, W, J, J_inv, x1, R1, v1, W1, J1, J_inv1)
                    for a in range(3):
                        Om[a] = W_rot[j, a]
                        for c in range(3):
                            R_half1[a, c] = R_half[i, a, c]
                    _rotation_sensitivity(variant, J1, J_inv1, Om, h, E1, Q, Jr, M, sa)
                    _world_sensitivity(R1, Q, R_half1, h, M, Jr)
                    for a in range(3):
                        for c in range(3):
                            rot_sens[j, a, c] = M[a, c]
                gradient_into(ckind, cbody, cdata, crow, x, R, pivoted, local, B_end, Ba, Bb, xa, Ra, xb, Rb, cs)
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
                i = c_bodies[j]
                if not body_finite(x[i], R[i], v[i], W[i]):
                    return STATUS_NONFINITE, k
        # the bodies in no constraint, each from start to end
        for i in u_bodies:
            copy_in(i, x, R, v, W, J, J_inv, x1, R1, v1, W1, J1, J_inv1)
            p = pivoted[i]
            _half_step(p, x1, R1, v1, W1, h, E1, x_half1, R_half1)
            # loads from the kernel itself, so that the Python variant for callbacks sees them
            body_loads_into(model, i, t + half, x_half1, R_half1, v1, W1, F1, T1)
            if user:
                user_loads_into(model, i, t + half, x_half1, R_half1, v1, W1, F1, T1, lscr)
            _free(mass[i], J1, J_inv1, p, R_half1, v1, W1, F1, T1, E1, h, Wf1, A1, sa, sb, sc)
            it = _update(J1, J_inv1, p, variant, x1, R1, v1, W1, x_half1, R_half1, Wf1, A1, h, tol, max_iter, E1,
                         Jr, M, sa, sc)
            if it < 0:
                return (STATUS_NEWTON if it == -1 else STATUS_NONFINITE), k
            copy_out(i, x1, R1, v1, W1, x, R, v, W)
            if not body_finite(x1, R1, v1, W1):
                return STATUS_NONFINITE, k
            iters += it
        # after the step (written out here, not in a helper that takes the structs: see _scheme)
        count_iterations(out.iteration_counts, out.iterations, out.every, k, iters)
        if not report(model, state, out, mon, k, t0 + (k + 1) * h):
            return STATUS_REPORT, k
    return STATUS_OK, k1


_REF = (
    "T. Koziara and N. Bićanić, Simple and efficient integration of rigid rotations "
    "suitable for constraint solvers, IJNME 81(9):1073-1092, 2010"
)


@dataclasses.dataclass(frozen=True)
class _Rig(Scheme):
    """Settings shared by the three RIG schemes: the constraint solve."""

    constraint_tol: float = 1e-14
    constraint_max_iter: int = 25

    supports_constraints = True
    kernel = advance

    def __post_init__(self):
        self._check_positive("constraint_tol")
        self._check_positive("constraint_max_iter", integer=True)

    def _variant(self):
        return (0, 0.0, 0)

    def params(self):
        variant, newton_tol, newton_max_iter = self._variant()
        return RigParams(variant, newton_tol, newton_max_iter, float(self.constraint_tol),
                         int(self.constraint_max_iter))

    def init(self, system, state):
        # The state adds the last step's reaction impulses (one per residual row).
        x, R, v, W = (np.array(a, dtype=float, copy=True) for a in state)
        return RigState(x, R, v, W, np.zeros(system.n_constraint_rows))

    def work(self, system, state):
        return make_work(system.model, state.P.shape[0])


@dataclasses.dataclass(frozen=True)
class RigPos(_Rig):
    """Solfec-1.0's RIG_POS: explicit, the free velocity is the new velocity.

    Second order. Its energy increases over long times and angular momentum
    is not conserved exactly (the book's literature table, which cites
    Solfec-1.0's documentation).

    With constraints whose reactions turn a body (a joint away from its mass
    centre) it is first order: the mid-step rate in the gyroscopic term
    leaves out the reaction impulse, as in Solfec, where the solver needs the
    velocity linear in the reactions. RIG_NEG and RIG_IMP take the complete
    impulse into their final rate and stay second order.

    Parameters
    ----------
    constraint_tol, constraint_max_iter
        The constraint solve; see :class:`RigNeg`.

    References
    ----------
    * T. Koziara, N. Bićanić, "Simple and efficient integration of rigid
      rotations suitable for constraint solvers", IJNME 81(9):1073–1092,
      2010 (scheme NEW1).
    """

    name = "rig_pos"
    description = "Solfec RIG_POS (Koziara & Bicanic 2010, NEW1): explicit, order 2"
    reference = _REF
    label = "NEW1"
    order = 2
    constrained_order = 1
    implicit = False
    conserves = frozenset({"linear momentum", "orthonormality"})
    energy = "increases"
    symmetric = False

    def _variant(self):
        return (_POS, 0.0, 0)


@dataclasses.dataclass(frozen=True)
class RigNeg(_Rig):
    """Solfec-1.0's RIG_NEG (its default): explicit with a momentum correction.

    The new body rate is ``J^{-1} exp(-h/2 W_free) a`` (the free rate
    ``W_free`` and the angular impulse ``a`` of the methods page, ``W1`` and
    ``A`` in the code), so the spatial angular momentum obeys an exact
    midpoint balance (exact conservation with zero torque). Second order,
    with constraints too; its energy decreases over long times (the book's
    literature table, which cites Solfec-1.0's documentation).

    Constraints are enforced at position level: the reaction impulses,
    applied at the mid-step configuration, are those for which the
    end-of-step configuration satisfies every constraint (Newton's method
    on the residuals, with the exact derivative of the update).

    Parameters
    ----------
    constraint_tol : float
        Largest residual (metres) accepted at the end of a step; never
        taken below 16 ulp of the coordinates, which float64 cannot resolve.
    constraint_max_iter : int
        Newton iterations allowed for the reactions of one step.

    References
    ----------
    * T. Koziara, N. Bićanić, "Simple and efficient integration of rigid
      rotations suitable for constraint solvers", IJNME 81(9):1073–1092,
      2010 (scheme NEW2).
    """

    name = "rig_neg"
    description = "Solfec RIG_NEG (Koziara & Bicanic 2010, NEW2): explicit, momentum-exact, order 2"
    reference = _REF
    label = "NEW2"
    order = 2
    constrained_order = 2
    implicit = False
    conserves = frozenset({"linear momentum", "angular momentum", "orthonormality"})
    energy = "decreases"
    symmetric = False

    def _variant(self):
        return (_NEG, 0.0, 0)


@dataclasses.dataclass(frozen=True)
class RigImp(_Rig):
    """Solfec-1.0's RIG_IMP: the new rate solves ``exp(h/2 W) J W = a``.

    A 3×3 Newton iteration per body, started from the free velocity, with
    the analytic derivative of the exponential map; it stops when
    ``max|g| <= newton_tol * h / 2`` (Solfec's test; never below 8 ulp of
    ``max|a|``, which float64 cannot resolve) and fails (a
    :class:`~rbdyn.NumericalError`) after ``newton_max_iter`` iterations.
    Second order, with constraints too; exact momentum balance; its energy
    stays bounded (the book's literature table). ``a`` is the step's angular
    impulse of the RIG methods page (``A`` in the code).

    Parameters
    ----------
    constraint_tol, constraint_max_iter
        The constraint solve; see :class:`RigNeg`.
    newton_tol : float
        Tolerance factor (Solfec: 1e-12); the residual has the units of
        angular momentum.
    newton_max_iter : int
        Iteration limit (Solfec: 50).

    References
    ----------
    * T. Koziara, N. Bićanić, "Simple and efficient integration of rigid
      rotations suitable for constraint solvers", IJNME 81(9):1073–1092,
      2010 (scheme NEW3).
    """

    newton_tol: float = 1e-12
    newton_max_iter: int = 50

    name = "rig_imp"
    description = "Solfec RIG_IMP (Koziara & Bicanic 2010, NEW3): implicit 3x3 Newton, momentum-exact, order 2"
    reference = _REF
    label = "NEW3"
    order = 2
    constrained_order = 2
    implicit = True
    conserves = frozenset({"linear momentum", "angular momentum", "orthonormality"})
    energy = "bounded"
    symmetric = True

    def __post_init__(self):
        super().__post_init__()
        self._check_positive("newton_tol")
        self._check_positive("newton_max_iter", integer=True)

    def _variant(self):
        return (_IMP, float(self.newton_tol), int(self.newton_max_iter))
