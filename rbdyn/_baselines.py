"""Two baseline schemes that users compare against.

``symplectic_euler`` is what robotics engines (ODE, Bullet, DART, MuJoCo's
Euler) do; ``rk4`` is the classical Runge–Kutta method on the quaternion
form of the equations of motion.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from . import so3
from .so3 import _unit_quat_to_matrix_into
from ._data import body_loads_into, user_loads_into
from ._driver import STATUS_REPORT, count_iterations, report, start
from ._jit import borrow, njit, njit_inline
from ._scheme import STATUS_NONFINITE, STATUS_OK, Scheme
from ._small import body_finite, cross_into, matvec_into, rmatvec_into

__all__ = ["SymplecticEuler", "RK4"]


# Neither scheme handles constraints, so every body is stepped on its own, start to end (one
# pass over its data per step). A step allocates nothing: the scratch (BaselineWork) is made
# once per run and the 3x3 algebra is written out (helpers in _small). The orientation is
# carried as a unit quaternion in the state and R is written from it after every step (the
# loads and the output read R). Only body_loads_into is called as a module global (see
# rbdyn._jit.python_variant).


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


class BaselineWork(NamedTuple):
    """One body's scratch: its state, loads, 3-vectors, and the stages of RK4."""

    x1: np.ndarray
    R1: np.ndarray
    v1: np.ndarray
    W1: np.ndarray
    q1: np.ndarray
    F1: np.ndarray
    T1: np.ndarray
    w: np.ndarray
    a: np.ndarray
    b: np.ndarray
    loads: np.ndarray
    xs: np.ndarray
    qs: np.ndarray
    vs: np.ndarray
    Ws: np.ndarray
    Rs: np.ndarray
    kx: np.ndarray
    kq: np.ndarray
    kv: np.ndarray
    kW: np.ndarray


def _init(state):
    x, R, v, W = (np.array(a, dtype=float, copy=True) for a in state)
    q = np.empty((x.shape[0], 4))
    for i in range(x.shape[0]):
        q[i] = so3.matrix_to_quat_wxyz(R[i])
    return BaselineState(x, R, v, W, q)


def _work():
    v3 = lambda: np.empty(3)  # noqa: E731
    return BaselineWork(v3(), np.empty((3, 3)), v3(), v3(), np.empty(4),
                        v3(), v3(), v3(), v3(), v3(), np.empty((4, 3)), v3(), np.empty(4), v3(), v3(),
                        np.empty((3, 3)), np.empty((4, 3)), np.empty((4, 4)), np.empty((4, 3)), np.empty((4, 3)))


@njit
def _quat_to_matrix_into(q, R):
    """Write the rotation matrix of ``q / |q|`` into ``R`` (``q`` is left as it is)."""
    n = np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    _unit_quat_to_matrix_into(q[0] / n, q[1] / n, q[2] / n, q[3] / n, R)


@njit
def _normalise_quat(q):
    """Scale the quaternion ``q`` to unit norm in place."""
    n = np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    q[0] /= n
    q[1] /= n
    q[2] /= n
    q[3] /= n


@njit_inline
def _symplectic_euler_update(mass, J, J_inv, i, pivoted, x, R, v, W, F, T, q, h, w, a, b):
    """One step of body ``i`` (inertia ``J[i]``) from the loads ``F``, ``T`` at the start of the step.

    ``q`` is ``R`` as a unit quaternion (updated with it); ``w``, ``a``,
    ``b`` are 3-vector scratch.
    """
    # The gyroscopic term is explicit and in world axes, with the world
    # inertia I_w = R J R^T of the start of the step (as ODE does):
    #   w += h I_w^{-1} (T - w × I_w w),  w = R W the world rate.
    # I_w and its inverse are applied as R (J (R^T .)): matrix-vector
    # products only, no 3x3 matrix products.
    matvec_into(R, W, w)
    rmatvec_into(R, w, a)
    for r in range(3):
        b[r] = J[i, r, 0] * a[0] + J[i, r, 1] * a[1] + J[i, r, 2] * a[2]
    matvec_into(R, b, a)  # a = I_w w
    cross_into(w, a, b)
    b[0] = T[0] - b[0]
    b[1] = T[1] - b[1]
    b[2] = T[2] - b[2]
    rmatvec_into(R, b, a)
    for r in range(3):
        b[r] = J_inv[i, r, 0] * a[0] + J_inv[i, r, 1] * a[1] + J_inv[i, r, 2] * a[2]
    matvec_into(R, b, a)  # a = I_w^{-1} (T - w × I_w w)
    w[0] += h * a[0]
    w[1] += h * a[1]
    w[2] += h * a[2]
    if pivoted == 0:
        hm = h / mass
        for k in range(3):
            v[k] += hm * F[k]
            x[k] += h * v[k]
    # First-order quaternion update with the new world rate, normalised:
    # q += h/2 [0, w] ⊗ q.
    q0, q1, q2, q3 = q[0], q[1], q[2], q[3]
    hh = 0.5 * h
    q[0] = q0 + hh * (-w[0] * q1 - w[1] * q2 - w[2] * q3)
    q[1] = q1 + hh * (w[0] * q0 + w[1] * q3 - w[2] * q2)
    q[2] = q2 + hh * (-w[0] * q3 + w[1] * q0 + w[2] * q1)
    q[3] = q3 + hh * (w[0] * q2 - w[1] * q1 + w[2] * q0)
    _normalise_quat(q)
    _unit_quat_to_matrix_into(q[0], q[1], q[2], q[3], R)
    rmatvec_into(R, w, W)  # body rate from the new orientation


@njit_inline
def _copy_in(i, x, R, v, W, q, x1, R1, v1, W1, q1):
    """Body ``i``'s state into one body's scratch (element by element: no views)."""
    for a in range(3):
        x1[a] = x[i, a]
        v1[a] = v[i, a]
        W1[a] = W[i, a]
        for b in range(3):
            R1[a, b] = R[i, a, b]
    for a in range(4):
        q1[a] = q[i, a]


@njit_inline
def _copy_out(i, x1, R1, v1, W1, q1, x, R, v, W, q):
    """One body's scratch state back into body ``i``'s rows."""
    for a in range(3):
        x[i, a] = x1[a]
        v[i, a] = v1[a]
        W[i, a] = W1[a]
        for b in range(3):
            R[i, a, b] = R1[a, b]
    for a in range(4):
        q[i, a] = q1[a]


@njit
def symplectic_euler_advance(model, state, work, params, t0, h, k0, k1, out, mon):
    """Steps ``k0 .. k1 - 1`` of every body (see :mod:`rbdyn._scheme`); every array is bound
    here once and each body is copied into scratch for its step (see rbdyn._rig.advance)."""
    # every array borrowed, once (see rbdyn._jit.borrow): the loop below counts no references
    model, state, work, out, mon = borrow(model), borrow(state), borrow(work), borrow(out), borrow(mon)
    if k0 == 0:
        code = start(model, state, out, mon)
        if code != 0:
            return code, 0
    x, R, v, W, q = state.x, state.R, state.v, state.W, state.q
    mass, J, J_inv, pivoted = model.bodies.mass, model.bodies.inertia, model.bodies.inertia_inv, model.bodies.pivoted
    x1, R1, v1, W1, q1 = work.x1, work.R1, work.v1, work.W1, work.q1
    F1, T1, w, a, b, scr = work.F1, work.T1, work.w, work.a, work.b, work.loads
    user = model.loads.user_start[-1] > 0
    for k in range(k0, k1):
        t = t0 + k * h
        for i in range(x.shape[0]):
            _copy_in(i, x, R, v, W, q, x1, R1, v1, W1, q1)
            body_loads_into(model, i, t, x1, R1, v1, W1, F1, T1)
            if user:
                user_loads_into(model, i, t, x1, R1, v1, W1, F1, T1, scr)
            _symplectic_euler_update(mass[i], J, J_inv, i, pivoted[i], x1, R1, v1, W1, F1, T1, q1, h, w, a, b)
            _copy_out(i, x1, R1, v1, W1, q1, x, R, v, W, q)
            if not body_finite(x1, R1, v1, W1):
                return STATUS_NONFINITE, k
        # after the step (written out here, not in a helper that takes the structs: see _scheme)
        count_iterations(out.iteration_counts, out.iterations, out.every, k, 0)
        if not report(model, state, out, mon, k, t0 + (k + 1) * h):
            return STATUS_REPORT, k
    return STATUS_OK, k1


@dataclasses.dataclass(frozen=True)
class SymplecticEuler(Scheme):
    """Semi-implicit (symplectic) Euler as robotics engines implement it.

    One step of size ``h``, loads at the start of the step:
    ``v += h f/m``; ``omega_w += h I_w^{-1}(t - omega_w × I_w omega_w)`` with the
    world inertia ``I_w = R J R^T``; ``x += h v``;
    ``q = normalise(q + h/2 [0, omega_w] ⊗ q)``.

    With this update rbdyn reproduces the Open Dynamics Engine's errors on
    the Boxes benchmark.

    References
    ----------
    * S. Peters, J. Hsu, "Comparison of Rigid Body Dynamic Simulators for
      Robotic Simulation in Gazebo", ROSCon 2014.
    * E. Hairer, C. Lubich, G. Wanner, *Geometric Numerical Integration*,
      2nd ed., Springer, 2006 (symplectic Euler, Sect. VI.3).
    """

    name = "symplectic_euler"
    description = "semi-implicit Euler with explicit gyroscopic term, as robotics engines do (order 1)"
    reference = "Peters & Hsu, ROSCon 2014 (ODE/Bullet/DART/MuJoCo Euler step)"
    label = "semi-implicit Euler"
    order = 1
    implicit = False
    conserves = frozenset({"linear momentum", "quaternion norm", "orthonormality"})
    energy = "not conserved"
    symmetric = False
    kernel = symplectic_euler_advance

    def params(self):
        return BaselineParams(0)

    def init(self, system, state):
        return _init(state)

    def work(self, system, state):
        return _work()


@njit_inline
def _rk4_rates(mass, J, J_inv, i, pivoted, q, v, W, R, F, T, s, kx, kq, kv, kW, a, b):
    """Rates ``k*[s]`` of body ``i`` at stage ``s``, whose ``R`` and loads are known.

    ``x' = v``, ``q' = q ⊗ [0, W] / 2``, ``v' = f/m``,
    ``W' = J^{-1}(R^T T - W × J W)`` (``J[i]``, ``J_inv[i]``); ``a``, ``b`` are
    3-vector scratch.
    """
    if pivoted == 0:
        for k in range(3):
            kx[s, k] = v[k]
            kv[s, k] = F[k] / mass
    else:
        for k in range(3):
            kx[s, k] = 0.0
            kv[s, k] = 0.0
    # q is not normalised at the stages; the rate uses it as it is.
    kq[s, 0] = 0.5 * (-q[1] * W[0] - q[2] * W[1] - q[3] * W[2])
    kq[s, 1] = 0.5 * (q[0] * W[0] + q[2] * W[2] - q[3] * W[1])
    kq[s, 2] = 0.5 * (q[0] * W[1] - q[1] * W[2] + q[3] * W[0])
    kq[s, 3] = 0.5 * (q[0] * W[2] + q[1] * W[1] - q[2] * W[0])
    for r in range(3):
        a[r] = J[i, r, 0] * W[0] + J[i, r, 1] * W[1] + J[i, r, 2] * W[2]
    cross_into(W, a, b)  # b = W × J W
    rmatvec_into(R, T, a)  # a = torque in body axes
    a[0] -= b[0]
    a[1] -= b[1]
    a[2] -= b[2]
    for r in range(3):
        kW[s, r] = J_inv[i, r, 0] * a[0] + J_inv[i, r, 1] * a[1] + J_inv[i, r, 2] * a[2]


@njit_inline
def _rk4_stage_state(y, k, r, c, out):
    """``out = y + c k[r]`` for one body's component vector: the state at a stage."""
    for j in range(y.shape[0]):
        out[j] = y[j] + c * k[r, j]


@njit_inline
def _rk4_combine(y, k, h6):
    """``y += h/6 (k1 + 2 k2 + 2 k3 + k4)``; ``k`` stacks the four stage rates."""
    for j in range(y.shape[0]):
        y[j] += h6 * (k[0, j] + 2.0 * k[1, j] + 2.0 * k[2, j] + k[3, j])


@njit_inline
def _rk4_node(s):
    """The node c_s of stage s: 0, 1/2, 1/2, 1."""
    return 0.0 if s == 0 else (1.0 if s == 3 else 0.5)


@njit
def rk4_advance(model, state, work, params, t0, h, k0, k1, out, mon):
    """Steps ``k0 .. k1 - 1`` of every body (see :mod:`rbdyn._scheme`); every array is bound
    here once and each body is copied into scratch for its step (see rbdyn._rig.advance)."""
    # every array borrowed, once (see rbdyn._jit.borrow): the loop below counts no references
    model, state, work, out, mon = borrow(model), borrow(state), borrow(work), borrow(out), borrow(mon)
    if k0 == 0:
        code = start(model, state, out, mon)
        if code != 0:
            return code, 0
    x, R, v, W, q = state.x, state.R, state.v, state.W, state.q
    mass, J, J_inv, pivoted = model.bodies.mass, model.bodies.inertia, model.bodies.inertia_inv, model.bodies.pivoted
    x1, R1, v1, W1, q1 = work.x1, work.R1, work.v1, work.W1, work.q1
    F1, T1, a, b, scr = work.F1, work.T1, work.a, work.b, work.loads
    xs, qs, vs, Ws, Rs = work.xs, work.qs, work.vs, work.Ws, work.Rs
    kx, kq, kv, kW = work.kx, work.kq, work.kv, work.kW
    user = model.loads.user_start[-1] > 0
    h6 = h / 6.0
    for k in range(k0, k1):
        t = t0 + k * h
        for i in range(x.shape[0]):
            _copy_in(i, x, R, v, W, q, x1, R1, v1, W1, q1)
            for s in range(4):
                # Stage s at y + c_s h k_{s-1}; the first stage is the step's start.
                c = _rk4_node(s)
                if s == 0:
                    for r in range(3):
                        xs[r] = x1[r]
                        vs[r] = v1[r]
                        Ws[r] = W1[r]
                    for r in range(4):
                        qs[r] = q1[r]
                else:
                    ch = c * h
                    _rk4_stage_state(x1, kx, s - 1, ch, xs)
                    _rk4_stage_state(q1, kq, s - 1, ch, qs)
                    _rk4_stage_state(v1, kv, s - 1, ch, vs)
                    _rk4_stage_state(W1, kW, s - 1, ch, Ws)
                _quat_to_matrix_into(qs, Rs)
                ts = t + c * h
                body_loads_into(model, i, ts, xs, Rs, vs, Ws, F1, T1)
                if user:
                    user_loads_into(model, i, ts, xs, Rs, vs, Ws, F1, T1, scr)
                _rk4_rates(mass[i], J, J_inv, i, pivoted[i], qs, vs, Ws, Rs, F1, T1, s, kx, kq, kv, kW, a, b)
            _rk4_combine(x1, kx, h6)
            _rk4_combine(v1, kv, h6)
            _rk4_combine(W1, kW, h6)
            _rk4_combine(q1, kq, h6)
            _normalise_quat(q1)  # carried unit quaternion; R follows it
            _unit_quat_to_matrix_into(q1[0], q1[1], q1[2], q1[3], R1)
            _copy_out(i, x1, R1, v1, W1, q1, x, R, v, W, q)
            if not body_finite(x1, R1, v1, W1):
                return STATUS_NONFINITE, k
        # after the step (written out here, not in a helper that takes the structs: see _scheme)
        count_iterations(out.iteration_counts, out.iterations, out.every, k, 0)
        if not report(model, state, out, mon, k, t0 + (k + 1) * h):
            return STATUS_REPORT, k
    return STATUS_OK, k1


@dataclasses.dataclass(frozen=True)
class RK4(Scheme):
    """Classical fourth-order Runge–Kutta on (x, q, v, omega_body).

    The rates are ``x' = v``, ``q' = q ⊗ [0, W]/2``, ``v' = f/m``,
    ``W' = J^{-1}(T_body - W × J W)``; the quaternion is renormalised at the
    end of each step. Loads are evaluated at the four stages.

    References
    ----------
    * E. Hairer, S. P. Nørsett, G. Wanner, *Solving Ordinary Differential
      Equations I*, 2nd ed., Springer, 1993 (Sect. II.1, the "classical"
      method).
    """

    name = "rk4"
    description = "classical Runge-Kutta on position, quaternion, velocity, body rate (order 4)"
    reference = "Kutta 1901; Hairer, Nørsett & Wanner 1993, Sect. II.1"
    label = "classical RK4"
    order = 4
    implicit = False
    conserves = frozenset({"linear momentum", "quaternion norm", "orthonormality"})
    energy = "not conserved"
    symmetric = False
    kernel = rk4_advance

    def params(self):
        return BaselineParams(0)

    def init(self, system, state):
        return _init(state)

    def work(self, system, state):
        return _work()
