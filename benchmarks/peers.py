"""MuJoCo models of the book's benchmark problems, shared by the benchmarks and the book.

Five problems, each built from rbdyn's own scenario file so that the numbers are written
once (``rbdyn/scenarios/*.toml``):

* :func:`boxes` -- N free, non-interacting boxes of the Boxes complex scenario
  (``boxes-complex``): free joints, contacts disabled;
* :func:`heavy_top` -- the heavy symmetrical top of ``heavy-top-solfec``: one body on a
  ball joint at the pivot, its mass centre ``com_body`` from it;
* :func:`pendulum` -- the pendulum of ``pendulum-solfec``: a mass point on a hinge;
* :func:`double_pendulum` -- the double pendulum of ``double-pendulum``: two mass points
  on two hinges, the second carried by the first;
* :func:`jointed_top` -- the heavy top of ``heavy-top-kynema`` (a free body held by a
  spherical joint in rbdyn): one body on a ball joint at the joint's world point.

:func:`simulate` steps a model with ``mujoco.rollout`` (one thread) and returns a
:class:`Run` whose :meth:`Run.state` gives rbdyn's names and frames (``x_com``,
``v_com``, ``R_world_body``, ``omega_body``, with a body axis), so that one error function
serves both engines. :func:`boxes_system` is the rbdyn twin of :func:`boxes` for N boxes.

MuJoCo's conventions, checked by experiment (the book's *Accuracy and cost* chapter
repeats the checks when it runs):

* free joint: ``qpos = (x, q_wxyz)``, ``qvel = (v, omega)`` with ``v`` in world axes
  and ``omega`` in **body** axes;
* ball joint: ``qpos = q_wxyz`` (body to parent), ``qvel = omega`` in **body** axes;
* a model with the same mass, inertia and initial state as rbdyn's has the same energy
  and momentum to round-off, and MuJoCo's RK4 at a small step follows rbdyn's trajectory.

The pendulum is a hinge whose body carries the point mass at distance l from the axis
and a tiny inertia (:data:`POINT_INERTIA`): a hinge fixes the body to the rod, so the
body's own inertia would add to the hinge's m l^2 and slow the swing. In rbdyn (and in
Solfec) the rod acts at the mass centre, the body's rotation never couples to the swing
and its unit inertia never enters; a point mass is the MuJoCo model of the same problem.

Usage: ``import peers`` with ``benchmarks/`` on ``sys.path`` (the benchmark scripts and
the book do that).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import platform
import time

import numpy as np

import rbdyn

try:
    import mujoco
    from mujoco import rollout as _rollout
except ImportError:  # the rbdyn parts of the benchmarks still run
    mujoco = _rollout = None

__all__ = [
    "INTEGRATORS",
    "MAX_BODIES",
    "POINT_INERTIA",
    "Peer",
    "Run",
    "boxes",
    "boxes_system",
    "boxes_xml",
    "heavy_top",
    "pendulum",
    "double_pendulum",
    "jointed_top",
    "with_integrator",
    "simulate",
    "with_initial_state",
    "rollout_runner",
    "loop_runner",
    "machine_info",
    "quat_to_matrix",
]

#: MuJoCo's integrators (``<option integrator=...>``) and their orders of accuracy.
INTEGRATORS = {"Euler": 1, "RK4": 4, "implicit": 1, "implicitfast": 1}

#: Inertia (kg m^2, each principal moment) of the pendulum's point mass: MuJoCo needs a
#: positive one; it adds POINT_INERTIA / (m l^2) = 1e-14 to the hinge's moment of inertia,
#: which changes the period by a relative 5e-15 (round-off).
POINT_INERTIA = 1e-14

#: The most bodies a MuJoCo model holds (MuJoCo: "number of bodies plus flexes must be less
#: than 65534", the world body included). Compiling a model of free bodies takes a time
#: quadratic in their number: about 0.2 s for 10^3 and 15 s for 10^4 on a laptop core.
MAX_BODIES = 65532
_ARENA_PER_BODY = 4096  # bytes of MuJoCo arena per free box (RK4 uses ~800, implicit more)

_SPEC = None  # mjSTATE_FULLPHYSICS: time, qpos, qvel, act, plugin state
_BUFFER_BYTES = 32e6  # rollout writes the full state after every step: cap one chunk's buffer


def _require_mujoco():
    if mujoco is None:
        raise ImportError("MuJoCo is not installed: pip install mujoco (pinned in requirements.txt)")


def _spec():
    return mujoco.mjtState.mjSTATE_FULLPHYSICS


def _r(x) -> str:
    """A float for the XML, exact (repr of a Python float)."""
    return repr(float(x))


def _vec(v) -> str:
    return " ".join(_r(c) for c in v)


def _option(dt: float, gravity, integrator: str) -> str:
    if integrator not in INTEGRATORS:
        raise ValueError(f"unknown MuJoCo integrator {integrator!r}; allowed: {', '.join(INTEGRATORS)}")
    return (f'<option timestep="{_r(dt)}" gravity="{_vec(gravity)}" integrator="{integrator}">'
            '<flag contact="disable"/></option>')


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices of quaternions ``(..., 4)`` (w, x, y, z), normalised first."""
    q = np.asarray(q, dtype=float)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = np.moveaxis(q, -1, 0)
    R = np.empty(q.shape[:-1] + (3, 3))
    R[..., 0, 0] = 1 - 2 * (y * y + z * z)
    R[..., 0, 1] = 2 * (x * y - w * z)
    R[..., 0, 2] = 2 * (x * z + w * y)
    R[..., 1, 0] = 2 * (x * y + w * z)
    R[..., 1, 1] = 1 - 2 * (x * x + z * z)
    R[..., 1, 2] = 2 * (y * z - w * x)
    R[..., 2, 0] = 2 * (x * z - w * y)
    R[..., 2, 1] = 2 * (y * z + w * x)
    R[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return R


# ---------------------------------------------------------------------------
# models
# ---------------------------------------------------------------------------
@dataclasses.dataclass
class Peer:
    """A MuJoCo model of one problem, ready to roll out.

    Attributes
    ----------
    problem : str
        ``"boxes"``, ``"heavy_top"``, ``"pendulum"``, ``"double_pendulum"`` or ``"jointed_top"``.
    scenario : str
        The rbdyn scenario it is built from.
    integrator : str
        One of :data:`INTEGRATORS`.
    dt : float
        Time step (s).
    n_bodies : int
        Bodies in the model (boxes: N; the double pendulum: 2; otherwise 1).
    model, data
        ``mujoco.MjModel`` and ``mujoco.MjData``.
    state0 : ndarray
        Initial full physics state (``mjSTATE_FULLPHYSICS``), for ``rollout``.
    xml : str
        The model.
    """

    problem: str
    scenario: str
    integrator: str
    dt: float
    n_bodies: int
    model: object
    data: object
    state0: np.ndarray
    xml: str
    _kin: object = dataclasses.field(repr=False, default=None)

    @property
    def order(self) -> int:
        """Order of accuracy of the integrator."""
        return INTEGRATORS[self.integrator]


def _make(problem, scenario, integrator, dt, n_bodies, xml, qpos, qvel, kin) -> Peer:
    _require_mujoco()
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    data.qpos[:] = qpos
    data.qvel[:] = qvel
    mujoco.mj_forward(model, data)
    state0 = np.empty(mujoco.mj_stateSize(model, _spec()))
    mujoco.mj_getState(model, data, state0, _spec())
    return Peer(problem, scenario, integrator, float(dt), n_bodies, model, data, state0, xml, kin)


def with_initial_state(peer: Peer, qpos=None, qvel=None) -> Peer:
    """A copy of ``peer`` (same model) that starts from other ``qpos`` and/or ``qvel``."""
    data = mujoco.MjData(peer.model)
    mujoco.mj_setState(peer.model, data, peer.state0, _spec())
    if qpos is not None:
        data.qpos[:] = qpos
    if qvel is not None:
        data.qvel[:] = qvel
    mujoco.mj_forward(peer.model, data)
    state0 = np.empty_like(peer.state0)
    mujoco.mj_getState(peer.model, data, state0, _spec())
    return dataclasses.replace(peer, data=data, state0=state0)


def with_integrator(peer: Peer, integrator: str) -> Peer:
    """A copy of ``peer`` with another integrator: a copy of its compiled model with
    ``opt.integrator`` changed (no new compilation, which for thousands of bodies takes
    seconds), the same initial state."""
    _require_mujoco()
    if integrator not in INTEGRATORS:
        raise ValueError(f"unknown MuJoCo integrator {integrator!r}; allowed: {', '.join(INTEGRATORS)}")
    model = copy.copy(peer.model)
    model.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator.upper()}")
    data = mujoco.MjData(model)
    mujoco.mj_setState(model, data, peer.state0, _spec())
    mujoco.mj_forward(model, data)
    xml = peer.xml.replace(f'integrator="{peer.integrator}"', f'integrator="{integrator}"', 1)
    return dataclasses.replace(peer, integrator=integrator, model=model, data=data, state0=peer.state0.copy(), xml=xml)


def _boxes_scenario():
    scenario = rbdyn.load_scenario("boxes-complex")
    (body,) = scenario.system.bodies
    return scenario, body


def boxes_system(n_bodies: int = 1) -> rbdyn.System:
    """rbdyn's System of ``n_bodies`` identical, non-interacting boxes of ``boxes-complex``."""
    scenario, b = _boxes_scenario()
    bodies = [
        rbdyn.RigidBody(f"box{i}", mass=b.mass, inertia=b.inertia, position=b.position, velocity=b.velocity,
                        R_world_body=b.R_world_body, omega_body=b.omega_body)
        for i in range(n_bodies)
    ]
    return rbdyn.System(bodies, gravity=scenario.system.gravity)


def boxes_xml(n_bodies: int = 1, integrator: str = "Euler", dt: float | None = None) -> str:
    """MJCF of ``n_bodies`` free boxes of ``boxes-complex`` (same mass and inertia; no contacts)."""
    scenario, b = _boxes_scenario()
    J = b.inertia
    if np.any(J != np.diag(np.diag(J))):
        raise ValueError("the box's inertia must be diagonal in its body frame")
    body = (
        '<body name="box{i}"><freejoint/>'
        f'<inertial pos="0 0 0" mass="{_r(b.mass)}" diaginertia="{_vec(np.diag(J))}"/></body>'
    )
    bodies = "\n    ".join(body.format(i=i) for i in range(n_bodies))
    option = _option(scenario.dt if dt is None else dt, scenario.system.gravity, integrator)
    if n_bodies > MAX_BODIES:
        raise ValueError(f"a MuJoCo model holds at most {MAX_BODIES} bodies, got {n_bodies}")
    if n_bodies > 1000:  # MuJoCo's default arena is too small for its RK4 stages beyond some thousands of bodies
        option += f'\n  <size memory="{_ARENA_PER_BODY * n_bodies // 2**20 + 1}M"/>'
    return f"""<mujoco model="boxes">
  {option}
  <worldbody>
    {bodies}
  </worldbody>
</mujoco>"""


def boxes(n_bodies: int = 1, integrator: str = "Euler", dt: float | None = None) -> Peer:
    """N free boxes of the Boxes complex scenario (``boxes-complex``).

    Free joints: ``qpos = (x, q_wxyz)`` and ``qvel = (v world, omega body)`` per body.
    """
    scenario, b = _boxes_scenario()
    dt = scenario.dt if dt is None else dt
    one_q = np.concatenate([b.position, rbdyn.so3.matrix_to_quat_wxyz(b.R_world_body)])
    one_v = np.concatenate([b.velocity, b.omega_body])

    def kin(qpos, qvel):
        n = qpos.shape[0]
        qp = qpos.reshape(n, n_bodies, 7)
        qv = qvel.reshape(n, n_bodies, 6)
        return {"x_com": qp[..., :3], "v_com": qv[..., :3], "R_world_body": quat_to_matrix(qp[..., 3:]),
                "omega_body": qv[..., 3:]}

    return _make("boxes", "boxes-complex", integrator, dt, n_bodies, boxes_xml(n_bodies, integrator, dt),
                 np.tile(one_q, n_bodies), np.tile(one_v, n_bodies), kin)


def heavy_top(integrator: str = "Euler", dt: float | None = None) -> Peer:
    """The heavy symmetrical top of ``heavy-top-solfec`` as one body on a ball joint.

    The body frame is at the pivot (the joint's centre); the inertial element puts the
    mass centre at ``com_body`` with the inertia about the mass centre (MuJoCo's
    convention), which is rbdyn's inertia about the pivot minus the parallel-axis term.
    ``qpos`` is the body's quaternion, ``qvel`` its angular velocity in body axes.
    """
    scenario = rbdyn.load_scenario("heavy-top-solfec")
    (b,) = scenario.system.bodies
    if not b.pivoted:
        raise ValueError("heavy-top-solfec must be a pivoted body")
    Jc = b.inertia_com
    if np.max(np.abs(Jc - np.diag(np.diag(Jc)))) > 1e-15 * np.max(np.abs(Jc)):
        raise ValueError("the top's inertia about its mass centre must be diagonal in its body frame")
    dt = scenario.dt if dt is None else dt
    xml = f"""<mujoco model="heavy top">
  {_option(dt, scenario.system.gravity, integrator)}
  <worldbody>
    <body name="top" pos="{_vec(b.pivot)}">
      <joint name="pivot" type="ball" pos="0 0 0"/>
      <inertial pos="{_vec(b.com_body)}" mass="{_r(b.mass)}" diaginertia="{_vec(np.diag(Jc))}"/>
    </body>
  </worldbody>
</mujoco>"""
    return _make("heavy_top", "heavy-top-solfec", integrator, dt, 1, xml, rbdyn.so3.matrix_to_quat_wxyz(b.R_world_body),
                 b.omega_body, _ball_kin(b.pivot, b.com_body))


def _ball_kin(pivot, com):
    """State of a body on a ball joint at ``pivot`` with its mass centre ``com`` (body axes) from it."""
    pivot, com = np.array(pivot, dtype=float), np.array(com, dtype=float)

    def kin(qpos, qvel):
        R = quat_to_matrix(qpos[:, None, :4])
        W = qvel[:, None, :3]
        return {"x_com": pivot + R @ com, "v_com": np.einsum("nbij,nbj->nbi", R, np.cross(W, com)),
                "R_world_body": R, "omega_body": W}

    return kin


def _inertial(mass, com, Jc) -> str:
    """MJCF inertial element: mass centre ``com`` (body axes), inertia ``Jc`` about it."""
    Jc = np.asarray(Jc, dtype=float)
    if np.max(np.abs(Jc - np.diag(np.diag(Jc)))) <= 1e-15 * np.max(np.abs(Jc)):
        return f'<inertial pos="{_vec(com)}" mass="{_r(mass)}" diaginertia="{_vec(np.diag(Jc))}"/>'
    full = (Jc[0, 0], Jc[1, 1], Jc[2, 2], Jc[0, 1], Jc[0, 2], Jc[1, 2])
    return f'<inertial pos="{_vec(com)}" mass="{_r(mass)}" fullinertia="{_vec(full)}"/>'


def jointed_top(integrator: str = "Euler", dt: float | None = None) -> Peer:
    """The heavy top of ``heavy-top-kynema`` as one body on a ball joint.

    In rbdyn it is a free body whose point ``point_body`` (from the mass centre, body axes)
    a spherical joint holds at the world point ``other_point``; here the body frame is at
    that point, the joint's centre, with the mass centre at ``-point_body`` and the
    scenario's inertia about the mass centre. The scenario's initial velocity must be the
    one the joint allows (``v = R (W x c)``, c = -point_body). ``qpos`` is the body's
    quaternion, ``qvel`` its angular velocity in body axes.
    """
    scenario = rbdyn.load_scenario("heavy-top-kynema")
    (b,) = scenario.system.bodies
    (joint,) = scenario.system.constraints
    if not isinstance(joint, rbdyn.SphericalJoint) or joint.other is not None or b.pivoted:
        raise ValueError("heavy-top-kynema must be a free body on one spherical joint to the world")
    R0, W0 = b.R_world_body, b.omega_body
    com = -np.asarray(joint.point_body, dtype=float)
    pivot = np.asarray(joint.other_point, dtype=float)
    scale = 1.0 + np.linalg.norm(com)
    if np.linalg.norm(pivot + R0 @ com - b.position) > 1e-12 * scale:
        raise ValueError("heavy-top-kynema: the joint's body point must start at its world point")
    v_joint = R0 @ np.cross(W0, com)
    if np.linalg.norm(b.velocity - v_joint) > 1e-12 * (1.0 + np.linalg.norm(v_joint)):
        raise ValueError("heavy-top-kynema: the mass centre's velocity must be the one the joint allows, R (W x c)")
    dt = scenario.dt if dt is None else dt
    xml = f"""<mujoco model="jointed top">
  {_option(dt, scenario.system.gravity, integrator)}
  <worldbody>
    <body name="top" pos="{_vec(pivot)}">
      <joint name="joint" type="ball" pos="0 0 0"/>
      {_inertial(b.mass, com, b.inertia)}
    </body>
  </worldbody>
</mujoco>"""
    return _make("jointed_top", "heavy-top-kynema", integrator, dt, 1, xml, rbdyn.so3.matrix_to_quat_wxyz(R0), W0,
                 _ball_kin(pivot, com))


def pendulum(integrator: str = "Euler", dt: float | None = None, theta_max: float | None = None) -> Peer:
    """The pendulum of ``pendulum-solfec`` as a point mass on a hinge.

    The hinge is at the rod's fixed point, its axis normal to the plane of the rod and
    gravity; the body frame is at the hinge, the mass (inertia :data:`POINT_INERTIA`)
    at the rod's length. ``qpos`` is the angle turned from the initial position, ``qvel``
    its rate. ``theta_max`` (rad from the downward vertical, released from rest) replaces
    the scenario's release angle, in the same plane, for studies of the amplitude.
    """
    scenario = rbdyn.load_scenario("pendulum-solfec")
    (b,) = scenario.system.bodies
    (rod,) = scenario.system.constraints
    if not isinstance(rod, rbdyn.Rod) or rod.other is not None or np.any(rod.point_body != 0.0):
        raise ValueError("pendulum-solfec must be one rod from the mass centre to a fixed point")
    if np.any(b.velocity != 0.0) or np.any(b.omega_body != 0.0):
        raise ValueError("pendulum-solfec must start at rest")
    g = scenario.system.gravity
    d0 = b.position - rod.other_point
    if abs(np.linalg.norm(d0) - rod.length) > 1e-12 * rod.length:
        raise ValueError("the mass must start at the rod's length from the fixed point")
    axis = np.cross(d0, g)
    axis = axis / np.linalg.norm(axis) + 0.0  # (+ 0.0: no negative zeros in the XML)
    if theta_max is not None:  # rotate the release point about the axis, from the bottom
        down = g / np.linalg.norm(g) * rod.length
        d0 = rbdyn.so3.exp(-theta_max * axis) @ down
        d0[np.abs(d0) < 1e-15 * rod.length] = 0.0
    dt = scenario.dt if dt is None else dt
    I = POINT_INERTIA
    xml = f"""<mujoco model="pendulum">
  {_option(dt, g, integrator)}
  <worldbody>
    <body name="arm" pos="{_vec(rod.other_point)}">
      <joint name="hinge" type="hinge" axis="{_vec(axis)}" pos="0 0 0"/>
      <inertial pos="{_vec(d0)}" mass="{_r(b.mass)}" diaginertia="{_r(I)} {_r(I)} {_r(I)}"/>
    </body>
  </worldbody>
</mujoco>"""
    p, a = rod.other_point.copy(), axis.copy()

    A = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])

    def kin(qpos, qvel):
        q = qpos[:, 0, None, None, None]
        R = np.eye(3) + np.sin(q) * A + (1.0 - np.cos(q)) * (A @ A)  # Rodrigues, unit axis
        r = R @ d0
        W = qvel[:, None, :1] * a
        return {"x_com": p + r, "v_com": np.cross(W, r), "R_world_body": R, "omega_body": W}

    return _make("pendulum", "pendulum-solfec", integrator, dt, 1, xml, [0.0], [0.0], kin)


def double_pendulum(integrator: str = "Euler", dt: float | None = None) -> Peer:
    """The double pendulum of ``double-pendulum`` as two mass points on two hinges.

    The first hinge is at the first rod's fixed point, the second at the first mass (the
    second rod joins the two mass centres); both axes are normal to the plane of the rods
    and gravity, and each body carries its mass (inertia :data:`POINT_INERTIA`) at its rod's
    length from its hinge, as :func:`pendulum` does. ``qpos`` is the two angles turned from
    the initial position (the second relative to the first), ``qvel`` their rates.
    """
    scenario = rbdyn.load_scenario("double-pendulum")
    upper, lower = scenario.system.bodies
    rods = scenario.system.constraints
    if (len(rods) != 2 or not all(isinstance(r, rbdyn.Rod) and np.all(r.point_body == 0.0) for r in rods)
            or rods[0].body != upper.name or rods[0].other is not None
            or rods[1].body != lower.name or rods[1].other != upper.name or np.any(rods[1].other_point != 0.0)):
        raise ValueError("double-pendulum must be a rod from the upper mass to a fixed point and one "
                         "between the two mass centres")
    for b in (upper, lower):
        if np.any(b.velocity != 0.0) or np.any(b.omega_body != 0.0):
            raise ValueError("double-pendulum must start at rest")
    g = scenario.system.gravity
    pivot = np.asarray(rods[0].other_point, dtype=float)
    d1, d2 = upper.position - pivot, lower.position - upper.position
    for rod, d in zip(rods, (d1, d2)):
        if abs(np.linalg.norm(d) - rod.length) > 1e-12 * rod.length:
            raise ValueError("double-pendulum: each mass must start at its rod's length")
    normal = np.cross(d1, g) if np.linalg.norm(np.cross(d1, g)) > np.linalg.norm(np.cross(d2, g)) else np.cross(d2, g)
    if np.linalg.norm(normal) == 0.0:
        raise ValueError("double-pendulum: the rods must not both start along gravity")
    axis = normal / np.linalg.norm(normal) + 0.0
    if abs(d2 @ axis) > 1e-12 * np.linalg.norm(d2) or abs(d1 @ axis) > 1e-12 * np.linalg.norm(d1):
        raise ValueError("double-pendulum: the rods and gravity must lie in one plane")
    dt = scenario.dt if dt is None else dt
    I = POINT_INERTIA
    xml = f"""<mujoco model="double pendulum">
  {_option(dt, g, integrator)}
  <worldbody>
    <body name="upper" pos="{_vec(pivot)}">
      <joint name="hinge1" type="hinge" axis="{_vec(axis)}" pos="0 0 0"/>
      <inertial pos="{_vec(d1)}" mass="{_r(upper.mass)}" diaginertia="{_r(I)} {_r(I)} {_r(I)}"/>
      <body name="lower" pos="{_vec(d1)}">
        <joint name="hinge2" type="hinge" axis="{_vec(axis)}" pos="0 0 0"/>
        <inertial pos="{_vec(d2)}" mass="{_r(lower.mass)}" diaginertia="{_r(I)} {_r(I)} {_r(I)}"/>
      </body>
    </body>
  </worldbody>
</mujoco>"""
    a = axis.copy()
    A = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])

    def kin(qpos, qvel):
        def rot(q):
            q = q[:, None, None]
            return np.eye(3) + np.sin(q) * A + (1.0 - np.cos(q)) * (A @ A)  # Rodrigues, unit axis

        R1, R2 = rot(qpos[:, 0]), rot(qpos[:, 0] + qpos[:, 1])
        r1, r2 = R1 @ d1, R2 @ d2
        w1, w2 = qvel[:, 0, None] * a, (qvel[:, 0] + qvel[:, 1])[:, None] * a
        v1 = np.cross(w1, r1)
        x1 = pivot + r1
        return {"x_com": np.stack([x1, x1 + r2], axis=1), "v_com": np.stack([v1, v1 + np.cross(w2, r2)], axis=1),
                "R_world_body": np.stack([R1, R2], axis=1), "omega_body": np.stack([w1, w2], axis=1)}

    return _make("double_pendulum", "double-pendulum", integrator, dt, 2, xml, [0.0, 0.0], [0.0, 0.0], kin)


# ---------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------
@dataclasses.dataclass
class Run:
    """Output of :func:`simulate`: every ``every``-th step, plus t = 0 and the last step.

    ``wall_time`` is the time spent inside ``mujoco.rollout`` (the stepping, with
    MuJoCo's own writing of the state after every step). After a divergence
    (MuJoCo's warning "Nan, Inf or huge value", after which MuJoCo resets the state)
    ``status`` is ``"failure"``, ``message`` holds the warning and the rows stop at the
    last step before it.
    """

    peer: Peer
    t: np.ndarray
    qpos: np.ndarray
    qvel: np.ndarray
    steps: int
    wall_time: float
    status: str
    message: str

    def state(self) -> dict:
        """``x_com``, ``v_com`` (n, N, 3), ``R_world_body`` (n, N, 3, 3), ``omega_body`` (n, N, 3)."""
        return self.peer._kin(self.qpos, self.qvel)


def n_steps_for(dt: float, t_end: float) -> int:
    """Steps of size ``dt`` to reach ``t_end`` (rbdyn's rule: 10/0.001 is 10000)."""
    return int(math.ceil(t_end / dt * (1.0 - 1e-9)))


def simulate(peer: Peer, t_end: float, every: int = 1) -> Run:
    """Roll ``peer`` out from its initial state to ``t_end`` with ``mujoco.rollout`` (one thread).

    The run is split into chunks whose state buffers stay below 32 MB; each chunk starts
    from the last state of the previous one (the full physics state: for these models the
    continuation is exact). MuJoCo's warnings are collected instead of printed.
    """
    _require_mujoco()
    model, data, dt = peer.model, peer.data, peer.dt
    n_steps = n_steps_for(dt, t_end)
    nq, nv = model.nq, model.nv
    size = peer.state0.size
    per_chunk = max(every, int(_BUFFER_BYTES / (8 * size)) // every * every)
    rows = [peer.state0[None, :]]
    state = peer.state0.copy()
    done, wall = 0, 0.0
    status, message = "success", f"reached t = {n_steps * dt!r} in {n_steps} steps"
    messages = []
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(messages.append)
    buffers = {}
    try:
        while done < n_steps:
            m = min(per_chunk, n_steps - done)
            out = buffers.get(m)
            if out is None:
                out = buffers[m] = np.empty((1, m, size))
            tic = time.perf_counter()
            _rollout.rollout(model, data, state[None, :], nstep=m, state=out)
            wall += time.perf_counter() - tic
            chunk = out[0]
            # MuJoCo resets the state (time to 0) after a divergence: the time column shows it.
            expected = (done + 1 + np.arange(m)) * dt
            bad = np.flatnonzero(~(np.abs(chunk[:, 0] - expected) <= 1e-9 * max(1.0, expected[-1]))
                                 | ~np.all(np.isfinite(chunk[:, 1:1 + nq + nv]), axis=1))
            good = m if bad.size == 0 else int(bad[0])
            keep = np.arange((every - 1 - done) % every, good, every)  # steps that are multiples of every
            rows.append(chunk[keep])
            if bad.size:
                status = "failure"
                message = (f"MuJoCo diverged in step {done + good + 1}, from t = {expected[good] - dt:.6g}: "
                           + ("; ".join(messages) or "non-finite state"))
                if good and (keep.size == 0 or keep[-1] != good - 1):
                    rows.append(chunk[good - 1:good])
                done += good
                break
            state = chunk[-1].copy()
            done += m
        else:
            if n_steps % every:
                rows.append(state[None, :])
    finally:
        mujoco.set_mju_user_warning(previous)
    states = np.concatenate(rows)
    return Run(peer, states[:, 0], states[:, 1:1 + nq], states[:, 1 + nq:1 + nq + nv], done, wall, status, message)


def rollout_runner(peer: Peer):
    """``run(n_steps) -> seconds``: one rollout of ``n_steps`` from the initial state.

    For timing: no checks, buffers reused, longer runs split into chunks of at most 32 MB
    of state output (each chunk continues from the previous one's last state).
    """
    _require_mujoco()
    model, data, size = peer.model, peer.data, peer.state0.size
    limit = max(1, int(_BUFFER_BYTES / (8 * size)))
    buffers = {}

    def run(n_steps):
        seconds, left, state = 0.0, n_steps, peer.state0
        while left > 0:
            m = min(left, limit)
            out = buffers.get(m)
            if out is None:
                if len(buffers) > 2:
                    buffers.clear()
                out = buffers[m] = np.empty((1, m, size))
            tic = time.perf_counter()
            _rollout.rollout(model, data, state[None, :], nstep=m, state=out)
            seconds += time.perf_counter() - tic
            state = out[0, -1]
            left -= m
        return seconds

    run(2)  # warm-up
    return run


def loop_runner(peer: Peer):
    """``run(n_steps) -> seconds``: ``mujoco.mj_step`` in a Python loop, from the initial state."""
    _require_mujoco()
    model, data, state0 = peer.model, peer.data, peer.state0
    step = mujoco.mj_step

    def run(n_steps):
        mujoco.mj_setState(model, data, state0, _spec())
        tic = time.perf_counter()
        for _ in range(n_steps):
            step(model, data)
        return time.perf_counter() - tic

    run(2)  # warm-up
    return run


# ---------------------------------------------------------------------------
# machine
# ---------------------------------------------------------------------------
def machine_info() -> dict:
    """CPU model, core counts, load average and package versions."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    import numba

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "mujoco": mujoco.__version__ if mujoco is not None else None,
        "rbdyn": rbdyn.__version__,
    }
