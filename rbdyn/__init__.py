"""rbdyn: rigid-body time integrators and a constraint solver.

The public API is flat::

    import rbdyn
    box = rbdyn.RigidBody("box", mass=10.0, inertia=rbdyn.box_inertia(10.0, (0.1, 0.4, 0.9)),
                          velocity=(-2.0, 2.0, 8.0), omega_body=(0.1, 5.0, 0.1))
    system = rbdyn.System([box], gravity=(0.0, 0.0, -9.8))
    traj = rbdyn.simulate(system, "rk4", dt=1e-3, t_end=10.0, every=100)

``rbdyn.so3`` holds the rotation-group maps; ``rbdyn.exact`` closed-form
reference solutions; ``rbdyn.schemes()`` lists the
time-stepping schemes; ``rbdyn.load_scenario`` reads a scenario file.
"""

from . import exact, so3, verify
from ._errors import InputError, NumericalError
from .constraints import FixedJoint, RevoluteJoint, Rod, SphericalJoint
from .driver.records import Reduction
from .model import (
    CompiledLoad,
    ConstantForce,
    ConstantTorque,
    LoadCallback,
    PointForce,
    RigidBody,
    Spring,
    System,
    box_inertia,
    compiled_load,
    compiled_potential,
)
from .scenario import Scenario, builtin_scenarios, load_scenario
from .schemes import RK4, GenAlpha, RigImp, RigNeg, RigPos, Scheme, SymplecticEuler, get_scheme, schemes
from .simulation import Metric, RunLength, Trajectory, compiled_metric, simulate

__version__ = "0.1.0"

__all__ = [
    "so3",
    "exact",
    "verify",
    "simulate",
    "RunLength",
    "Trajectory",
    "Reduction",
    "Metric",
    "compiled_metric",
    "System",
    "RigidBody",
    "ConstantForce",
    "ConstantTorque",
    "PointForce",
    "LoadCallback",
    "Spring",
    "CompiledLoad",
    "compiled_load",
    "compiled_potential",
    "SphericalJoint",
    "Rod",
    "RevoluteJoint",
    "FixedJoint",
    "box_inertia",
    "Scheme",
    "schemes",
    "get_scheme",
    "SymplecticEuler",
    "RK4",
    "RigPos",
    "RigNeg",
    "RigImp",
    "GenAlpha",
    "Scenario",
    "load_scenario",
    "builtin_scenarios",
    "InputError",
    "NumericalError",
]
