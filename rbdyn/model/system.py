"""A mechanical system: bodies, loads, constraints and gravity, checked as a whole and packed
into the arrays the compiled steps read (``rbdyn.model.arrays``)."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from .._compile import plain, quiet
from .._errors import InputError
from .._validate import finite_array, sequence
from ..constraints import Constraint, kind_names
from ..constraints.assembly import pack_constraints, residuals_into, scratch
from .arrays import Bodies, Model, pack_loads
from .bodies import RigidBody
from .loads import CompiledLoad, ConstantForce, ConstantTorque, Load, LoadCallback, PointForce, Spring

__all__ = ["System"]


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
    compiled steps read (a named tuple ``Model`` of ``Bodies``, ``Loads`` and
    ``Constraints``, declared in ``rbdyn.model.arrays`` and ``rbdyn.constraints.assembly``);
    ``System.kernel_model`` the same as the plain tuples a kernel takes; ``System.load_functions``
    the compiled loads' functions and potentials (typed lists), which a kernel takes apart from
    the arrays.
    """

    def __init__(self, bodies, loads=(), constraints=(), gravity=(0.0, 0.0, 0.0)):
        self.bodies = sequence(bodies, "bodies", "RigidBody")
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
        self.gravity = finite_array(gravity, (3,), "gravity")
        self.loads = sequence(loads, "loads", "loads")
        # Copies: resolving fills in anchors and lengths from this system's
        # initial state, which must not leak into a constraint reused elsewhere.
        self.constraints = tuple(dataclasses.replace(c) if isinstance(c, Constraint) else c
                                 for c in sequence(constraints, "constraints", "constraints"))
        for k, ld in enumerate(self.loads):
            if not isinstance(ld, Load):
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
        self.model, self.load_functions = self._pack()
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

    def _pack(self):
        """The model's arrays (:class:`Model`) and the compiled loads' typed lists of functions
        and potentials (``load_functions``, the first two fields of a kernel's
        :class:`rbdyn.model.arrays.Functions`)."""
        bodies = Bodies(
            mass=np.array([b.mass for b in self.bodies]),
            inertia=np.array([b.inertia for b in self.bodies]),
            inertia_inv=np.array([np.linalg.inv(b.inertia) for b in self.bodies]),
            pivoted=np.array([1 if b.pivoted else 0 for b in self.bodies], dtype=np.int64),
            com_body=np.array([b.com_body for b in self.bodies]),
        )
        of = lambda kind: [ld for ld in self.loads if isinstance(ld, kind)]  # noqa: E731
        loads, functions = pack_loads(
            self.n_bodies,
            self.gravity,
            [(self.index[ld.body], ld.force) for ld in of(ConstantForce)],
            [(self.index[ld.body], ld.torque) for ld in of(ConstantTorque)],
            [(self.index[ld.body], ld.point_body, ld.force) for ld in of(PointForce)],
            [(self.index[ld.body], ld.fn, ld.params, ld.potential) for ld in of(CompiledLoad)],
            [(self.index[ld.body], ld.point_body, ld.anchor, ld.stiffness, self._rest_length(ld)) for ld in of(Spring)],
        )
        return Model(bodies=bodies, loads=loads, constraints=pack_constraints(self.constraints, self.n_bodies)), functions

    @functools.cached_property
    def kernel_model(self) -> tuple:
        """``model`` as the plain tuples a compiled kernel takes (``rbdyn._compile.plain``)."""
        return plain(self.model)

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
            with quiet():
                kind, body, data, row, _, _ = self.kernel_model[2]
                residuals_into(kind, body, data, row, x, R, g, np.empty(m), scratch()[0])
        return g

    def constraint_jacobian(self, x, R) -> np.ndarray:
        """Stacked constraint Jacobians w.r.t. (v_k, omega_body_k), shape (m, 6N)."""
        if not self.constraints:
            return np.zeros((0, 6 * self.n_bodies))
        return np.vstack([c.jacobian(x, R) for c in self.constraints])
