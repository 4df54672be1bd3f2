"""Mechanical systems: rigid bodies, loads and bilateral constraints, and their packed arrays."""

from .bodies import RigidBody, box_inertia
from .loads import (CompiledLoad, ConstantForce, ConstantTorque, Load, LoadCallback, PointForce, Spring,
                    compiled_load, compiled_potential)
from .system import System

__all__ = ["RigidBody", "box_inertia", "Load", "ConstantForce", "ConstantTorque", "PointForce", "Spring",
           "LoadCallback", "CompiledLoad", "compiled_load", "compiled_potential", "System"]
