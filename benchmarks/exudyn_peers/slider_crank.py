"""The IFToMM spatial slider-crank (``slider-crank-iftomm``) in Exudyn.

rbdyn's three free bodies (crank, rod, slider: masses, inertias about the mass centres, initial
states) as Exudyn rigid bodies whose nodes are the mass centres (:func:`exudyn_peers.rigid_body`),
and its four joints as Exudyn's (:func:`exudyn_peers.add_joint`): the revolute joint at A to the
ground (``CreateRevoluteJoint``), the spherical joint at B between crank and rod
(``CreateSphericalJoint``), the universal joint at C between rod and slider (an
``ObjectJointGeneric`` with one rotation constrained, the two arms held perpendicular) and the
prismatic joint along the guide (``CreatePrismaticJoint``). The output is the slider position
x_D (a ``SensorNode`` of the slider's ``Position``, its x component), the benchmark's output.
"""

from __future__ import annotations



from . import Model, exu, jointed, rbdyn_residual

SCENARIO = "slider-crank-iftomm"


def build(node: str = "EP", scenario: str = SCENARIO) -> Model:
    """The slider-crank of ``scenario`` with ``node`` rigid-body nodes ("EP" or "LG"), assembled.

    Output: ``(t, x_D)``, shape ``(n,)``. Residual: rbdyn's joint residuals at Exudyn's
    configuration (:func:`exudyn_peers.rbdyn_residual`; m, or dimensionless for an axis condition).
    """
    names = {"RevoluteJoint": "revolute A", "SphericalJoint": "spherical B", "UniversalJoint": "universal C",
             "PrismaticJoint": "prismatic D"}
    system, gravity, container, mbs, objects, joints, ground = jointed(scenario, node, lambda k, c: names[type(c).__name__])
    slider_node = mbs.GetObject(objects["slider"])["nodeNumber"]
    sensor = mbs.AddSensor(exu.itemInterface.SensorNode(nodeNumber=slider_node, storeInternal=True, writeToFile=False,
                                                        outputVariableType=exu.OutputVariableType.Position))
    mbs.Assemble()

    def output(data):
        d = data["slider"]
        return d[:, 0], d[:, 1]

    nodes = {"EP": "NodeRigidBodyEP (Euler parameters)", "LG": "NodeRigidBodyRotVecLG (rotation vector, Lie group)"}
    return Model("slider_crank", scenario, node, container, mbs, objects, joints, {"slider": sensor}, output,
                 rbdyn_residual(system, mbs, objects), gravity,
                 f"three ObjectRigidBody on {nodes[node]} nodes at the mass centres; an ObjectJointGeneric with one "
                 "rotation free (CreateRevoluteJoint) at A, an ObjectJointSpherical at B, an ObjectJointGeneric with "
                 "one rotation constrained (the universal joint) at C, an ObjectJointGeneric with one translation free "
                 "(CreatePrismaticJoint) at D; gravity as mass-proportional loads")
