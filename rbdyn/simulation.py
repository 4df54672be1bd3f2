"""The entry point :func:`simulate`, its result :class:`Trajectory`, and streaming metrics."""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from typing import Callable, TextIO

import numpy as np

from . import so3
from ._compile import njit_signature, plain, quiet
from ._errors import InputError, NumericalError, short_repr
from ._files import write_atomically
from ._validate import float_array, store
from .driver import records
from .driver.records import BUILTIN, METRIC_SIGNATURE, RECORDED, Reduction
from .driver.status import STATUS_REPORT, STATUS_TEXT
from .model.loads import compiled_for
from .model.system import System
from .run_length import MAX_OUTPUT_BYTES, MAX_STEPS, RunLength, n_steps_for  # noqa: F401 (the public names)
from .integrators import Scheme, get_scheme, schemes

__all__ = ["simulate", "Trajectory", "Reduction", "Metric", "compiled_metric", "RunLength", "MAX_STEPS",
           "MAX_OUTPUT_BYTES", "n_steps_for"]


def compiled_metric(fn=None, *, cache: bool = True):
    """Compile ``fn`` as a :class:`Metric` (a decorator).

    ``fn(t, x_com, R_world_body, v_com, omega_body, params, out)`` writes the
    metric's values into ``out`` from the mass-centre state of every body
    (arrays with a leading body axis, world components but ``omega_body``).
    Those arrays are the run's own (its state, the row being recorded): ``fn``
    reads them and writes into ``out`` only.
    Give ``cache=False`` for a function defined in a notebook or at the prompt.
    """
    if fn is None:
        return lambda f: compiled_metric(f, cache=cache)
    return njit_signature(fn, METRIC_SIGNATURE, cache)


@dataclasses.dataclass(frozen=True, eq=False)
class Metric:
    """A quantity reduced over every step of a run (its smallest, largest and final value).

    Parameters
    ----------
    name : str
        Key of the result in :attr:`Trajectory.reductions`.
    fn : function
        Decorated with :func:`compiled_metric`.
    size : int
        Number of values ``fn`` writes.
    params : array_like, optional
        Passed to ``fn``.
    """

    name: str
    fn: Callable
    size: int = 1
    params: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name or self.name in BUILTIN:
            raise InputError("metric.name", f"must be a non-empty string other than {', '.join(BUILTIN)}, "
                                            f"got {short_repr(self.name)}")
        if isinstance(self.size, bool) or not isinstance(self.size, (int, np.integer)) or not 1 <= self.size <= 1000:
            raise InputError(f"metric.{self.name}.size", f"must be an integer from 1 to 1000, got {short_repr(self.size)}")
        try:
            params = float_array(self.params).ravel()
        except (TypeError, ValueError, OverflowError):
            raise InputError(f"metric.{self.name}.params", "must be a vector of numbers") from None
        if not np.all(np.isfinite(params)):
            raise InputError(f"metric.{self.name}.params", "must be finite numbers (no nan or inf)")
        store(self, params=params)
        if not compiled_for(self.fn, METRIC_SIGNATURE):
            raise InputError(f"metric.{self.name}.fn", "must be a function decorated with rbdyn.compiled_metric")


@dataclasses.dataclass
class Trajectory:
    """Output of :func:`simulate`, one row per output time.

    Attributes
    ----------
    t : ndarray, (n,)
        Output times.
    body_names : list of str
    x_com, v_com : ndarray, (n, N, 3)
        Mass-centre position and velocity (world).
    R_world_body : ndarray, (n, N, 3, 3)
        Body-to-world rotation matrices.
    omega_body : ndarray, (n, N, 3)
        Angular velocity in the body frame.
    kinetic_energy, potential_energy : ndarray, (n,)
        Mechanical energy (potential of gravity, constant forces and the
        callbacks that declare one); their sum is :attr:`energy`.
    linear_momentum, angular_momentum : ndarray, (n, 3)
        Total linear momentum and angular momentum about the world origin.
    constraint_residuals : ndarray, (n, m)
        Every position-level constraint residual (metres); their largest
        absolute value per row is :attr:`constraint`.
    iterations : ndarray of int
        Solver iterations (0 for explicit schemes): of each step when
        ``every == 1``; otherwise the total over each output interval, one
        entry per row after the first.
    iteration_counts : ndarray of int
        ``iteration_counts[k]`` steps took ``k`` iterations (the last entry
        counts that many or more).
    reductions : dict of str to Reduction
        With ``reduce=True`` or ``metrics``: over every step, the built-in
        ``energy``, ``energy_error`` (``|E - E0|``), ``linear_momentum_error``
        and ``angular_momentum_error`` (``|p - p0|``, ``|L - L0|``),
        ``constraint`` (largest residual) and every metric by its name;
        empty otherwise.
    scheme : Scheme
    dt : float
    steps : int
        Steps taken.
    status : str
        ``"success"`` or ``"failure"``.
    message : str
        What happened, and what to do after a failure.
    wall_time : float
        Seconds in the compiled run loop: the steps, and the recording of rows
        and reductions it does between them (not the allocation before, nor
        the making of this object after).
    """

    t: np.ndarray
    body_names: list
    x_com: np.ndarray
    v_com: np.ndarray
    R_world_body: np.ndarray
    omega_body: np.ndarray
    kinetic_energy: np.ndarray
    potential_energy: np.ndarray
    linear_momentum: np.ndarray
    angular_momentum: np.ndarray
    constraint_residuals: np.ndarray
    iterations: np.ndarray
    scheme: Scheme
    dt: float
    steps: int
    status: str
    message: str
    wall_time: float
    iteration_counts: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    reductions: dict = dataclasses.field(default_factory=dict)

    @property
    def energy(self) -> np.ndarray:
        """Total mechanical energy."""
        return self.kinetic_energy + self.potential_energy

    @property
    def mean_iterations(self) -> float:
        """Solver iterations per step, on average over the run (from :attr:`iteration_counts`)."""
        c = self.iteration_counts
        return float(np.arange(c.size) @ c / max(c.sum(), 1))

    @property
    def max_iterations(self) -> int:
        """The most solver iterations a step took (the histogram's last bin: that many or more)."""
        nz = np.flatnonzero(self.iteration_counts)
        return int(nz[-1]) if nz.size else 0

    @property
    def constraint(self) -> np.ndarray:
        """Largest absolute constraint residual per row."""
        if self.constraint_residuals.shape[1] == 0:
            return np.zeros(self.t.shape[0])
        return np.max(np.abs(self.constraint_residuals), axis=1)

    @property
    def quat_wxyz(self) -> np.ndarray:
        """Unit quaternions (w, x, y, z) with w >= 0, shape (n, N, 4)."""
        out = np.empty(self.R_world_body.shape[:2] + (4,))
        for r in range(out.shape[0]):
            for b in range(out.shape[1]):
                out[r, b] = so3.matrix_to_quat_wxyz(self.R_world_body[r, b])
        return out

    @property
    def omega_world(self) -> np.ndarray:
        """Angular velocity in world components, shape (n, N, 3)."""
        return np.einsum("rbij,rbj->rbi", self.R_world_body, self.omega_body)

    def body(self, name: str) -> int:
        """Index of the body called ``name``."""
        try:
            return self.body_names.index(name)
        except ValueError:
            raise InputError("body", f"unknown body {name!r}; bodies are {self.body_names}") from None

    def columns(self) -> list[str]:
        """CSV column names (see :meth:`to_csv`)."""
        cols = ["t"]
        for n in self.body_names:
            cols += [f"{n}.{c}" for c in ("x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "Wx", "Wy", "Wz")]
        return cols + ["energy", "constraint"]

    def table(self) -> np.ndarray:
        """The CSV table as an array, shape (n, len(columns()))."""
        n = self.t.shape[0]
        parts = [self.t[:, None]]
        q = self.quat_wxyz
        for b in range(len(self.body_names)):
            parts += [self.x_com[:, b], q[:, b], self.v_com[:, b], self.omega_body[:, b]]
        parts += [self.energy[:, None], self.constraint[:, None]]
        return np.hstack([p.reshape(n, -1) for p in parts])

    def to_csv(self, out: TextIO | str | os.PathLike) -> None:
        """Write one header line and one row per output time; floats repr-exact.

        The text is streamed in blocks of rows, so writing needs little memory beyond the
        trajectory itself. A path is written atomically: to a temporary file beside it, renamed
        into place when complete (a failed write leaves any previous file unchanged), with the
        previous file's permissions or those the umask gives a new file.

        Raises
        ------
        InputError
            Field ``out``: ``out`` is neither a path nor an object with a ``write`` method, or the
            path cannot be written (a missing directory, no permission, a full disk, an existing
            device or FIFO); the message gives the reason. An error raised by the ``write`` of a
            file object you pass (an ``OSError`` of a full disk, say) is that object's and propagates.
        """
        if isinstance(out, (str, os.PathLike)):
            path = os.fspath(out)
            if not isinstance(path, str) or not path:
                raise InputError("out", f"must name a file, got {short_repr(out)}")
            try:
                write_atomically(path, self._write_csv)
            except OSError as exc:
                raise InputError("out", f"cannot write {short_repr(path)}: {exc.strerror or exc}; any previous "
                                        "file is unchanged") from None
            return
        if not callable(getattr(out, "write", None)):
            raise InputError("out", f"must be a file path or a text file object, got {short_repr(out)}")
        self._write_csv(out)

    def _write_csv(self, out) -> None:
        out.write(",".join(self.columns()) + "\n")
        table = self.table()
        for start in range(0, table.shape[0], 4096):
            block = table[start:start + 4096].tolist()
            out.write("".join(",".join(map(repr, row)) + "\n" for row in block))


class _Progress:
    """A one-line progress bar on a terminal's stderr; silent otherwise."""

    def __init__(self, total: int, enabled: bool | None):
        if enabled is None:
            enabled = total >= 10_000 and sys.stderr.isatty()
        self.enabled = enabled
        self.total = max(total, 1)
        self.last = 0.0

    def update(self, done: int, final: bool = False):
        if not self.enabled:
            return
        now = time.perf_counter()
        if not final and now - self.last < 0.1:
            return
        self.last = now
        frac = done / self.total
        bar = "#" * int(30 * frac)
        sys.stderr.write(f"\r[{bar:<30}] {100 * frac:5.1f}% step {done}/{self.total}")
        if final:
            sys.stderr.write("\n")
        sys.stderr.flush()


def simulate(
    system: System,
    scheme: Scheme | str,
    dt: float,
    t_end: float,
    every: int = 1,
    *,
    progress: bool | None = None,
    on_failure: str = "raise",
    reduce: bool = False,
    metrics=(),
) -> Trajectory:
    """Integrate ``system`` with ``scheme`` from t = 0 to ``t_end``.

    Parameters
    ----------
    system : System
        Bodies, loads and constraints with their initial state.
    scheme : Scheme or str
        A scheme instance (with its settings) or a scheme name.
    dt : float
        Step size, > 0. The run takes ``ceil(t_end/dt)`` steps of exactly
        ``dt``, so its last time is ``t_end`` rounded up to a whole step.
    t_end : float
        Duration, >= 0.
    every : int
        Output every ``every`` steps (plus t = 0 and the last step). The rows
        are written by the compiled loop, so ``every = 1`` costs little more
        than stepping.
    progress : bool, optional
        Progress bar on stderr; by default only on a terminal for long runs.
    on_failure : {"raise", "return"}
        On a numerical failure, raise :class:`NumericalError` (carrying the
        output so far) or return that output with ``status == "failure"``.
    reduce : bool
        Keep the built-in streaming reductions over every step
        (:attr:`Trajectory.reductions`), whatever ``every`` is.
    metrics : sequence of Metric
        User quantities reduced over every step (implies ``reduce``).

    Returns
    -------
    Trajectory

    Raises
    ------
    InputError
        Invalid arguments (a ``ValueError``), including a run of more than ``MAX_STEPS`` (1e9)
        steps, one whose output rows exceed 4 GiB, or one that needs more memory than is
        available (field ``every``; never a ``MemoryError``).
    NumericalError
        Non-finite state or reported quantity, Newton failure or singular
        constraints, with the time and step.

    References
    ----------
    * P. Kidger, *On Neural Differential Equations*, PhD thesis, Oxford,
      2021 (diffrax: a solver as immutable settings, a step as a function of
      the state, ``SaveAt(fn=...)`` for reductions during the solve).
    """
    if not isinstance(system, System):
        raise InputError("system", f"must be an rbdyn.System, got {type(system).__name__}")
    scheme = get_scheme(scheme)
    length = RunLength(dt, t_end, every)
    if on_failure not in ("raise", "return"):
        raise InputError("on_failure", f"must be 'raise' or 'return', got {short_repr(on_failure)}")
    if progress is not None and not isinstance(progress, bool):
        raise InputError("progress", f"must be True, False or None, got {short_repr(progress)}")
    if not isinstance(reduce, bool):
        raise InputError("reduce", f"must be True or False, got {short_repr(reduce)}")
    return run(system, scheme, length, progress=progress, on_failure=on_failure, reduce=reduce,
               metrics=_check_metrics(metrics))


def run(system: System, scheme: Scheme, length: RunLength, *, progress=None, on_failure="raise", reduce=False,
        metrics=()) -> Trajectory:
    """:func:`simulate` of arguments already checked: a :class:`rbdyn.System`, a scheme instance,
    a :class:`RunLength`, and ``metrics`` a tuple of :class:`Metric` (for the scenario files and
    the command line, whose inputs are checked where they enter)."""
    if system.constraints and not scheme.supports_constraints:
        able = [n for n, c in schemes().items() if c.supports_constraints]
        raise InputError(
            "scheme",
            f"{scheme.name} does not handle constraints; use one of: {', '.join(able) or 'none yet'}",
        )
    dt, n_steps, every, n_out = length.dt, length.n_steps, length.interval, length.n_out
    nb, m = system.n_bodies, system.n_constraint_rows
    row_bytes = records.row_bytes(nb, m)  # the recorded quantities and one iteration count
    if n_out * row_bytes > MAX_OUTPUT_BYTES:
        raise InputError(
            "every",
            f"{n_out} output rows of {row_bytes} bytes exceed {MAX_OUTPUT_BYTES // 2**30} GiB; increase every",
        )
    try:  # what the run allocates before its first step
        state = scheme.init(system, system.initial_state())
        out = records.output(nb, m, n_steps, every)
        mon = records.monitor(nb, m, reduce or bool(metrics), metrics)
    except MemoryError:
        raise InputError(
            "every",
            f"the run needs about {_mib(n_out * row_bytes)} for its {n_out} output rows, more memory than is "
            "available; increase every (or dt), or shorten t_end",
        ) from None
    kernel = scheme.compiled_kernel(system)
    args = system.kernel_model, plain(records.functions(system, metrics)), plain(state), plain(scheme.params())
    out_t, mon_t = plain(out), plain(mon)
    bar = _Progress(n_steps, progress)
    # The kernel runs in chunks of steps (the same steps, the same arithmetic): for the progress bar,
    # and so that Ctrl-C, which Python sees only between chunks, acts within seconds. Without a bar a
    # chunk is 2**22 body-steps (about a second of the cheaper schemes): a short run is one call.
    chunk = max(1, -(-n_steps // 200)) if bar.enabled else max(1, 2**22 // max(1, nb))
    wall = 0.0
    k = 0
    code = 0
    try:
        with np.errstate(over="ignore", invalid="ignore"), quiet():
            while True:
                stop = min(k + chunk, n_steps)
                tic = time.perf_counter()
                code, k = kernel(*args, 0.0, dt, k, stop, out_t, mon_t)
                wall += time.perf_counter() - tic
                bar.update(k, final=k == n_steps)
                if code != 0 or k >= n_steps:
                    break
    except KeyboardInterrupt as exc:  # where the run was, for the command line's one line
        exc.rbdyn_t, exc.rbdyn_step = k * dt, k
        raise
    failure = None
    if code == 0:
        rows, steps = n_out, n_steps
        status, message = "success", f"reached t = {n_steps * dt!r} in {n_steps} steps"
    else:
        if code == STATUS_REPORT and k == 0 and not records.finite_row(out, 0):
            # the initial state's derived quantities: an input problem, not a numerical one
            raise InputError("system", "the initial energy or momentum is not finite: give inputs of moderate size")
        rows, steps = 1 + k // every, k
        failure = NumericalError(k * dt, k + 1, STATUS_TEXT[code])
        status, message = "failure", str(failure)
    traj = Trajectory(
        **{name: getattr(out, name)[:rows] for name, _ in RECORDED},
        body_names=system.body_names,
        iterations=out.iterations[:steps] if every == 1 else out.iterations[: rows - 1],
        scheme=scheme,
        dt=dt,
        steps=steps,
        status=status,
        message=message,
        wall_time=wall,
        iteration_counts=out.iteration_counts,
        reductions=records.reductions(mon, metrics) if mon.active else {},
    )
    if failure is not None:
        failure.trajectory = traj
        if on_failure == "raise":
            raise failure
    return traj


def _mib(n_bytes: int) -> str:
    return f"{n_bytes / 2**20:.0f} MiB" if n_bytes < 2**30 else f"{n_bytes / 2**30:.1f} GiB"


def _check_metrics(metrics):
    try:
        metrics = tuple(metrics)
    except TypeError:
        raise InputError("metrics", f"must be a sequence of rbdyn.Metric, got {short_repr(metrics)}") from None
    for k, mt in enumerate(metrics):
        if not isinstance(mt, Metric):
            raise InputError(f"metrics[{k}]", f"must be an rbdyn.Metric, got {type(mt).__name__}")
    names = [mt.name for mt in metrics]
    if len(set(names)) != len(names):
        raise InputError("metrics", f"names must be unique, got {names}")
    return metrics
