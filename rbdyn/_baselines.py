"""Two baseline schemes that users compare against.

``symplectic_euler`` is what robotics engines (ODE, Bullet, DART, MuJoCo's
Euler) do; ``rk4`` is the classical Runge–Kutta method on the quaternion
form of the equations of motion.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import so3
from .so3 import _unit_quat_to_matrix_into
from ._jit import njit
from ._loads import _eval_loads, all_finite, cross_into, matvec_into, rmatvec_into
from ._scheme import STATUS_NONFINITE, STATUS_OK, Scheme

__all__ = ["SymplecticEuler", "RK4"]


# The kernels below allocate nothing per step: scratch arrays are made once
# per advance call and the 3x3 algebra is written out (helpers in _loads).
# The orientation is carried as a unit quaternion inside an advance call and
# written back to R after every step (the loads and the caller read R).
# Per-body work lives in compiled helpers that do not call _eval_loads, so
# that for systems with Python callbacks (where the kernel runs as Python,
# see rbdyn._jit.python_variant) only the loads leave compiled code.


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
def _quats_from_matrices(R, q):
    """``q[i]`` = unit quaternion of ``R[i]`` for every body."""
    for i in range(R.shape[0]):
        q[i] = so3.matrix_to_quat_wxyz(R[i])


@njit
def _symplectic_euler_update(model, x, R, v, W, F, T, q, h, w, a, b):
    """One step of every body from the loads ``F``, ``T`` at the start of the step.

    ``q[i]`` is ``R[i]`` as a unit quaternion (updated with it); ``w``, ``a``,
    ``b`` are 3-vector scratch.
    """
    mass, J, J_inv, pivoted = model[0], model[1], model[2], model[3]
    for i in range(x.shape[0]):
        Ri = R[i]
        # The gyroscopic term is explicit and in world axes, with the world
        # inertia I_w = R J R^T of the start of the step (as ODE does):
        #   w += h I_w^{-1} (T - w × I_w w),  w = R W the world rate.
        # I_w and its inverse are applied as R (J (R^T .)): matrix-vector
        # products only, no 3x3 matrix products.
        matvec_into(Ri, W[i], w)
        rmatvec_into(Ri, w, a)
        matvec_into(J[i], a, b)
        matvec_into(Ri, b, a)  # a = I_w w
        cross_into(w, a, b)
        Ti = T[i]
        b[0] = Ti[0] - b[0]
        b[1] = Ti[1] - b[1]
        b[2] = Ti[2] - b[2]
        rmatvec_into(Ri, b, a)
        matvec_into(J_inv[i], a, b)
        matvec_into(Ri, b, a)  # a = I_w^{-1} (T - w × I_w w)
        w[0] += h * a[0]
        w[1] += h * a[1]
        w[2] += h * a[2]
        if pivoted[i] == 0:
            hm = h / mass[i]
            for k in range(3):
                v[i, k] += hm * F[i, k]
                x[i, k] += h * v[i, k]
        # First-order quaternion update with the new world rate, normalised:
        # q += h/2 [0, w] ⊗ q.
        qi = q[i]
        q0, q1, q2, q3 = qi[0], qi[1], qi[2], qi[3]
        hh = 0.5 * h
        qi[0] = q0 + hh * (-w[0] * q1 - w[1] * q2 - w[2] * q3)
        qi[1] = q1 + hh * (w[0] * q0 + w[1] * q3 - w[2] * q2)
        qi[2] = q2 + hh * (-w[0] * q3 + w[1] * q0 + w[2] * q1)
        qi[3] = q3 + hh * (w[0] * q2 - w[1] * q1 + w[2] * q0)
        _normalise_quat(qi)
        _unit_quat_to_matrix_into(qi[0], qi[1], qi[2], qi[3], Ri)
        rmatvec_into(Ri, w, W[i])  # body rate from the new orientation


@njit
def _advance_symplectic_euler(model, carry, params, t0, h, n, counters, offset):
    x, R, v, W = carry[0], carry[1], carry[2], carry[3]
    nb = x.shape[0]
    F = np.empty((nb, 3))
    T = np.empty((nb, 3))
    q = np.empty((nb, 4))
    w = np.empty(3)
    a = np.empty(3)
    b = np.empty(3)
    _quats_from_matrices(R, q)
    for k in range(n):
        _eval_loads(model, t0 + k * h, x, R, v, W, F, T)
        _symplectic_euler_update(model, x, R, v, W, F, T, q, h, w, a, b)
        counters[offset + k] = 0
        if not all_finite(x, R, v, W):
            return STATUS_NONFINITE, k
    return STATUS_OK, n


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
    kernel = _advance_symplectic_euler


@njit
def _rk4_body_rates(model, q, v, W, R, F, T, s, kx, kq, kv, kW, a, b):
    """Rates ``k*[s]`` of every body at stage ``s``, whose ``R`` and loads are known.

    ``x' = v``, ``q' = q ⊗ [0, W] / 2``, ``v' = f/m``,
    ``W' = J^{-1}(R^T T - W × J W)``; ``a``, ``b`` are 3-vector scratch.
    """
    mass, J, J_inv, pivoted = model[0], model[1], model[2], model[3]
    for i in range(q.shape[0]):
        if pivoted[i] == 0:
            for k in range(3):
                kx[s, i, k] = v[i, k]
                kv[s, i, k] = F[i, k] / mass[i]
        else:
            for k in range(3):
                kx[s, i, k] = 0.0
                kv[s, i, k] = 0.0
        qi, Wi = q[i], W[i]
        # q is not normalised at the stages; the rate uses it as it is.
        kq[s, i, 0] = 0.5 * (-qi[1] * Wi[0] - qi[2] * Wi[1] - qi[3] * Wi[2])
        kq[s, i, 1] = 0.5 * (qi[0] * Wi[0] + qi[2] * Wi[2] - qi[3] * Wi[1])
        kq[s, i, 2] = 0.5 * (qi[0] * Wi[1] - qi[1] * Wi[2] + qi[3] * Wi[0])
        kq[s, i, 3] = 0.5 * (qi[0] * Wi[2] + qi[1] * Wi[1] - qi[2] * Wi[0])
        matvec_into(J[i], Wi, a)
        cross_into(Wi, a, b)  # b = W × J W
        rmatvec_into(R[i], T[i], a)  # a = torque in body axes
        a[0] -= b[0]
        a[1] -= b[1]
        a[2] -= b[2]
        matvec_into(J_inv[i], a, kW[s, i])


@njit
def _quats_to_matrices(q, R):
    """``R[i]`` = rotation of ``q[i] / |q[i]|`` for every body."""
    for i in range(q.shape[0]):
        _quat_to_matrix_into(q[i], R[i])


@njit
def _rk4_stage_state(y, k, r, c, out):
    """``out = y + c k[r]`` for (bodies, components) arrays: the state at a stage."""
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            out[i, j] = y[i, j] + c * k[r, i, j]


@njit
def _rk4_combine(y, k, h6):
    """``y += h/6 (k1 + 2 k2 + 2 k3 + k4)``; ``k`` stacks the four stage rates."""
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            y[i, j] += h6 * (k[0, i, j] + 2.0 * k[1, i, j] + 2.0 * k[2, i, j] + k[3, i, j])


_RK4_NODES = (0.0, 0.5, 0.5, 1.0)


@njit
def _advance_rk4(model, carry, params, t0, h, n, counters, offset):
    x, R, v, W = carry[0], carry[1], carry[2], carry[3]
    nb = x.shape[0]
    # Scratch for the whole call: loads, stage rotation and state, rates.
    F = np.empty((nb, 3))
    T = np.empty((nb, 3))
    Rs = np.empty((nb, 3, 3))
    q = np.empty((nb, 4))
    xs = np.empty((nb, 3))
    qs = np.empty((nb, 4))
    vs = np.empty((nb, 3))
    Ws = np.empty((nb, 3))
    kx = np.empty((4, nb, 3))
    kq = np.empty((4, nb, 4))
    kv = np.empty((4, nb, 3))
    kW = np.empty((4, nb, 3))
    a = np.empty(3)
    b = np.empty(3)
    _quats_from_matrices(R, q)
    for k in range(n):
        t = t0 + k * h
        for s in range(4):
            # Stage s at y + c_s h k_{s-1}; the first stage is the step's start.
            if s == 0:
                xs[:], qs[:], vs[:], Ws[:] = x, q, v, W
            else:
                ch = _RK4_NODES[s] * h
                _rk4_stage_state(x, kx, s - 1, ch, xs)
                _rk4_stage_state(q, kq, s - 1, ch, qs)
                _rk4_stage_state(v, kv, s - 1, ch, vs)
                _rk4_stage_state(W, kW, s - 1, ch, Ws)
            # The loads are called from the kernel itself (not from a
            # helper) so that the Python variant for callbacks sees them.
            _quats_to_matrices(qs, Rs)
            _eval_loads(model, t + _RK4_NODES[s] * h, xs, Rs, vs, Ws, F, T)
            _rk4_body_rates(model, qs, vs, Ws, Rs, F, T, s, kx, kq, kv, kW, a, b)
        h6 = h / 6.0
        _rk4_combine(x, kx, h6)
        _rk4_combine(v, kv, h6)
        _rk4_combine(W, kW, h6)
        _rk4_combine(q, kq, h6)
        for i in range(nb):
            qi = q[i]
            _normalise_quat(qi)  # carried unit quaternion; R follows it
            _unit_quat_to_matrix_into(qi[0], qi[1], qi[2], qi[3], R[i])
        counters[offset + k] = 0
        if not all_finite(x, R, v, W):
            return STATUS_NONFINITE, k
    return STATUS_OK, n


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
    kernel = _advance_rk4
