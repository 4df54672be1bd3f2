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
from ._data import body_loads_into
from ._jit import njit
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
    """One body's scratch: loads, 3-vectors, and the stages of RK4."""

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
    return BaselineWork(v3(), v3(), v3(), v3(), v3(), np.empty((4, 3)), v3(), np.empty(4), v3(), v3(),
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


@njit
def _symplectic_euler_update(mass, J, J_inv, pivoted, x, R, v, W, F, T, q, h, w, a, b):
    """One step of one body from the loads ``F``, ``T`` at the start of the step.

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
    matvec_into(J, a, b)
    matvec_into(R, b, a)  # a = I_w w
    cross_into(w, a, b)
    b[0] = T[0] - b[0]
    b[1] = T[1] - b[1]
    b[2] = T[2] - b[2]
    rmatvec_into(R, b, a)
    matvec_into(J_inv, a, b)
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


def symplectic_euler_step(model, state, work, params, t, h):
    """One step of every body (the scheme's step function). Returns ``(status, 0)``."""
    x, R, v, W, q = state.x, state.R, state.v, state.W, state.q
    b = model.bodies
    wk = work
    for i in range(x.shape[0]):
        body_loads_into(model, i, t, x[i], R[i], v[i], W[i], wk.F1, wk.T1, wk.loads)
        _symplectic_euler_update(b.mass[i], b.inertia[i], b.inertia_inv[i], b.pivoted[i], x[i], R[i], v[i], W[i],
                                 wk.F1, wk.T1, q[i], h, wk.w, wk.a, wk.b)
        if not body_finite(x[i], R[i], v[i], W[i]):
            return STATUS_NONFINITE, 0
    return STATUS_OK, 0


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
    step_function = staticmethod(symplectic_euler_step)

    def params(self):
        return BaselineParams(0)

    def init(self, system, state):
        return _init(state)

    def work(self, system, state):
        return _work()


@njit
def _rk4_rates(mass, J, J_inv, pivoted, q, v, W, R, F, T, s, kx, kq, kv, kW, a, b):
    """Rates ``k*[s]`` of one body at stage ``s``, whose ``R`` and loads are known.

    ``x' = v``, ``q' = q ⊗ [0, W] / 2``, ``v' = f/m``,
    ``W' = J^{-1}(R^T T - W × J W)``; ``a``, ``b`` are 3-vector scratch.
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
    matvec_into(J, W, a)
    cross_into(W, a, b)  # b = W × J W
    rmatvec_into(R, T, a)  # a = torque in body axes
    a[0] -= b[0]
    a[1] -= b[1]
    a[2] -= b[2]
    matvec_into(J_inv, a, kW[s])


@njit
def _rk4_stage_state(y, k, r, c, out):
    """``out = y + c k[r]`` for one body's component vector: the state at a stage."""
    for j in range(y.shape[0]):
        out[j] = y[j] + c * k[r, j]


@njit
def _rk4_combine(y, k, h6):
    """``y += h/6 (k1 + 2 k2 + 2 k3 + k4)``; ``k`` stacks the four stage rates."""
    for j in range(y.shape[0]):
        y[j] += h6 * (k[0, j] + 2.0 * k[1, j] + 2.0 * k[2, j] + k[3, j])


_RK4_NODES = (0.0, 0.5, 0.5, 1.0)


def rk4_step(model, state, work, params, t, h):
    """One step of every body (the scheme's step function). Returns ``(status, 0)``."""
    x, R, v, W, q = state.x, state.R, state.v, state.W, state.q
    b = model.bodies
    wk = work
    xs, qs, vs, Ws, Rs = wk.xs, wk.qs, wk.vs, wk.Ws, wk.Rs
    kx, kq, kv, kW = wk.kx, wk.kq, wk.kv, wk.kW
    for i in range(x.shape[0]):
        for s in range(4):
            # Stage s at y + c_s h k_{s-1}; the first stage is the step's start.
            if s == 0:
                xs[:] = x[i]
                qs[:] = q[i]
                vs[:] = v[i]
                Ws[:] = W[i]
            else:
                ch = _RK4_NODES[s] * h
                _rk4_stage_state(x[i], kx, s - 1, ch, xs)
                _rk4_stage_state(q[i], kq, s - 1, ch, qs)
                _rk4_stage_state(v[i], kv, s - 1, ch, vs)
                _rk4_stage_state(W[i], kW, s - 1, ch, Ws)
            _quat_to_matrix_into(qs, Rs)
            body_loads_into(model, i, t + _RK4_NODES[s] * h, xs, Rs, vs, Ws, wk.F1, wk.T1, wk.loads)
            _rk4_rates(b.mass[i], b.inertia[i], b.inertia_inv[i], b.pivoted[i], qs, vs, Ws, Rs, wk.F1, wk.T1, s,
                       kx, kq, kv, kW, wk.a, wk.b)
        h6 = h / 6.0
        _rk4_combine(x[i], kx, h6)
        _rk4_combine(v[i], kv, h6)
        _rk4_combine(W[i], kW, h6)
        qi = q[i]
        _rk4_combine(qi, kq, h6)
        _normalise_quat(qi)  # carried unit quaternion; R follows it
        _unit_quat_to_matrix_into(qi[0], qi[1], qi[2], qi[3], R[i])
        if not body_finite(x[i], R[i], v[i], W[i]):
            return STATUS_NONFINITE, 0
    return STATUS_OK, 0


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
    step_function = staticmethod(rk4_step)

    def params(self):
        return BaselineParams(0)

    def init(self, system, state):
        return _init(state)

    def work(self, system, state):
        return _work()
