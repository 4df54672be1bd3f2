"""What a run records and reduces, declared once, and the records built from the declarations.

:data:`RECORDED` declares what one output row holds; :class:`Output` (the preallocated rows a
kernel writes), :class:`rbdyn.Trajectory` (what the user gets) and the row's size are made from
it. :data:`BUILTIN` declares the streaming reductions; :class:`Monitor` holds them and the user's
metrics. Every record is built by field name; a kernel receives the plain tuples
(:func:`rbdyn._compile.plain`) and binds the fields by position, in the order declared here.
"""

from __future__ import annotations

import collections
import dataclasses
import math
from typing import NamedTuple

import numpy as np
from numba import types

from .._compile import function_list
from ..constraints.assembly import scratch as assembly_scratch
from ..model.arrays import Functions

__all__ = ["RECORDED", "row_shapes", "row_bytes", "block_rows", "Output", "output", "finite_row", "BUILTIN", "METRIC_SIGNATURE",
           "Monitor", "monitor", "functions", "Reduction", "reductions", "MAX_COUNTED"]

#: What one output row records, in order: the name and the shape of one row, in which ``"B"`` is
#: the number of bodies and ``"M"`` the number of constraint rows.
RECORDED = (
    ("t", ()),
    ("x_com", ("B", 3)),
    ("v_com", ("B", 3)),
    ("R_world_body", ("B", 3, 3)),
    ("omega_body", ("B", 3)),
    ("kinetic_energy", ()),
    ("potential_energy", ()),
    ("linear_momentum", (3,)),
    ("angular_momentum", (3,)),
    ("constraint_residuals", ("M",)),
)

#: Iteration counts above this share the histogram's last bin.
MAX_COUNTED = 64


def row_shapes(n_bodies: int, n_rows: int) -> dict[str, tuple]:
    """The shape of one row of each recorded quantity, for ``n_bodies`` bodies and ``n_rows``
    constraint rows."""
    size = {"B": n_bodies, "M": n_rows}
    return {name: tuple(size.get(d, d) for d in shape) for name, shape in RECORDED}


def row_bytes(n_bodies: int, n_rows: int) -> int:
    """Bytes of one recorded row, its iteration count included."""
    return 8 * sum(math.prod(shape) for shape in row_shapes(n_bodies, n_rows).values()) + 8


class ReportScratch(NamedTuple):
    """What deriving a row's residuals uses in between (:func:`rbdyn.driver.report.derive`): the
    row's body origins and rotations, every residual and its round-off floor, the assembly's
    scratch."""

    x: np.ndarray
    R: np.ndarray
    residuals: np.ndarray
    floor: np.ndarray
    assembly: tuple


def _report_scratch(n_bodies: int, n_rows: int) -> ReportScratch:
    have = n_rows > 0  # only residuals need the row's state apart
    return ReportScratch(x=np.empty((n_bodies if have else 0, 3)), R=np.empty((n_bodies if have else 0, 3, 3)),
                         residuals=np.empty(n_rows), floor=np.empty(n_rows), assembly=assembly_scratch())


_OUTPUT_DOC = """The rows a run records, preallocated: ``every``, ``n_steps``, one array per :data:`RECORDED`
quantity (a leading row axis), then ``iterations`` and ``iteration_counts``, ``derived`` (one
number: the rows whose energies, momenta and residuals are derived, see
:func:`rbdyn.driver.report.derive`), ``block`` (how many stored rows are derived at once, see
:func:`block_rows`), and the scratch of the derivation (:class:`ReportScratch`).

Row ``r`` holds the state after step ``min(r * every, n_steps)``. ``iterations`` has one entry per
step when ``every == 1`` and otherwise the total of each output interval; ``iteration_counts[k]``
counts the steps that took ``k`` solver iterations (the last entry: that many or more).
"""

Output = collections.namedtuple("Output", ["every", "n_steps", *(name for name, _ in RECORDED), "iterations",
                                           "iteration_counts", "derived", "block", "scratch"])
Output.__doc__ = _OUTPUT_DOC


def block_rows(n_bodies: int, n_rows: int) -> int:
    """How many stored rows the run driver derives at once: as many as fit in 256 KiB (a cache's
    worth, so that they are derived before they leave it), at least 1 and at most 256 (beyond, a
    block saves nothing more on the derivation's fixed cost)."""
    return max(1, min(256, 2**18 // row_bytes(n_bodies, n_rows)))


def output(n_bodies: int, n_rows: int, n_steps: int, every: int) -> Output:
    """Preallocated rows of a run of ``n_steps`` steps recorded every ``every``."""
    n_out = -(-n_steps // every) + 1  # t = 0, every `every` steps, and the last step
    # one allocation carved into the quantities: a large one is backed by huge pages, which a run
    # recording every step of a small system otherwise spends as much time faulting in as stepping
    shapes = {name: (n_out, *shape) for name, shape in row_shapes(n_bodies, n_rows).items()}
    buffer = np.empty(sum(math.prod(shape) for shape in shapes.values()))
    rows, start = {}, 0
    for name, shape in shapes.items():
        size = math.prod(shape)
        rows[name] = buffer[start:start + size].reshape(shape)
        start += size
    return Output(every=every, n_steps=n_steps, **rows,
                  iterations=np.zeros(n_steps if every == 1 else max(n_out - 1, 0), dtype=np.int64),
                  iteration_counts=np.zeros(MAX_COUNTED + 2, dtype=np.int64), derived=np.zeros(1, dtype=np.int64),
                  block=block_rows(n_bodies, n_rows), scratch=_report_scratch(n_bodies, n_rows))


def finite_row(out: Output, row: int) -> bool:
    """Whether every recorded quantity of row ``row`` is finite."""
    return all(np.all(np.isfinite(getattr(out, name)[row])) for name, _ in RECORDED)


#: The built-in reductions, in the order of the columns of :attr:`Monitor.builtin`.
BUILTIN = ("energy", "energy_error", "linear_momentum_error", "angular_momentum_error", "constraint")

#: Signature of a metric: ``fn(t, x_com, R_world_body, v_com, omega_body, params, out)`` writes its
#: values into ``out`` from the mass-centre state of every body (arrays with a leading body axis).
METRIC_SIGNATURE = types.void(
    types.float64,
    types.float64[:, ::1],
    types.float64[:, :, ::1],
    types.float64[:, ::1],
    types.float64[:, ::1],
    types.float64[::1],
    types.float64[::1],
)

MIN, MAX, FINAL, VALUE = 0, 1, 2, 3  # the rows of Monitor.builtin and the second axis of Monitor.metric


class Monitor(NamedTuple):
    """Streaming reductions over every step (inactive: ``active == 0``).

    ``start`` holds the energy, linear and angular momentum at t = 0 (7 numbers) that the
    ``*_error`` quantities are measured from; ``builtin`` (3, len(BUILTIN)) the smallest, largest
    and final value of each built-in quantity; ``metric`` (n_metrics, 4, width) the smallest,
    largest and final values of each metric and its current ones; ``metric_params`` (n_metrics,
    n_params) and ``metric_size`` the metrics' parameters and sizes (their functions are in the
    kernel's :class:`rbdyn.model.arrays.Functions`, see :func:`functions`); ``block`` an :class:`Output` of :func:`block_rows`
    rows, which holds the steps stored and not yet folded, and ``pending`` (two numbers) how many
    they are and the first one's step: they are derived as recorded rows are, a block at a time
    (:func:`rbdyn.driver.report.store_step`).
    """

    active: int
    start: np.ndarray
    builtin: np.ndarray
    metric_params: np.ndarray
    metric_size: np.ndarray
    metric: np.ndarray
    block: Output
    pending: np.ndarray


def monitor(n_bodies: int, n_rows: int, active: bool, metrics=()) -> Monitor:
    """The reductions of a run (``active``) over the built-in quantities and ``metrics``
    (objects with ``fn``, ``size`` and ``params``, see :class:`rbdyn.Metric`)."""
    nm = len(metrics)
    width = max([mt.size for mt in metrics] + [1])
    n_par = max([mt.params.size for mt in metrics] + [1])
    params = np.zeros((nm, n_par))
    for j, mt in enumerate(metrics):
        params[j, : mt.params.size] = mt.params
    builtin = np.zeros((3, len(BUILTIN)))
    builtin[MIN], builtin[MAX] = np.inf, -np.inf
    metric = np.zeros((nm, 4, width))
    metric[:, MIN], metric[:, MAX] = np.inf, -np.inf
    return Monitor(active=1 if active else 0, start=np.zeros(7), builtin=builtin,
                   metric_params=params,
                   metric_size=np.array([mt.size for mt in metrics], dtype=np.int64), metric=metric,
                   block=output(n_bodies, n_rows, block_rows(n_bodies, n_rows) - 1, 1) if active else output(0, 0, 0, 1),
                   pending=np.zeros(2, dtype=np.int64))


def functions(system, metrics=()) -> Functions:
    """The compiled functions a kernel calls for ``system`` and ``metrics`` (objects with ``fn``,
    see :class:`rbdyn.Metric`): its compiled loads and their potentials, and the metrics."""
    user_fn, user_potential = system.load_functions
    return Functions(user_fn=user_fn, user_potential=user_potential,
                     metric_fn=function_list(METRIC_SIGNATURE, [mt.fn for mt in metrics]))


@dataclasses.dataclass(frozen=True)
class Reduction:
    """The smallest, largest and final value of a quantity over every step of a run
    (t = 0 included); floats for a scalar quantity, arrays for a metric of several values."""

    min: float | np.ndarray
    max: float | np.ndarray
    final: float | np.ndarray


def reductions(mon: Monitor, metrics=()) -> dict[str, Reduction]:
    """The monitor's reductions by name: :data:`BUILTIN`, then every metric by its name."""
    out = {name: Reduction(min=float(mon.builtin[MIN, k]), max=float(mon.builtin[MAX, k]),
                           final=float(mon.builtin[FINAL, k])) for k, name in enumerate(BUILTIN)}
    for j, mt in enumerate(metrics):
        n = mt.size
        pick = (lambda a: float(a[0])) if n == 1 else (lambda a: a[:n].copy())
        m = mon.metric[j]
        out[mt.name] = Reduction(min=pick(m[MIN]), max=pick(m[MAX]), final=pick(m[FINAL]))
    return out
