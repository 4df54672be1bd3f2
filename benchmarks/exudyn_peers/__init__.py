"""Exudyn models of the book's jointed benchmarks, run live beside rbdyn.

Four problems, each built from rbdyn's own scenario file so that the numbers are written once
(``rbdyn/scenarios/*.toml``), one module each:

* :mod:`exudyn_peers.kynema_top` -- Kynema's heavy top (``heavy-top-kynema``): one rigid body
  held at a body point by a spherical joint to the ground;
* :mod:`exudyn_peers.slider_crank` -- the IFToMM spatial slider-crank (``slider-crank-iftomm``):
  three rigid bodies, a revolute, a spherical, a universal and a prismatic joint;
* :mod:`exudyn_peers.andrews` -- Andrews' squeezer (``andrews``);
* :mod:`exudyn_peers.bricard` -- Bricard's overconstrained mechanism (``bricard``).

Each module's ``build(node="EP")`` returns a :class:`Model`: an Exudyn system whose rigid bodies
carry the node type the integrator needs (``"EP"``: Euler parameters, ``NodeRigidBodyEP``;
``"LG"``: the rotation-vector Lie-group node ``NodeRigidBodyRotVecLG``), with sensors that store
in memory the output the page's reference gives, and a function that computes that output from
the sensors, in the same shape as the page computes it from an rbdyn trajectory, so that one
error function serves both engines.

This module holds what the four share: Exudyn's integrators by name (:data:`INTEGRATORS`),
:func:`rigid_body` (an rbdyn body as an Exudyn rigid body), :func:`run` (one integrator, one step,
timed over repeats), :func:`run_rbdyn` (the same record from ``rbdyn.simulate``), :func:`sweep`
(both engines, every step, timed round after round in the same call), the sameness checks
(:func:`initial_energy`, :func:`constraint_residual`), and one work--precision figure
(:func:`work_precision`) and one table (:func:`table`) that every page calls.

Exudyn's integrators (``exudyn.DynamicSolverType`` and ``SimulationSettings.timeIntegration``,
version pinned in ``requirements.txt``), as :data:`INTEGRATORS` sets them:

* ``"Exudyn gen-α index 3"`` -- ``GeneralizedAlpha`` on Euler-parameter nodes (the parameters'
  unit-norm condition an algebraic equation), constraints at position level
  (``generalizedAlpha.useIndex2Constraints = False``), spectral radius ``rho_inf``;
* ``"Exudyn trapezoidal index 2"`` -- the constraints at velocity level
  (``useIndex2Constraints = True``), which Exudyn allows only with ``useNewmark = True`` (its
  ``ExudynValueError`` otherwise: "useIndex2Constraints=True may only be used if
  useNewmark=True"): Newmark's β = 1/4, γ = 1/2, the trapezoidal rule (Exudyn's
  ``DynamicSolverType.TrapezoidalIndex2``), with no numerical damping;
* ``"Exudyn Lie-group gen-α"`` -- ``GeneralizedAlpha`` on ``NodeRigidBodyRotVecLG`` nodes, the
  update on the rotation group with the kinematic relations Exudyn recommends
  (``lieGroupSimplifiedKinematicRelations = False``, the σ-modified method);
* ``"Exudyn Lie-group gen-α (Brüls–Cardona)"`` -- the same with
  ``lieGroupSimplifiedKinematicRelations = True``, the kinematic relations of Brüls and Cardona
  (2010), as Exudyn's settings describe them;
* ``"Exudyn Lie-group RK4"`` -- the explicit ``RK44`` on ``NodeRigidBodyRotVecLG`` nodes with
  ``explicit.useLieGroupIntegration = True``.

Every run has a fixed step: ``automaticStepSize = False`` and ``adaptiveStep = False`` (Exudyn
would otherwise halve a step whose Newton iteration fails; here that run fails and says so).
Newton's settings are Exudyn's defaults unless ``newton=`` says otherwise (relative tolerance
1e-8, absolute 1e-10, modified Newton). Nothing is written to files
(``solution.file.write = False``, sensors ``storeInternal=True``,
``writeToFile=False``) and Exudyn prints nothing (``exudyn.config.printToConsole = False`` during
a solve; its messages on a failure are kept in the record).

Exudyn's conventions, checked by experiment (the pages repeat the checks when they run):

* ``MainSystem.CreateRigidBody`` takes the node's reference position and rotation matrix, the
  initial velocity and the initial angular velocity in **world** axes (rbdyn's ``omega_body``
  is in body axes: :func:`rigid_body` passes ``R @ omega_body``), and the inertia of a
  ``RigidBodyInertia`` about the node; with ``com=[0, 0, 0]`` the node is the mass centre, as in
  rbdyn; ``gravity=`` adds the weight as a mass-proportional load;
* the body's output ``KineticEnergy`` at the initial configuration equals rbdyn's kinetic
  energy to round-off;
* the explicit solvers refuse a model with joints: ``SolveDynamic`` raises
  ``exudyn.ModelError`` ("explicit integrator detected object ... which contains constraints that
  cannot be solved"), and on Euler-parameter nodes ("... node ... which contains algebraic
  variables"). :func:`run` records that message as the run's failure.

Usage: ``import exudyn_peers`` with ``benchmarks/`` on ``sys.path`` (as the book does for
``peers``)::

    import exudyn_peers as xp
    from exudyn_peers import kynema_top
    models = {node: kynema_top.build(node) for node in ("EP", "LG")}
    rec = xp.run(models, "Exudyn gen-α index 3", h=1e-3, t_end=2.0, rho_inf=0.9)
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from typing import Callable, Sequence

import numpy as np

import rbdyn
from rbdyn import verify
from rbdyn.constraints.base import perpendicular_basis

try:
    import exudyn as exu
    from exudyn import utilities as _exu_utilities  # noqa: F401 (registers the MainSystem helpers)
except ImportError:  # the pages' rbdyn parts still run
    exu = None

__all__ = [
    "ENGINE",
    "GEN_ALPHA_INDEX3",
    "TRAPEZOIDAL_INDEX2",
    "LIE_GEN_ALPHA",
    "LIE_GEN_ALPHA_BC",
    "LIE_RK4",
    "INTEGRATORS",
    "Integrator",
    "Model",
    "Record",
    "available",
    "version",
    "rigid_body",
    "add_joint",
    "rbdyn_residual",
    "node_type",
    "settings",
    "run",
    "run_rbdyn",
    "sweep",
    "set_errors",
    "initial_energy",
    "constraint_residual",
    "jointed",
    "lines",
    "span",
    "say",
    "equal_cost",
    "same_step",
    "failed_by_line",
    "orders_by_line",
    "failed_text",
    "explicit_refused",
    "error_at_cost",
    "ratios_at_equal_cost",
    "work_precision",
    "table",
]

ENGINE = "Exudyn"


def available() -> bool:
    """Whether Exudyn is installed."""
    return exu is not None


def version() -> str:
    """Exudyn's version (``exudyn.__version__``)."""
    _require()
    return exu.__version__


def _require():
    if exu is None:
        raise ImportError("Exudyn is not installed: pip install exudyn (pinned in requirements.txt)")


# ---------------------------------------------------------------------------
# integrators
# ---------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Integrator:
    """One of Exudyn's time integrators with the settings that select it.

    Attributes
    ----------
    label : str
        The name the pages show.
    solver : str
        The member of ``exudyn.DynamicSolverType``.
    node : str
        The rigid-body node it runs on: ``"EP"`` (``NodeRigidBodyEP``) or ``"LG"``
        (``NodeRigidBodyRotVecLG``).
    index2 : bool
        ``generalizedAlpha.useIndex2Constraints``.
    newmark : bool
        ``generalizedAlpha.useNewmark`` (β = 1/4, γ = 1/2: the trapezoidal rule).
    simplified_lie : bool
        ``generalizedAlpha.lieGroupSimplifiedKinematicRelations``.
    lie : bool
        ``explicit.useLieGroupIntegration``.
    order : int
        Its order of accuracy on an ODE (2 for generalized-α, 4 for RK4).
    implicit : bool
        Whether it solves equations at each step (the constraint-capable ones).
    """

    label: str
    solver: str
    node: str
    index2: bool = False
    newmark: bool = False
    simplified_lie: bool = False
    lie: bool = False
    order: int = 2
    implicit: bool = True


#: The labels of Exudyn's integrators, as the pages show them and look them up in
#: :data:`INTEGRATORS`.
GEN_ALPHA_INDEX3 = "Exudyn gen-α index 3"
TRAPEZOIDAL_INDEX2 = "Exudyn trapezoidal index 2"
LIE_GEN_ALPHA = "Exudyn Lie-group gen-α"
LIE_GEN_ALPHA_BC = "Exudyn Lie-group gen-α (Brüls–Cardona)"
LIE_RK4 = "Exudyn Lie-group RK4"

#: Exudyn's integrators run beside rbdyn's schemes, by the label the pages show.
INTEGRATORS = {
    i.label: i
    for i in (
        Integrator(GEN_ALPHA_INDEX3, "GeneralizedAlpha", "EP"),
        Integrator(TRAPEZOIDAL_INDEX2, "GeneralizedAlpha", "EP", index2=True, newmark=True),
        Integrator(LIE_GEN_ALPHA, "GeneralizedAlpha", "LG"),
        Integrator(LIE_GEN_ALPHA_BC, "GeneralizedAlpha", "LG", simplified_lie=True),
        Integrator(LIE_RK4, "RK44", "LG", lie=True, order=4, implicit=False),
    )
}


def node_type(node: str):
    """``exudyn.NodeType`` of a node name: ``"EP"`` or ``"LG"``."""
    _require()
    if node == "EP":
        return exu.NodeType.RotationEulerParameters
    if node == "LG":
        return exu.NodeType.RotationRotationVector  # CreateRigidBody makes a NodeRigidBodyRotVecLG
    raise ValueError(f"unknown node {node!r}: 'EP' (Euler parameters) or 'LG' (rotation vector, Lie group)")


def _integrator(integrator) -> Integrator:
    if isinstance(integrator, Integrator):
        return integrator
    try:
        return INTEGRATORS[integrator]
    except KeyError:
        raise ValueError(f"unknown Exudyn integrator {integrator!r}; known: {', '.join(INTEGRATORS)}") from None


# ---------------------------------------------------------------------------
# models
# ---------------------------------------------------------------------------
@dataclasses.dataclass
class Model:
    """An Exudyn model of one problem, assembled and ready to solve.

    Attributes
    ----------
    problem : str
        The problem's name (``"kynema_top"``, ``"slider_crank"``, ...).
    scenario : str
        The rbdyn scenario it is built from.
    node : str
        ``"EP"`` or ``"LG"``: the rigid-body nodes it uses.
    container, mbs
        ``exudyn.SystemContainer`` and its ``MainSystem``.
    bodies : dict
        rbdyn body name -> Exudyn ``ObjectIndex`` of its rigid body.
    joints : dict
        A joint's name -> Exudyn ``ObjectIndex``.
    sensors : dict
        A name -> ``SensorIndex`` (stored in memory).
    output : callable
        ``output(data) -> (t, y)``: the page's output from ``data``, the dict of the sensors'
        stored arrays (``mbs.GetSensorStoredData``, time in column 0).
    residual : callable
        ``residual(configuration) -> float``: the largest joint residual of the model at an
        ``exudyn.ConfigurationType`` (m, or dimensionless for an orientation condition).
    gravity : ndarray
        The gravity vector the bodies carry.
    description : str
        A sentence on what the model is (Exudyn items used), for the pages.
    linear_solver : dict, optional
        Settings of ``SimulationSettings.linearSolver`` its runs need (name -> value), e.g.
        ``{"solverType": exudyn.LinearSolverType.EigenDense, "ignoreSingularJacobian": True}`` for
        redundant joints; :func:`run`'s ``linear_solver`` overrides them.
    potential : callable, optional
        ``potential(configuration) -> float``: potential energy other than the weights' (springs),
        from Exudyn's own outputs; :func:`initial_energy` adds it.
    """

    problem: str
    scenario: str
    node: str
    container: object
    mbs: object
    bodies: dict
    joints: dict
    sensors: dict
    output: Callable
    residual: Callable
    gravity: np.ndarray
    description: str = ""
    linear_solver: dict | None = None
    potential: Callable | None = None


def rigid_body(mbs, body, gravity, node: str = "EP"):
    """An rbdyn :class:`~rbdyn.RigidBody` (its initial state included) as an Exudyn rigid body.

    The node is the mass centre (``RigidBodyInertia`` with ``com = 0`` and rbdyn's inertia about
    the mass centre); reference position and rotation are the body's initial ones, the initial
    velocity the mass centre's, the initial angular velocity ``R_world_body @ omega_body`` (Exudyn
    takes it in world axes); ``gravity`` is applied as the body's weight. Returns the
    ``ObjectIndex``.
    """
    _require()
    from exudyn.utilities import RigidBodyInertia

    R = np.asarray(body.R_world_body, dtype=float)
    inertia = RigidBodyInertia(mass=float(body.mass), inertiaTensor=np.asarray(body.inertia_com, dtype=float),
                               com=[0.0, 0.0, 0.0])
    return mbs.CreateRigidBody(
        name=body.name, referencePosition=[float(c) for c in body.position], referenceRotationMatrix=R,
        initialVelocity=[float(c) for c in body.velocity],
        initialAngularVelocity=[float(c) for c in R @ np.asarray(body.omega_body, dtype=float)],
        inertia=inertia, gravity=[float(c) for c in gravity], nodeType=node_type(node), show=False)


def add_joint(mbs, system, constraint, objects: dict, ground=None):
    """An rbdyn joint as the Exudyn joint of the same kind, at the bodies' initial configuration.

    ``objects``: rbdyn body name -> Exudyn ``ObjectIndex``; ``ground``: the ObjectIndex of a
    ground (made if None and needed). Kinds and Exudyn items:

    * ``SphericalJoint`` -- ``CreateSphericalJoint`` (ObjectJointSpherical) at the joint's world
      point;
    * ``RevoluteJoint`` -- ``CreateRevoluteJoint`` (ObjectJointGeneric, one rotation free) at the
      world point about the world axis ``R @ axis_body``;
    * ``PrismaticJoint`` -- ``CreatePrismaticJoint`` (ObjectJointGeneric, one translation free)
      along ``R @ axis_body``;
    * ``UniversalJoint`` -- ``ObjectJointGeneric`` with ``constrainedAxes = [1, 1, 1, 1, 0, 0]``,
      whose one rotational equation is :math:`t_{y0} \\cdot t_{z1} = 0` (Exudyn's documentation of
      ObjectJointGeneric), in the frames of its two markers: the marker on ``other`` has
      ``other_axis`` as the y axis of its local frame (``MarkerBodyRigid``'s ``localHT``), the
      marker on ``body`` has ``axis_body`` as its z axis, so the equation is rbdyn's "the two
      arms stay perpendicular".

    Returns ``(ObjectIndex, ground)``.
    """
    _require()
    from exudyn import itemInterface as ii

    kind = type(constraint).__name__
    x0, R0, _, _ = system.initial_state()
    i = system.index[constraint.body]
    body = objects[constraint.body]
    point = x0[i] + R0[i] @ np.asarray(constraint.point_body, dtype=float)
    if constraint.other is None and ground is None:
        ground = mbs.CreateGround()
    other = ground if constraint.other is None else objects[constraint.other]
    pair = [other, body]
    if kind == "SphericalJoint":
        return mbs.CreateSphericalJoint(itemNumbers=pair, position=list(point), useGlobalFrame=True, show=False), ground
    if kind in ("RevoluteJoint", "PrismaticJoint"):
        axis = R0[i] @ np.asarray(constraint.axis_body, dtype=float)
        make = mbs.CreateRevoluteJoint if kind == "RevoluteJoint" else mbs.CreatePrismaticJoint
        return make(itemNumbers=pair, position=list(point), axis=list(axis), useGlobalFrame=True, show=False), ground
    if kind == "UniversalJoint":
        def frame(axis, column):
            """A rotation matrix whose column ``column`` is the unit ``axis``."""
            a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
            b, c = perpendicular_basis(a)
            cols = {1: (c, a, b), 2: (b, c, a)}[column]  # right-handed: x, y, z
            return np.column_stack(cols)

        # the joint's point on the other body, in its frame (the ground's frame is the world's)
        other_point = point if constraint.other is None else np.asarray(constraint.other_point, dtype=float)
        # the joint frames as the markers' local frames: J0's y axis the other body's arm, J1's z axis the body's
        m0 = mbs.AddMarker(ii.MarkerBodyRigid(bodyNumber=other, localHT=exu.HT(
            rotation=frame(constraint.other_axis, 1), translation=list(other_point))))
        m1 = mbs.AddMarker(ii.MarkerBodyRigid(bodyNumber=body, localHT=exu.HT(
            rotation=frame(constraint.axis_body, 2), translation=list(constraint.point_body))))
        joint = mbs.AddObject(ii.ObjectJointGeneric(markerNumbers=[m0, m1], constrainedAxes=[1, 1, 1, 1, 0, 0],
                                                    visualization=ii.VObjectJointGeneric(show=False)))
        return joint, ground
    raise ValueError(f"no Exudyn joint for rbdyn's {kind}")


def jointed(scenario: str, node: str, label: Callable[[int, object], str]):
    """The bodies and joints of rbdyn's ``scenario`` in a new Exudyn system, ``node`` rigid-body
    nodes ("EP" or "LG"): :func:`rigid_body` for every body, :func:`add_joint` for every
    constraint, named ``label(k, constraint)``. Returns ``(system, gravity, container, mbs,
    objects, joints, ground)``: rbdyn's system, its gravity, Exudyn's container and system, the
    bodies' object numbers by name, the joints' by label, the ground object (None if no joint
    needed one)."""
    _require()
    system = rbdyn.load_scenario(scenario).system
    gravity = np.asarray(system.gravity, dtype=float)
    container = exu.SystemContainer()
    mbs = container.AddSystem()
    objects = {b.name: rigid_body(mbs, b, gravity, node) for b in system.bodies}
    joints, ground = {}, None
    for k, c in enumerate(system.constraints):
        joints[label(k, c)], ground = add_joint(mbs, system, c, objects, ground)
    return system, gravity, container, mbs, objects, joints, ground


def rbdyn_residual(system, mbs, objects: dict) -> Callable:
    """``residual(configuration)``: rbdyn's position-level residuals of ``system``'s joints
    (``System.constraint_residuals``) evaluated at Exudyn's body positions and rotation matrices
    at that ``exudyn.ConfigurationType``; the largest magnitude. It measures whether Exudyn's
    configuration meets the joints as rbdyn states them."""
    def residual(configuration):
        n = system.n_bodies
        x, R = np.zeros((n, 3)), np.zeros((n, 3, 3))
        for name, obj in objects.items():
            k = system.index[name]
            x[k] = mbs.GetObjectOutputBody(obj, exu.OutputVariableType.Position, localPosition=[0.0, 0.0, 0.0],
                                           configuration=configuration)
            R[k] = np.asarray(mbs.GetObjectOutputBody(obj, exu.OutputVariableType.RotationMatrix,
                                                      localPosition=[0.0, 0.0, 0.0],
                                                      configuration=configuration)).reshape(3, 3)
        return float(np.abs(system.constraint_residuals(x, R)).max())

    return residual


def initial_energy(model: Model) -> float:
    """The model's energy at its initial configuration, from Exudyn's own state: each body's
    ``KineticEnergy`` output plus its potential ``-m g . x`` (mass from the Exudyn object, mass
    centre position from its ``Position`` output), plus :attr:`Model.potential` if the model has
    one."""
    _require()
    mbs, ini = model.mbs, exu.ConfigurationType.Initial
    energy = 0.0
    for obj in model.bodies.values():
        kinetic = mbs.GetObjectOutputBody(obj, exu.OutputVariableType.KineticEnergy, localPosition=[0.0, 0.0, 0.0],
                                          configuration=ini)
        x = mbs.GetObjectOutputBody(obj, exu.OutputVariableType.Position, localPosition=[0.0, 0.0, 0.0],
                                    configuration=ini)
        mass = mbs.GetObjectParameter(obj, "mass")
        energy += float(kinetic) - mass * float(np.dot(model.gravity, x))
    if model.potential is not None:
        energy += float(model.potential(ini))
    return energy


def constraint_residual(model: Model) -> float:
    """The model's largest joint residual at its initial configuration (see :attr:`Model.residual`)."""
    _require()
    return float(model.residual(exu.ConfigurationType.Initial))


# ---------------------------------------------------------------------------
# runs
# ---------------------------------------------------------------------------
@dataclasses.dataclass
class Record:
    """One run of one engine's integrator at one step, timed over repeats.

    Attributes
    ----------
    engine : str
        ``"Exudyn"`` or ``"rbdyn"``.
    integrator : str
        The integrator's label (rbdyn: the scheme's name).
    h : float
        Step size (s).
    t_end : float
        Duration asked for (s).
    t, y : ndarray
        Sample times and the page's output at them (from the last repeat).
    wall : ndarray
        Wall time of every repeat (s): Exudyn, the ``SolveDynamic`` call (its initialisation
        and initial accelerations included); rbdyn, ``Trajectory.wall_time``.
    steps : int
        Steps taken.
    status : str
        ``"success"`` or ``"failure"``.
    message : str
        What the engine reported on a failure (empty on success).
    t_reached : float
        The last sample time; for a failure, the time at which the engine stopped.
    error : float
        The page's error measure, set by :func:`set_errors` (NaN until then, and for a failure).
    """

    engine: str
    integrator: str
    h: float
    t_end: float
    t: np.ndarray
    y: np.ndarray
    wall: np.ndarray
    steps: int
    status: str
    message: str = ""
    t_reached: float = 0.0
    error: float = math.nan

    @property
    def ok(self) -> bool:
        return self.status == "success"

    @property
    def median(self) -> float:
        return float(np.median(self.wall)) if len(self.wall) else math.nan

    @property
    def min(self) -> float:
        return float(np.min(self.wall)) if len(self.wall) else math.nan

    @property
    def max(self) -> float:
        return float(np.max(self.wall)) if len(self.wall) else math.nan

    @property
    def per_second(self) -> float:
        """Median computing time per simulated second (s/s)."""
        return self.median / self.t_end

    @property
    def line(self) -> str:
        """The figure's line it belongs to: ``"engine: integrator"``."""
        return self.integrator if self.integrator.startswith(self.engine) else f"{self.engine} {self.integrator}"


def settings(integrator, h: float, t_end: float, sample: float | None = None, rho_inf: float = 0.9,
             newton: dict | None = None, linear_solver: dict | None = None):
    """``exudyn.SimulationSettings`` of a fixed-step run of ``integrator`` (see the module's
    docstring), sensors written every ``sample`` seconds (default: ``t_end``, so t = 0 and the end;
    ``"step"``: every step); ``newton`` and ``linear_solver`` change ``timeIntegration.newton`` and
    ``linearSolver`` settings (name -> value)."""
    _require()
    it = _integrator(integrator)
    ss = exu.SimulationSettings()
    ti = ss.timeIntegration
    ti.numberOfSteps = int(round(t_end / h))
    ti.endTime = float(t_end)
    ti.verboseMode = 0
    ti.automaticStepSize = False
    ti.adaptiveStep = False
    ti.generalizedAlpha.spectralRadius = float(rho_inf)
    ti.generalizedAlpha.useIndex2Constraints = it.index2
    ti.generalizedAlpha.useNewmark = it.newmark
    ti.generalizedAlpha.lieGroupSimplifiedKinematicRelations = it.simplified_lie
    ti.explicit.useLieGroupIntegration = it.lie
    for key, value in (newton or {}).items():
        setattr(ti.newton, key, value)
    for key, value in (linear_solver or {}).items():
        setattr(ss.linearSolver, key, value)
    ss.solution.file.write = False  # no solution file
    ss.solution.sensors.writePeriod = float(_period(sample, h, t_end))
    return ss


def _period(sample, h: float, t_end: float) -> float:
    """The output period: ``None`` the whole run (t = 0 and the end), ``"step"`` every step."""
    if sample is None:
        return t_end
    if sample == "step":
        return h
    return float(sample)


@contextlib.contextmanager
def _silent():
    """Exudyn prints nothing (its messages on a failure end in the exception)."""
    before = exu.config.printToConsole
    exu.config.printToConsole = False
    try:
        yield
    finally:
        exu.config.printToConsole = before


def _model_for(models, it: Integrator) -> Model:
    if isinstance(models, Model):
        if models.node != it.node:
            raise ValueError(f"{it.label} runs on {it.node} nodes; the model has {models.node} nodes")
        return models
    try:
        return models[it.node]
    except KeyError:
        raise ValueError(f"{it.label} needs a model with {it.node} nodes; given: {', '.join(models)}") from None


def _sensor_data(model: Model) -> dict:
    return {name: np.asarray(model.mbs.GetSensorStoredData(s)) for name, s in model.sensors.items()}


def run(models, integrator, h: float, t_end: float, sample: float | None = None, repeats: int = 3,
        rho_inf: float = 0.9, newton: dict | None = None, linear_solver: dict | None = None) -> Record:
    """Run a model with one Exudyn integrator at a fixed step, ``repeats`` times, and return a
    :class:`Record`.

    Parameters
    ----------
    models : Model or dict
        The model, or ``{"EP": model, "LG": model}`` (the one with the integrator's node is used).
    integrator : str or Integrator
        A label of :data:`INTEGRATORS`.
    h, t_end : float
        Step and duration (s).
    sample : float or "step", optional
        Sensor period (s), ``"step"`` for every step; default ``t_end`` (t = 0 and the end).
    repeats : int
        Timed runs, each from the initial state (a failed run is not repeated).
    rho_inf : float
        Generalized-α's spectral radius at infinity.
    newton : dict, optional
        Settings of ``timeIntegration.newton`` to change.
    linear_solver : dict, optional
        Settings of ``linearSolver``; default the model's :attr:`Model.linear_solver`.
    """
    _require()
    it = _integrator(integrator)
    model = _model_for(models, it)
    ss = settings(it, h, t_end, sample, rho_inf, newton,
                  model.linear_solver if linear_solver is None else linear_solver)
    solver = getattr(exu.DynamicSolverType, it.solver)
    walls, status, message, t_fail = [], "success", "", 0.0
    for _ in range(max(1, repeats)):
        with _silent():
            tic = time.perf_counter()
            try:
                done = model.mbs.SolveDynamic(ss, solverType=solver)
            except exu.SolverError as exc:  # the solver stopped during the run: where, and why
                done, message = False, f"{type(exc).__name__}: {exc}"
                t_fail = float(model.mbs.systemData.GetTime())
                why = model.mbs.sys["dynamicSolver"].GetErrorString()
                message += f" ({why})" if why else ""
            except Exception as exc:  # refused before the first step (ModelError, ExudynValueError, ...)
                done, message, t_fail = False, f"{type(exc).__name__}: {exc}", 0.0
            wall = time.perf_counter() - tic
        walls.append(wall)
        if not done:
            status = "failure"
            message = message or "SolveDynamic returned False"
            break
    data = _sensor_data(model)
    t, y = model.output(data) if all(len(d) for d in data.values()) else (np.zeros(0), np.zeros(0))
    if status == "success":
        t_reached = float(t[-1]) if len(t) else 0.0
        if abs(t_reached - t_end) > 1e-9 * max(1.0, t_end):
            status, message = "failure", f"the sensors end at t = {t_reached:g}, not {t_end:g}"
        steps = ss.timeIntegration.numberOfSteps
    else:
        t_reached, message = t_fail, _short(message)
        steps = int(round(t_fail / h))
        t, y = t[:0], y[:0]  # a failed run's sensors may hold an earlier run's data
    return Record(ENGINE, it.label, float(h), float(t_end), t, y, np.array(walls), int(steps), status, message,
                  t_reached)


def _short(message: str) -> str:
    """An Exudyn message without the file and line it appends."""
    return message.split(" [Python file")[0].strip()


def run_rbdyn(system, scheme, h: float, t_end: float, output: Callable, sample: float | None = None,
              repeats: int = 3) -> Record:
    """The same record from ``rbdyn.simulate`` (``on_failure="return"``); ``output(trajectory)
    -> (t, y)`` is the page's output; the time is ``Trajectory.wall_time`` (stepping only)."""
    name = scheme if isinstance(scheme, str) else scheme.name
    every = max(1, int(round(_period(sample, h, t_end) / h)))
    walls, tr = [], None
    for _ in range(max(1, repeats)):
        tr = rbdyn.simulate(system, scheme, h, t_end, every=every, on_failure="return")
        walls.append(tr.wall_time)
        if tr.status != "success":
            break
    t, y = output(tr)
    status = "success" if tr.status == "success" else "failure"
    return Record("rbdyn", name, float(h), float(t_end), np.asarray(t), np.asarray(y), np.array(walls), int(tr.steps),
                  status, "" if status == "success" else str(tr.message), float(tr.t[-1]) if len(tr.t) else 0.0)


def sweep(models, exudyn_steps: dict, t_end: float, *, system=None, rbdyn_steps: dict | None = None,
          output: Callable | None = None, sample: float | None = None, repeats: int = 3, rho_inf: float = 0.9,
          newton: dict | None = None, linear_solver: dict | None = None, warmup: bool = True) -> list:
    """Both engines at every step, timed in the same call, round after round.

    ``exudyn_steps``: integrator label -> steps; ``rbdyn_steps``: scheme (name or instance) ->
    steps, run on ``system`` with ``output``. Each round runs every (integrator, step) once, so
    that a change of the machine's load hits both engines alike; a run that failed is not run
    again. With ``warmup``, every job first runs ten steps untimed (numba loading rbdyn's compiled
    kernels, Exudyn's first solve). Returns the :class:`Record` list, Exudyn's first, in the order
    given.
    """
    jobs = [("exudyn", lab, h) for lab, hs in exudyn_steps.items() for h in hs]
    jobs += [("rbdyn", s, h) for s, hs in (rbdyn_steps or {}).items() for h in hs]
    if rbdyn_steps and (system is None or output is None):
        raise ValueError("rbdyn_steps needs the system and its output function")
    records: dict = {}
    if warmup:  # untimed: numba's loading of rbdyn's kernels, Exudyn's first solve
        for kind, what, h in jobs:
            if kind == "exudyn":
                run(models, what, h, min(t_end, 10 * h), None, 1, rho_inf, newton, linear_solver)
            else:
                run_rbdyn(system, what, h, min(t_end, 10 * h), output, None, 1)
    for _ in range(max(1, repeats)):
        for job in jobs:
            kind, what, h = job
            if job in records and not records[job].ok:
                continue
            if kind == "exudyn":
                rec = run(models, what, h, t_end, sample, 1, rho_inf, newton, linear_solver)
            else:
                rec = run_rbdyn(system, what, h, t_end, output, sample, 1)
            if job in records:
                rec.wall = np.concatenate([records[job].wall, rec.wall])
            records[job] = rec
    return [records[job] for job in jobs]


def set_errors(records: Sequence[Record], error: Callable) -> None:
    """``rec.error = error(rec)`` for every successful record (NaN for a failure)."""
    for rec in records:
        rec.error = float(error(rec)) if rec.ok else math.nan


# ---------------------------------------------------------------------------
# comparisons, figure, table
# ---------------------------------------------------------------------------
def lines(records) -> dict:
    """The records by line (``rec.line``: engine and scheme or integrator), in their order."""
    out: dict = {}
    for rec in records:
        out.setdefault(rec.line, []).append(rec)
    return out


def failed_by_line(records) -> dict:
    """The failed runs by line, for the lines that have one."""
    return {line: [r for r in rs if not r.ok] for line, rs in lines(records).items() if not all(r.ok for r in rs)}


def orders_by_line(records, engine: str = ENGINE) -> dict:
    """``verify.fit_order`` over the steps of every line of ``engine`` whose runs all finished."""
    return {line: verify.fit_order([r.h for r in rs], [r.error for r in rs]) for line, rs in lines(records).items()
            if rs[0].engine == engine and all(r.ok for r in rs)}


def failed_text(records) -> str:
    """The failed runs as the prose lists them: line, steps, where each stopped and the first
    message (Markdown), or ``"none"``."""
    return "; ".join(
        f"{line.removeprefix(ENGINE + ' ')} at $h$ = {', '.join(f'{r.h:g}' for r in rs)} s (stopped at "
        f"t = {', '.join(f'{r.t_reached:.3g}' for r in rs)} s; \u201c{rs[0].message}\u201d)"
        for line, rs in failed_by_line(records).items()) or "none"


def explicit_refused(records) -> bool:
    """Whether Exudyn's explicit integrators have failed runs, each of them refused before the
    first step with a ``ModelError``."""
    explicit = [r for rs in failed_by_line(records).values() for r in rs
                if r.engine == ENGINE and not INTEGRATORS[r.integrator].implicit]
    return bool(explicit) and all(r.t_reached == 0.0 and r.message.startswith("ModelError") for r in explicit)


def span(values, spec: str = ".2g") -> str:
    """'a' or 'a to b': the range of measured ratios as the prose quotes it."""
    lo, hi = (format(v, spec) for v in (np.min(values), np.max(values)))
    return lo if lo == hi else f"{lo} to {hi}"


def say(line: str) -> str:
    """A line's name in the prose: rbdyn's `scheme`, Exudyn's integrator."""
    engine, _, name = line.partition(" ")
    return f"{engine}'s `{name}`" if engine == "rbdyn" else f"{engine}'s {name}"


def equal_cost(records: Sequence[Record], line: str, other: str) -> str:
    """A sentence: ``other``'s error over ``line``'s at ``line``'s computing times (where the two
    overlap; :func:`ratios_at_equal_cost`)."""
    ratio = ratios_at_equal_cost(records, line, other)
    if ratio.size == 0:
        return f"the computing times of {say(line)} and {say(other)} do not overlap"
    return f"at equal computing time, the error of {say(other)} is {span(ratio)} times that of {say(line)}"


def same_step(records: Sequence[Record], line: str, other: str) -> str:
    """A sentence: ``other``'s computing time over ``line``'s at the steps both ran (medians)."""
    by_line = lines(records)
    steps = sorted({r.h for r in by_line[line] if r.ok} & {r.h for r in by_line[other] if r.ok})
    if not steps:
        return f"{say(line)} and {say(other)} share no step"
    med = {(r.line, r.h): r.median for r in records}
    ratio = [med[other, h] / med[line, h] for h in steps]
    return (f"at the same step ({', '.join(f'{h:g}' for h in steps)} s) {say(other)} takes {span(ratio)} times the "
            f"computing time of {say(line)}")


def error_at_cost(records: Sequence[Record], line: str, cost: float) -> float:
    """The error of a line (:attr:`Record.line`) at a computing time per simulated second
    ``cost``, interpolated linearly in log-log between its successful runs; NaN outside them."""
    pts = sorted((r.per_second, r.error) for r in records if r.line == line and r.ok and r.error > 0)
    if len(pts) < 2:
        return math.nan
    c, e = np.log([p[0] for p in pts]), np.log([p[1] for p in pts])
    x = math.log(cost)
    if x < c.min() or x > c.max():
        return math.nan
    order = np.argsort(c)
    return float(np.exp(np.interp(x, c[order], e[order])))


def ratios_at_equal_cost(records: Sequence[Record], line: str, other: str) -> np.ndarray:
    """``other``'s error over ``line``'s at the computing times of ``line``'s successful runs
    that lie within ``other``'s range (:func:`error_at_cost`); empty where the ranges do not
    overlap. Above 1: ``line`` is more accurate at equal computing time."""
    out = []
    for r in records:
        if r.line == line and r.ok and r.error > 0:
            e = error_at_cost(records, other, r.per_second)
            if np.isfinite(e):
                out.append(e / r.error)
    return np.array(out)


def work_precision(records: Sequence[Record], ax=None, ylabel: str = "error", title: str | None = None):
    """Error against computing time per simulated second, log-log, one line per engine and
    integrator (rbdyn's in solid lines, Exudyn's dashed); runs that failed are listed in the
    legend. Returns the figure."""
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=(7.5, 4.6))
    else:
        fig = ax.figure
    markers = "osD^v<>ph*"
    for k, (line, recs) in enumerate(lines(records).items()):
        good = sorted((r for r in recs if r.ok and np.isfinite(r.error)), key=lambda r: r.h)
        failed = [r for r in recs if not r.ok]
        label = line + (f" (failed at h = {', '.join(f'{r.h:g}' for r in failed)})" if failed else "")
        exudyn = recs[0].engine == ENGINE
        if good:
            cost = np.array([r.per_second for r in good])
            lo, hi = np.array([r.min for r in good]) / good[0].t_end, np.array([r.max for r in good]) / good[0].t_end
            ax.errorbar(cost, [r.error for r in good], xerr=[cost - lo, hi - cost], marker=markers[k % len(markers)],
                        ms=4, lw=1.0, ls="--" if exudyn else "-", capsize=2, label=label)
        else:
            ax.plot([], [], ls="none", marker="x", color="k", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("computing time per simulated second (s/s), median (min–max)")
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def table(records: Sequence[Record], error_label: str = "error", spec: str = ".2e"):
    """The sweep as a ``verify.Table``: engine, integrator, step, steps, status, error, and the
    computing time per simulated second, median (min–max) over the repeats."""
    tab = verify.Table(["engine", "integrator", "$h$ (s)", "steps", error_label,
                        "computing time per simulated second (s/s), median (min–max)", "repeats"])
    for r in records:
        name = r.integrator[len(r.engine) + 1:] if r.integrator.startswith(r.engine + " ") else r.integrator
        err = format(r.error, spec) if r.ok and np.isfinite(r.error) else f"failed at t = {r.t_reached:g}: {r.message}"
        per = 1.0 / r.t_end
        tab.add(r.engine, f"`{name}`" if r.engine == "rbdyn" else name, f"{r.h:g}", str(r.steps), err,
                f"{r.median * per:.2e} ({r.min * per:.2e}–{r.max * per:.2e})", str(len(r.wall)))
    return tab
