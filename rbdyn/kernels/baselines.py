"""The compiled steps of the two baseline schemes (:mod:`rbdyn.integrators.baselines`).

``symplectic_euler`` is what robotics engines (ODE, Bullet, DART, MuJoCo's
Euler) do; ``rk4`` is the classical Runge–Kutta method on the quaternion
form of the equations of motion.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import so3
from .._compile import njit, njit_inline
from ..driver.report import (count_iterations, derive_stored, finish, fold_stored, record_due, schedule, start,
                            store, store_step)
from ..driver.status import STATUS_NONFINITE, STATUS_OK, STATUS_REPORT
from ..model.arrays import body_loads_into, has_user_loads, user_loads_into, user_scratch
from ..so3 import cross, mat3, mat_T_vec, mat_vec, put_mat3, put_vec3, unit_quat_to_mat, vec3
from .common import finite

__all__ = ["BaselineState", "BaselineParams", "initial_state", "symplectic_euler_advance", "rk4_advance"]


# Neither scheme handles constraints, so every body is stepped on its own, start to end (one
# pass over its data per step), its state as values (the value forms of rbdyn.so3): a step
# allocates nothing. The orientation is carried as a unit quaternion in the state and R is
# written from it after every step (the loads and the output read R). Only body_loads_into is
# called as a module global (see rbdyn._compile.python_variant).


class BaselineState(NamedTuple):
    """Origin position, rotation, origin velocity, body rate, and the unit quaternion of R."""

    x: np.ndarray
    R: np.ndarray
    v: np.ndarray
    W: np.ndarray
    q: np.ndarray


class BaselineParams(NamedTuple):
    """The baselines have no settings."""

    none: int


def initial_state(state):
    """The carried state of both schemes from the arrays ``(x, R, v, W)`` (copied)."""
    x, R, v, W = (np.array(a, dtype=float, copy=True) for a in state)
    q = np.empty((x.shape[0], 4))
    for i in range(x.shape[0]):
        q[i] = so3.matrix_to_quat_wxyz(R[i])
    return BaselineState(x=x, R=R, v=v, W=W, q=q)


@njit_inline
def _normalised(q):
    """The quaternion ``q`` (a 4-tuple) scaled to unit norm."""
    n = np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    return (q[0] / n, q[1] / n, q[2] / n, q[3] / n)


@njit_inline
def _quat4(q, i):
    """Row ``i`` of the (n, 4) quaternion array as a 4-tuple."""
    return (q[i, 0], q[i, 1], q[i, 2], q[i, 3])


@njit_inline
def _put_quat4(q, i, v):
    q[i, 0], q[i, 1], q[i, 2], q[i, 3] = v[0], v[1], v[2], v[3]


@njit_inline
def _symplectic_euler_body(mass, J, J_inv, pivoted, x, R, v, W, F, T, q, h):
    """One step of a body (inertia ``J``, its inverse ``J_inv``) from the loads ``F``, ``T`` at
    the start of the step; returns its new ``x, R, v, W`` and ``q``, ``R`` as a unit quaternion."""
    # The gyroscopic term is explicit and in world axes, with the world
    # inertia I_w = R J R^T of the start of the step (as ODE does):
    #   w += h I_w^{-1} (T - w × I_w w),  w = R W the world rate.
    # I_w and its inverse are applied as R (J (R^T .)): matrix-vector
    # products only, no 3x3 matrix products.
    w = mat_vec(R, W)
    a = mat_vec(R, mat_vec(J, mat_T_vec(R, w)))  # a = I_w w
    b = cross(w, a)
    a = mat_vec(R, mat_vec(J_inv, mat_T_vec(R, (T[0] - b[0], T[1] - b[1], T[2] - b[2]))))
    w = (w[0] + h * a[0], w[1] + h * a[1], w[2] + h * a[2])
    if pivoted == 0:
        hm = h / mass
        v = (v[0] + hm * F[0], v[1] + hm * F[1], v[2] + hm * F[2])
        x = (x[0] + h * v[0], x[1] + h * v[1], x[2] + h * v[2])
    # First-order quaternion update with the new world rate, normalised:
    # q += h/2 [0, w] ⊗ q.
    q0, q1, q2, q3 = q
    hh = 0.5 * h
    q = _normalised((q0 + hh * (-w[0] * q1 - w[1] * q2 - w[2] * q3), q1 + hh * (w[0] * q0 + w[1] * q3 - w[2] * q2),
                     q2 + hh * (-w[0] * q3 + w[1] * q0 + w[2] * q1), q3 + hh * (w[0] * q2 - w[1] * q1 + w[2] * q0)))
    R = unit_quat_to_mat(q[0], q[1], q[2], q[3])
    return x, R, v, mat_T_vec(R, w), q  # body rate from the new orientation


@njit
def _symplectic_euler_steps(model, functions, state, params, t0, h, k0, k1, out, mon):
    """Steps ``k0 .. k1 - 1`` of every body (see :mod:`rbdyn.integrators.base`)."""
    x, R, v, W, q = state
    mass, J, J_inv, pivoted, _ = model[0]
    every, n_steps, active, counts, iterations, steps, pending = schedule(out, mon)
    user = has_user_loads(model)
    uscr = user_scratch()
    if k0 == 0:
        code = start(model, functions, x, R, v, W, out, mon)
        if code != 0:
            return code, 0
    for k in range(k0, k1):
        t = t0 + k * h
        for i in range(x.shape[0]):
            xi, Ri, vi, Wi = vec3(x, i), mat3(R, i), vec3(v, i), vec3(W, i)
            F, T = body_loads_into(model, i, t, xi, Ri, vi, Wi)
            if user:
                F, T = user_loads_into(model, functions, i, t, xi, Ri, vi, Wi, F, T, uscr)
            xi, Ri, vi, Wi, qi = _symplectic_euler_body(mass[i], mat3(J, i), mat3(J_inv, i), pivoted[i], xi, Ri, vi,
                                                        Wi, F, T, _quat4(q, i), h)
            put_vec3(x, i, xi)
            put_mat3(R, i, Ri)
            put_vec3(v, i, vi)
            put_vec3(W, i, Wi)
            _put_quat4(q, i, qi)
            if not finite(xi, Ri, vi, Wi):
                return STATUS_NONFINITE, k
        count_iterations(counts, iterations, every, k, 0)
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
def symplectic_euler_advance(model, functions, state, params, t0, h, k0, k1, out, mon):
    """The steps, then the driver's :func:`~rbdyn.driver.report.finish` (the rows and monitor
    steps stored since the last block), in one compiled call."""
    code, k = _symplectic_euler_steps(model, functions, state, params, t0, h, k0, k1, out, mon)
    return finish(model, functions, out, mon, code, k)


@njit_inline
def _rk4_rates(mass, J, J_inv, pivoted, q, v, W, R, F, T):
    """The rates ``(x', q', v', W')`` of a body at a stage whose ``R`` and loads are known:
    ``x' = v``, ``q' = q ⊗ [0, W] / 2``, ``v' = f/m``, ``W' = J^{-1}(R^T T - W × J W)``."""
    if pivoted == 0:
        kx = v
        kv = (F[0] / mass, F[1] / mass, F[2] / mass)
    else:
        kx = (0.0, 0.0, 0.0)
        kv = (0.0, 0.0, 0.0)
    # q is not normalised at the stages; the rate uses it as it is.
    kq = (0.5 * (-q[1] * W[0] - q[2] * W[1] - q[3] * W[2]), 0.5 * (q[0] * W[0] + q[2] * W[2] - q[3] * W[1]),
          0.5 * (q[0] * W[1] - q[1] * W[2] + q[3] * W[0]), 0.5 * (q[0] * W[2] + q[1] * W[1] - q[2] * W[0]))
    b = cross(W, mat_vec(J, W))  # W × J W
    a = mat_T_vec(R, T)  # torque in body axes
    kW = mat_vec(J_inv, (a[0] - b[0], a[1] - b[1], a[2] - b[2]))
    return kx, kq, kv, kW


@njit_inline
def _rk4_combine3(y, kr, c0, h6):
    """``y + h/6 (k1 + 2 k2 + 2 k3 + k4)`` for a 3-vector whose stage rates are ``kr[:, c0:c0+3]``."""
    return (y[0] + h6 * (kr[0, c0] + 2.0 * kr[1, c0] + 2.0 * kr[2, c0] + kr[3, c0]),
            y[1] + h6 * (kr[0, c0 + 1] + 2.0 * kr[1, c0 + 1] + 2.0 * kr[2, c0 + 1] + kr[3, c0 + 1]),
            y[2] + h6 * (kr[0, c0 + 2] + 2.0 * kr[1, c0 + 2] + 2.0 * kr[2, c0 + 2] + kr[3, c0 + 2]))


@njit_inline
def _rk4_stage3(y, kr, s, c0, ch):
    """The stage value ``y + c h k_s`` of a 3-vector whose rates are ``kr[s, c0:c0+3]``."""
    return (y[0] + ch * kr[s, c0], y[1] + ch * kr[s, c0 + 1], y[2] + ch * kr[s, c0 + 2])


# The columns of the stage rates ``kr`` (4, 13): x' 0:3, q' 3:7, v' 7:10, W' 10:13.
_KX, _KQ, _KV, _KW = 0, 3, 7, 10


@njit
def _rk4_steps(model, functions, state, params, t0, h, k0, k1, out, mon):
    """Steps ``k0 .. k1 - 1`` of every body (see :mod:`rbdyn.integrators.base`)."""
    x, R, v, W, q = state
    mass, J, J_inv, pivoted, _ = model[0]
    every, n_steps, active, counts, iterations, steps, pending = schedule(out, mon)
    user = has_user_loads(model)
    uscr = user_scratch()
    kr = np.empty((4, 13))  # one body's stage rates
    if k0 == 0:
        code = start(model, functions, x, R, v, W, out, mon)
        if code != 0:
            return code, 0
    h6 = h / 6.0
    for k in range(k0, k1):
        t = t0 + k * h
        for i in range(x.shape[0]):
            Ji, Ji_inv, m, p = mat3(J, i), mat3(J_inv, i), mass[i], pivoted[i]
            xi, qi, vi, Wi = vec3(x, i), _quat4(q, i), vec3(v, i), vec3(W, i)
            for s in range(4):
                # Stage s at y + c_s h k_{s-1}, c = 0, 1/2, 1/2, 1; the first stage is the step's start.
                c = 0.0 if s == 0 else (1.0 if s == 3 else 0.5)
                if s == 0:
                    xs, qs, vs, Ws = xi, qi, vi, Wi
                else:
                    ch = c * h
                    xs = _rk4_stage3(xi, kr, s - 1, _KX, ch)
                    qs = (qi[0] + ch * kr[s - 1, _KQ], qi[1] + ch * kr[s - 1, _KQ + 1],
                          qi[2] + ch * kr[s - 1, _KQ + 2], qi[3] + ch * kr[s - 1, _KQ + 3])
                    vs = _rk4_stage3(vi, kr, s - 1, _KV, ch)
                    Ws = _rk4_stage3(Wi, kr, s - 1, _KW, ch)
                n = np.sqrt(qs[0] * qs[0] + qs[1] * qs[1] + qs[2] * qs[2] + qs[3] * qs[3])
                Rs = unit_quat_to_mat(qs[0] / n, qs[1] / n, qs[2] / n, qs[3] / n)
                ts = t + c * h
                F, T = body_loads_into(model, i, ts, xs, Rs, vs, Ws)
                if user:
                    F, T = user_loads_into(model, functions, i, ts, xs, Rs, vs, Ws, F, T, uscr)
                kx, kq, kv, kW = _rk4_rates(m, Ji, Ji_inv, p, qs, vs, Ws, Rs, F, T)
                for a in range(3):
                    kr[s, _KX + a] = kx[a]
                    kr[s, _KV + a] = kv[a]
                    kr[s, _KW + a] = kW[a]
                for a in range(4):
                    kr[s, _KQ + a] = kq[a]
            xi = _rk4_combine3(xi, kr, _KX, h6)
            vi = _rk4_combine3(vi, kr, _KV, h6)
            Wi = _rk4_combine3(Wi, kr, _KW, h6)
            qi = _normalised((qi[0] + h6 * (kr[0, 3] + 2.0 * kr[1, 3] + 2.0 * kr[2, 3] + kr[3, 3]),
                              qi[1] + h6 * (kr[0, 4] + 2.0 * kr[1, 4] + 2.0 * kr[2, 4] + kr[3, 4]),
                              qi[2] + h6 * (kr[0, 5] + 2.0 * kr[1, 5] + 2.0 * kr[2, 5] + kr[3, 5]),
                              qi[3] + h6 * (kr[0, 6] + 2.0 * kr[1, 6] + 2.0 * kr[2, 6] + kr[3, 6])))
            Ri = unit_quat_to_mat(qi[0], qi[1], qi[2], qi[3])  # R follows the carried unit quaternion
            put_vec3(x, i, xi)
            put_mat3(R, i, Ri)
            put_vec3(v, i, vi)
            put_vec3(W, i, Wi)
            _put_quat4(q, i, qi)
            if not finite(xi, Ri, vi, Wi):
                return STATUS_NONFINITE, k
        count_iterations(counts, iterations, every, k, 0)
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
def rk4_advance(model, functions, state, params, t0, h, k0, k1, out, mon):
    """The steps, then the driver's :func:`~rbdyn.driver.report.finish` (the rows and monitor
    steps stored since the last block), in one compiled call."""
    code, k = _rk4_steps(model, functions, state, params, t0, h, k0, k1, out, mon)
    return finish(model, functions, out, mon, code, k)
