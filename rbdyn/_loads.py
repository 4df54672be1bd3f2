"""Compiled evaluation of the built-in loads and of the diagnostics.

``model`` is :attr:`rbdyn.System.packed`:
``(mass, J, J_inv, pivoted, com_body, gravity, F_const, T_const, pf_body,
pf_point, pf_force)``. Forces act at the body origin (world components) and
torques are about the body origin (world components); for a pivoted body the
origin is the pivot, so gravity acting at the mass centre gives a torque.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit


@njit
def cross(a, b):
    """``a × b`` for 3-vectors, without numpy's dispatch overhead."""
    out = np.empty(3)
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    return out


@njit
def _eval_loads(model, t, x, R, v, W, F, T):
    """Fill ``F[i]`` (force at body origin) and ``T[i]`` (torque about it), world frame."""
    mass, com, g, F_const, T_const = model[0], model[4], model[5], model[6], model[7]
    pf_body, pf_point, pf_force = model[8], model[9], model[10]
    for i in range(x.shape[0]):
        f = mass[i] * g + F_const[i]
        c = R[i] @ com[i]
        F[i] = f
        T[i] = cross(c, f) + T_const[i]
    for k in range(pf_body.shape[0]):
        i = pf_body[k]
        F[i] += pf_force[k]
        T[i] += cross(R[i] @ pf_point[k], pf_force[k])


@njit
def energy_momentum(model, x, R, v, W):
    """Kinetic and potential energy, linear momentum and angular momentum
    about the world origin (world components) of the whole system.

    The potential covers gravity and the constant forces (both
    conservative); constant torques have no potential.
    """
    mass, J, com, g, F_const = model[0], model[1], model[4], model[5], model[6]
    pf_body, pf_point, pf_force = model[8], model[9], model[10]
    kinetic = 0.0
    potential = 0.0
    p = np.zeros(3)
    L = np.zeros(3)
    for i in range(x.shape[0]):
        m = mass[i]
        c_b = com[i]
        c = R[i] @ c_b
        w = R[i] @ W[i]
        v_c = v[i] + cross(w, c)
        x_c = x[i] + c
        kinetic += 0.5 * m * (v[i] @ v[i]) + m * (v[i] @ cross(w, c)) + 0.5 * (W[i] @ (J[i] @ W[i]))
        potential -= (m * g + F_const[i]) @ x_c
        p += m * v_c
        J_c = J[i] - m * ((c_b @ c_b) * np.eye(3) - np.outer(c_b, c_b))
        L += m * cross(x_c, v_c) + R[i] @ (J_c @ W[i])
    for k in range(pf_body.shape[0]):
        i = pf_body[k]
        potential -= pf_force[k] @ (x[i] + R[i] @ pf_point[k])
    return kinetic, potential, p, L


@njit
def mass_centre_state(model, x, R, v, W):
    """Mass-centre positions and velocities (world) from body-origin ones."""
    com = model[4]
    n = x.shape[0]
    x_c = np.empty((n, 3))
    v_c = np.empty((n, 3))
    for i in range(n):
        c = R[i] @ com[i]
        x_c[i] = x[i] + c
        v_c[i] = v[i] + cross(R[i] @ W[i], c)
    return x_c, v_c


@njit
def all_finite(x, R, v, W):
    """True when no entry of the state is nan or inf."""
    s = 0.0
    for i in range(x.shape[0]):
        for a in range(3):
            s += x[i, a] + v[i, a] + W[i, a] + R[i, a, 0] + R[i, a, 1] + R[i, a, 2]
    return np.isfinite(s)
