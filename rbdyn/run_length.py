"""How long a run is and how often it records (:class:`RunLength`), checked where it enters:
:func:`rbdyn.simulate`, a scenario file's ``[run]``, the command line's options."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ._errors import InputError, short_repr
from ._validate import finite_number, store

__all__ = ["RunLength", "MAX_STEPS", "MAX_OUTPUT_BYTES", "n_steps_for"]


# The most steps a run may take, whatever `every` is: 1e9 steps of the cheapest system already take
# minutes, and beyond this a run does not finish in any reasonable time (a dt typo such as 1e-12).
MAX_STEPS = 1e9
# What one run may allocate before its first step: the recorded rows plus the solver's iteration
# count of every step (8 bytes a step). Larger runs are refused, naming dt or every.
MAX_OUTPUT_BYTES = 2**32  # 4 GiB


def n_steps_for(dt: float, t_end: float) -> int:
    """Number of steps of size ``dt`` that reach ``t_end``: ceil(t_end/dt),
    ignoring a relative excess below 1e-9 (so 10/0.001 gives 10000)."""
    return int(math.ceil(t_end / dt * (1.0 - 1e-9)))


@dataclasses.dataclass(frozen=True)
class RunLength:
    """The step, the duration and the output interval of a run, checked where they enter.

    Raises :class:`~rbdyn.InputError` on field ``dt``, ``t_end`` or ``every``: ``dt`` a finite
    number > 0, ``t_end`` a finite number >= 0, ``every`` an integer >= 1, and at most
    :data:`MAX_STEPS` steps (``t_end/dt``) whatever ``every`` is.
    """

    dt: float
    t_end: float
    every: int = 1

    def __post_init__(self):
        for fld in ("dt", "t_end"):
            value = getattr(self, fld)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                    or not finite_number(value):
                raise InputError(fld, f"must be a finite number, got {short_repr(value)}")
        if self.dt <= 0:
            raise InputError("dt", f"must be > 0, got {self.dt!r}")
        if self.t_end < 0:
            raise InputError("t_end", f"must be >= 0, got {self.t_end!r}")
        every = self.every
        if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
            raise InputError("every", f"must be an integer >= 1, got {short_repr(every)}")
        if self.t_end / self.dt > MAX_STEPS:
            raise InputError("dt", f"t_end/dt = {self.t_end / self.dt:.3g} steps; at most {MAX_STEPS:.0e} steps are "
                                   "allowed, whatever every is (increase dt or shorten t_end)")
        store(self, dt=float(self.dt), t_end=float(self.t_end), every=int(self.every))

    @property
    def n_steps(self) -> int:
        """The steps of exactly ``dt`` that reach ``t_end`` (:func:`n_steps_for`)."""
        return n_steps_for(self.dt, self.t_end)

    @property
    def interval(self) -> int:
        """Steps between output rows: ``every``, or the whole run when it is longer than the run."""
        return int(min(self.every, max(self.n_steps, 1)))

    @property
    def n_out(self) -> int:
        """Output rows: t = 0, every :attr:`interval` steps, and the last step."""
        return -(-self.n_steps // self.interval) + 1
