"""The contract every time-stepping scheme fulfils.

A scheme is immutable configuration (its settings); a step is a function from
state to state (the idea of diffrax). A scheme supplies

* ``init(system, state)``: the carried state at t = 0, a named tuple whose
  first fields are ``x, R, v, W`` (body-origin position, ``R_world_body``,
  body-origin velocity, ``omega_body``; leading body axis), followed by the
  scheme's own data (accelerations, multipliers);
* ``params()``: its settings as a named tuple of numbers;
* ``kernel()``: the compiled function (in :mod:`rbdyn.kernels`, imported on first use) that
  takes steps ``k0 .. k1 - 1`` in place, step ``k`` from ``t0 + k h`` to ``t0 + (k + 1) h``::

      status, k = kernel(model, functions, state, params, t0, h, k0, k1, out, monitor)

  with ``model`` the system's arrays (:attr:`rbdyn.System.kernel_model`), ``functions`` the
  compiled functions it calls (:class:`rbdyn.model.arrays.Functions`: the compiled loads, their
  potentials, the run's metrics; apart from the arrays, which numba then types in C), ``state`` and
  ``params`` the scheme's records, ``out`` and ``monitor`` the run's
  (:class:`rbdyn.driver.records.Output`, :class:`rbdyn.driver.records.Monitor`), every
  record as a plain tuple (:func:`rbdyn._compile.plain`); ``status`` is one of the
  ``STATUS_*`` codes of :mod:`rbdyn.driver.status` and ``k`` the first step not completed
  (``k1`` on success). The kernel binds the records' fields once, allocates its scratch once
  per call, calls :func:`rbdyn.driver.report.start` first when ``k0 == 0`` and after every
  step :func:`rbdyn.driver.report.count_iterations`, :func:`rbdyn.driver.report.store_step`
  when the monitor is active and :func:`rbdyn.driver.report.store` when a row is due (then
  :func:`rbdyn.driver.report.fold_stored` or :func:`rbdyn.driver.report.derive_stored` when
  they ask), and returns what :func:`rbdyn.driver.report.finish` makes of its ``(status, k)``
  (a kernel is its steps followed by that call).

The loop over the steps lives in the kernel, not in a driver that calls a step function: a
call per step of a small body would cost more than its arithmetic (see :mod:`rbdyn._compile`).

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

from .._errors import InputError, short_repr

_REGISTRY: dict[str, type] = {}


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
    constrained_energy : str or None
        The same with bilateral constraints whose reactions turn the bodies:
        ``"increases"``, ``"decreases"``, ``"bounded"`` or ``"either sign"`` (a
        drift whose sign depends on the motion); None when constraints are not
        handled.
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
    constrained_energy: ClassVar[str | None] = None

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "name" in cls.__dict__:
            _REGISTRY[cls.name] = cls

    # -- settings ----------------------------------------------------------
    def params(self) -> tuple:
        """Settings as a named tuple of numbers for the step."""
        raise NotImplementedError

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
    @staticmethod
    def compiled():
        """The module of the scheme's compiled step (:mod:`rbdyn.kernels`), imported on first use:
        listing or configuring schemes needs no compiler."""
        raise NotImplementedError

    @classmethod
    def kernel(cls):
        """The compiled step (see the module docs for its contract)."""
        raise NotImplementedError

    def init(self, system, state):
        """The carried state at t = 0 from the arrays ``(x, R, v, W)`` (copied)."""
        raise NotImplementedError

    def compiled_kernel(self, system):
        """The kernel, or for a system with Python callbacks its source run as Python with
        loads (and reported potentials) that include them."""
        kernel = self.kernel()
        if not system.callbacks:
            return kernel
        from ..kernels.callbacks import python_kernel

        cache = system.__dict__.setdefault("_python_kernels", {})
        if kernel not in cache:
            cache[kernel] = python_kernel(kernel, system)
        return cache[kernel]

    def advance(self, system, state, t0, h, n, counters=None, offset=0):
        """Take ``n`` steps of size ``h`` from time ``t0`` on ``state`` in place.

        A step at a time, for inspecting a scheme (:func:`rbdyn.simulate` is the
        way to run). Returns ``(status, done)``; the iterations of step ``k``
        go to ``counters[offset + k]`` when ``counters`` is given.
        """
        from .._compile import plain, quiet
        from ..driver import records

        out = records.output(system.n_bodies, system.n_constraint_rows, n, 1)
        mon = records.monitor(system.n_bodies, system.n_constraint_rows, False)
        with quiet():
            status, done = self.compiled_kernel(system)(system.kernel_model, plain(records.functions(system)),
                                                        plain(state), plain(self.params()),
                                                        float(t0), float(h), 0, n, plain(out), plain(mon))
        if counters is not None:
            counters[offset:offset + done] = out.iterations[:done]
        return status, done


def schemes() -> dict[str, type]:
    """All schemes by name, in registration order."""
    return dict(_REGISTRY)


def get_scheme(scheme, **settings) -> Scheme:
    """A :class:`Scheme` instance from an instance or a name plus settings."""
    if isinstance(scheme, Scheme):
        cls = type(scheme)
    elif isinstance(scheme, str) and scheme in _REGISTRY:
        cls = _REGISTRY[scheme]
    else:
        raise InputError("scheme", f"unknown scheme {short_repr(scheme)}; allowed: {', '.join(_REGISTRY)}")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(settings) - known)
    if unknown:
        allowed = ", ".join(sorted(known)) or "none"
        raise InputError(f"scheme.{cls.name}", f"unknown setting(s) {unknown}; allowed: {allowed}")
    return dataclasses.replace(scheme, **settings) if isinstance(scheme, Scheme) else cls(**settings)
