"""What every constraint kind supplies, and the Python side they share.

A kind is one module (``spherical.py``, ``rod.py``, ...) that defines

* four compiled functions with the signatures below, which read the constraint's row of
  numbers (:meth:`Constraint.data`):

  ``residual(data, k, xa, Ra, xb, Rb, g, floor, r0, s)``
      the position-level residual rows ``g[r0:r0+n]`` and, in ``floor``, the smallest
      error float64 can resolve for each (16 ulp of the coordinates involved);
  ``gradient(data, k, xa, Ra, xb, Rb, Ba, Bb, s)``
      the rows (first ``n`` rows of the :data:`MAX_ROWS` x 6 ``Ba``, ``Bb``) of the gradient
      with respect to each body's world increments ``(dx, dtheta)``,
      ``Lambda <- exp[dtheta] Lambda``;
  ``stiffness(data, k, xa, Ra, xb, Rb, lam, r0, K, s)``
      ``K += d(B^T lam)/d(dx_a, dtheta_a, dx_b, dtheta_b)`` (12 x 12), the geometric stiffness
      of the generalized reaction of the multipliers ``lam[r0:r0+n]``;
  ``velocity_product(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s)``
      ``gam[r0:r0+n] += g'' - B nu'``, the part of the constraint's second derivative without
      the accelerations (``w`` the world angular velocity);

  with ``k`` the constraint's row of ``data``, ``(xa, Ra)``, ``(xb, Rb)`` the body origins'
  positions and rotations (the world: zero and the identity), ``s`` a (:data:`SCRATCH_VECTORS`, 3)
  scratch array;
* a frozen dataclass, subclass of :class:`Constraint`: the user's object, its validation,
  its defaults taken from the initial configuration, its scenario keys (:attr:`Constraint.keys`),
  its scenario ``type`` (:attr:`Constraint.kind`), its number of rows (:attr:`Constraint.n_eq`),
  and its four functions (``functions = compiled_functions(_define)``, ``_define`` returning
  them, compiled when first needed).

The registry (``rbdyn/constraints/__init__.py``) lists the classes.

The schemes assemble every kind from these four functions through one dispatch
(:mod:`rbdyn.constraints.assembly`, a chain over the registry's slots); they know nothing else
about a kind. The functions are short, straight-line code over the data row and the caller's
scratch (:mod:`.geometry`), copied into the assembly (:func:`rbdyn._compile.njit_inline`). A kind must fit the limits below (:data:`DATA_WIDTH`,
:data:`MAX_ROWS`, :data:`SCRATCH_VECTORS`), which size the schemes' scratch; a test checks that
every registered kind does.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, ClassVar, NamedTuple

import numpy as np

from .._errors import InputError
from .._validate import body_name, finite_array, store

__all__ = ["Constraint", "AxisPair", "KindFunctions", "perpendicular_basis", "compiled_functions", "DATA_WIDTH", "MAX_ROWS", "SCRATCH_VECTORS"]

# The limits of a kind. The packed data and the scratch of every scheme are sized by these
# names; a kind that needs more raises the limit here and nowhere else.

#: Numbers per constraint in the packed data: the most a kind's :meth:`Constraint.data` may use.
DATA_WIDTH = 24
#: Residual rows a kind may have at most (its gradient blocks are ``MAX_ROWS`` x 6 per body).
MAX_ROWS = 6
#: Vectors of 3 in the scratch array ``s`` the compiled functions may use (``s[0]`` ... ``s[7]``).
SCRATCH_VECTORS = 8

class KindFunctions(NamedTuple):
    """The four compiled functions of a kind (see the module docs for their signatures)."""

    residual: Callable
    gradient: Callable
    stiffness: Callable
    velocity_product: Callable


class compiled_functions:  # noqa: N801 (used like a function, in a class body)
    """A kind's :class:`KindFunctions`: the four functions that ``define()`` returns, compiled by
    numba (to be copied into the assembly that calls them) when they are first needed, so that
    importing and listing the kinds needs no compiler. A class attribute of every kind."""

    def __init__(self, define):
        self._define = define
        self._functions = None

    def __get__(self, obj, owner=None) -> KindFunctions:
        if self._functions is None:
            from .._compile import njit_inline

            residual, gradient, stiffness, velocity_product = self._define()
            self._functions = KindFunctions(residual=njit_inline(residual), gradient=njit_inline(gradient),
                                            stiffness=njit_inline(stiffness),
                                            velocity_product=njit_inline(velocity_product))
        return self._functions


def finite_vector(value, fld: str, shape=(3,)) -> np.ndarray:
    return finite_array(value, shape, fld)


def unit_vector(value, fld: str) -> np.ndarray:
    arr = finite_vector(value, fld)
    big = np.max(np.abs(arr))
    n = np.linalg.norm(arr / big) * big if big > 0 else 0.0
    if not n > 0 or not np.isfinite(n):
        raise InputError(fld, f"must be a non-zero direction of moderate size, got {arr.tolist()}")
    return arr / n


def perpendicular_basis(axis):
    """Two unit vectors perpendicular to the unit ``axis`` and to each other."""
    k = int(np.argmin(np.abs(axis)))
    e = np.zeros(3)
    e[k] = 1.0
    b1 = np.cross(axis, e)
    b1 /= np.linalg.norm(b1)
    return b1, np.cross(axis, b1)


@dataclasses.dataclass(frozen=True, eq=False)
class Constraint:
    """Base of the constraint kinds: a point of ``body`` and a point of ``other`` or of the world.

    A kind (a subclass, with its module's compiled functions) stays within three limits, which
    size the packed data and the schemes' scratch: at most :data:`MAX_ROWS` (6) residual rows
    (``n_eq``), at most :data:`DATA_WIDTH` (24) numbers in its :meth:`data` row, and at most
    :data:`SCRATCH_VECTORS` (8) vectors of 3 of the scratch ``s``. A kind that needs more raises
    the limit in ``rbdyn/constraints/base.py``; ``tests/test_constraint_kinds.py`` checks every
    registered kind against them. :meth:`random_keys` gives the tests a valid random instance.

    Parameters
    ----------
    body : str
        Body *a*.
    point_body : array_like, (3,)
        Its point, in *a*'s body frame from its origin (default: the origin).
    other : str, optional
        Body *b*; the world when omitted.
    other_point : array_like, (3,), optional
        The point of *b* (its body frame, from its origin) or of the world; by default where
        *a*'s point is at t = 0.
    """

    body: str
    point_body: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(3))
    other: str | None = None
    other_point: np.ndarray | None = None
    #: The numbers of bodies *a* and *b* (-1: the world) in the system that resolved this
    #: constraint (a :class:`rbdyn.System` keeps resolved copies of the constraints it is given).
    bodies: tuple = dataclasses.field(default=(-1, -1), init=False, repr=False)

    kind: ClassVar[str]
    n_eq: ClassVar[int]
    functions: ClassVar[KindFunctions]
    #: Scenario keys of the kind besides ``type`` (a ``[[constraint]]`` table).
    keys: ClassVar[frozenset] = frozenset({"body", "point_body", "other", "other_point"})
    #: The key an error names when the initial state violates the constraint (what to change).
    placement_key: ClassVar[str] = "other_point"

    def __post_init__(self):
        where = f"constraint.{self.kind}"
        body_name(self.body, f"{where}.body")
        if self.other is not None:
            body_name(self.other, f"{where}.other")
        store(self, point_body=finite_vector(self.point_body, f"{where}.point_body"))
        if self.other_point is not None:
            store(self, other_point=finite_vector(self.other_point, f"{where}.other_point"))

    @classmethod
    def random_keys(cls, rng, to_world: bool) -> dict:
        """Keyword arguments, besides ``body``, ``point_body`` and ``other``, that make a valid
        constraint of this kind at any initial pose, drawn from the numpy Generator ``rng``
        (the tests build every registered kind with them). None for a kind whose defaults
        (the points and axes held where they are at t = 0) are enough."""
        return {}

    # -- resolving against a system --------------------------------------------------------------
    def _resolve(self, index: dict, where: str, origins, R0) -> None:
        """Bind the body names to indices and fill the defaults from the initial configuration."""
        self._bind(index, where)
        i, j = self.bodies
        if self.other_point is None:
            # hold the points where they are at t = 0
            pa = origins[i] + R0[i] @ self.point_body
            store(self, other_point=pa if j < 0 else R0[j].T @ (pa - origins[j]))
        self._resolve_kind(where, origins, R0)

    def _bind(self, index: dict, where: str) -> None:
        """The bodies' names to their numbers (``-1``: the world), checked."""
        if self.body not in index:
            raise InputError(f"{where}.body", f"unknown body {self.body!r}; bodies are {sorted(index)}")
        if self.other is not None and self.other not in index:
            raise InputError(f"{where}.other", f"unknown body {self.other!r}; bodies are {sorted(index)}")
        if self.other == self.body:
            raise InputError(f"{where}.other", "must differ from body")
        store(self, bodies=(index[self.body], index[self.other] if self.other is not None else -1))

    def _resolve_kind(self, where, origins, R0) -> None:
        """Kind-specific defaults (a rod's length, a hinge's axes)."""

    def frames(self, x, R):
        """``(xa, Ra, xb, Rb)`` of the two sides (the world: zero and the identity)."""
        i, j = self.bodies
        xb = np.zeros(3) if j < 0 else np.ascontiguousarray(x[j], dtype=float)
        Rb = np.eye(3) if j < 0 else np.ascontiguousarray(R[j], dtype=float)
        return np.ascontiguousarray(x[i], dtype=float), np.ascontiguousarray(R[i], dtype=float), xb, Rb

    def _poses(self, x, R):
        """:meth:`frames` as the values the compiled functions take (tuples; see :mod:`.geometry`)."""
        xa, Ra, xb, Rb = self.frames(x, R)
        return tuple(xa.tolist()), tuple(Ra.ravel().tolist()), tuple(xb.tolist()), tuple(Rb.ravel().tolist())

    def data(self) -> np.ndarray:
        """The row of numbers the compiled functions read (:data:`DATA_WIDTH` wide)."""
        row = np.zeros(DATA_WIDTH)
        row[0:3] = self.point_body
        row[3:6] = self.other_point
        return row

    # -- evaluation (Python side: checks, tests, the book) ----------------------------------------
    def residual(self, x, R) -> np.ndarray:
        """Position-level residual at body origins ``x`` and rotations ``R`` (leading body axis)."""
        g = np.zeros(self.n_eq)
        self.functions.residual(self.data()[None, :], 0, *self._poses(x, R), g, np.zeros(self.n_eq), 0,
                               np.zeros((SCRATCH_VECTORS, 3)))
        return g

    def gradient(self, x, R):
        """``(Ba, Bb)``: the residual's gradient rows with respect to each body's world
        increments ``(dx, dtheta)``, shape (n, 6) each."""
        Ba, Bb = np.zeros((MAX_ROWS, 6)), np.zeros((MAX_ROWS, 6))
        self.functions.gradient(self.data()[None, :], 0, *self._poses(x, R), Ba, Bb, np.zeros((SCRATCH_VECTORS, 3)))
        return Ba[: self.n_eq].copy(), Bb[: self.n_eq].copy()

    def stiffness(self, x, R, lam) -> np.ndarray:
        """``d(B^T lam)/d(dx_a, dtheta_a, dx_b, dtheta_b)``, shape (12, 12)."""
        K = np.zeros((12, 12))
        lam = np.ascontiguousarray(lam, dtype=float)
        self.functions.stiffness(self.data()[None, :], 0, *self._poses(x, R), lam, 0, K, np.zeros((SCRATCH_VECTORS, 3)))
        return K

    def velocity_product(self, x, R, v, w) -> np.ndarray:
        """``g'' - B nu'``: the second derivative of the residual at zero accelerations, for
        origin velocities ``v`` and world angular velocities ``w`` (leading body axis)."""
        xa, Ra, xb, Rb = self._poses(x, R)
        pick = lambda a, i: np.zeros(3) if i < 0 else np.ascontiguousarray(a[i], dtype=float)  # noqa: E731
        gam = np.zeros(self.n_eq)
        self.functions.velocity_product(self.data()[None, :], 0, xa, Ra, pick(v, self.bodies[0]),
                                        pick(w, self.bodies[0]), xb, Rb, pick(v, self.bodies[1]), pick(w, self.bodies[1]), gam, 0, np.zeros((SCRATCH_VECTORS, 3)))
        return gam

    def jacobian(self, x, R) -> np.ndarray:
        """Jacobian of the residual rate w.r.t. each body's ``(v, omega_body)``, shape (n, 6N)
        (the world gradient with its rotation columns taken to body axes: ``B_rot R``)."""
        Ba, Bb = self.gradient(x, R)
        H = np.zeros((self.n_eq, 6 * len(x)))
        for idx, B in zip(self.bodies, (Ba, Bb)):
            if idx < 0:
                continue
            H[:, 6 * idx: 6 * idx + 3] += B[:, :3]
            H[:, 6 * idx + 3: 6 * idx + 6] += B[:, 3:] @ R[idx]
        return H

    def size(self, x, R) -> float:
        """A length scale of the constraint at ``x, R`` (to judge its residual against)."""
        xa, Ra, xb, Rb = self.frames(x, R)
        return 1.0 + float(np.max(np.abs(np.concatenate([xa + Ra @ self.point_body, xb + Rb @ self.other_point]))))

    # -- scenario files -----------------------------------------------------------------------------
    @classmethod
    def from_entry(cls, entry: dict, fld: str, number, numbers, string):
        """The constraint of a ``[[constraint]]`` table (its keys already checked against :attr:`keys`)."""
        if "body" not in entry:
            raise InputError(f"{fld}.body", "is required")
        kw = {"body": string(entry["body"], f"{fld}.body")}
        if "other" in entry:
            kw["other"] = string(entry["other"], f"{fld}.other")
        for key in ("point_body", "other_point") + cls._vector_keys():
            if key in entry:
                kw[key] = numbers(entry[key], (3,), f"{fld}.{key}")
        for key in cls._number_keys():
            if key in entry:
                kw[key] = number(entry[key], f"{fld}.{key}")
        return cls(**kw)

    @classmethod
    def _vector_keys(cls) -> tuple:
        return ()

    @classmethod
    def _number_keys(cls) -> tuple:
        return ()


@dataclasses.dataclass(frozen=True, eq=False)
class AxisPair(Constraint):
    """Base of the kinds that also relate an axis of each body (revolute, prismatic, universal):
    ``axis_body`` of *a* and ``other_axis`` of *b*, both normalised, the latter by default where
    the kind's reference direction of *a* (:meth:`reference_axis`) points at t = 0.

    Parameters
    ----------
    axis_body : array_like, (3,)
        The axis in *a*'s body frame (default the body's z axis); normalised.
    other_axis : array_like, (3,), optional
        The axis in *b*'s body frame (or in the world); by default filled in at t = 0, and
        otherwise checked there: parallel to ``axis_body`` (:attr:`parallel`) or perpendicular.
    """

    axis_body: np.ndarray = dataclasses.field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    other_axis: np.ndarray | None = None

    keys: ClassVar[frozenset] = Constraint.keys | {"axis_body", "other_axis"}
    #: True: the two axes are parallel at t = 0; False: perpendicular.
    parallel: ClassVar[bool] = True

    def __post_init__(self):
        super().__post_init__()
        for key in ("axis_body", "other_axis"):
            value = getattr(self, key)
            if value is not None:
                store(self, **{key: unit_vector(value, f"constraint.{self.kind}.{key}")})

    @classmethod
    def random_keys(cls, rng, to_world):
        return {"axis_body": rng.normal(size=3)}  # other_axis: by default filled in at t = 0

    @classmethod
    def _vector_keys(cls):
        return ("axis_body", "other_axis")

    def reference_axis(self) -> np.ndarray:
        """The direction of *a* (its body frame) that ``other_axis`` is by default at t = 0."""
        return self.axis_body if self.parallel else perpendicular_basis(self.axis_body)[0]

    def _resolve_kind(self, where, origins, R0):
        xa, Ra, xb, Rb = self.frames(origins, R0)
        if self.other_axis is None:
            store(self, other_axis=Rb.T @ (Ra @ self.reference_axis()))
            return
        cosine = abs(float((Ra @ self.axis_body) @ (Rb @ self.other_axis)))
        if (abs(cosine - 1.0) if self.parallel else cosine) > 1e-6:
            relation = "parallel" if self.parallel else "perpendicular"
            raise InputError(f"{where}.other_axis", f"must be {relation} at t = 0 to axis_body (both in their "
                                                    "bodies' frames, the world's for the world)")
