"""The entry point :func:`study` and its result :class:`StudyResult`."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from .._errors import InputError, NumericalError, short_repr
from .._files import check_output, is_stream, write_all
from .._stamp import stamp
from . import execute as _execute
from . import grid, results

__all__ = ["study", "StudyResult", "StudyFailed", "PLOT_FORMATS"]

PLOT_FORMATS = ("png", "pdf", "svg")


class StudyFailed(NumericalError):
    """Every run of a study failed (or its reference run did): no error was measured.

    Attributes
    ----------
    journal : pathlib.Path or None
        Where the failed rows are kept (the outputs are left as they were).
    """

    def __init__(self, reason: str, journal=None):
        self.t, self.step, self.reason, self.trajectory = math.nan, 0, reason, None
        self.journal = journal
        RuntimeError.__init__(self, reason)


@dataclasses.dataclass(frozen=True)
class StudyResult:
    """The outcome of :func:`rbdyn.study`: one row per run, in the grid's order, and the fitted orders.

    Attributes
    ----------
    scenario : str
    t_end : float
    labels : tuple of str
        The scheme configurations (``"rig_imp"``, ``"gen_alpha(rho_inf=0.5)"``).
    dts : tuple of float
    variants : tuple of str
        The variants' names (``("",)`` without overrides).
    columns : tuple of str
        The CSV's columns.
    rows : tuple of dict
        One per run (variant by variant, configuration by configuration, step by step), keyed by
        the columns: ``error`` (nan when the run failed), ``status`` (``"ok"`` or ``"failed: ..."``),
        ``wall_s`` and ``cpu_s`` (the run's seconds), ``steps``, ``iterations`` (the solver's, in
        total), ``energy_drift`` (the largest ``|E - E0|`` over every step, J), ``constraint_drift``
        (the largest constraint residual over every step, m), ``worker`` (``host:pid``, or a Dask
        worker's address), ``reference``, and any value a measure returned.
    orders : dict
        ``{(label, variant): OrderFit or None}`` (:func:`rbdyn.verify.fit_order`; ``f"{fit:.2f}"``
        prints ``"2.00 ± 0.03"``).
    references : dict
        ``{variant: {"kind", "label", "quantity", "unit", "note"}}``: what the errors are measured
        against.
    backend : str
        Where the runs ran.
    resumed : int
        How many rows came from the journal of an interrupted study.
    settings : dict
        The declaration as plain data.
    stamp : dict
        rbdyn's version, the digest of its sources, the libraries' versions, the machine.
    """

    scenario: str
    t_end: float
    labels: tuple
    dts: tuple
    variants: tuple
    columns: tuple
    rows: tuple
    orders: dict
    references: dict
    backend: str
    resumed: int
    settings: dict
    stamp: dict

    @property
    def failed(self) -> int:
        """How many runs failed."""
        return sum(r["status"] != "ok" for r in self.rows)

    def select(self, label: str | None = None, variant: str | None = None) -> list:
        """The rows of one scheme configuration and/or one variant."""
        return [r for r in self.rows if (label is None or r["label"] == label)
                and (variant is None or r["variant"] == variant)]

    def column(self, name: str, label: str | None = None, variant: str | None = None) -> np.ndarray:
        """One column of the selected rows as an array (floats, or objects for text)."""
        values = [r.get(name, math.nan) for r in self.select(label, variant)]
        return np.array(values, dtype=object if values and isinstance(values[0], str) else float)

    def errors(self, label: str, variant: str = "") -> tuple[np.ndarray, np.ndarray]:
        """``(dt, error)`` of one scheme configuration and variant, in the order of the steps."""
        rows = self.select(label, variant)
        return np.array([r["dt"] for r in rows]), np.array([r["error"] for r in rows])

    def to_csv(self, out) -> None:
        """Write the CSV (one header line, one line per run, floats exact) to a text file object."""
        results.write_csv(self.rows, self.columns, out)

    def record(self) -> dict:
        """The study's JSON: the settings, the references, the fitted orders, the stamp of the code."""
        orders = []
        for (label, variant), fit in self.orders.items():
            entry = {"label": label, "variant": variant, "order": None, "uncertainty": None, "local": [],
                     "text": "–"}
            if fit is not None:
                u = fit.uncertainty
                entry.update(order=fit.order, uncertainty=u if math.isfinite(u) else None,
                             local=fit.local.tolist(), text=f"{fit:.2f}", points=int(fit.steps.size))
            orders.append(entry)
        return {"rbdyn_study": grid.KEY_FORMAT, **self.settings, "references": self.references,
                "orders": orders, "runs": len(self.rows), "failed": self.failed, "resumed": self.resumed,
                "backend": self.backend, "columns": list(self.columns), "stamp": self.stamp}

    def summary(self) -> str:
        """The fitted orders and the errors as a few lines of text (what ``rbdyn study`` prints)."""
        lines = []
        refs = {json.dumps(r, sort_keys=True): r for r in self.references.values()}
        for ref in refs.values():
            lines.append(f"reference: {ref['label']}; error: {ref['quantity']}" + (f" ({ref['unit']})" if ref["unit"]
                                                                                     else ""))
            if ref["note"]:
                lines.append(f"  ({ref['note']})")
        many = len(self.variants) > 1
        width = max(len(label) for label in self.labels)
        for variant in self.variants[:5] if many else self.variants:
            if many:
                lines.append(f"variant {variant}:")
            for label in self.labels:
                dts, errs = self.errors(label, variant)
                fit = self.orders.get((label, variant))
                order = f"order {fit:.2f}" if fit is not None else "order –"
                text = ", ".join(f"{e:.3e}" for e in errs)
                lines.append(f"  {label:<{width}}  {order:<20} errors {text}")
        if many and len(self.variants) > 5:
            lines.append(f"  ... and {len(self.variants) - 5} more variants (see the CSV)")
        lines.append(f"{len(self.rows)} runs ({self.failed} failed, {self.resumed} from the journal) on {self.backend}")
        return "\n".join(lines)


class _Progress:
    """A one-line progress bar of runs on a terminal's stderr; silent otherwise."""

    def __init__(self, total: int, done: int, enabled: bool | None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.total, self.done, self.failed = max(total, 1), done, 0
        self.start, self.last = time.perf_counter(), 0.0
        self.update(force=True)

    def update(self, failed: bool = False, step: int = 0, force: bool = False) -> None:
        self.done += step
        self.failed += failed
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self.last < 0.1 and self.done < self.total:
            return
        self.last = now
        frac = self.done / self.total
        bar = "#" * int(30 * frac)
        extra = f", {self.failed} failed" if self.failed else ""
        sys.stderr.write(f"\r[{bar:<30}] {self.done}/{self.total} runs{extra}, {now - self.start:.0f} s")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _target(value, fld: str) -> Path:
    """An output path: a new or existing regular file, or a device or named pipe, in an existing,
    writable directory; a name ending in a slash names a directory and is refused."""
    if not isinstance(value, (str, os.PathLike)) or not os.fspath(value):
        raise InputError(fld, f"must name a file, got {short_repr(value)}")
    text = os.fspath(value)
    if not isinstance(text, str):
        raise InputError(fld, f"must name a file, got {short_repr(value)}")
    if text.endswith(("/", os.sep)):
        raise InputError(fld, f"{text!r} ends in a slash, which names a directory; name a file")
    if is_stream(text):  # a device or named pipe, by the name given: /dev/stdout resolves to no path
        return Path(os.path.abspath(text))
    try:
        target = Path(text).resolve()
        ok = not target.is_dir() and target.parent.is_dir() and os.access(target.parent, os.W_OK)
    except (OSError, ValueError) as exc:
        raise InputError(fld, f"not a usable file name ({getattr(exc, 'strerror', None) or exc})") from None
    if not ok:
        raise InputError(fld, f"cannot write {text!r}: not a file in an existing, writable directory")
    try:
        check_output(target)
    except OSError as exc:
        raise InputError(fld, f"{text!r} {exc.strerror}") from None
    return target


def _plot_target(value) -> tuple[Path, str]:
    target = _target(value, "plot")
    fmt = target.suffix.lower().lstrip(".")
    if fmt not in PLOT_FORMATS and not is_stream(target):
        raise InputError("plot", f"must end in one of {', '.join('.' + e for e in PLOT_FORMATS)} (got "
                                 f"{os.fspath(value)!r})")
    try:
        import matplotlib  # noqa: F401  (an optional dependency, needed only here)
    except ImportError:
        raise InputError("plot", "needs matplotlib, which is not installed (pip install matplotlib)") from None
    return target, fmt if fmt in PLOT_FORMATS else "png"


def study(scenario, schemes=None, dt=None, *, t_end=None, settings=None, overrides=None, measure=None,
          reference=None, drift=True, out=None, plot=None, scheduler=None, workers=None, progress=None) -> StudyResult:
    r"""Run a grid of schemes × steps (× their settings, × named variants) of one scenario and
    measure every run.

    Parameters
    ----------
    scenario : str or path
        A built-in scenario (``rbdyn list``) or a scenario file.
    schemes : str or sequence of str, optional
        The schemes; by default the file's ``run.scheme``.
    dt : float or sequence of float, optional
        The steps, each > 0; by default the file's ``run.dt``.
    t_end : float, optional
        The duration, > 0; by default the file's ``run.t_end``.
    settings : mapping, optional
        Settings per scheme, a value or a list of values each:
        ``{"gen_alpha": {"rho_inf": [0.5, 0.9]}}`` runs both (every combination of the lists).
        The file's ``[settings.NAME]`` apply beneath them.
    overrides : sequence or mapping of mappings, optional
        Named variants of the scenario: ``{"slow": {"body[0].omega_body": [0.1, 2.0, 0.1]}}``, or a
        list of such tables (named ``"0"``, ``"1"``, ...). Keys are the scenario file's, dotted,
        arrays of tables indexed (``body[0].omega_body``, ``world.gravity``,
        ``constraint[1].length``, ``settings.rig_imp.constraint_tol``), checked as the file is. An
        ensemble of perturbed initial conditions is a list of variants.
    measure : callable, optional
        ``measure(trajectory, system)`` returns the error of a run (a number), or a mapping with the
        key ``"error"`` and any other named numbers, which become columns. It replaces the
        reference. It must be a pure function of its arguments (its results are then the same
        wherever a run ran); an exception it raises fails that run's row only.
    reference : {"auto", "run"} or (str, float), optional
        ``"auto"`` (default): a closed form or a DOP853 reference of :mod:`rbdyn.verify` where the
        system has one (the rules: the docstring of ``rbdyn.studies.references``), otherwise a reference run; ``"run"``:
        always the default reference run (the most accurate scheme of the study at a quarter of the
        smallest step); ``(scheme, dt)``: that reference run.
    drift : bool, optional
        True (default): every run also measures its energy and constraint drift over every step
        (columns ``energy_drift``, ``constraint_drift``), which costs about an evaluation of the
        energy per step; False: no such columns, and a run costs what :func:`rbdyn.simulate`
        costs (a long study of a cheap step).
    out : str or path, optional
        The CSV (one row per run). Beside it: ``NAME.json`` (the settings, references, fitted
        orders and the stamp of the code) and, while the study runs, the journal
        ``OUT.journal``. A device or named pipe is written in place, with no JSON or journal.
    plot : str or path, optional
        A figure (``.png``, ``.pdf``, ``.svg``): error against wall time (work–precision) and
        against the step, one line per scheme, in the book's style.
    scheduler : str, optional
        The address of a running Dask distributed scheduler (``tcp://host:8786``); the runs go
        to its workers.
    workers : int, optional
        Local processes (default: one per core); 1 runs in this process.
    progress : bool, optional
        A progress bar on stderr (default: when stderr is a terminal).

    Returns
    -------
    StudyResult

    Raises
    ------
    InputError
        An invalid declaration, naming the field with its index (``dt[2]: must be > 0``); an
        unreachable scheduler (``scheduler``); an output that cannot be written (``out``,
        ``plot``). Raised before any run; no file is written.
    NumericalError
        Every run failed (``rbdyn.studies.StudyFailed``): the outputs are left as they were and the failed
        rows stay in the journal. A run that fails while others finish is a row with
        ``status = "failed: ..."`` and ``error = nan``, not an exception.

    Notes
    -----
    A run is a pure function of the scenario's text, its variant, the scheme, its settings, the
    step and the duration: its numbers are the same bits in this process, in the local pool and on
    a Dask worker with the same rbdyn, and the CSV says which worker ran it. An interrupted study
    (Ctrl-C, a killed process) resumes: the finished runs are in the journal and are not run again.

    References
    ----------
    * E. Hairer, S. P. Nørsett, G. Wanner, *Solving Ordinary Differential Equations I*, 2nd ed.,
      Springer, 1993, Sect. II.1 (work–precision diagrams).
    * P. J. Roache, *Verification and Validation in Computational Science and Engineering*,
      Hermosa, 1998, ch. 5 (observed order of accuracy).
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, (int, np.integer))
                                or workers < 1):
        raise InputError("workers", f"must be an integer >= 1, got {short_repr(workers)}")
    if progress is not None and not isinstance(progress, bool):
        raise InputError("progress", f"must be True, False or None, got {short_repr(progress)}")
    if scheduler is not None and workers is not None:
        raise InputError("workers", "is for the local pool; with a scheduler the workers are the scheduler's")
    spec = grid.declare(scenario, schemes, dt, t_end=t_end, settings=settings, overrides=overrides,
                        measure=measure, reference=reference, drift=drift)
    csv_target = _target(out, "out") if out is not None else None
    json_target = journal = None
    if csv_target is not None and not is_stream(csv_target):
        json_target = csv_target.with_suffix(".json")
        if json_target == csv_target:
            raise InputError("out", f"ends in .json, where the study's settings go ({json_target.name}); name a .csv file")
        _target(json_target, "out")
        journal = results.Journal(csv_target.with_name(csv_target.name + ".journal"))
        _target(journal.path, "out")
    figure = _plot_target(plot) if plot is not None else None
    if figure is not None and figure[0] in (csv_target, json_target):
        raise InputError("plot", "is the --out file or its JSON; choose another file")
    client = _execute.connect(scheduler) if scheduler is not None else None
    try:
        return _study(spec, csv_target, json_target, journal, figure, client, workers, progress)
    finally:
        if client is not None:
            client.close()


def _study(spec, csv_target, json_target, journal, figure, client, workers, progress) -> StudyResult:
    runs = spec.runs()
    keys = {run.key: run.index for run in runs}
    rows = journal.load(keys) if journal is not None else {}
    resumed = len(rows)
    todo = [run.index for run in runs if run.index not in rows]
    bar = _Progress(len(runs), resumed, progress)
    if journal is not None:
        try:
            journal.open({"scenario": spec.scenario, "sources": spec.digest})
        except OSError as exc:
            bar.close()
            raise InputError("out", f"cannot write the journal {journal.path.name}: {exc.strerror or exc}") from None

    def on_row(index, row):
        rows[index] = row
        if journal is not None:
            journal.append(runs[index].key, row)
        bar.update(failed=row["status"] != "ok", step=1)

    try:
        backend = _execute.execute(spec, todo, on_row, workers=workers, client=client) if todo else "the journal"
    except KeyboardInterrupt as exc:
        exc.rbdyn_study = (len(rows), len(runs), journal.path if journal is not None else None)
        raise
    finally:
        bar.close()
        if journal is not None:
            journal.close()
    ordered = tuple(rows[run.index] for run in runs)
    labels = tuple(c.label for c in spec.configs)
    variants = tuple(v.name for v in spec.variants)
    result = StudyResult(
        scenario=spec.scenario, t_end=spec.t_end, labels=labels, dts=spec.dts, variants=variants,
        columns=tuple(results.columns_of(ordered, tuple(c for c in _execute.COLUMNS
                                                        if spec.drift or c not in _execute.DRIFT_COLUMNS))),
        rows=ordered,
        orders=results.fit_orders(ordered, labels, variants),
        references={v.name: {"kind": p.kind, "label": p.label, "quantity": p.quantity, "unit": p.unit, "note": p.note}
                    for v, p in zip(spec.variants, spec.plans)},
        backend=backend, resumed=resumed, settings=spec.settings_record(),
        stamp={**stamp(), "sources_sha256": spec.digest},
    )
    if result.failed == len(ordered):
        first = next(r["status"] for r in ordered)
        kept = f"; the rows are in {journal.path.name}" if journal is not None else ""
        raise StudyFailed(f"every run failed (the first: {first.removeprefix('failed: ')}); no output written{kept}",
                          journal.path if journal is not None else None)
    files = []
    if csv_target is not None:
        files.append((csv_target, result.to_csv, False))
    if json_target is not None:
        files.append((json_target, lambda fh: fh.write(json.dumps(result.record(), indent=1, allow_nan=True) + "\n"),
                      False))
    if figure is not None:
        from ..plotting import plot_study  # matplotlib: an optional dependency, needed only here

        path, fmt = figure
        files.append((path, lambda fh: plot_study(result, fh, format=fmt, title=spec.scenario), True))
    try:
        write_all(files)
    except OSError as exc:
        which = "plot" if figure is not None and exc.filename == str(figure[0]) else "out"
        raise InputError(which, f"cannot write {Path(exc.filename or '').name}: {exc.strerror or exc}; any previous "
                                "file is unchanged") from None
    if journal is not None:
        journal.remove()
    return result
