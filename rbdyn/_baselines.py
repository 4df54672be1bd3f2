"""Two baseline schemes that users compare against.

``symplectic_euler`` is what robotics engines (ODE, Bullet, DART, MuJoCo's
Euler) do; ``rk4`` is the classical Runge–Kutta method on the quaternion
form of the equations of motion.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import so3
from ._jit import njit
from ._loads import _eval_loads, all_finite, cross
from ._scheme import STATUS_NONFINITE, STATUS_OK, Scheme

__all__ = ["SymplecticEuler", "RK4"]


@njit
def _advance_symplectic_euler(model, carry, params, t0, h, n, counters, offset):
    x, R, v, W = carry[0], carry[1], carry[2], carry[3]
    mass, J, J_inv, pivoted = model[0], model[1], model[2], model[3]
    nb = x.shape[0]
    F = np.empty((nb, 3))
    T = np.empty((nb, 3))
    dq = np.zeros(4)
    for k in range(n):
        _eval_loads(model, t0 + k * h, x, R, v, W, F, T)
        for i in range(nb):
            Ri = R[i]
            # The gyroscopic term is explicit and in world axes, with the
            # world inertia R J R^T of the start of the step (as ODE does).
            w = Ri @ W[i]
            I_w = Ri @ J[i] @ Ri.T
            I_w_inv = Ri @ J_inv[i] @ Ri.T
            w = w + h * (I_w_inv @ (T[i] - cross(w, I_w @ w)))
            if pivoted[i] == 0:
                v[i] += (h / mass[i]) * F[i]
                x[i] += h * v[i]
            # First-order quaternion update with the new world rate, normalised.
            q = so3.matrix_to_quat_wxyz(Ri)
            dq[1:] = w
            q = q + (0.5 * h) * so3.quat_wxyz_multiply(dq, q)
            Rn = so3.quat_wxyz_to_matrix(q)
            R[i] = Rn
            W[i] = Rn.T @ w
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
    .. [1] S. Peters, J. Hsu, "Comparison of Rigid Body Dynamic Simulators for
       Robotic Simulation in Gazebo", ROSCon 2014.
    .. [2] E. Hairer, C. Lubich, G. Wanner, *Geometric Numerical Integration*,
       2nd ed., Springer, 2006 (symplectic Euler, Sect. VI.3).
    """

    name = "symplectic_euler"
    description = "semi-implicit Euler with explicit gyroscopic term, as robotics engines do (order 1)"
    reference = "Peters & Hsu, ROSCon 2014 (ODE/Bullet/DART/MuJoCo Euler step)"
    label = "semi-implicit Euler"
    order = 1
    implicit = False
    conserves = frozenset({"quaternion norm"})
    kernel = _advance_symplectic_euler


@njit
def _rk4_rates(model, t, x, q, v, W, R, F, T, dx, dq, dv, dW):
    """Right-hand side at a stage: fills ``R`` from ``q``, then the rates."""
    mass, J, J_inv, pivoted = model[0], model[1], model[2], model[3]
    nb = x.shape[0]
    for i in range(nb):
        R[i] = so3.quat_wxyz_to_matrix(q[i])
    _eval_loads(model, t, x, R, v, W, F, T)
    w4 = np.zeros(4)
    for i in range(nb):
        if pivoted[i] == 0:
            dx[i] = v[i]
            dv[i] = F[i] / mass[i]
        else:
            dx[i] = 0.0
            dv[i] = 0.0
        w4[1:] = W[i]
        dq[i] = 0.5 * so3.quat_wxyz_multiply(q[i], w4)
        dW[i] = J_inv[i] @ (R[i].T @ T[i] - cross(W[i], J[i] @ W[i]))


@njit
def _advance_rk4(model, carry, params, t0, h, n, counters, offset):
    x, R, v, W = carry[0], carry[1], carry[2], carry[3]
    nb = x.shape[0]
    F = np.empty((nb, 3))
    T = np.empty((nb, 3))
    Rs = np.empty((nb, 3, 3))
    q = np.empty((nb, 4))
    kx = np.empty((4, nb, 3))
    kq = np.empty((4, nb, 4))
    kv = np.empty((4, nb, 3))
    kW = np.empty((4, nb, 3))
    for k in range(n):
        t = t0 + k * h
        for i in range(nb):
            q[i] = so3.matrix_to_quat_wxyz(R[i])
        _rk4_rates(model, t, x, q, v, W, Rs, F, T, kx[0], kq[0], kv[0], kW[0])
        for s, c in ((1, 0.5), (2, 0.5), (3, 1.0)):
            _rk4_rates(
                model, t + c * h,
                x + (c * h) * kx[s - 1], q + (c * h) * kq[s - 1],
                v + (c * h) * kv[s - 1], W + (c * h) * kW[s - 1],
                Rs, F, T, kx[s], kq[s], kv[s], kW[s],
            )
        h6 = h / 6.0
        x += h6 * (kx[0] + 2.0 * kx[1] + 2.0 * kx[2] + kx[3])
        v += h6 * (kv[0] + 2.0 * kv[1] + 2.0 * kv[2] + kv[3])
        W += h6 * (kW[0] + 2.0 * kW[1] + 2.0 * kW[2] + kW[3])
        q += h6 * (kq[0] + 2.0 * kq[1] + 2.0 * kq[2] + kq[3])
        for i in range(nb):
            R[i] = so3.quat_wxyz_to_matrix(q[i])  # renormalises
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
    .. [1] E. Hairer, S. P. Nørsett, G. Wanner, *Solving Ordinary Differential
       Equations I*, 2nd ed., Springer, 1993 (Sect. II.1, the "classical"
       method).
    """

    name = "rk4"
    description = "classical Runge-Kutta on position, quaternion, velocity, body rate (order 4)"
    reference = "Kutta 1901; Hairer, Nørsett & Wanner 1993, Sect. II.1"
    label = "classical RK4"
    order = 4
    implicit = False
    conserves = frozenset({"quaternion norm"})
    kernel = _advance_rk4
