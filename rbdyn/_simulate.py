"""The entry point :func:`simulate` and its result, :class:`Trajectory`."""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from typing import TextIO

import numpy as np

from . import so3
from ._constraints import residuals_into
from ._errors import InputError, NumericalError, short_repr
from ._jit import njit
from ._loads import energy_momentum, mass_centre_state
from ._model import System
from ._scheme import STATUS_OK, STATUS_TEXT, Scheme, _isfinite, get_scheme, schemes

__all__ = ["simulate", "Trajectory"]


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
    iterations : ndarray, (n_steps,)
        Solver iterations of each step (0 for explicit schemes).
    scheme : Scheme
    dt : float
    steps : int
        Steps taken.
    status : str
        ``"success"`` or ``"failure"``.
    message : str
        What happened, and what to do after a failure.
    wall_time : float
        Seconds spent stepping (outputs excluded).
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

    @property
    def energy(self) -> np.ndarray:
        """Total mechanical energy."""
        return self.kinetic_energy + self.potential_energy

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

    def to_csv(self, out: TextIO | str) -> None:
        """Write one header line and one row per output time; floats repr-exact.

        The text is streamed in blocks of rows, so writing needs little memory beyond the
        trajectory itself.
        """
        if isinstance(out, str):
            with open(out, "w", encoding="utf-8") as fh:
                self.to_csv(fh)
            return
        out.write(",".join(self.columns()) + "\n")
        table = self.table()
        for start in range(0, table.shape[0], 4096):
            block = table[start:start + 4096].tolist()
            out.write("".join(",".join(map(repr, row)) + "\n" for row in block))


@njit
def _record_row(model, x, R, v, W, row, x_com, v_com, R_out, W_out, kin, pot, p, L, residuals):
    """Write output row ``row`` (compiled: runs after every step when ``every = 1``)."""
    x_c, v_c = mass_centre_state(model, x, R, v, W)
    k, u, p_row, L_row = energy_momentum(model, x, R, v, W)
    x_com[row] = x_c
    v_com[row] = v_c
    R_out[row] = R
    W_out[row] = W
    kin[row] = k
    pot[row] = u
    p[row] = p_row
    L[row] = L_row
    m = residuals.shape[1]
    if m > 0:
        g = residuals[row]
        floor = np.empty(m)
        residuals_into(model, x, R, g, floor, np.empty(3), np.empty(3), np.empty(3))


def _check_run_args(dt, t_end, every):
    for fld, value in (("dt", dt), ("t_end", t_end)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not _isfinite(value):
            raise InputError(fld, f"must be a finite number, got {short_repr(value)}")
    if dt <= 0:
        raise InputError("dt", f"must be > 0, got {dt!r}")
    if t_end < 0:
        raise InputError("t_end", f"must be >= 0, got {t_end!r}")
    if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
        raise InputError("every", f"must be an integer >= 1, got {every!r}")
    if t_end / dt > MAX_STEPS:
        raise InputError("dt", f"t_end/dt = {t_end / dt:.3g} steps; at most {MAX_STEPS:.0e} are allowed (increase dt)")


MAX_STEPS = 1e12  # far beyond any run that finishes; guards against dt typos such as 1e-300
# What one run may allocate before its first step: the recorded rows plus the solver's iteration
# count of every step (8 bytes a step). Larger runs are refused, naming dt or every.
MAX_OUTPUT_BYTES = 2**32  # 4 GiB


def n_steps_for(dt: float, t_end: float) -> int:
    """Number of steps of size ``dt`` that reach ``t_end``: ceil(t_end/dt),
    ignoring a relative excess below 1e-9 (so 10/0.001 gives 10000)."""
    return int(math.ceil(t_end / dt * (1.0 - 1e-9)))


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
        Output every ``every`` steps (plus t = 0 and the last step).
    progress : bool, optional
        Progress bar on stderr; by default only on a terminal for long runs.
    on_failure : {"raise", "return"}
        On a numerical failure, raise :class:`NumericalError` (carrying the
        output so far) or return that output with ``status == "failure"``.

    Returns
    -------
    Trajectory

    Raises
    ------
    InputError
        Invalid arguments (a ``ValueError``).
    NumericalError
        Non-finite state, Newton failure or singular constraints, with the
        time and step.
    """
    if not isinstance(system, System):
        raise InputError("system", f"must be an rbdyn.System, got {type(system).__name__}")
    scheme = get_scheme(scheme)
    _check_run_args(dt, t_end, every)
    if on_failure not in ("raise", "return"):
        raise InputError("on_failure", f"must be 'raise' or 'return', got {on_failure!r}")
    if system.constraints and not scheme.supports_constraints:
        able = [n for n, c in schemes().items() if c.supports_constraints]
        raise InputError(
            "scheme",
            f"{scheme.name} does not handle constraints; use one of: {', '.join(able) or 'none yet'}",
        )
    dt = float(dt)
    n_steps = n_steps_for(dt, float(t_end))
    n_out = -(-n_steps // every) + 1  # t = 0, every `every` steps, and the last step
    nb = system.n_bodies
    m = sum(c.n_eq for c in system.constraints)
    row_shapes = {  # what one output row records
        "t": (),
        "x_com": (nb, 3),
        "v_com": (nb, 3),
        "R_world_body": (nb, 3, 3),
        "omega_body": (nb, 3),
        "kinetic_energy": (),
        "potential_energy": (),
        "linear_momentum": (3,),
        "angular_momentum": (3,),
        "constraint_residuals": (m,),
    }
    row_bytes = 8 * sum(math.prod(shape) for shape in row_shapes.values())
    if n_out * row_bytes > MAX_OUTPUT_BYTES:
        raise InputError(
            "every",
            f"{n_out} output rows of {row_bytes} bytes exceed {MAX_OUTPUT_BYTES // 2**30} GiB; increase every",
        )
    if n_steps * 8 + n_out * row_bytes > MAX_OUTPUT_BYTES:
        raise InputError(
            "dt",
            f"{n_steps} steps need {n_steps * 8 / 2**30:.1f} GiB for their iteration counts; at most "
            f"{MAX_OUTPUT_BYTES // 2**30} GiB in all: increase dt or shorten t_end",
        )
    rec = {name: np.empty((n_out, *shape)) for name, shape in row_shapes.items()}
    callback_potentials = [(system.index[cb.body], cb.potential) for cb in system.callbacks if cb.potential]

    def record(row, step, x, R, v, W):
        t = step * dt
        rec["t"][row] = t
        _record_row(system.packed, x, R, v, W, row, rec["x_com"], rec["v_com"], rec["R_world_body"], rec["omega_body"],
                    rec["kinetic_energy"], rec["potential_energy"], rec["linear_momentum"], rec["angular_momentum"],
                    rec["constraint_residuals"])
        for i, pot_fn in callback_potentials:
            rec["potential_energy"][row] += float(pot_fn(t, rec["x_com"][row, i], R[i].copy()))

    carry = scheme.init(system, system.initial_state())
    iterations = np.zeros(n_steps, dtype=np.int64)
    with np.errstate(over="ignore", invalid="ignore"):
        record(0, 0, *carry[:4])
    bad0 = [k for k, a in rec.items() if not np.all(np.isfinite(a[0]))]
    if bad0:  # the initial state's derived quantities: an input problem, not a numerical one
        raise InputError("system", f"the initial {bad0[0].replace('_', ' ')} is not finite: give inputs of moderate size")
    bar = _Progress(n_steps, progress)
    wall = 0.0
    status, message, rows, done_total = "success", f"reached t = {n_steps * dt!r} in {n_steps} steps", n_out, n_steps
    failure = None
    def out_step(row):
        return min(row * every, n_steps)

    for row in range(1, n_out):
        start = out_step(row - 1)
        n = out_step(row) - start
        tic = time.perf_counter()
        code, done = scheme.advance(system, carry, start * dt, dt, n, iterations, start)
        wall += time.perf_counter() - tic
        if code != STATUS_OK:
            step = start + done + 1
            failure = NumericalError(start * dt + done * dt, step, STATUS_TEXT.get(code, f"status {code}"))
            status, message, rows, done_total = "failure", str(failure), row, start + done
            break
        with np.errstate(over="ignore", invalid="ignore"):
            record(row, out_step(row), *carry[:4])
        bar.update(out_step(row), final=row == n_out - 1)
    # Every reported number must be finite: a state that stays finite can still overflow its energy
    # or momenta. Checked once over the recorded rows (cheap), the run then ends at the first bad row.
    finite = np.ones(rows, dtype=bool)
    for a in rec.values():
        finite &= np.all(np.isfinite(a[:rows].reshape(rows, -1)), axis=1)
    if not finite.all():
        first = int(np.argmin(finite))
        step = out_step(first)
        failure = NumericalError((step - 1) * dt, step,
                                 "a reported quantity (energy or momentum) is not finite; the inputs are too large "
                                 "for double precision or the motion diverges")
        status, message, rows, done_total = "failure", str(failure), first, out_step(first - 1)
    traj = Trajectory(
        body_names=system.body_names,
        iterations=iterations[:done_total],
        scheme=scheme,
        dt=dt,
        steps=done_total,
        status=status,
        message=message,
        wall_time=wall,
        **{k: a[:rows] for k, a in rec.items()},
    )
    if failure is not None:
        failure.trajectory = traj
        if on_failure == "raise":
            raise failure
    return traj
