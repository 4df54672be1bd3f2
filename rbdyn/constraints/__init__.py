"""Constraint kinds: one module each, and this registry.

``KINDS`` lists the kinds' classes in the order of their numbers in the packed data
(:mod:`.assembly`). Adding a kind means adding its module (see :mod:`.base` for what it
supplies) and one entry here; the schemes, the scenario files, the command line and the tests
take the kinds from this list.
"""

from __future__ import annotations

from .base import Constraint
from .fixed import FixedJoint
from .prismatic import PrismaticJoint
from .revolute import RevoluteJoint
from .rod import Rod
from .spherical import SphericalJoint
from .universal import UniversalJoint

__all__ = ["Constraint", "SphericalJoint", "Rod", "RevoluteJoint", "FixedJoint", "PrismaticJoint", "UniversalJoint",
           "KINDS", "kind_names"]

#: The registry: every constraint kind's class, in the order of its number in the packed data.
KINDS: tuple[type[Constraint], ...] = (SphericalJoint, Rod, RevoluteJoint, FixedJoint, PrismaticJoint, UniversalJoint)


def kind_names() -> list[str]:
    """The scenario ``type`` of every kind."""
    return [k.kind for k in KINDS]
