"""The contract every time-stepping scheme fulfils.

A scheme is immutable configuration (its settings); a step is a function from
state to state (the idea of diffrax). A scheme supplies

* ``init(system, state)``: the carried state at t = 0, a named tuple whose
  first fields are ``x, R, v, W`` (body-origin position, ``R_world_body``,
  body-origin velocity, ``omega_body``; leading body axis), followed by the
  scheme's own data (accelerations, multipliers);
* ``params()``: its settings as a named tuple of numbers;
* ``work(system, state)``: the scratch arrays of a run, a named tuple made
  once per run, so that a step allocates nothing;
* ``kernel``: a compiled function that takes steps ``k0 .. k1 - 1`` in place,
  step ``k`` from ``t0 + k h`` to ``t0 + (k + 1) h``::

      status, k = kernel(model, state, work, params, t0, h, k0, k1, out, monitor)

  with ``model`` the system's :class:`rbdyn._data.Model`, ``status`` one of
  the ``STATUS_*`` codes and ``k`` the first step not completed (``k1`` on
  success). It calls :func:`rbdyn._driver.start` first when ``k0 == 0`` and
  after every step :func:`rbdyn._driver.count_iterations` and
  :func:`rbdyn._driver.report`, which count the iterations, record the rows
  into ``out`` and fold the reductions into ``monitor`` in compiled code.

The loop over the steps lives in the kernel, not in a driver that calls a
step function: numba counts references to every array a function binds from
a named tuple, at every call, so a per-step call would cost more than a small
body's step. The kernel binds once per call and inlines its per-body helpers.

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

from . import _data
from ._errors import InputError, short_repr
from ._jit import fast_call, fast_dispatch, python_variant, quiet

STATUS_OK = 0
STATUS_NONFINITE = 1
STATUS_NEWTON = 2
STATUS_SINGULAR = 3
STATUS_CONSTRAINT = 4
STATUS_REPORT = 5  # a recorded quantity (energy, momentum, residual) is not finite: see rbdyn._driver

STATUS_TEXT = {
    STATUS_NONFINITE: "the state became non-finite (nan or inf); reduce the step size",
    STATUS_NEWTON: "the Newton iteration did not converge; reduce the step size or relax the tolerance",
    STATUS_SINGULAR: (
        "the constraint system cannot be solved: no motion changes one of its rows (a rod whose ends meet, "
        "for example); check the constraints or reduce the step size"
    ),
    STATUS_CONSTRAINT: (
        "the constraints cannot be met at the end of this step (they contradict each other, or the step is too "
        "large for the motion); check the constraints, reduce the step size, or (RIG schemes) raise "
        "constraint_max_iter"
    ),
    STATUS_REPORT: (
        "the energy, momentum or constraint residual to be recorded is not finite (it overflowed although the "
        "state did not); reduce the step size, or give loads and inputs of moderate size"
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
    def init(self, system, state):
        """The carried state at t = 0 from the arrays ``(x, R, v, W)`` (copied)."""
        raise NotImplementedError

    def work(self, system, state):
        """The scratch arrays of one run (a named tuple)."""
        raise NotImplementedError

    def compiled_kernel(self, system):
        """The kernel, or for a system with Python callbacks its source run as Python with
        loads (and reported potentials) that include them."""
        kernel = type(self).kernel
        if not system.callbacks:
            return kernel
        cache = system.__dict__.setdefault("_python_kernels", {})
        if kernel not in cache:
            cache[kernel] = python_variant(kernel, {"body_loads_into": _callback_loads(system),
                                                    "eval_potentials": _callback_potentials(system),
                                                    "borrow": _identity})
        return cache[kernel]

    def advance(self, system, state, t0, h, n, counters=None, offset=0):
        """Take ``n`` steps of size ``h`` from time ``t0`` on ``state`` in place.

        A step at a time, for inspecting a scheme (:func:`rbdyn.simulate` is the
        way to run). Returns ``(status, done)``; the iterations of step ``k``
        go to ``counters[offset + k]`` when ``counters`` is given.
        """
        from ._simulate import _monitor, _output  # (simulate imports this module)

        out = _output(system, n, 1)
        with quiet():
            status, done = fast_call(self.compiled_kernel(system), system.model, state, self.work(system, state),
                                     self.params(), float(t0), float(h), 0, n, out, _monitor(system, False, ()))
        if counters is not None:
            counters[offset:offset + done] = out.iterations[:done]
        return status, done


def _identity(obj):
    """``borrow`` for a kernel run as Python (there are no reference counts to spare)."""
    return obj


def _callback_loads(system):
    """The compiled loads of a body plus its Python callbacks; the signature of
    :func:`rbdyn._data.body_loads_into`."""
    compiled = fast_dispatch(_data.body_loads_into)  # called at every step, from Python
    by_body = {}
    for cb in system.callbacks:
        by_body.setdefault(system.index[cb.body], []).append(cb.fn)
    com = system.model.bodies.com_body

    def body_loads_into(model, i, t, x, R, v, W, f, tau):
        compiled(model, i, t, x, R, v, W, f, tau)
        for fn in by_body.get(i, ()):
            c = R @ com[i]
            x_c = x + c
            v_c = v + np.cross(R @ W, c)
            try:
                fc, tq = fn(float(t), x_c, R.copy(), v_c, W.copy())
                fc = np.asarray(fc, dtype=float).reshape(3)
                tq = np.asarray(tq, dtype=float).reshape(3)
            except Exception as exc:  # a user's bug: say whose and where
                raise InputError(
                    f"load.{system.body_names[i]}.fn",
                    f"the callback failed at t = {t!r}: {type(exc).__name__}: {exc} "
                    "(it must return (force_world, torque_world), two 3-vectors)",
                ) from exc
            f += fc
            tau += tq + np.cross(c, fc)

    return body_loads_into


def _callback_potentials(system):
    """The compiled loads' potentials plus those the Python callbacks declare; the
    signature of :func:`rbdyn._data.eval_potentials`."""
    compiled = fast_dispatch(_data.eval_potentials)
    entries = [(system.index[cb.body], cb.potential) for cb in system.callbacks if cb.potential]

    def eval_potentials(model, t, x_com, R):
        total = compiled(model, t, x_com, R)
        for i, pot in entries:
            total += float(pot(float(t), x_com[i].copy(), R[i].copy()))
        return total

    return eval_potentials


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
