r"""The constraints of a system as arrays, and the one dispatch from the schemes to the kinds.

Every constraint kind supplies four compiled functions (:mod:`.base`); this module packs a
system's constraints into the arrays a kernel reads (:class:`Constraints`), calls the kinds'
functions for every constraint, and assembles what the schemes need: every residual, the dense
gradient over the constrained bodies, and (for generalized-α) one constraint's blocks. Nothing
here knows a kind.

:func:`residuals_into` and :func:`blocks_into` are copied into the schemes' steps
(:func:`rbdyn._compile.njit_inline`): they run at every Newton iteration and, called, would pay a
reference count for every array they take (generalized-α's step is about 8 % slower on the heavy
top with :func:`blocks_into` called). :func:`gradient_into` is called (:func:`rbdyn._compile.njit`):
copied into the two places of the RIG step that use it, it made numba's inliner copy its loops and
the dispatch to every kind twice (the RIG kernel compiled in 267 s that way, in 214 s this way, side
by side on one machine), for no measurable gain in a step. Their scratch (:class:`Scratch`) is made
once per kernel call by the caller.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._compile import njit, njit_inline
from . import KINDS
from ..so3 import mat3, vec3
from .base import DATA_WIDTH, MAX_ROWS, SCRATCH_VECTORS

__all__ = ["Constraints", "pack_constraints", "Scratch", "scratch", "pose", "residuals_into",
           "gradient_into", "blocks_into", "kind_residual", "kind_gradient", "kind_stiffness",
           "kind_velocity_product"]


class Constraints(NamedTuple):
    """The constraints of a system as the compiled steps read them.

    ``kind`` (nc,) the kind's number in :data:`rbdyn.constraints.KINDS`; ``body`` (nc, 2) bodies
    *a*, *b* (-1: the world); ``data`` (nc, DATA_WIDTH) each constraint's row; ``row`` (nc + 1,)
    the first residual row of each; ``c_bodies`` / ``u_bodies`` the bodies in at least one
    constraint / in none.
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
        kind[k] = KINDS.index(type(c))
        body[k] = c.bodies
        data[k] = c.data()
        row[k + 1] = row[k] + c.n_eq
    involved = np.zeros(n_bodies, dtype=bool)
    involved[body[body >= 0]] = True
    return Constraints(kind=kind, body=body, data=data, row=row,
                       c_bodies=np.flatnonzero(involved).astype(np.int64),
                       u_bodies=np.flatnonzero(~involved).astype(np.int64))


class Scratch(NamedTuple):
    """The scratch of the assembly: the kinds' vectors, one constraint's gradient rows."""

    s: np.ndarray
    Ba: np.ndarray
    Bb: np.ndarray


@njit_inline
def scratch():
    """A :class:`Scratch` as the plain tuple the compiled functions take (its fields in their
    declared order: ``s``, ``Ba``, ``Bb``); callable from Python too."""
    return np.empty((SCRATCH_VECTORS, 3)), np.empty((MAX_ROWS, 6)), np.empty((MAX_ROWS, 6))


# The dispatch to the kinds' functions is a chain of ``kind == n`` tests over fixed slots: each
# slot is a direct call of the kind's (inlined) function. The slots beyond the registry hold a
# compiled function that does nothing.
MAX_KINDS = 8
if len(KINDS) > MAX_KINDS:  # pragma: no cover - a registry of more kinds raises MAX_KINDS
    raise RuntimeError(f"{len(KINDS)} constraint kinds: raise MAX_KINDS ({MAX_KINDS}) in {__name__}")


@njit
def _none(*args):  # never called: the slots beyond the registry
    pass


def _slots(function):
    fns = [getattr(k.functions, function) for k in KINDS]
    return tuple(fns) + (_none,) * (MAX_KINDS - len(fns))


_R0, _R1, _R2, _R3, _R4, _R5, _R6, _R7 = _slots("residual")
_G0, _G1, _G2, _G3, _G4, _G5, _G6, _G7 = _slots("gradient")
_S0, _S1, _S2, _S3, _S4, _S5, _S6, _S7 = _slots("stiffness")
_V0, _V1, _V2, _V3, _V4, _V5, _V6, _V7 = _slots("velocity_product")


@njit_inline
def kind_residual(kind, data, k, xa, Ra, xb, Rb, g, floor, r0, s):
    """The residual function of kind number ``kind`` (see :mod:`rbdyn.constraints.base`)."""
    if kind == 0:
        _R0(data, k, xa, Ra, xb, Rb, g, floor, r0, s)
    elif kind == 1:
        _R1(data, k, xa, Ra, xb, Rb, g, floor, r0, s)
    elif kind == 2:
        _R2(data, k, xa, Ra, xb, Rb, g, floor, r0, s)
    elif kind == 3:
        _R3(data, k, xa, Ra, xb, Rb, g, floor, r0, s)
    elif kind == 4:
        _R4(data, k, xa, Ra, xb, Rb, g, floor, r0, s)
    elif kind == 5:
        _R5(data, k, xa, Ra, xb, Rb, g, floor, r0, s)
    elif kind == 6:
        _R6(data, k, xa, Ra, xb, Rb, g, floor, r0, s)
    elif kind == 7:
        _R7(data, k, xa, Ra, xb, Rb, g, floor, r0, s)


@njit_inline
def kind_gradient(kind, data, k, xa, Ra, xb, Rb, Ba, Bb, s):
    """The gradient function of kind number ``kind``."""
    if kind == 0:
        _G0(data, k, xa, Ra, xb, Rb, Ba, Bb, s)
    elif kind == 1:
        _G1(data, k, xa, Ra, xb, Rb, Ba, Bb, s)
    elif kind == 2:
        _G2(data, k, xa, Ra, xb, Rb, Ba, Bb, s)
    elif kind == 3:
        _G3(data, k, xa, Ra, xb, Rb, Ba, Bb, s)
    elif kind == 4:
        _G4(data, k, xa, Ra, xb, Rb, Ba, Bb, s)
    elif kind == 5:
        _G5(data, k, xa, Ra, xb, Rb, Ba, Bb, s)
    elif kind == 6:
        _G6(data, k, xa, Ra, xb, Rb, Ba, Bb, s)
    elif kind == 7:
        _G7(data, k, xa, Ra, xb, Rb, Ba, Bb, s)


@njit_inline
def kind_stiffness(kind, data, k, xa, Ra, xb, Rb, lam, r0, K, s):
    """The stiffness function of kind number ``kind``."""
    if kind == 0:
        _S0(data, k, xa, Ra, xb, Rb, lam, r0, K, s)
    elif kind == 1:
        _S1(data, k, xa, Ra, xb, Rb, lam, r0, K, s)
    elif kind == 2:
        _S2(data, k, xa, Ra, xb, Rb, lam, r0, K, s)
    elif kind == 3:
        _S3(data, k, xa, Ra, xb, Rb, lam, r0, K, s)
    elif kind == 4:
        _S4(data, k, xa, Ra, xb, Rb, lam, r0, K, s)
    elif kind == 5:
        _S5(data, k, xa, Ra, xb, Rb, lam, r0, K, s)
    elif kind == 6:
        _S6(data, k, xa, Ra, xb, Rb, lam, r0, K, s)
    elif kind == 7:
        _S7(data, k, xa, Ra, xb, Rb, lam, r0, K, s)


@njit_inline
def kind_velocity_product(kind, data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s):
    """The velocity-product function of kind number ``kind``."""
    if kind == 0:
        _V0(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s)
    elif kind == 1:
        _V1(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s)
    elif kind == 2:
        _V2(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s)
    elif kind == 3:
        _V3(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s)
    elif kind == 4:
        _V4(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s)
    elif kind == 5:
        _V5(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s)
    elif kind == 6:
        _V6(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s)
    elif kind == 7:
        _V7(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s)


@njit_inline
def pose(x, R, i):
    """Body ``i``'s origin and rotation as values (the world, ``i = -1``: zero and I)."""
    if i >= 0:
        return vec3(x, i), mat3(R, i)
    return (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


@njit_inline
def residuals_into(kind, body, data, row, x, R, g, floor, s):
    """Every residual into ``g`` and, into ``floor``, the smallest error float64 can resolve for it.

    ``kind``, ``body``, ``data``, ``row`` are the first fields of :class:`Constraints`, ``x``,
    ``R`` the bodies' origins and rotations, ``s`` the kinds' scratch (:class:`Scratch`).
    """
    for k in range(kind.shape[0]):
        xa, Ra = pose(x, R, body[k, 0])
        xb, Rb = pose(x, R, body[k, 1])
        kind_residual(kind[k], data, k, xa, Ra, xb, Rb, g, floor, row[k], s)


@njit
def gradient_into(kind, body, data, row, x, R, pivoted, local, B, s, Ba, Bb):
    """The gradient of every residual over the constrained bodies, dense: ``B`` (m, 6 nc), the
    columns ``6 local[i] .. 6 local[i] + 5`` those of body ``i``'s world increments
    ``(dx, dtheta)`` (the translation columns of a pivoted body zero). ``s``, ``Ba``, ``Bb``
    are the :class:`Scratch`."""
    for r in range(B.shape[0]):
        for c in range(B.shape[1]):
            B[r, c] = 0.0
    for k in range(kind.shape[0]):
        xa, Ra = pose(x, R, body[k, 0])
        xb, Rb = pose(x, R, body[k, 1])
        kind_gradient(kind[k], data, k, xa, Ra, xb, Rb, Ba, Bb, s)
        r0, n = row[k], row[k + 1] - row[k]
        for side in range(2):
            i = body[k, side]
            if i < 0:
                continue
            c0 = 6 * local[i]
            first = 3 if pivoted[i] != 0 else 0
            for r in range(n):
                for c in range(first, 6):
                    B[r0 + r, c0 + c] += Ba[r, c] if side == 0 else Bb[r, c]


@njit_inline
def blocks_into(kind, body, data, k, x, R, g, floor, gr, lam, r0, K, s, Ba, Bb):
    """Constraint ``k``'s residual (into ``g`` and ``floor`` from row ``gr``), gradient (into
    ``Ba``, ``Bb``) and stiffness (added to ``K``, multipliers ``lam`` from row ``r0``):
    generalized-α's assembly, one constraint at a time."""
    xa, Ra = pose(x, R, body[k, 0])
    xb, Rb = pose(x, R, body[k, 1])
    kind_residual(kind[k], data, k, xa, Ra, xb, Rb, g, floor, gr, s)
    kind_gradient(kind[k], data, k, xa, Ra, xb, Rb, Ba, Bb, s)
    kind_stiffness(kind[k], data, k, xa, Ra, xb, Rb, lam, r0, K, s)
