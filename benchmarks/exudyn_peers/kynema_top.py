"""Kynema's heavy top (``heavy-top-kynema``) in Exudyn.

rbdyn's free body (mass, inertia about the mass centre, initial state) as one Exudyn rigid body
whose node is the mass centre (:func:`exudyn_peers.rigid_body`), held at the world point of the
joint's body point by ``MainSystem.CreateSphericalJoint`` to the ground. The output is the mass
centre's position (a ``SensorNode`` of ``Position``), the quantity the page's reference gives.
"""

from __future__ import annotations

import numpy as np

import rbdyn

from . import Model, _require, exu, rigid_body

SCENARIO = "heavy-top-kynema"


def build(node: str = "EP", scenario: str = SCENARIO) -> Model:
    """The heavy top of ``scenario`` with ``node`` rigid-body nodes ("EP" or "LG"), assembled.

    Output: ``(t, x)`` with ``x`` the mass centre's position, shape ``(n, 3)``.
    Residual: the distance between the joint's body point and its world point (m).
    """
    _require()
    sc = rbdyn.load_scenario(scenario)
    system = sc.system
    (body,) = system.bodies
    (joint,) = system.constraints
    if not isinstance(joint, rbdyn.SphericalJoint) or joint.other is not None:
        raise ValueError(f"{scenario}: expected one spherical joint to the world")
    gravity = np.asarray(system.gravity, dtype=float)
    container = exu.SystemContainer()
    mbs = container.AddSystem()
    top = rigid_body(mbs, body, gravity, node)
    ground = mbs.CreateGround()
    R = np.asarray(body.R_world_body, dtype=float)
    pivot = np.asarray(body.position, dtype=float) + R @ np.asarray(joint.point_body, dtype=float)
    if np.abs(pivot - joint.other_point).max() > 1e-12:
        raise ValueError(f"{scenario}: the joint's body point is not at its world point at t = 0")
    ball = mbs.CreateSphericalJoint(itemNumbers=[ground, top], position=[float(c) for c in pivot],
                                    useGlobalFrame=True, show=False)
    node_number = mbs.GetObject(top)["nodeNumber"]
    sensor = mbs.AddSensor(exu.itemInterface.SensorNode(nodeNumber=node_number, storeInternal=True, writeToFile=False,
                                                        outputVariableType=exu.OutputVariableType.Position))
    point_body = np.asarray(joint.point_body, dtype=float)
    other_point = np.asarray(joint.other_point, dtype=float)
    mbs.Assemble()

    def output(data):
        d = data["x"]
        return d[:, 0], d[:, 1:4]

    def residual(configuration):
        p = mbs.GetObjectOutputBody(top, exu.OutputVariableType.Position, localPosition=list(point_body),
                                    configuration=configuration)
        return float(np.linalg.norm(np.asarray(p) - other_point))

    nodes = {"EP": "NodeRigidBodyEP (Euler parameters)", "LG": "NodeRigidBodyRotVecLG (rotation vector, Lie group)"}
    return Model("kynema_top", scenario, node, container, mbs, {body.name: top}, {"pivot": ball}, {"x": sensor},
                 output, residual, gravity,
                 f"one ObjectRigidBody on a {nodes[node]} node at the mass centre, an ObjectJointSpherical to the "
                 "ground at the joint's world point, gravity as a mass-proportional load")
