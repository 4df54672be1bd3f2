r"""The arrays the compiled kernels read (a :class:`Model` of a system), and the loads on them.

A :class:`rbdyn.System` is validated Python objects; it packs them into float64 and int64
arrays grouped in named tuples (``model.bodies.mass``, ``model.loads.gravity``), declared
here. A kernel receives them as plain tuples (:func:`plain`) and binds their fields by
position, in the order declared below. The names follow the notation page: the *body origin*
is the mass centre of a free body and the pivot of a pivoted one; ``inertia`` is about the body
origin, in body axes; forces are world vectors.

Bodies
    ``mass`` (N,), ``inertia`` and ``inertia_inv`` (N, 3, 3), ``pivoted``
    (N,) 0/1, ``com_body`` (N, 3): the mass centre from the body origin, body
    axes.
Loads
    ``gravity`` (3,); ``force`` and ``torque`` (N, 3), the constant world
    force at the mass centre and the constant couple; the point forces
    ``point_body`` (P, 3) (body axes, from the origin) and ``point_force``
    (P, 3), sorted by body, those of body ``i`` at ``point_start[i]`` to
    ``point_start[i + 1]``; the compiled user loads' ``user_params`` (U, K),
    sorted by body with ``user_start`` (N + 1,), whose functions and potentials
    are in :class:`Functions`; the linear springs from a body point to a
    world point, ``spring_point`` (body axes), ``spring_anchor`` (world),
    ``spring_stiffness`` and ``spring_rest`` (length), sorted by body with
    ``spring_start``.
Constraints
    See :class:`rbdyn.constraints.assembly.Constraints`.

The compiled loads: :func:`body_loads_into` evaluates the built-in loads of one body,
:func:`user_loads_into` adds the compiled user loads, :func:`eval_potentials` the potentials
the user loads declare. The schemes call the first and the last as module globals, which
:func:`rbdyn._compile.python_variant` rebinds for a system with Python callbacks.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import types

from .._compile import function_list, njit, njit_inline, njit_signature
from ..so3 import mat3, put_vec3, vec3

__all__ = [
    "Bodies",
    "Loads",
    "Model",
    "LOAD_SIGNATURE",
    "POTENTIAL_SIGNATURE",
    "body_loads_into",
    "has_user_loads",
    "user_scratch",
    "user_loads_into",
    "eval_loads",
    "eval_potentials",
    "Functions",
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
    user_params: np.ndarray
    spring_start: np.ndarray
    spring_point: np.ndarray
    spring_anchor: np.ndarray
    spring_stiffness: np.ndarray
    spring_rest: np.ndarray


class Model(NamedTuple):
    bodies: Bodies
    loads: Loads
    constraints: tuple


class Functions(NamedTuple):
    """The compiled functions a kernel calls, apart from the model's arrays: the compiled loads
    (``user_fn``, :data:`LOAD_SIGNATURE`) and their potentials (``user_potential``,
    :data:`POTENTIAL_SIGNATURE`), in the order of :class:`Loads`' ``user_start``, and the run's
    metrics (``metric_fn``, see :mod:`rbdyn.driver.records`); typed lists.

    They cross into a kernel as an argument of their own: numba types a record that holds a typed
    list in Python (about 5 µs per array it holds), and records of arrays alone in C. Held in the
    model, they made every call of a kernel cost about half a millisecond before its first step.
    """

    user_fn: object
    user_potential: object
    metric_fn: object


def _by_body(n_bodies, owners):
    """Stable order of ``owners`` by body, and the start of each body's run (N + 1,)."""
    owners = np.asarray(owners, dtype=np.int64)
    order = np.argsort(owners, kind="stable")
    start = np.searchsorted(owners[order], np.arange(n_bodies + 1)).astype(np.int64)
    return order, start


def pack_loads(n_bodies, gravity, constant_forces, constant_torques, point_forces, compiled_loads, springs=()):
    """The loads of a system as arrays (:class:`Loads`), and the typed lists of the compiled loads'
    functions and potentials (the first two fields of :class:`Functions`).

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
    loads = Loads(
        gravity=np.array(gravity, dtype=float),
        force=F,
        torque=T,
        point_start=p_start,
        point_body=p_point,
        point_force=p_force,
        user_start=u_start,
        user_params=u_params,
        spring_start=s_start,
        spring_point=np.array([springs[j][1] for j in order], dtype=float).reshape(-1, 3),
        spring_anchor=np.array([springs[j][2] for j in order], dtype=float).reshape(-1, 3),
        spring_stiffness=np.array([springs[j][3] for j in order], dtype=float),
        spring_rest=np.array([springs[j][4] for j in order], dtype=float),
    )
    return loads, (function_list(LOAD_SIGNATURE, fns), function_list(POTENTIAL_SIGNATURE, pots))


@njit_inline
def body_loads_into(model, i, t, x, R, v, W):
    """Force at the origin and torque about it (world), ``(f, tau)``, on body ``i`` from the
    built-in loads (gravity, constant forces and couples, point forces, springs).

    ``model`` is the plain tuple of a :class:`Model`; ``x``, ``R``, ``v``, ``W`` are the body's
    origin position and velocity, rotation and body rate, as values (3-vectors, a 3x3 matrix:
    see :mod:`rbdyn.so3`). It runs at every step (every stage) of every scheme. The schemes
    call it as a module global, which :func:`rbdyn._compile.python_variant` rebinds for
    systems with Python callbacks, so its name and signature are part of the schemes'
    contract. The compiled user loads are added by :func:`user_loads_into`, called apart (only
    when there are any).
    """
    mass, _, _, _, com = model[0]  # Bodies
    (gravity, force, torque, point_start, point_body, point_force, _, _,
     spring_start, spring_point, spring_anchor, spring_stiffness, spring_rest) = model[1]  # Loads
    m = mass[i]
    # Gravity and the constant force act at the mass centre, c = R com from the body
    # origin, so about the origin they give c x f.
    f0 = m * gravity[0] + force[i, 0]
    f1 = m * gravity[1] + force[i, 1]
    f2 = m * gravity[2] + force[i, 2]
    c0 = R[0] * com[i, 0] + R[1] * com[i, 1] + R[2] * com[i, 2]
    c1 = R[3] * com[i, 0] + R[4] * com[i, 1] + R[5] * com[i, 2]
    c2 = R[6] * com[i, 0] + R[7] * com[i, 1] + R[8] * com[i, 2]
    t0 = (c1 * f2 - c2 * f1) + torque[i, 0]
    t1 = (c2 * f0 - c0 * f2) + torque[i, 1]
    t2 = (c0 * f1 - c1 * f0) + torque[i, 2]
    for k in range(point_start[i], point_start[i + 1]):
        p0, p1, p2 = point_body[k, 0], point_body[k, 1], point_body[k, 2]
        fk0, fk1, fk2 = point_force[k, 0], point_force[k, 1], point_force[k, 2]
        r0 = R[0] * p0 + R[1] * p1 + R[2] * p2
        r1 = R[3] * p0 + R[4] * p1 + R[5] * p2
        r2 = R[6] * p0 + R[7] * p1 + R[8] * p2
        f0 += fk0
        f1 += fk1
        f2 += fk2
        t0 += r1 * fk2 - r2 * fk1
        t1 += r2 * fk0 - r0 * fk2
        t2 += r0 * fk1 - r1 * fk0
    for k in range(spring_start[i], spring_start[i + 1]):
        # a linear spring from the body point x + R p to the world anchor: f = -k (L - L0) d/L
        p0, p1, p2 = spring_point[k, 0], spring_point[k, 1], spring_point[k, 2]
        r0 = R[0] * p0 + R[1] * p1 + R[2] * p2
        r1 = R[3] * p0 + R[4] * p1 + R[5] * p2
        r2 = R[6] * p0 + R[7] * p1 + R[8] * p2
        d0 = x[0] + r0 - spring_anchor[k, 0]
        d1 = x[1] + r1 - spring_anchor[k, 1]
        d2 = x[2] + r2 - spring_anchor[k, 2]
        length = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        scale = -spring_stiffness[k] * (length - spring_rest[k]) / length if length > 0.0 else 0.0
        fs0, fs1, fs2 = scale * d0, scale * d1, scale * d2
        f0 += fs0
        f1 += fs1
        f2 += fs2
        t0 += r1 * fs2 - r2 * fs1
        t1 += r2 * fs0 - r0 * fs2
        t2 += r0 * fs1 - r1 * fs0
    return (f0, f1, f2), (t0, t1, t2)


@njit_inline
def has_user_loads(model):
    """Whether the system has compiled user loads (:func:`user_loads_into` then has work)."""
    user_start = model[1][6]  # Loads.user_start
    return user_start[-1] > 0


@njit_inline
def user_scratch():
    """The arrays :func:`user_loads_into` hands to the user's functions (mass-centre position and
    velocity, rotation, body rate, force, torque), made once per kernel call."""
    return np.empty(3), np.empty(3), np.empty((3, 3)), np.empty(3), np.empty(3), np.empty(3)


@njit
def user_loads_into(model, functions, i, t, x, R, v, W, f, tau, scr):
    """``(f, tau)`` with the compiled user loads of body ``i`` added (the arguments as in
    :func:`body_loads_into`; ``functions`` a :class:`Functions`, ``scr`` from
    :func:`user_scratch`)."""
    com = model[0][4]  # Bodies.com_body
    user_start, user_params = model[1][6], model[1][7]  # Loads
    user_fn = functions[0]
    c0 = R[0] * com[i, 0] + R[1] * com[i, 1] + R[2] * com[i, 2]
    c1 = R[3] * com[i, 0] + R[4] * com[i, 1] + R[5] * com[i, 2]
    c2 = R[6] * com[i, 0] + R[7] * com[i, 1] + R[8] * com[i, 2]
    # A compiled load sees the mass centre's position and velocity and returns the force at
    # the mass centre and the torque about it; both are moved to the origin here.
    w0 = R[0] * W[0] + R[1] * W[1] + R[2] * W[2]
    w1 = R[3] * W[0] + R[4] * W[1] + R[5] * W[2]
    w2 = R[6] * W[0] + R[7] * W[1] + R[8] * W[2]
    xc, vc, Rm, Wb, uf, ut = scr
    xc[0], xc[1], xc[2] = x[0] + c0, x[1] + c1, x[2] + c2
    vc[0] = v[0] + (w1 * c2 - w2 * c1)
    vc[1] = v[1] + (w2 * c0 - w0 * c2)
    vc[2] = v[2] + (w0 * c1 - w1 * c0)
    for a in range(3):
        Wb[a] = W[a]
        for b in range(3):
            Rm[a, b] = R[3 * a + b]
    f0, f1, f2 = f
    t0, t1, t2 = tau
    for k in range(user_start[i], user_start[i + 1]):
        uf[:] = 0.0
        ut[:] = 0.0
        user_fn[k](t, xc, Rm, vc, Wb, user_params[k], uf, ut)
        f0 += uf[0]
        f1 += uf[1]
        f2 += uf[2]
        t0 += ut[0] + (c1 * uf[2] - c2 * uf[1])
        t1 += ut[1] + (c2 * uf[0] - c0 * uf[2])
        t2 += ut[2] + (c0 * uf[1] - c1 * uf[0])
    return (f0, f1, f2), (t0, t1, t2)


@njit
def eval_loads(model, functions, t, x, R, v, W, F, T):
    """Every load of every body: ``F[i]``, ``T[i]`` (world, about the origin)."""
    user_start = model[1][6]  # Loads.user_start
    for i in range(x.shape[0]):
        xi, Ri, vi, Wi = vec3(x, i), mat3(R, i), vec3(v, i), vec3(W, i)
        f, tau = body_loads_into(model, i, t, xi, Ri, vi, Wi)
        if user_start[i + 1] > user_start[i]:
            f, tau = user_loads_into(model, functions, i, t, xi, Ri, vi, Wi, f, tau, user_scratch())
        put_vec3(F, i, f)
        put_vec3(T, i, tau)


@njit
def eval_potentials(model, functions, t, x_com, R, potential, r0, r1):
    """Add the potential energy of the compiled loads that declare one to ``potential[r]``,
    for the recorded rows ``r0 .. r1 - 1`` (times ``t``, mass centres ``x_com`` and rotations
    ``R``, leading row and body axes). The built-in loads' potentials are part of the energy's
    formula. The run driver calls it as a module global, once for a batch of rows, which the
    variant for Python callbacks rebinds to add theirs."""
    if not has_user_loads(model):
        return
    user_start, user_params = model[1][6], model[1][7]  # Loads
    user_potential = functions[1]
    for r in range(r0, r1):
        total = 0.0
        for i in range(x_com.shape[1]):
            for k in range(user_start[i], user_start[i + 1]):
                total += user_potential[k](t[r], x_com[r, i], R[r, i], user_params[k])
        potential[r] += total
