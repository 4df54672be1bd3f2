"""rbdyn: rigid-body time integrators and a constraint solver.

The public API is flat::

    import rbdyn
    box = rbdyn.RigidBody("box", mass=10.0, inertia=rbdyn.box_inertia(10.0, (0.1, 0.4, 0.9)),
                          velocity=(-2.0, 2.0, 8.0), omega_body=(0.1, 5.0, 0.1))
    system = rbdyn.System([box], gravity=(0.0, 0.0, -9.8))
    traj = rbdyn.simulate(system, "rk4", dt=1e-3, t_end=10.0, every=100)

``rbdyn.so3`` holds the rotation-group maps; ``rbdyn.exact`` closed-form
reference solutions; ``rbdyn.verify`` the verification toolkit; ``rbdyn.schemes()`` lists the
time-stepping schemes; ``rbdyn.load_scenario`` reads a scenario file; ``rbdyn.study`` runs a grid
of schemes and steps of a scenario (convergence, work–precision, ensembles), here or on a Dask
cluster.

Each name is imported from the module that defines it when it is first used: ``import rbdyn``
loads neither numba nor the compiled kernels, so that listing schemes and scenarios, or a
command line's ``--help``, starts at once. The layers, bottom up: ``so3``; ``model/`` (bodies,
loads, systems and their arrays); ``constraints/`` (the kinds and their assembly); ``driver/``
(what a run records); ``kernels/`` (the compiled steps); ``integrators/`` (the schemes' settings);
``simulation`` (:func:`simulate`); ``scenario_files``; ``studies`` (:func:`study`); ``cli``.
"""

from __future__ import annotations

import importlib

from ._errors import InputError, NumericalError

__version__ = "0.1.0"

#: Where each public name is defined (imported on first use).
_WHERE = {
    "so3": "rbdyn.so3",
    "exact": "rbdyn.exact",
    "verify": "rbdyn.verify",
    "simulate": "rbdyn.simulation",
    "RunLength": "rbdyn.run_length",
    "Trajectory": "rbdyn.simulation",
    "Reduction": "rbdyn.driver.records",
    "Metric": "rbdyn.simulation",
    "compiled_metric": "rbdyn.simulation",
    "System": "rbdyn.model",
    "RigidBody": "rbdyn.model",
    "ConstantForce": "rbdyn.model",
    "ConstantTorque": "rbdyn.model",
    "PointForce": "rbdyn.model",
    "LoadCallback": "rbdyn.model",
    "Spring": "rbdyn.model",
    "CompiledLoad": "rbdyn.model",
    "compiled_load": "rbdyn.model",
    "compiled_potential": "rbdyn.model",
    "SphericalJoint": "rbdyn.constraints",
    "Rod": "rbdyn.constraints",
    "RevoluteJoint": "rbdyn.constraints",
    "FixedJoint": "rbdyn.constraints",
    "PrismaticJoint": "rbdyn.constraints",
    "UniversalJoint": "rbdyn.constraints",
    "box_inertia": "rbdyn.model",
    "Scheme": "rbdyn.integrators",
    "schemes": "rbdyn.integrators",
    "get_scheme": "rbdyn.integrators",
    "SymplecticEuler": "rbdyn.integrators",
    "RK4": "rbdyn.integrators",
    "RigPos": "rbdyn.integrators",
    "RigNeg": "rbdyn.integrators",
    "RigImp": "rbdyn.integrators",
    "GenAlpha": "rbdyn.integrators",
    "Scenario": "rbdyn.scenario_files",
    "load_scenario": "rbdyn.scenario_files",
    "builtin_scenarios": "rbdyn.scenarios",
    "study": "rbdyn.studies",
    "StudyResult": "rbdyn.studies",
}

__all__ = [*_WHERE, "InputError", "NumericalError"]


def __getattr__(name):
    if name not in _WHERE:
        raise AttributeError(f"module 'rbdyn' has no attribute {name!r}")
    module = importlib.import_module(_WHERE[name])
    value = module if module.__name__ == f"rbdyn.{name}" else getattr(module, name)
    globals()[name] = value  # the next lookup finds it here
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
