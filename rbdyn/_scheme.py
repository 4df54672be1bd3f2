"""The contract every time-stepping scheme fulfils.

A scheme is immutable configuration (its settings); the state it carries
from step to step is a tuple of arrays that starts with ``(x, R, v, W)``
(body-origin position, ``R_world_body``, body-origin velocity,
``omega_body``; leading body axis) and may add scheme data (accelerations,
multipliers). A compiled *advance kernel* takes that tuple through ``n``
steps in place::

    status, done = kernel(model, carry, params, t0, h, n, counters, offset)

``status`` is one of the ``STATUS_*`` codes, ``done`` the number of steps
completed, ``counters[offset + k]`` the solver iterations of step ``k``.

Each scheme class declares, as class attributes, the paper and the method's
label in it, its order, whether it is implicit, what it conserves and
whether it handles constraints, so that tests and book pages can loop over
:func:`rbdyn.schemes`. These declarations must equal the book's literature
table (:func:`rbdyn.verify.literature`), which the tests check; expectations
are read from the table, never from the declarations.
"""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar

import numpy as np

from . import _loads
from ._errors import InputError, short_repr
from ._jit import python_variant

STATUS_OK = 0
STATUS_NONFINITE = 1
STATUS_NEWTON = 2
STATUS_SINGULAR = 3
STATUS_CONSTRAINT = 4

STATUS_TEXT = {
    STATUS_NONFINITE: "the state became non-finite (nan or inf); reduce the step size",
    STATUS_NEWTON: "the Newton iteration did not converge; reduce the step size or relax the tolerance",
    STATUS_SINGULAR: (
        "the constraint system is singular (redundant constraints, or a rod whose ends meet); "
        "check the constraints or reduce the step size"
    ),
    STATUS_CONSTRAINT: (
        "the constraint iteration did not converge: the constraints cannot be met at the end of this step "
        "(unsatisfiable, or the step is too large for the motion); reduce the step size or raise constraint_max_iter"
    ),
}

_REGISTRY: dict[str, type] = {}


def _isfinite(value) -> bool:
    """math.isfinite that answers False, not OverflowError, for an integer beyond the float range."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


@dataclasses.dataclass(frozen=True)
class Scheme:
    """Base class of the time-stepping schemes (settings only, no state).

    Class attributes
    ----------------
    name : str
        Name used by :func:`rbdyn.simulate`, scenario files and the CLI.
    description : str
        One line for ``rbdyn list``.
    reference : str
        The paper that defines the method.
    label : str
        The method's label in that paper.
    order : int
        Global order of accuracy.
    implicit : bool
        Whether a step solves nonlinear equations.
    conserves : frozenset of str
        Subset of ``{"linear momentum", "angular momentum", "energy",
        "quaternion norm", "orthonormality"}`` preserved exactly (to
        round-off) in the absence of external loads.
    energy : str
        Long-time behaviour of the energy of a conservative motion:
        ``"increases"``, ``"decreases"``, ``"bounded"`` or ``"not conserved"``.
    symmetric : bool
        Whether a step of ``-h`` undoes a step of ``h`` (time reversibility).
    supports_constraints : bool
        Whether bilateral constraints are handled.
    constrained_order : int or None
        Global order of accuracy with constraints whose reactions turn the
        bodies (None when constraints are not handled).
    """

    name: ClassVar[str]
    description: ClassVar[str]
    reference: ClassVar[str]
    label: ClassVar[str]
    order: ClassVar[int]
    implicit: ClassVar[bool]
    conserves: ClassVar[frozenset]
    energy: ClassVar[str]
    symmetric: ClassVar[bool]
    supports_constraints: ClassVar[bool] = False
    constrained_order: ClassVar[int | None] = None
    kernel: ClassVar[object]

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "name" in cls.__dict__:
            _REGISTRY[cls.name] = cls

    # -- settings ----------------------------------------------------------
    def params(self) -> tuple:
        """Settings as a tuple of floats for the kernel."""
        return (0.0,)

    # Iteration limits beyond this are typos: they would only turn a failure into a hang (and a
    # count of 2**63 overflows the kernels' int64).
    MAX_ITERATIONS: ClassVar[int] = 10**6

    def _check_positive(self, fld: str, integer: bool = False):
        value = getattr(self, fld)
        bad = isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating))
        if not bad:
            try:
                bad = not math.isfinite(float(value)) or value <= 0 or (integer and int(value) != value)
            except OverflowError:  # an integer beyond the float range
                bad = True
        if integer and not bad and value > self.MAX_ITERATIONS:
            raise InputError(f"scheme.{self.name}.{fld}", f"must be a positive integer at most {self.MAX_ITERATIONS}, "
                                                          f"got {value!r}")
        if bad:
            kind = "a positive integer" if integer else "a positive finite number"
            raise InputError(f"scheme.{self.name}.{fld}", f"must be {kind}, got {short_repr(value)}")

    # -- stepping ----------------------------------------------------------
    def init(self, system, state):
        """Carried data at t = 0 from the state ``(x, R, v, W)`` (copied)."""
        return tuple(np.array(a, dtype=float, copy=True) for a in state)

    def advance(self, system, carry, t0, h, n, counters, offset):
        """Take ``n`` steps of size ``h`` from time ``t0``; see the module docs."""
        kernel = type(self).kernel
        if system.callbacks:
            kernel = _python_kernel(kernel, system)
        return kernel(system.packed, carry, self.params(), t0, h, n, counters, offset)


def _python_kernel(kernel, system):
    """The kernel's source run as Python, with loads that include callbacks."""
    cache = system.__dict__.setdefault("_python_kernels", {})
    if kernel not in cache:
        cache[kernel] = python_variant(kernel, "_eval_loads", _callback_loads(system))
    return cache[kernel]


def _callback_loads(system):
    """Built-in loads plus the system's Python callbacks, same signature."""
    compiled = _loads._eval_loads
    entries = [(system.index[cb.body], cb.fn) for cb in system.callbacks]
    com = system.packed[4]

    def eval_loads(model, t, x, R, v, W, F, T):
        compiled(model, t, x, R, v, W, F, T)
        for i, fn in entries:
            c = R[i] @ com[i]
            x_c = x[i] + c
            v_c = v[i] + np.cross(R[i] @ W[i], c)
            try:
                f, tq = fn(float(t), x_c, R[i].copy(), v_c, W[i].copy())
                f = np.asarray(f, dtype=float).reshape(3)
                tq = np.asarray(tq, dtype=float).reshape(3)
            except Exception as exc:  # a user's bug: say whose and where
                raise InputError(
                    f"load.{system.body_names[i]}.fn",
                    f"the callback failed at t = {t!r}: {type(exc).__name__}: {exc} "
                    "(it must return (force_world, torque_world), two 3-vectors)",
                ) from exc
            F[i] += f
            T[i] += tq + np.cross(c, f)

    return eval_loads


def schemes() -> dict[str, type]:
    """All schemes by name, in registration order."""
    return dict(_REGISTRY)


def get_scheme(scheme, **settings) -> Scheme:
    """A :class:`Scheme` instance from an instance or a name plus settings."""
    if isinstance(scheme, Scheme):
        if settings:
            scheme = dataclasses.replace(scheme, **settings)
        return scheme
    if not isinstance(scheme, str) or scheme not in _REGISTRY:
        raise InputError("scheme", f"unknown scheme {scheme!r}; allowed: {', '.join(_REGISTRY)}")
    cls = _REGISTRY[scheme]
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(settings) - known)
    if unknown:
        allowed = ", ".join(sorted(known)) or "none"
        raise InputError(f"scheme.{scheme}", f"unknown setting(s) {unknown}; allowed: {allowed}")
    return cls(**settings)
