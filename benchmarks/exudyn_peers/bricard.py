"""Bricard's overconstrained mechanism (``bricard``: IFToMM A04) in Exudyn.

rbdyn's five rods (masses, inertias about the mass centres, at rest with the world's frame)
as Exudyn rigid bodies whose nodes are the mass centres, with their weights as mass-proportional
loads (:func:`exudyn_peers.rigid_body`), and its six hinges (two of them to the ground) as six
``CreateRevoluteJoint`` joints (:func:`exudyn_peers.add_joint`: five equations each), exactly as
rbdyn states them. Their 30 equations on the rods' 30 velocities have rank 29 at every state of
the motion: with Exudyn's default linear solver the run stops within a few steps (its Newton
iteration fails; measured on the page), so the model asks for ``linearSolver.solverType =
EigenDense`` with ``ignoreSingularJacobian = True`` (Eigen's full-pivot LU), as
:mod:`exudyn_peers.andrews` does (:data:`LINEAR_SOLVER`).

The output is the benchmark's point P3, the point of rod 2 at the joint J3 it shares with rod 3
(:func:`p3_body`, read from the scenario's joint): a ``SensorBody`` of rod 2's ``Position`` at that
local point.
"""

from __future__ import annotations

import numpy as np


from . import Model, exu, jointed, rbdyn_residual

SCENARIO = "bricard"

#: ``SimulationSettings.linearSolver`` for the redundant hinges: attribute -> value, the solver type by
#: its name in ``exudyn.LinearSolverType``.
LINEAR_SOLVER = {"solverType": "EigenDense", "ignoreSingularJacobian": True}


def linear_solver() -> dict:
    """:data:`LINEAR_SOLVER` with Exudyn's values (``exudyn.LinearSolverType`` member)."""
    return {**LINEAR_SOLVER, "solverType": getattr(exu.LinearSolverType, LINEAR_SOLVER["solverType"])}


def p3_body(system, body: str = "rod2", other: str = "rod3") -> np.ndarray:
    """P3 in ``body``'s frame: the point of the joint between ``body`` and ``other`` (J3), from the
    scenario's joint data (whichever side ``body`` is on)."""
    for c in system.constraints:
        if (c.body, c.other) == (body, other):
            return np.asarray(c.point_body, dtype=float)
        if (c.body, c.other) == (other, body):
            return np.asarray(c.other_point, dtype=float)
    raise ValueError(f"no joint between {body} and {other}")


def build(node: str = "EP", scenario: str = SCENARIO) -> Model:
    """Bricard's mechanism of ``scenario`` with ``node`` rigid-body nodes ("EP" or "LG"), assembled.

    Output: ``(t, p3)``, ``p3`` of shape ``(n, 3)``: the world position of P3 (m). Residual: rbdyn's
    joint residuals at Exudyn's configuration (:func:`exudyn_peers.rbdyn_residual`).
    """
    from exudyn import itemInterface as ii

    system, gravity, container, mbs, objects, joints, ground = jointed(scenario, node, lambda k, c: f"J{k + 1}")
    point = p3_body(system)
    sensor = mbs.AddSensor(ii.SensorBody(bodyNumber=objects["rod2"], localPosition=[float(c) for c in point],
                                         storeInternal=True, writeToFile=False,
                                         outputVariableType=exu.OutputVariableType.Position))
    mbs.Assemble()

    def output(data):
        d = data["P3"]
        return d[:, 0], d[:, 1:4]

    kinds = sorted({mbs.GetObject(j)["objectType"] for j in joints.values()})
    nodes = {"EP": "NodeRigidBodyEP (Euler parameters)", "LG": "NodeRigidBodyRotVecLG (rotation vector, Lie group)"}
    return Model("bricard", scenario, node, container, mbs, objects, joints, {"P3": sensor}, output,
                 rbdyn_residual(system, mbs, objects), gravity,
                 f"five ObjectRigidBody on {nodes[node]} nodes at the mass centres, their weights as "
                 f"mass-proportional loads; six hinges made by CreateRevoluteJoint (Object{', Object'.join(kinds)}, "
                 "five equations each), two of them to the ground",
                 linear_solver=linear_solver())
