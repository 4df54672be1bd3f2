"""Andrews' squeezing mechanism (``andrews``: IFToMM A03, the Bari test set's problem) in Exudyn.

rbdyn's seven links (masses, inertias about the mass centres, initial placements at the test set's
consistent angles, at rest) as Exudyn rigid bodies whose nodes are the mass centres
(:func:`exudyn_peers.rigid_body`), and its ten hinges as ten ``CreateRevoluteJoint`` joints
(:func:`exudyn_peers.add_joint`: five equations each, the point and the axis), exactly as rbdyn
states them: in 3-D the 50 equations have rank 41, nine repeat the others. Exudyn's default
linear solver stops at the first step on the singular Jacobian this gives (measured on the page);
the model therefore asks for
``linearSolver.solverType = EigenDense`` with ``ignoreSingularJacobian = True`` (Eigen's full-pivot
LU, "which handles over- and underdetermined systems", Exudyn's settings say), as Exudyn's own
example of a redundant 3-D four-bar does (:data:`LINEAR_SOLVER`).

The loads: the motor's constant world couple as a ``LoadTorqueVector`` (``bodyFixed = False``) on a
``MarkerBodyRigid`` at the crank's mass centre; the spring from the triangle's point D to the ground
point C as an ``ObjectConnectorSpringDamper`` (stiffness and rest length from the scenario, no
damping) between a ``MarkerBodyPosition`` on the triangle and one on the ground. No gravity.

The output is every body's angle about ``z``, theta_b = atan2(R_21, R_11) from a ``SensorBody`` of
its ``RotationMatrix`` (stored row by row), unwrapped along the samples (``numpy.unwrap``): the
page's test-set angles are combinations of these. The energy at t = 0 is in the spring:
:attr:`Model.potential` computes it from Exudyn's marker
positions and the connector's stiffness and reference length.
"""

from __future__ import annotations

import numpy as np

import rbdyn

from . import Model, exu, jointed, rbdyn_residual

SCENARIO = "andrews"

#: ``SimulationSettings.linearSolver`` for the redundant hinges (see the module's docstring): attribute ->
#: value, the solver type by its name in ``exudyn.LinearSolverType``.
LINEAR_SOLVER = {"solverType": "EigenDense", "ignoreSingularJacobian": True}


def linear_solver() -> dict:
    """:data:`LINEAR_SOLVER` with Exudyn's values (``exudyn.LinearSolverType`` member)."""
    return {**LINEAR_SOLVER, "solverType": getattr(exu.LinearSolverType, LINEAR_SOLVER["solverType"])}


def build(node: str = "EP", scenario: str = SCENARIO) -> Model:
    """Andrews' mechanism of ``scenario`` with ``node`` rigid-body nodes ("EP" or "LG"), assembled.

    Output: ``(t, theta)``, ``theta`` of shape ``(n, 7)``: each body's angle about ``z`` (rad) in the
    scenario's body order, unwrapped along the samples (sample densely enough: less than pi per
    sample). Residual: rbdyn's joint residuals at Exudyn's configuration
    (:func:`exudyn_peers.rbdyn_residual`). ``potential(configuration)``: the spring's energy.
    """
    from exudyn import itemInterface as ii

    system, gravity, container, mbs, objects, joints, ground = jointed(scenario, node, lambda k, c: f"hinge {k + 1}")
    if ground is None:
        ground = mbs.CreateGround()
    springs = []
    for load in system.loads:
        if isinstance(load, rbdyn.ConstantTorque):  # a world couple
            marker = mbs.AddMarker(ii.MarkerBodyRigid(bodyNumber=objects[load.body], localPosition=[0.0, 0.0, 0.0]))
            mbs.AddLoad(ii.LoadTorqueVector(markerNumber=marker, loadVector=[float(c) for c in load.torque],
                                            bodyFixed=False))
        elif isinstance(load, rbdyn.Spring):
            on_body = mbs.AddMarker(ii.MarkerBodyPosition(bodyNumber=objects[load.body],
                                                          localPosition=[float(c) for c in load.point_body]))
            on_ground = mbs.AddMarker(ii.MarkerBodyPosition(bodyNumber=ground,
                                                            localPosition=[float(c) for c in load.anchor]))
            springs.append(mbs.AddObject(ii.ObjectConnectorSpringDamper(
                markerNumbers=[on_ground, on_body], stiffness=float(load.stiffness), damping=0.0,
                referenceLength=float(load.rest_length), visualization=ii.VObjectConnectorSpringDamper(show=False))))
        else:
            raise ValueError(f"{scenario}: no Exudyn load for rbdyn's {type(load).__name__}")
    sensors = {b.name: mbs.AddSensor(ii.SensorBody(bodyNumber=objects[b.name], storeInternal=True, writeToFile=False,
                                                   outputVariableType=exu.OutputVariableType.RotationMatrix))
               for b in system.bodies}
    mbs.Assemble()
    names = list(system.body_names)

    def output(data):
        t = data[names[0]][:, 0]
        theta = np.empty((t.size, len(names)))
        for k, name in enumerate(names):
            R = data[name][:, 1:10].reshape(-1, 3, 3)  # row by row
            theta[:, k] = np.arctan2(R[:, 1, 0], R[:, 0, 0])
        return t, np.unwrap(theta, axis=0)

    def potential(configuration):
        """The springs' energy c (d - l0)^2 / 2: d between the connector's two markers at ``configuration``,
        c and l0 the connector's parameters (Exudyn gives the connector's own ``PotentialEnergy`` output at
        the current configuration only)."""
        energy = 0.0
        for s in springs:
            ends = [np.asarray(mbs.GetMarkerOutput(m, exu.OutputVariableType.Position, configuration=configuration))
                    for m in mbs.GetObjectParameter(s, "markerNumbers")]
            stretch = np.linalg.norm(ends[1] - ends[0]) - mbs.GetObjectParameter(s, "referenceLength")
            energy += 0.5 * mbs.GetObjectParameter(s, "stiffness") * stretch**2
        return float(energy)

    kinds = sorted({mbs.GetObject(j)["objectType"] for j in joints.values()})
    nodes = {"EP": "NodeRigidBodyEP (Euler parameters)", "LG": "NodeRigidBodyRotVecLG (rotation vector, Lie group)"}
    return Model("andrews", scenario, node, container, mbs, objects, joints, sensors, output,
                 rbdyn_residual(system, mbs, objects), gravity,
                 f"seven ObjectRigidBody on {nodes[node]} nodes at the mass centres; ten hinges made by "
                 f"CreateRevoluteJoint (Object{', Object'.join(kinds)}, five equations each); the motor as a "
                 "LoadTorqueVector, the spring as an ObjectConnectorSpringDamper to the ground",
                 potential=potential, linear_solver=linear_solver())
