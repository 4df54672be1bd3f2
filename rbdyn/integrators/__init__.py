"""The time-stepping schemes: the contract (:mod:`.base`) and one module per family.

Importing this package registers every scheme, in this order (the order of ``rbdyn list``, of
:func:`rbdyn.schemes` and of the validation matrix's columns).
"""

from .base import Scheme, get_scheme, schemes
from .baselines import RK4, SymplecticEuler
from .rig import RigImp, RigNeg, RigPos
from .gen_alpha import GenAlpha

__all__ = ["Scheme", "get_scheme", "schemes", "SymplecticEuler", "RK4", "RigPos", "RigNeg", "RigImp", "GenAlpha"]
