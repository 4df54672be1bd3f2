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


# Allocation-free 3-vector helpers for the inner loops of the kernels: a
# fresh small array costs more than the arithmetic on it, so these write into
# caller-owned scratch. Each reads all its inputs before writing, so ``out``
# may be one of the inputs.


@njit
def cross_into(a, b, out):
    """``out = a × b`` for 3-vectors."""
    a0, a1, a2 = a[0], a[1], a[2]
    b0, b1, b2 = b[0], b[1], b[2]
    out[0] = a1 * b2 - a2 * b1
    out[1] = a2 * b0 - a0 * b2
    out[2] = a0 * b1 - a1 * b0


@njit
def matvec_into(A, b, out):
    """``out = A @ b`` for a 3x3 matrix and a 3-vector."""
    b0, b1, b2 = b[0], b[1], b[2]
    out[0] = A[0, 0] * b0 + A[0, 1] * b1 + A[0, 2] * b2
    out[1] = A[1, 0] * b0 + A[1, 1] * b1 + A[1, 2] * b2
    out[2] = A[2, 0] * b0 + A[2, 1] * b1 + A[2, 2] * b2


@njit
def rmatvec_into(A, b, out):
    """``out = A.T @ b`` for a 3x3 matrix and a 3-vector."""
    b0, b1, b2 = b[0], b[1], b[2]
    out[0] = A[0, 0] * b0 + A[1, 0] * b1 + A[2, 0] * b2
    out[1] = A[0, 1] * b0 + A[1, 1] * b1 + A[2, 1] * b2
    out[2] = A[0, 2] * b0 + A[1, 2] * b1 + A[2, 2] * b2


@njit
def _eval_loads(model, t, x, R, v, W, F, T):
    """Fill ``F[i]`` (force at body origin) and ``T[i]`` (torque about it), world frame.

    Written with scalars so that it allocates nothing: it runs at every step
    (every stage) of every kernel. The kernels call it as a module global,
    which :func:`rbdyn._jit.python_variant` rebinds for systems with
    callbacks, so its name and signature are part of the kernel contract.
    """
    mass, com, g, F_const, T_const = model[0], model[4], model[5], model[6], model[7]
    pf_body, pf_point, pf_force = model[8], model[9], model[10]
    for i in range(x.shape[0]):
        Ri, ci = R[i], com[i]
        # Gravity and the constant force act at the mass centre, c = R com
        # from the body origin, so about the origin they give c × f.
        f0 = mass[i] * g[0] + F_const[i, 0]
        f1 = mass[i] * g[1] + F_const[i, 1]
        f2 = mass[i] * g[2] + F_const[i, 2]
        c0 = Ri[0, 0] * ci[0] + Ri[0, 1] * ci[1] + Ri[0, 2] * ci[2]
        c1 = Ri[1, 0] * ci[0] + Ri[1, 1] * ci[1] + Ri[1, 2] * ci[2]
        c2 = Ri[2, 0] * ci[0] + Ri[2, 1] * ci[1] + Ri[2, 2] * ci[2]
        F[i, 0] = f0
        F[i, 1] = f1
        F[i, 2] = f2
        T[i, 0] = (c1 * f2 - c2 * f1) + T_const[i, 0]
        T[i, 1] = (c2 * f0 - c0 * f2) + T_const[i, 1]
        T[i, 2] = (c0 * f1 - c1 * f0) + T_const[i, 2]
    for k in range(pf_body.shape[0]):
        i = pf_body[k]
        Ri, p, f = R[i], pf_point[k], pf_force[k]
        r0 = Ri[0, 0] * p[0] + Ri[0, 1] * p[1] + Ri[0, 2] * p[2]
        r1 = Ri[1, 0] * p[0] + Ri[1, 1] * p[1] + Ri[1, 2] * p[2]
        r2 = Ri[2, 0] * p[0] + Ri[2, 1] * p[1] + Ri[2, 2] * p[2]
        F[i, 0] += f[0]
        F[i, 1] += f[1]
        F[i, 2] += f[2]
        T[i, 0] += r1 * f[2] - r2 * f[1]
        T[i, 1] += r2 * f[0] - r0 * f[2]
        T[i, 2] += r0 * f[1] - r1 * f[0]


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
