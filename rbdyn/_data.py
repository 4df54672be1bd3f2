r"""The named, typed data the compiled kernels read: a :class:`Model` of a system.

A :class:`rbdyn.System` is validated Python objects; :func:`pack_model` turns
it into float64 and int64 arrays grouped in named tuples, which numba compiles
against field by field (``model.bodies.mass``, ``model.loads.gravity``). The
names follow the notation page: the *body origin* is the mass centre of a free
body and the pivot of a pivoted one; ``inertia`` is about the body origin, in
body axes; forces are world vectors.

Bodies
    ``mass`` (N,), ``inertia`` and ``inertia_inv`` (N, 3, 3), ``pivoted``
    (N,) 0/1, ``com_body`` (N, 3): the mass centre from the body origin, body
    axes.
Loads
    ``gravity`` (3,); ``force`` and ``torque`` (N, 3), the constant world
    force at the mass centre and the constant couple; the point forces
    ``point_body`` (P, 3) (body axes, from the origin) and ``point_force``
    (P, 3), sorted by body, those of body ``i`` at ``point_start[i]`` to
    ``point_start[i + 1]``; the compiled user loads ``user_fn`` (a typed list
    of functions of :data:`LOAD_SIGNATURE`), their ``user_params`` (U, K) and
    ``user_potential`` (functions of :data:`POTENTIAL_SIGNATURE`), sorted by
    body with ``user_start`` (N + 1,); the linear springs from a body point to a
    world point, ``spring_point`` (body axes), ``spring_anchor`` (world),
    ``spring_stiffness`` and ``spring_rest`` (length), sorted by body with
    ``spring_start``.
Constraints
    See :mod:`rbdyn._constraints`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import types

from ._jit import function_list, njit, njit_inline, njit_signature

__all__ = [
    "Bodies",
    "Loads",
    "Model",
    "LOAD_SIGNATURE",
    "POTENTIAL_SIGNATURE",
    "pack_model",
    "body_loads_into",
    "user_loads_into",
    "eval_loads",
    "eval_potentials",
]

_vec = types.float64[::1]
_mat = types.float64[:, ::1]

#: Signature of a compiled load: ``fn(t, x_com, R_world_body, v_com, omega_body, params, force, torque)``
#: writes the force at the mass centre and the torque about it, both in world components, into
#: ``force`` and ``torque`` (3-vectors, zero on entry).
LOAD_SIGNATURE = types.void(types.float64, _vec, _mat, _vec, _vec, _vec, _vec, _vec)
#: Signature of the potential of a compiled load: ``fn(t, x_com, R_world_body, params) -> float``.
POTENTIAL_SIGNATURE = types.float64(types.float64, _vec, _mat, _vec)


def _no_potential(t, x_com, R_world_body, params):
    return 0.0


class Bodies(NamedTuple):
    mass: np.ndarray
    inertia: np.ndarray
    inertia_inv: np.ndarray
    pivoted: np.ndarray
    com_body: np.ndarray


class Loads(NamedTuple):
    gravity: np.ndarray
    force: np.ndarray
    torque: np.ndarray
    point_start: np.ndarray
    point_body: np.ndarray
    point_force: np.ndarray
    user_start: np.ndarray
    user_fn: object
    user_params: np.ndarray
    user_potential: object
    spring_start: np.ndarray
    spring_point: np.ndarray
    spring_anchor: np.ndarray
    spring_stiffness: np.ndarray
    spring_rest: np.ndarray


class Model(NamedTuple):
    bodies: Bodies
    loads: Loads
    constraints: tuple


def _by_body(n_bodies, owners):
    """Stable order of ``owners`` by body, and the start of each body's run (N + 1,)."""
    owners = np.asarray(owners, dtype=np.int64)
    order = np.argsort(owners, kind="stable")
    start = np.searchsorted(owners[order], np.arange(n_bodies + 1)).astype(np.int64)
    return order, start


def pack_loads(n_bodies, gravity, constant_forces, constant_torques, point_forces, compiled_loads, springs=()) -> Loads:
    """The loads of a system as arrays.

    ``constant_forces`` / ``constant_torques``: (body, vector) pairs, summed per
    body in the order given; ``point_forces``: (body, point_body, force);
    ``compiled_loads``: (body, fn, params, potential or None); ``springs``:
    (body, point_body, anchor, stiffness, rest_length).
    """
    F = np.zeros((n_bodies, 3))
    T = np.zeros((n_bodies, 3))
    for k, f in constant_forces:
        F[k] += f
    for k, tq in constant_torques:
        T[k] += tq
    order, p_start = _by_body(n_bodies, [k for k, _, _ in point_forces])
    p_point = np.array([point_forces[j][1] for j in order], dtype=float).reshape(-1, 3)
    p_force = np.array([point_forces[j][2] for j in order], dtype=float).reshape(-1, 3)
    order, u_start = _by_body(n_bodies, [k for k, *_ in compiled_loads])
    width = max([len(compiled_loads[j][2]) for j in order] + [1])
    u_params = np.zeros((len(order), width))
    fns, pots = [], []
    for row, j in enumerate(order):
        _, fn, params, potential = compiled_loads[j]
        u_params[row, : len(params)] = params
        fns.append(fn)
        pots.append(potential if potential is not None else njit_signature(_no_potential, POTENTIAL_SIGNATURE))
    order, s_start = _by_body(n_bodies, [k for k, *_ in springs])
    return Loads(
        np.array(gravity, dtype=float),
        F,
        T,
        p_start,
        p_point,
        p_force,
        u_start,
        function_list(LOAD_SIGNATURE, fns),
        u_params,
        function_list(POTENTIAL_SIGNATURE, pots),
        s_start,
        np.array([springs[j][1] for j in order], dtype=float).reshape(-1, 3),
        np.array([springs[j][2] for j in order], dtype=float).reshape(-1, 3),
        np.array([springs[j][3] for j in order], dtype=float),
        np.array([springs[j][4] for j in order], dtype=float),
    )


@njit_inline
def body_loads_into(model, i, t, x, R, v, W, f, tau):
    """Force ``f`` at the origin and torque ``tau`` about it (world) on body ``i``
    from the built-in loads (gravity, constant forces and couples, point forces).

    ``x``, ``R``, ``v``, ``W`` are the body's origin position and velocity,
    rotation and body rate. Written with scalars so that it allocates nothing:
    it runs at every step (every stage) of every scheme. The schemes call it as
    a module global, which :func:`rbdyn._jit.python_variant` rebinds for
    systems with Python callbacks, so its name and signature are part of the
    schemes' contract. The compiled user loads are added by
    :func:`user_loads_into`, called apart (only when there are any): code that
    calls the typed list of functions stops numba from pruning the reference
    counting of the model's arrays, which would cost every body every step.
    """
    bodies, loads = model.bodies, model.loads
    ci = bodies.com_body[i]
    m = bodies.mass[i]
    g = loads.gravity
    # Gravity and the constant force act at the mass centre, c = R com from the body
    # origin, so about the origin they give c x f.
    f0 = m * g[0] + loads.force[i, 0]
    f1 = m * g[1] + loads.force[i, 1]
    f2 = m * g[2] + loads.force[i, 2]
    c0 = R[0, 0] * ci[0] + R[0, 1] * ci[1] + R[0, 2] * ci[2]
    c1 = R[1, 0] * ci[0] + R[1, 1] * ci[1] + R[1, 2] * ci[2]
    c2 = R[2, 0] * ci[0] + R[2, 1] * ci[1] + R[2, 2] * ci[2]
    f[0] = f0
    f[1] = f1
    f[2] = f2
    tau[0] = (c1 * f2 - c2 * f1) + loads.torque[i, 0]
    tau[1] = (c2 * f0 - c0 * f2) + loads.torque[i, 1]
    tau[2] = (c0 * f1 - c1 * f0) + loads.torque[i, 2]
    for k in range(loads.point_start[i], loads.point_start[i + 1]):
        p, fk = loads.point_body[k], loads.point_force[k]
        r0 = R[0, 0] * p[0] + R[0, 1] * p[1] + R[0, 2] * p[2]
        r1 = R[1, 0] * p[0] + R[1, 1] * p[1] + R[1, 2] * p[2]
        r2 = R[2, 0] * p[0] + R[2, 1] * p[1] + R[2, 2] * p[2]
        f[0] += fk[0]
        f[1] += fk[1]
        f[2] += fk[2]
        tau[0] += r1 * fk[2] - r2 * fk[1]
        tau[1] += r2 * fk[0] - r0 * fk[2]
        tau[2] += r0 * fk[1] - r1 * fk[0]
    for k in range(loads.spring_start[i], loads.spring_start[i + 1]):
        # a linear spring from the body point x + R p to the world anchor: f = -k (L - L0) d/L
        p, a = loads.spring_point[k], loads.spring_anchor[k]
        r0 = R[0, 0] * p[0] + R[0, 1] * p[1] + R[0, 2] * p[2]
        r1 = R[1, 0] * p[0] + R[1, 1] * p[1] + R[1, 2] * p[2]
        r2 = R[2, 0] * p[0] + R[2, 1] * p[1] + R[2, 2] * p[2]
        d0, d1, d2 = x[0] + r0 - a[0], x[1] + r1 - a[1], x[2] + r2 - a[2]
        length = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        scale = -loads.spring_stiffness[k] * (length - loads.spring_rest[k]) / length if length > 0.0 else 0.0
        fs0, fs1, fs2 = scale * d0, scale * d1, scale * d2
        f[0] += fs0
        f[1] += fs1
        f[2] += fs2
        tau[0] += r1 * fs2 - r2 * fs1
        tau[1] += r2 * fs0 - r0 * fs2
        tau[2] += r0 * fs1 - r1 * fs0


@njit
def user_loads_into(model, i, t, x, R, v, W, f, tau, scratch):
    """Add the compiled user loads of body ``i`` to ``f`` and ``tau`` (as :func:`body_loads_into`);
    ``scratch`` is a (4, 3) array."""
    loads = model.loads
    ci = model.bodies.com_body[i]
    c0 = R[0, 0] * ci[0] + R[0, 1] * ci[1] + R[0, 2] * ci[2]
    c1 = R[1, 0] * ci[0] + R[1, 1] * ci[1] + R[1, 2] * ci[2]
    c2 = R[2, 0] * ci[0] + R[2, 1] * ci[1] + R[2, 2] * ci[2]
    # A compiled load sees the mass centre's position and velocity and returns the force at
    # the mass centre and the torque about it; both are moved to the origin here.
    w0 = R[0, 0] * W[0] + R[0, 1] * W[1] + R[0, 2] * W[2]
    w1 = R[1, 0] * W[0] + R[1, 1] * W[1] + R[1, 2] * W[2]
    w2 = R[2, 0] * W[0] + R[2, 1] * W[1] + R[2, 2] * W[2]
    xc, vc, uf, ut = scratch[0], scratch[1], scratch[2], scratch[3]
    xc[0], xc[1], xc[2] = x[0] + c0, x[1] + c1, x[2] + c2
    vc[0] = v[0] + (w1 * c2 - w2 * c1)
    vc[1] = v[1] + (w2 * c0 - w0 * c2)
    vc[2] = v[2] + (w0 * c1 - w1 * c0)
    for k in range(loads.user_start[i], loads.user_start[i + 1]):
        uf[:] = 0.0
        ut[:] = 0.0
        loads.user_fn[k](t, xc, R, vc, W, loads.user_params[k], uf, ut)
        f[0] += uf[0]
        f[1] += uf[1]
        f[2] += uf[2]
        tau[0] += ut[0] + (c1 * uf[2] - c2 * uf[1])
        tau[1] += ut[1] + (c2 * uf[0] - c0 * uf[2])
        tau[2] += ut[2] + (c0 * uf[1] - c1 * uf[0])


@njit
def eval_loads(model, t, x, R, v, W, F, T, scratch):
    """Every load of every body: ``F[i]``, ``T[i]`` (world, about the origin)."""
    for i in range(x.shape[0]):
        body_loads_into(model, i, t, x[i], R[i], v[i], W[i], F[i], T[i])
        if model.loads.user_start[i + 1] > model.loads.user_start[i]:
            user_loads_into(model, i, t, x[i], R[i], v[i], W[i], F[i], T[i], scratch)


@njit_inline
def eval_potentials(model, t, x_com, R):
    """The potential energy of the compiled loads that declare one (the built-in loads'
    potentials are part of the energy's formula). The run driver calls it as a module
    global, which the variant for Python callbacks rebinds to add theirs."""
    if model.loads.user_start[-1] == 0:
        return 0.0
    return _user_potentials(model, t, x_com, R)


@njit
def _user_potentials(model, t, x_com, R):
    loads = model.loads
    total = 0.0
    for i in range(x_com.shape[0]):
        for k in range(loads.user_start[i], loads.user_start[i + 1]):
            total += loads.user_potential[k](t, x_com[i], R[i], loads.user_params[k])
    return total
