"""Mechanical systems: rigid bodies, loads and bilateral constraints.

A :class:`System` is immutable input data. It validates everything on
construction (so that a run never starts from a wrong model) and packs the
numbers into float64 arrays for the compiled kernels.

Frames and names follow the book's notation page:

* the *body origin* is the mass centre of a free body, and the fixed pivot
  of a body that turns about a fixed point;
* ``inertia`` is the body-frame inertia tensor about the body origin;
* ``com_body`` is the mass centre relative to the body origin, in the body
  frame (zero for a free body);
* ``R_world_body`` maps body components to world components, ``omega_body``
  is the angular velocity in the body frame (``omega_world = R omega_body``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from . import so3
from ._constraints import residuals_into
from ._data import LOAD_SIGNATURE, POTENTIAL_SIGNATURE, Bodies, Model, pack_loads
from ._jit import jit_enabled, njit_signature, quiet
from .constraints import Constraint, kind_names, pack_constraints
from .constraints._base import SCRATCH_VECTORS
from ._errors import InputError
from ._validate import finite_array as _finite_array
from ._validate import float_array, numbers
from ._errors import short_repr as _short  # errors are one line

__all__ = [
    "RigidBody",
    "ConstantForce",
    "ConstantTorque",
    "PointForce",
    "LoadCallback",
    "Spring",
    "CompiledLoad",
    "compiled_load",
    "compiled_potential",
    "System",
    "box_inertia",
]


# --------------------------------------------------------------------------
# validation helpers: each raises InputError naming the field
# --------------------------------------------------------------------------
def _finite_scalar(value, fld: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(fld, f"must be a number, got {_short(value)}")
    try:
        v = float(value)
    except OverflowError:  # an integer beyond the float range
        raise InputError(fld, "must be a finite number (at most about 1.8e308 in size)") from None
    if not math.isfinite(v):
        raise InputError(fld, "must be a finite number")
    return v


def _positive(value, fld: str) -> float:
    v = _finite_scalar(value, fld)
    if v <= 0.0:
        raise InputError(fld, f"must be > 0, got {v!r}")
    if not math.isfinite(1.0 / v):  # its inverse enters every step
        raise InputError(fld, f"must be > 0 with a finite inverse, got {v!r}")
    return v


def _inertia(value, fld: str, what: str = "") -> np.ndarray:
    arr = numbers(value, fld, "3 principal moments or a 3x3 matrix of numbers")
    if arr.shape == (3,):
        arr = np.diag(arr)
    J = _finite_array(arr, (3, 3), fld)
    scale = np.max(np.abs(J))
    if np.max(np.abs(J - J.T)) > 1e-12 * max(scale, 1e-300):
        raise InputError(fld, "must be a symmetric 3x3 matrix (or 3 principal moments)")
    overflow = InputError(fld, f"{what}must be of moderate size: its principal moments or its inverse overflow")
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            eig = np.linalg.eigvalsh(0.5 * (J + J.T))
    except np.linalg.LinAlgError:
        raise overflow from None
    if not np.all(np.isfinite(eig)):
        raise overflow
    if eig[0] <= 0.0:
        raise InputError(fld, f"{what}must be positive definite, got principal moments {eig.tolist()}")
    # A real mass distribution has I1 <= I2 + I3 (any point of reference).
    if eig[2] > (eig[0] + eig[1]) * (1.0 + 1e-12):
        raise InputError(
            fld,
            f"{what}principal moments must satisfy the triangle inequality "
            f"(largest <= sum of the other two), got {eig.tolist()}",
        )
    if not math.isfinite(1.0 / eig[0]):  # the kernels use the inverse
        raise overflow
    return 0.5 * (J + J.T)


def _rotation(quat_wxyz, R_world_body, rotvec, fld: str) -> np.ndarray:
    given = [n for n, v in (("quat_wxyz", quat_wxyz), ("R_world_body", R_world_body), ("rotvec", rotvec)) if v is not None]
    if len(given) > 1:
        raise InputError(fld, f"give one orientation, not {' and '.join(given)}")
    if quat_wxyz is not None:
        q = _finite_array(quat_wxyz, (4,), f"{fld}.quat_wxyz")
        big = np.max(np.abs(q))
        if not big > 0.0:
            raise InputError(f"{fld}.quat_wxyz", "must be a non-zero quaternion (w, x, y, z)")
        q = q / big  # scaled first: the norm of a quaternion of huge components would overflow
        n = np.linalg.norm(q)
        if n * big < 1e-12:
            raise InputError(f"{fld}.quat_wxyz", "must be a non-zero quaternion (w, x, y, z)")
        return so3.quat_wxyz_to_matrix(q / n)
    if R_world_body is not None:
        R = _finite_array(R_world_body, (3, 3), f"{fld}.R_world_body")
        if so3.orthonormality_error(R) > 1e-9:
            raise InputError(
                f"{fld}.R_world_body",
                "must be a rotation matrix (orthonormal to 1e-9 with determinant +1)",
            )
        return R
    if rotvec is not None:
        R = so3.exp(_finite_array(rotvec, (3,), f"{fld}.rotvec"))
        if not np.all(np.isfinite(R)):  # |rotvec|^2 overflowed
            raise InputError(f"{fld}.rotvec", "its length (an angle in radians) must be of moderate size, e.g. below 1e6")
        return R
    return np.eye(3)


def box_inertia(mass: float, size: Sequence[float]) -> np.ndarray:
    """Inertia about the mass centre of a uniform box with edge lengths ``size``.

    Raises :class:`~rbdyn.InputError` (field ``mass`` or ``size``) unless ``mass`` is a finite
    number > 0 and ``size`` three finite numbers > 0. The result may overflow to inf for edges
    beyond about 1e154; :class:`RigidBody` refuses such an inertia.
    """
    m = _positive(mass, "mass")
    size = _finite_array(size, (3,), "size")
    if np.any(size <= 0):
        raise InputError("size", f"edge lengths must be > 0, got {size.tolist()}")
    a, b, c = (float(s) for s in size)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.diag([b * b + c * c, c * c + a * a, a * a + b * b]) * (m / 12.0)


# --------------------------------------------------------------------------
# bodies
# --------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class RigidBody:
    """A rigid body and its initial state.

    Parameters
    ----------
    name : str
        Unique name, used for output columns (``NAME.x`` ...).
    mass : float
        Mass, > 0.
    inertia : array_like, (3, 3) or (3,)
        Body-frame inertia tensor about the mass centre or, when ``pivot`` is
        given, about the pivot. Three numbers mean a diagonal tensor.
    position : array_like, (3,)
        Initial mass-centre position (world). Not used with ``pivot``.
    velocity : array_like, (3,)
        Initial mass-centre velocity (world). Not used with ``pivot``.
    quat_wxyz, R_world_body, rotvec : array_like, optional
        Initial orientation (at most one; identity by default).
    omega_body : array_like, (3,)
        Initial angular velocity in the body frame.
    pivot : array_like, (3,), optional
        A fixed world point about which the body turns. Its translation is
        then not a degree of freedom.
    com_body : array_like, (3,), optional
        Mass centre relative to the pivot, body frame (pivoted bodies only).
    """

    name: str
    mass: float
    inertia: np.ndarray
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    quat_wxyz: np.ndarray | None = None
    R_world_body: np.ndarray | None = None
    rotvec: np.ndarray | None = None
    omega_body: np.ndarray = field(default_factory=lambda: np.zeros(3))
    pivot: np.ndarray | None = None
    com_body: np.ndarray | None = None

    def __post_init__(self):
        if (not isinstance(self.name, str) or not self.name or not self.name.isprintable()
                or any(c in self.name for c in " ,.\"'") or len(self.name) > 200):
            raise InputError("body.name", "must be a CSV column name: 1 to 200 printable characters other than "
                                          f"space, comma, dot and quotes, got {_short(self.name)}")
        where = f"body.{self.name}"
        put = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 (frozen dataclass)
        put("mass", _positive(self.mass, f"{where}.mass"))
        put("inertia", _inertia(self.inertia, f"{where}.inertia"))
        put("omega_body", _finite_array(self.omega_body, (3,), f"{where}.omega_body"))
        R = _rotation(self.quat_wxyz, self.R_world_body, self.rotvec, where)
        put("R_world_body", R)
        put("quat_wxyz", so3.matrix_to_quat_wxyz(R))
        put("rotvec", None)
        if self.pivot is None:
            if self.com_body is not None:
                raise InputError(f"{where}.com_body", "is only allowed with a pivot (a free body's origin is its mass centre)")
            put("com_body", np.zeros(3))
            put("position", _finite_array(self.position, (3,), f"{where}.position"))
            put("velocity", _finite_array(self.velocity, (3,), f"{where}.velocity"))
        else:
            put("pivot", _finite_array(self.pivot, (3,), f"{where}.pivot"))
            put("com_body", _finite_array(self.com_body if self.com_body is not None else np.zeros(3), (3,), f"{where}.com_body"))
            # A real body's inertia about its mass centre is a valid inertia
            # tensor too; J about the pivot alone does not guarantee it.
            with np.errstate(over="ignore", invalid="ignore"):
                J_com = self.inertia_com
                position = self.pivot + R @ self.com_body
            # derived quantities are named by the input that makes them overflow
            if not np.all(np.isfinite(J_com)):
                raise InputError(f"{where}.com_body", "with this mass the inertia about the mass centre "
                                                      "(inertia - m(|c|²I - ccᵀ)) overflows: give a com_body of moderate size")
            if not np.all(np.isfinite(position)):
                key = "com_body" if np.max(np.abs(self.com_body)) >= np.max(np.abs(self.pivot)) else "pivot"
                raise InputError(f"{where}.{key}", "the mass centre (pivot + R com_body) overflows: give a pivot and "
                                                   "a com_body of moderate size")
            _inertia(J_com, f"{where}.inertia", "about the mass centre (inertia - m(|c|²I - ccᵀ)) ")
            put("position", position)
            put("velocity", R @ np.cross(self.omega_body, self.com_body))
        # Derived quantities must be finite too: inputs of finite but huge size can overflow them.
        with np.errstate(over="ignore", invalid="ignore"):
            translation = 0.5 * self.mass * float(self.velocity @ self.velocity)
            derived = {
                "kinetic energy": translation + 0.5 * float(self.omega_body @ self.inertia @ self.omega_body),
                "linear momentum": self.mass * np.linalg.norm(self.velocity),
                "angular momentum": np.linalg.norm(self.inertia @ self.omega_body),
                "inertia about the mass centre": float(np.max(np.abs(self.inertia_com))),
            }
        for what, value in derived.items():
            if not math.isfinite(value):
                # the entry, and the key that drives it where one does: a velocity, or an angular velocity
                key = ".velocity" if self.pivot is None and not math.isfinite(translation) else \
                    ".omega_body" if what in ("kinetic energy", "angular momentum") else ""
                raise InputError(where + key, f"its initial {what} overflows: give masses, inertias and "
                                              "velocities of moderate size")
        # Frozen: a change to an array after System() must not change the next run.
        for key in ("inertia", "omega_body", "R_world_body", "quat_wxyz", "com_body", "position", "velocity", "pivot"):
            arr = getattr(self, key)
            if isinstance(arr, np.ndarray):
                arr = arr.copy()
                arr.setflags(write=False)
                put(key, arr)

    @property
    def pivoted(self) -> bool:
        """Whether the body turns about a fixed pivot."""
        return self.pivot is not None

    @property
    def inertia_com(self) -> np.ndarray:
        """Body-frame inertia about the mass centre (parallel-axis theorem)."""
        c = self.com_body
        return self.inertia - self.mass * (np.dot(c, c) * np.eye(3) - np.outer(c, c))


# --------------------------------------------------------------------------
# loads
# --------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ConstantForce:
    """A constant world force applied at the mass centre of ``body``."""

    body: str
    force: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "force", _finite_array(self.force, (3,), f"load.{self.body}.force"))


@dataclass(frozen=True, eq=False)
class ConstantTorque:
    """A constant world torque (a couple) applied to ``body``."""

    body: str
    torque: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "torque", _finite_array(self.torque, (3,), f"load.{self.body}.torque"))


@dataclass(frozen=True, eq=False)
class PointForce:
    """A constant world force applied at a point fixed in ``body``.

    ``point_body`` is relative to the body origin (mass centre, or pivot), in
    the body frame.
    """

    body: str
    point_body: np.ndarray
    force: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "point_body", _finite_array(self.point_body, (3,), f"load.{self.body}.point_body"))
        object.__setattr__(self, "force", _finite_array(self.force, (3,), f"load.{self.body}.force"))


@dataclass(frozen=True, eq=False)
class Spring:
    """A linear spring from a point of ``body`` to a fixed world point.

    The force on the body, at ``x + R point_body``, is ``-stiffness (L - rest_length) d / L``
    with ``d`` from ``anchor`` to the point and ``L = |d|``; its potential energy
    ``stiffness (L - rest_length)^2 / 2`` is part of the reported energy.

    Parameters
    ----------
    body : str
    point_body : array_like, (3,)
        In the body frame, from the body origin.
    anchor : array_like, (3,)
        The world point.
    stiffness : float
        > 0 (N/m).
    rest_length : float, optional
        >= 0; by default the length at t = 0 (the system resolves it).
    """

    body: str
    point_body: np.ndarray
    anchor: np.ndarray
    stiffness: float
    rest_length: float | None = None

    def __post_init__(self):
        where = f"load.{self.body}"
        object.__setattr__(self, "point_body", _finite_array(self.point_body, (3,), f"{where}.point_body"))
        object.__setattr__(self, "anchor", _finite_array(self.anchor, (3,), f"{where}.anchor"))
        object.__setattr__(self, "stiffness", _positive(self.stiffness, f"{where}.stiffness"))
        if self.rest_length is not None:
            r = _finite_scalar(self.rest_length, f"{where}.rest_length")
            if r < 0:
                raise InputError(f"{where}.rest_length", f"must be >= 0, got {r!r}")
            object.__setattr__(self, "rest_length", r)


@dataclass(frozen=True, eq=False)
class LoadCallback:
    """A load computed by a Python function of time and configuration.

    ``fn(t, x_com, R_world_body, v_com, omega_body)`` returns
    ``(force_world, torque_world)``: a force at the mass centre and a torque
    about the mass centre, both in world components (Solfec's FORCE
    callback). ``potential(t, x_com, R_world_body)``, if given, is added to
    the reported energy. Systems with callbacks step in Python, hundreds of times
    slower than with a :class:`CompiledLoad`.
    """

    body: str
    fn: Callable
    potential: Callable | None = None

    def __post_init__(self):
        if not callable(self.fn):
            raise InputError(f"load.{self.body}.fn", "must be callable")
        if self.potential is not None and not callable(self.potential):
            raise InputError(f"load.{self.body}.potential", "must be callable or None")


def compiled_load(fn=None, *, cache: bool = True):
    """Compile ``fn`` as a load law for :class:`CompiledLoad` (a decorator).

    ``fn(t, x_com, R_world_body, v_com, omega_body, params, force, torque)``
    writes the force at the mass centre and the torque about it (world
    components) into ``force`` and ``torque``, 3-vectors that are zero on
    entry; ``params`` is the load's parameter vector. It is compiled by
    numba for exactly this signature (``rbdyn._data.LOAD_SIGNATURE``) and
    runs inside the compiled step. Give ``cache=False`` for a function
    defined in a notebook or at the prompt (numba cannot cache those).
    """
    if fn is None:
        return lambda f: compiled_load(f, cache=cache)
    return njit_signature(fn, LOAD_SIGNATURE, cache)


def compiled_potential(fn=None, *, cache: bool = True):
    """Compile ``fn(t, x_com, R_world_body, params) -> float``, the potential energy of a
    :class:`CompiledLoad`, for the reported energy (a decorator, like :func:`compiled_load`)."""
    if fn is None:
        return lambda f: compiled_potential(f, cache=cache)
    return njit_signature(fn, POTENTIAL_SIGNATURE, cache)


@dataclass(frozen=True, eq=False)
class CompiledLoad:
    """A load law compiled by numba, evaluated inside the compiled step.

    Parameters
    ----------
    body : str
    fn : function
        A load law decorated with :func:`compiled_load`.
    params : array_like, optional
        The law's parameters (a vector of numbers), passed to ``fn``.
    potential : function, optional
        Its potential energy, decorated with :func:`compiled_potential`, so
        that the reported energy includes it.

    Notes
    -----
    A :class:`LoadCallback` runs the whole step as Python: hundreds of times
    slower (``benchmarks/cost_table.py`` measures the ratio on one box; it
    printed 450 to 1300 when this was written). A compiled load costs about
    what a built-in load costs.
    """

    body: str
    fn: Callable
    params: np.ndarray = field(default_factory=lambda: np.zeros(0))
    potential: Callable | None = None

    def __post_init__(self):
        where = f"load.{self.body}"
        try:
            params = float_array(self.params).ravel()
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"{where}.params", f"must be a vector of numbers, got {_short(self.params)}") from None
        if not np.all(np.isfinite(params)):
            raise InputError(f"{where}.params", "must be finite numbers (no nan or inf)")
        object.__setattr__(self, "params", params)
        if not _compiled_for(self.fn, LOAD_SIGNATURE):
            raise InputError(f"{where}.fn", "must be a function decorated with rbdyn.compiled_load")
        if self.potential is not None and not _compiled_for(self.potential, POTENTIAL_SIGNATURE):
            raise InputError(f"{where}.potential", "must be a function decorated with rbdyn.compiled_potential")


def _compiled_for(fn, signature) -> bool:
    """Whether ``fn`` was compiled for exactly ``signature`` (any callable without JIT)."""
    if not jit_enabled():
        return callable(fn)
    return list(getattr(fn, "nopython_signatures", ())) == [signature]


# --------------------------------------------------------------------------
# the system
# --------------------------------------------------------------------------
def _sequence(value, fld: str, what: str) -> tuple:
    if isinstance(value, (str, bytes, dict)) or value is None:
        raise InputError(fld, f"must be a sequence of {what}, got {_short(value)}")
    try:
        return tuple(value)
    except TypeError:
        raise InputError(fld, f"must be a sequence of {what}, got {_short(value)}") from None


def _biggest(**values) -> str:
    """The key of the largest of ``values`` (scalars or arrays, by their largest magnitude)."""
    return max(values, key=lambda k: float(np.max(np.abs(np.asarray(values[k], dtype=float)))))


def _body_key(b) -> str:
    """The input key a body's position-dependent quantities come from."""
    if b.pivoted:
        return "com_body" if np.max(np.abs(b.R_world_body @ b.com_body)) >= np.max(np.abs(b.pivot)) else "pivot"
    return "position"


def _check_initial_values(system) -> None:
    """Refuse a system whose quantities at t = 0 overflow (weights, potentials, momenta, the loads'
    forces and torques), naming the entry and key that make them overflow: ``gravity``,
    ``body[i].KEY`` or ``load[k].KEY``. An input problem must never surface as a numerical failure
    at the first step, nor as a non-finite first output row."""
    g = system.gravity
    bodies = system.bodies
    fin = lambda *a: all(np.all(np.isfinite(x)) for x in a)  # noqa: E731
    shares = []  # (field, kinetic, potential, momentum, angular momentum) of every load
    force = {}
    torque = {}
    with np.errstate(over="ignore", invalid="ignore"):
        # every body at once (a per-body loop would cost more than building the system); the
        # first body that fails is then named as a loop over the bodies in order would name it
        m = np.array([b.mass for b in bodies])
        x_b = np.array([b.position for b in bodies])
        v = np.array([b.velocity for b in bodies])
        W = np.array([b.omega_body for b in bodies])
        R_b = np.array([b.R_world_body for b in bodies])
        J = np.array([b.inertia for b in bodies])
        c_b = np.array([b.com_body for b in bodies])
        cc = np.einsum("ni,ni->n", c_b, c_b)
        J_com = J - m[:, None, None] * (cc[:, None, None] * np.eye(3) - np.einsum("ni,nj->nij", c_b, c_b))
        g_norm = float(np.linalg.norm(g))
        weight_ok = np.isfinite(m * g_norm)
        potential_ok = np.isfinite(m * g_norm * (1.0 + np.linalg.norm(x_b, axis=1)))
        p = m[:, None] * v
        L = np.cross(x_b, p) + np.einsum("nij,nj->ni", R_b, np.einsum("nij,nj->ni", J_com, W))
        momentum_ok = np.isfinite(p).all(axis=1) & np.isfinite(L).all(axis=1)
        bad = np.flatnonzero(~(weight_ok & potential_ok & momentum_ok))
        if bad.size:
            i = int(bad[0])
            b, where, key = bodies[i], f"body[{i}]", _body_key(bodies[i])
            if not weight_ok[i]:
                raise InputError("gravity", f"the weight of {where} ({b.name!r}, mass {b.mass:.3g}) overflows: "
                                            "give a gravity of moderate size")
            if not potential_ok[i]:
                raise InputError(f"{where}.{key}", "its potential energy in gravity (-m g·x) overflows: give a value "
                                                   f"of moderate size for {key}")
            raise InputError(f"{where}.{key}", "its initial angular momentum about the world origin "
                                               f"(m x × v + R J ω) overflows: give a value of moderate size for {key}")
        body_shares = (0.5 * m * np.einsum("ni,ni->n", v, v) + 0.5 * np.einsum("ni,nij,nj->n", W, J, W),
                       -(m[:, None] * g * x_b).sum(axis=1), p, L)
        for k, ld in enumerate(system.loads):
            if isinstance(ld, (LoadCallback, CompiledLoad)):
                continue  # evaluated by the run (its first output row)
            i = system.index[ld.body]
            force.setdefault(i, m[i] * g)
            torque.setdefault(i, np.zeros(3))
            where = f"load[{k}]"
            b = bodies[i]
            R = b.R_world_body
            x = b.pivot if b.pivoted else b.position
            c = R @ b.com_body
            if isinstance(ld, ConstantForce):
                f, tau, pot, key = ld.force, np.cross(c, ld.force), -float(ld.force @ b.position), "force"
                why = "its potential energy (-force·x) at the body's position"
            elif isinstance(ld, ConstantTorque):
                f, tau, pot, key = np.zeros(3), ld.torque, 0.0, "torque"
                why = "the body's total torque"
            elif isinstance(ld, PointForce):
                r = R @ ld.point_body
                f, tau, pot = ld.force, np.cross(r, ld.force), -float(ld.force @ (x + r))
                key = _biggest(point_body=ld.point_body, force=ld.force)
                why = "its torque (R point_body × force) or potential energy (-force·(x + R point_body))"
            else:  # Spring
                r = R @ ld.point_body
                d = x + r - ld.anchor
                length = float(np.linalg.norm(d))
                stretch = length - system._rest_length(ld)
                scale = -ld.stiffness * stretch / length if length > 0.0 else 0.0
                f, pot = scale * d, 0.5 * ld.stiffness * stretch * stretch
                tau = np.cross(r, f)
                sizes = dict(anchor=ld.anchor, point_body=ld.point_body)
                if ld.rest_length is not None:
                    sizes["rest_length"] = ld.rest_length
                unit = stretch / length * d if length > 0.0 else 0.0  # the force per unit stiffness
                key = "stiffness" if fin(0.5 * stretch * stretch, unit) else _biggest(**sizes)
                why = "its force k(L - rest_length) or potential energy k(L - rest_length)²/2"
            force[i] = force[i] + f
            torque[i] = torque[i] + tau
            if not fin(f, tau, pot, force[i], torque[i], np.cross(c, force[i])):
                raise InputError(f"{where}.{key}", f"{why} at t = 0 overflows, alone or added to the body's other "
                                                   f"loads: give a value of moderate size for {key}")
            shares.append((where, 0.0, pot, np.zeros(3), np.zeros(3)))
        # the totals the first output row records
        for col, what in ((1, "kinetic energy"), (2, "potential energy"), (3, "linear momentum"),
                          (4, "angular momentum")):
            per_body = body_shares[col - 1]
            if not fin(per_body.sum(axis=0) + sum(s[col] for s in shares)):
                size = np.abs(per_body).reshape(len(bodies), -1).max(axis=1)
                i = int(np.argmax(size))
                worst = max([(f"body[{i}]", float(size[i]))] + [(s[0], float(np.max(np.abs(s[col])))) for s in shares],
                            key=lambda e: e[1])[0]
                raise InputError(worst, f"the system's total initial {what} overflows (this entry's share is the "
                                        "largest): give masses, positions, velocities and loads of moderate size")


class System:
    """Bodies, loads, constraints and uniform gravity.

    Parameters
    ----------
    bodies : sequence of RigidBody
    loads : sequence of ConstantForce, ConstantTorque, PointForce, Spring, CompiledLoad or LoadCallback
    constraints : sequence of Constraint
        Instances of the registered kinds (``rbdyn.constraints.KINDS``; ``rbdyn list`` lists them).
    gravity : array_like, (3,)
        Uniform gravitational acceleration (world).

    Notes
    -----
    Loads and constraints name their bodies; unknown names are an
    :class:`~rbdyn.InputError`. ``System.model`` holds the named arrays the
    compiled steps read (a named tuple ``Model`` of ``Bodies``, loads and
    constraints, defined in ``rbdyn/_data.py``).
    """

    def __init__(self, bodies, loads=(), constraints=(), gravity=(0.0, 0.0, 0.0)):
        self.bodies = _sequence(bodies, "bodies", "RigidBody")
        if not self.bodies:
            raise InputError("body", "a system needs at least one body")
        for i, b in enumerate(self.bodies):
            if not isinstance(b, RigidBody):
                raise InputError(f"body[{i}]", f"must be a RigidBody, got {type(b).__name__}")
        self.index = {}  # a dict, not a scan of the names before each one: building stays linear in the bodies
        for i, b in enumerate(self.bodies):
            first = self.index.setdefault(b.name, i)
            if first != i:
                raise InputError(f"body[{i}].name", f"must be unique, {b.name!r} is also the name of body[{first}]")
        self.gravity = _finite_array(gravity, (3,), "gravity")
        self.loads = _sequence(loads, "loads", "loads")
        # Copies: resolving fills in anchors and lengths from this system's
        # initial state, which must not leak into a constraint reused elsewhere.
        self.constraints = tuple(dataclasses.replace(c) if isinstance(c, Constraint) else c
                                 for c in _sequence(constraints, "constraints", "constraints"))
        for k, ld in enumerate(self.loads):
            if not isinstance(ld, (ConstantForce, ConstantTorque, PointForce, Spring, LoadCallback, CompiledLoad)):
                raise InputError(f"load[{k}]", f"unsupported load type {type(ld).__name__}")
            if ld.body not in self.index:
                raise InputError(f"load[{k}].body", f"unknown body {ld.body!r}; bodies are {sorted(self.index)}")
        R0 = np.array([b.R_world_body for b in self.bodies])
        origins = np.array([b.pivot if b.pivoted else b.position for b in self.bodies])
        for k, c in enumerate(self.constraints):
            if not isinstance(c, Constraint):
                raise InputError(f"constraint[{k}]", f"unsupported constraint type {type(c).__name__}; "
                                                     f"the kinds are {', '.join(kind_names())}")
            c._resolve(self.index, f"constraint[{k}]", origins, R0)
        self.callbacks = tuple(ld for ld in self.loads if isinstance(ld, LoadCallback))
        _check_initial_values(self)
        self.model = self._pack()
        if self.constraints:
            self._check_constraints(origins, R0)

    # An initial state off a constraint by more than this (relative to the
    # constraint's size) would be snapped onto it by an impulse in the first
    # step; it is refused instead. It admits coordinates typed to 7 digits.
    INITIAL_TOL = 1e-6

    def _check_constraints(self, x, R):
        """Refuse initial states off the constraints, and constraints without a direction.

        Redundant constraints (the rows of a closed loop that repeat each other) are allowed:
        where the solve's matrix is singular it takes the minimum-norm increment. The motion is
        then determined; gen_alpha's multipliers (started from zero at each step) are the
        minimum-norm ones, while the RIG impulses (started from the previous step's) may carry a
        self-stress along the redundant combination of rows, which exerts no force.
        """
        for k, c in enumerate(self.constraints):
            with quiet():
                r = c.residual(x, R)
                Ba, Bb = c.gradient(x, R)
            size = c.size(x, R)
            if not np.all(np.isfinite(r)) or not np.all(np.isfinite(Ba)) or not np.all(np.isfinite(Bb)):
                raise InputError(f"constraint[{k}]", f"the {c.kind} constraint is not finite at t = 0 "
                                                     "(coincident or extreme points)")
            if np.max(np.abs(r)) > self.INITIAL_TOL * size:
                raise InputError(
                    f"constraint[{k}].{c.placement_key}",
                    f"the initial state violates this {c.kind} constraint by {np.max(np.abs(r)):.3g} "
                    f"(allowed {self.INITIAL_TOL:g} x {size:.3g}); place the bodies on it",
                )
            # a row that no degree of freedom of its bodies can change (for example a point held at a
            # pivoted body's pivot, or a zero gradient row) cannot be held; rows that repeat others
            # (a closed loop) can: the solves take the minimum-norm increment (see the docstring)
            H = c.jacobian(x, R)
            keep = [6 * i + a for i, b in enumerate(self.bodies) for a in range(6) if a >= 3 or not b.pivoted]
            if np.any(np.max(np.abs(H[:, keep]), axis=1) <= 1e-12 * size):
                raise InputError(f"constraint[{k}]", f"this {c.kind} constraint cannot act on its bodies at t = 0 "
                                                     "(a residual row that no motion of its bodies changes, such as "
                                                     "a point at a pivoted body's pivot); move its points")

    @property
    def n_bodies(self) -> int:
        return len(self.bodies)

    @property
    def body_names(self) -> list[str]:
        return [b.name for b in self.bodies]

    @property
    def n_constraint_rows(self) -> int:
        """Number of constraint residuals (the sum of each constraint's ``n_eq``)."""
        return sum(c.n_eq for c in self.constraints)

    def _rest_length(self, spring) -> float:
        """A spring's rest length: given, or its length at t = 0."""
        if spring.rest_length is not None:
            return spring.rest_length
        b = self.bodies[self.index[spring.body]]
        origin = b.pivot if b.pivoted else b.position
        return float(np.linalg.norm(origin + b.R_world_body @ spring.point_body - spring.anchor))

    def _pack(self) -> Model:
        bodies = Bodies(
            np.array([b.mass for b in self.bodies]),
            np.array([b.inertia for b in self.bodies]),
            np.array([np.linalg.inv(b.inertia) for b in self.bodies]),
            np.array([1 if b.pivoted else 0 for b in self.bodies], dtype=np.int64),
            np.array([b.com_body for b in self.bodies]),
        )
        of = lambda kind: [ld for ld in self.loads if isinstance(ld, kind)]  # noqa: E731
        loads = pack_loads(
            self.n_bodies,
            self.gravity,
            [(self.index[ld.body], ld.force) for ld in of(ConstantForce)],
            [(self.index[ld.body], ld.torque) for ld in of(ConstantTorque)],
            [(self.index[ld.body], ld.point_body, ld.force) for ld in of(PointForce)],
            [(self.index[ld.body], ld.fn, ld.params, ld.potential) for ld in of(CompiledLoad)],
            [(self.index[ld.body], ld.point_body, ld.anchor, ld.stiffness, self._rest_length(ld)) for ld in of(Spring)],
        )
        return Model(bodies, loads, pack_constraints(self.constraints, self.n_bodies))

    def initial_state(self):
        """Arrays ``(x, R, v, W)``: body-origin position and velocity (world),
        ``R_world_body`` and ``omega_body``, each with a leading body axis."""
        x = np.array([b.pivot if b.pivoted else b.position for b in self.bodies])
        R = np.array([b.R_world_body for b in self.bodies])
        v = np.array([np.zeros(3) if b.pivoted else b.velocity for b in self.bodies])
        W = np.array([b.omega_body for b in self.bodies])
        return x, R, v, W

    def constraint_residuals(self, x, R) -> np.ndarray:
        """All position-level residuals at body origins ``x`` and rotations ``R``."""
        m = self.n_constraint_rows
        g = np.zeros(m)
        if m:
            x = np.ascontiguousarray(x, dtype=float)
            R = np.ascontiguousarray(R, dtype=float)
            cons = self.model.constraints
            with quiet():
                residuals_into(cons.kind, cons.body, cons.data, cons.row, x, R, g, np.empty(m), np.empty(3),
                               np.empty((3, 3)), np.empty(3), np.empty((3, 3)), np.empty((SCRATCH_VECTORS, 3)))
        return g

    def constraint_jacobian(self, x, R) -> np.ndarray:
        """Stacked constraint Jacobians w.r.t. (v_k, omega_body_k), shape (m, 6N)."""
        if not self.constraints:
            return np.zeros((0, 6 * self.n_bodies))
        return np.vstack([c.jacobian(x, R) for c in self.constraints])
