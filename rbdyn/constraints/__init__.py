"""Constraint kinds: one module each, and this registry.

``KINDS`` lists the kinds in the order of their numbers in the packed data. Adding a kind means
adding its module (see :mod:`._base` for what it supplies) and one entry here; the schemes, the
scenario files, the command line and the tests take the kinds from this list.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._base import DATA_WIDTH, Constraint, Kind
from . import fixed, revolute, rod, spherical
from .fixed import FixedJoint
from .revolute import RevoluteJoint
from .rod import Rod
from .spherical import SphericalJoint

__all__ = ["Constraint", "SphericalJoint", "Rod", "RevoluteJoint", "FixedJoint", "KINDS", "Constraints",
           "pack_constraints", "kind_of", "kind_names"]

#: The registry: every constraint kind, in the order of its number in the packed data.
KINDS: tuple[Kind, ...] = (spherical.KIND, rod.KIND, revolute.KIND, fixed.KIND)


def kind_names() -> list[str]:
    """The scenario ``type`` of every kind."""
    return [k.name for k in KINDS]


def kind_of(constraint) -> Kind:
    """The registered :class:`Kind` of a constraint object."""
    for kind in KINDS:
        if type(constraint) is kind.cls:
            return kind
    raise TypeError(f"not a registered constraint kind: {type(constraint).__name__}")


class Constraints(NamedTuple):
    """The constraints of a system as the compiled steps read them.

    ``kind`` (nc,) the kind's number in :data:`KINDS`; ``body`` (nc, 2) bodies *a*, *b* (-1: the
    world); ``data`` (nc, DATA_WIDTH) each constraint's row; ``row`` (nc + 1,) the first residual
    row of each; ``c_bodies`` / ``u_bodies`` the bodies in at least one constraint / in none.
    """

    kind: np.ndarray
    body: np.ndarray
    data: np.ndarray
    row: np.ndarray
    c_bodies: np.ndarray
    u_bodies: np.ndarray


def pack_constraints(constraints, n_bodies: int) -> Constraints:
    """The :class:`Constraints` of a system from its resolved constraints."""
    nc = len(constraints)
    kind = np.zeros(nc, dtype=np.int64)
    body = np.full((nc, 2), -1, dtype=np.int64)
    data = np.zeros((nc, DATA_WIDTH))
    row = np.zeros(nc + 1, dtype=np.int64)
    for k, c in enumerate(constraints):
        kind[k] = KINDS.index(kind_of(c))
        body[k] = (c._i, c._j)
        data[k] = c.data()
        row[k + 1] = row[k] + c.n_eq
    involved = np.zeros(n_bodies, dtype=bool)
    involved[body[body >= 0]] = True
    return Constraints(kind, body, data, row, np.flatnonzero(involved).astype(np.int64),
                       np.flatnonzero(~involved).astype(np.int64))
