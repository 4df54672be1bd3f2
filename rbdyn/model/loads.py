"""Loads on the bodies: constant forces and couples, forces at body points, springs, and laws
given as compiled or Python functions. Each is validated on construction."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .._compile import jit_enabled, njit_signature
from .._errors import InputError
from .._errors import short_repr as _short  # errors are one line
from .._validate import body_name, finite_array, finite_scalar, float_array, positive, store
from .arrays import LOAD_SIGNATURE, POTENTIAL_SIGNATURE

__all__ = ["Load", "ConstantForce", "ConstantTorque", "PointForce", "Spring", "LoadCallback", "CompiledLoad",
           "compiled_load", "compiled_potential", "compiled_for"]


@dataclass(frozen=True, eq=False)
class Load:
    """Base of the loads: each acts on the body it names (``body``, a body's name)."""

    body: str

    def __post_init__(self):
        body_name(self.body, "load.body")


@dataclass(frozen=True, eq=False)
class ConstantForce(Load):
    """A constant world force applied at the mass centre of ``body``."""

    force: np.ndarray

    def __post_init__(self):
        super().__post_init__()
        store(self, force=finite_array(self.force, (3,), f"load.{self.body}.force"))


@dataclass(frozen=True, eq=False)
class ConstantTorque(Load):
    """A constant world torque (a couple) applied to ``body``."""

    torque: np.ndarray

    def __post_init__(self):
        super().__post_init__()
        store(self, torque=finite_array(self.torque, (3,), f"load.{self.body}.torque"))


@dataclass(frozen=True, eq=False)
class PointForce(Load):
    """A constant world force applied at a point fixed in ``body``.

    ``point_body`` is relative to the body origin (mass centre, or pivot), in
    the body frame.
    """

    point_body: np.ndarray
    force: np.ndarray

    def __post_init__(self):
        super().__post_init__()
        store(self, point_body=finite_array(self.point_body, (3,), f"load.{self.body}.point_body"))
        store(self, force=finite_array(self.force, (3,), f"load.{self.body}.force"))


@dataclass(frozen=True, eq=False)
class Spring(Load):
    """A linear spring from a point of ``body`` to a fixed world point.

    The force on the body, at ``x + R point_body``, is ``-stiffness (L - rest_length) d / L``
    with ``d`` from ``anchor`` to the point and ``L = |d|``; its potential energy
    ``stiffness (L - rest_length)^2 / 2`` is part of the reported energy.

    Parameters
    ----------
    body : str
    point_body : array_like, (3,)
        In the body frame, from the body origin.
    anchor : array_like, (3,)
        The world point.
    stiffness : float
        > 0 (N/m).
    rest_length : float, optional
        >= 0; by default the length at t = 0 (the system resolves it).
    """

    point_body: np.ndarray
    anchor: np.ndarray
    stiffness: float
    rest_length: float | None = None

    def __post_init__(self):
        super().__post_init__()
        where = f"load.{self.body}"
        store(self, point_body=finite_array(self.point_body, (3,), f"{where}.point_body"))
        store(self, anchor=finite_array(self.anchor, (3,), f"{where}.anchor"))
        store(self, stiffness=positive(self.stiffness, f"{where}.stiffness"))
        if self.rest_length is not None:
            r = finite_scalar(self.rest_length, f"{where}.rest_length")
            if r < 0:
                raise InputError(f"{where}.rest_length", f"must be >= 0, got {r!r}")
            store(self, rest_length=r)


@dataclass(frozen=True, eq=False)
class LoadCallback(Load):
    """A load computed by a Python function of time and configuration.

    ``fn(t, x_com, R_world_body, v_com, omega_body)`` returns
    ``(force_world, torque_world)``: a force at the mass centre and a torque
    about the mass centre, both in world components (Solfec's FORCE
    callback). ``potential(t, x_com, R_world_body)``, if given, is added to
    the reported energy. Systems with callbacks step in Python, hundreds of times
    slower than with a :class:`CompiledLoad`.
    """

    fn: Callable
    potential: Callable | None = None

    def __post_init__(self):
        super().__post_init__()
        if not callable(self.fn):
            raise InputError(f"load.{self.body}.fn", "must be callable")
        if self.potential is not None and not callable(self.potential):
            raise InputError(f"load.{self.body}.potential", "must be callable or None")


def compiled_load(fn=None, *, cache: bool = True):
    """Compile ``fn`` as a load law for :class:`CompiledLoad` (a decorator).

    ``fn(t, x_com, R_world_body, v_com, omega_body, params, force, torque)``
    writes the force at the mass centre and the torque about it (world
    components) into ``force`` and ``torque``, 3-vectors that are zero on
    entry; ``params`` is the load's parameter vector. It is compiled by
    numba for exactly this signature (``rbdyn.model.arrays.LOAD_SIGNATURE``) and
    runs inside the compiled step. Give ``cache=False`` for a function
    defined in a notebook or at the prompt (numba cannot cache those).
    """
    if fn is None:
        return lambda f: compiled_load(f, cache=cache)
    return njit_signature(fn, LOAD_SIGNATURE, cache)


def compiled_potential(fn=None, *, cache: bool = True):
    """Compile ``fn(t, x_com, R_world_body, params) -> float``, the potential energy of a
    :class:`CompiledLoad`, for the reported energy (a decorator, like :func:`compiled_load`)."""
    if fn is None:
        return lambda f: compiled_potential(f, cache=cache)
    return njit_signature(fn, POTENTIAL_SIGNATURE, cache)


@dataclass(frozen=True, eq=False)
class CompiledLoad(Load):
    """A load law compiled by numba, evaluated inside the compiled step.

    Parameters
    ----------
    body : str
    fn : function
        A load law decorated with :func:`compiled_load`.
    params : array_like, optional
        The law's parameters (a vector of numbers), passed to ``fn``.
    potential : function, optional
        Its potential energy, decorated with :func:`compiled_potential`, so
        that the reported energy includes it.

    Notes
    -----
    A :class:`LoadCallback` runs the whole step as Python: hundreds of times
    slower (``benchmarks/cost_table.py`` measures the ratio on one box; it
    printed 450 to 1300 when this was written). A compiled load costs about
    what a built-in load costs.
    """

    fn: Callable
    params: np.ndarray = field(default_factory=lambda: np.zeros(0))
    potential: Callable | None = None

    def __post_init__(self):
        super().__post_init__()
        where = f"load.{self.body}"
        try:
            params = float_array(self.params).ravel()
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"{where}.params", f"must be a vector of numbers, got {_short(self.params)}") from None
        if not np.all(np.isfinite(params)):
            raise InputError(f"{where}.params", "must be finite numbers (no nan or inf)")
        store(self, params=params)
        if not compiled_for(self.fn, LOAD_SIGNATURE):
            raise InputError(f"{where}.fn", "must be a function decorated with rbdyn.compiled_load")
        if self.potential is not None and not compiled_for(self.potential, POTENTIAL_SIGNATURE):
            raise InputError(f"{where}.potential", "must be a function decorated with rbdyn.compiled_potential")


def compiled_for(fn, signature) -> bool:
    """Whether ``fn`` was compiled for exactly ``signature`` (any callable without JIT)."""
    if not jit_enabled():
        return callable(fn)
    return list(getattr(fn, "nopython_signatures", ())) == [signature]
