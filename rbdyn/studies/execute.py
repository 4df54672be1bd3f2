"""One run of a study as a pure function of its declaration, and where the runs go.

:func:`execute_run` builds the variant's system from the scenario's text, runs the scheme, and
measures the error, the cost, the steps, the iterations and the drifts: its numbers depend on
the :class:`~rbdyn.studies.grid.StudySpec` and the run's index only, so they are the same bits in
this process, in a local pool or on a Dask worker (with the same rbdyn sources, which the driver
checks through the digest each worker reports).

:func:`execute` sends runs to one of three places and hands each finished row to a callback as
it arrives:

* this process, when one worker is asked for (or there is one run);
* a pool of local processes, one per core by default, started with the ``forkserver`` method
  (``spawn`` where there is none): each starts from a clean interpreter, never a copy of a
  parent that may hold threads or an open kernel, and inherits the environment
  (``NUMBA_CACHE_DIR``: the workers load the compiled kernels from the same cache);
* a running Dask distributed scheduler (``distributed.Client(address)``, public API only; imported
  only then).

References
----------
* M. Rocklin, "Dask: parallel computation with blocked algorithms and task scheduling",
  Proc. 14th Python in Science Conf., 2015.
"""

from __future__ import annotations

import functools
import math
import multiprocessing
import os
import pickle
import signal
import socket
import time

import numpy as np

from .._errors import InputError, NumericalError, one_line
from .._stamp import sources_digest
from ..run_length import RunLength, n_steps_for
from ..simulation import run as run_scheme
from . import references
from .grid import every_for

__all__ = ["execute_run", "execute", "COLUMNS", "SCHEDULER_TIMEOUT"]

#: The drift columns, left out of a study with ``drift=False``.
DRIFT_COLUMNS = ("energy_drift", "constraint_drift")
#: The columns every row has, in the CSV's order (a measure's own values follow ``error``).
COLUMNS = ("scheme", "settings", "label", "variant", "dt", "t_end", "error", "status", "wall_s", "cpu_s", "steps",
           "iterations", *DRIFT_COLUMNS, "worker", "reference")
#: Seconds to wait for a Dask scheduler to answer before the study is refused (``scheduler``).
SCHEDULER_TIMEOUT = 10.0


def _here() -> str:
    """This process, as ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


#: The digest of rbdyn's sources as this process imported them (read once, at import: a worker
#: that lives on while the files change reports the code it runs, not the files' new state).
_DIGEST = sources_digest()


def _digest() -> str:
    return _DIGEST


@functools.lru_cache(maxsize=4)
def _reference_run(spec, variant_index: int):
    """The reference run of a variant, once per process: (t, x_com, v_com), or the one line of
    its failure."""
    variant = spec.variants[variant_index]
    plan = spec.plans[variant_index]
    scenario = spec.scenario_of(variant)
    scheme = scenario.scheme_named(plan.scheme)
    length = RunLength(plan.dt, spec.t_end, every_for(n_steps_for(plan.dt, spec.t_end)))
    try:
        traj = run_scheme(scenario.system, scheme, length, progress=False)
    except NumericalError as err:
        return f"the reference run ({plan.label}) failed: {one_line(str(err))}"
    return traj.t, traj.x_com, traj.v_com


def execute_run(spec, index: int, worker: str | None = None) -> tuple[dict, str]:
    """Run ``spec.runs()[index]`` and measure it: ``(row, digest of this process's rbdyn sources)``.

    The row holds the columns of :data:`COLUMNS` (and a measure's values). A numerical failure of
    the run, or an error that cannot be measured, is recorded in the row (``status`` ``"failed:
    <one line>"``, ``error`` nan) and not raised. ``wall_s`` and ``cpu_s`` are the seconds of the
    run alone (after a run of no steps that loads the compiled kernel), wall-clock and of this
    thread's processor.
    """
    run = spec.runs()[index]
    v = spec.variants.index(run.variant)
    plan = spec.plans[v]
    scenario = spec.scenario_of(run.variant)
    system = scenario.system
    scheme = scenario.scheme_named(run.config.scheme, **dict(run.config.settings))
    row = {"scheme": run.config.scheme, "settings": run.config.settings_text, "label": run.config.label,
           "variant": run.variant.name, "dt": run.dt, "t_end": run.t_end, "error": math.nan, "status": "ok",
           "wall_s": math.nan, "cpu_s": math.nan, "steps": 0, "iterations": 0, "energy_drift": math.nan,
           "constraint_drift": math.nan, "worker": worker or _here(), "reference": plan.label}
    run_scheme(system, scheme, RunLength(run.dt, 0.0), progress=False, reduce=spec.drift)  # loads the kernel: not timed
    wall, cpu = time.perf_counter(), time.thread_time()
    traj = run_scheme(system, scheme, RunLength(run.dt, run.t_end, run.every), progress=False, on_failure="return",
                      reduce=spec.drift)
    row["wall_s"], row["cpu_s"] = time.perf_counter() - wall, time.thread_time() - cpu
    row["steps"] = int(traj.steps)
    row["iterations"] = int(np.sum(traj.iterations))
    if not spec.drift:
        for column in DRIFT_COLUMNS:
            del row[column]
    elif traj.reductions:
        row["energy_drift"] = traj.reductions["energy_error"].max
        row["constraint_drift"] = traj.reductions["constraint"].max
    if traj.status != "success":
        row["status"] = "failed: " + one_line(traj.message, 300)
        return row, _digest()
    try:
        if plan.kind == references.MEASURE:
            row.update(_measured(spec.measure(traj, system)))
        elif plan.kind == "run":
            ref = _reference_run(spec, v)
            if isinstance(ref, str):
                raise references.Unmeasurable(ref)
            row["error"] = references.run_error(traj, *ref)
        else:
            row["error"] = references.error(plan, traj, system)
        if not math.isfinite(row["error"]):
            raise references.Unmeasurable(f"the error is not finite ({row['error']!r})")
    except references.Unmeasurable as exc:
        row["error"] = math.nan
        row["status"] = "failed: " + one_line(str(exc), 300)
    except Exception as exc:  # the user's measure: its failure is this run's, the study goes on
        if plan.kind != references.MEASURE:
            raise
        row["error"] = math.nan
        row["status"] = "failed: measure raised " + one_line(f"{type(exc).__name__}: {exc}", 300)
    return row, _digest()


def _measured(value) -> dict:
    """A measure's result as columns: a number is the error; a mapping holds ``"error"`` and any
    other named numbers (extra columns)."""
    if isinstance(value, dict):
        if "error" not in value:
            raise references.Unmeasurable(f"the measure returned no 'error' (keys: {', '.join(map(str, value))})")
        out = {}
        for key, v in value.items():
            if not isinstance(key, str) or not key or key in COLUMNS and key != "error":
                raise references.Unmeasurable(f"the measure returned the key {key!r}, a column of the study "
                                              "(or not a name)")
            out[key] = _as_float(v, key)
        return out
    return {"error": _as_float(value, "error")}


def _as_float(v, key) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise references.Unmeasurable(f"the measure's {key!r} is not a number: {type(v).__name__}")
    return float(v)


# -- where the runs go ---------------------------------------------------------------------------
_SPEC = None  # a pool worker's study, sent once when it starts


def _pool_start(spec_bytes: bytes) -> None:
    global _SPEC
    # Ctrl-C goes to the whole process group: the driver stops the pool, the workers say nothing.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _SPEC = pickle.loads(spec_bytes)


def _pool_task(index: int):
    row, digest = execute_run(_SPEC, index)
    return index, row, digest


def _dask_task(spec, index: int):
    from distributed import get_worker

    row, digest = execute_run(spec, index, worker=get_worker().address)
    return index, row, digest


def _dumps(spec) -> bytes:
    """The study pickled, with cloudpickle where it is installed (a measure defined in a notebook or
    a script's ``__main__`` then travels by value)."""
    try:
        import cloudpickle
    except ImportError:
        return pickle.dumps(spec)
    return cloudpickle.dumps(spec)


def default_workers() -> int:
    """Every core this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def connect(address: str):
    """A ``distributed.Client`` of the scheduler at ``address``, or :class:`InputError` (field
    ``scheduler``) when there is none to reach."""
    if not isinstance(address, str) or not address:
        raise InputError("scheduler", f"must be the address of a Dask scheduler such as tcp://127.0.0.1:8786, got "
                                      f"{address!r}")
    try:
        from distributed import Client
    except ImportError:
        raise InputError("scheduler", "needs the Dask distributed package, which is not installed "
                                      "(pip install distributed)") from None
    advice = "give the address of a running scheduler, e.g. tcp://127.0.0.1:8786"
    scheme, sep, rest = address.rpartition("://")
    if scheme in ("", "tcp"):
        # A plain TCP connection first: a wrong host or port is reported at once, and no half-made
        # Client is left to time out when the interpreter exits.
        host, colon, port = rest.rpartition(":")
        host = host.strip("[]")
        if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise InputError("scheduler", f"{address!r} is not an address HOST:PORT; {advice}")
        try:
            socket.create_connection((host, int(port)), timeout=SCHEDULER_TIMEOUT).close()
        except OSError as exc:
            raise InputError("scheduler", f"cannot reach a Dask scheduler at {address} "
                                          f"({one_line(exc.strerror or str(exc) or type(exc).__name__, 200)}); "
                                          f"{advice}") from None
    try:
        return Client(address, timeout=SCHEDULER_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise InputError("scheduler", f"no Dask scheduler answered at {address} within {SCHEDULER_TIMEOUT:g} s "
                                      f"({one_line(str(exc) or type(exc).__name__, 200)}); {advice}") from None


def execute(spec, indices, on_row, *, workers: int | None = None, client=None) -> str:
    """Run ``indices`` of ``spec.runs()``, calling ``on_row(index, row)`` as each finishes; return
    a description of where they ran. ``client``: a connected ``distributed.Client`` (Dask);
    otherwise ``workers`` local processes (this process itself for one)."""
    indices = sorted(indices, key=lambda i: spec.runs()[i].dt)  # the dearest first: the pool ends together
    digest = _digest()

    def take(index, row, their_digest):
        if their_digest != digest:
            raise InputError("scheduler", f"worker {row['worker']} runs other rbdyn sources ({their_digest[:16]}) than "
                                          f"this study ({digest[:16]}): install the same rbdyn on every worker")
        on_row(index, row)

    if client is not None:
        return _on_dask(spec, indices, take, client)
    n = default_workers() if workers is None else workers
    n = min(n, len(indices)) if indices else 1
    if n <= 1:
        for index in indices:
            take(index, *execute_run(spec, index))
        return f"this process ({_here()})"
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    pool = context.Pool(n, initializer=_pool_start, initargs=(_dumps(spec),))
    try:
        for index, row, their_digest in pool.imap_unordered(_pool_task, indices, chunksize=1):
            take(index, row, their_digest)
        pool.close()
    finally:
        pool.terminate()  # at once, also after Ctrl-C or an error: no run goes on unseen
        pool.join()
    return f"a pool of {n} local processes ({context.get_start_method()})"


def _on_dask(spec, indices, take, client) -> str:
    from distributed import as_completed

    try:  # every worker's sources, before any run is sent
        theirs = client.run(_digest)
    except Exception as exc:  # a worker without rbdyn, say: the cluster does not fit the study
        raise InputError("scheduler", f"the workers of {client.scheduler.address} cannot run rbdyn "
                                      f"({one_line(f'{type(exc).__name__}: {exc}', 200)}); install rbdyn on every "
                                      "worker") from None
    other = {w: d for w, d in theirs.items() if d != _digest()}
    if other:
        worker, digest = next(iter(other.items()))
        raise InputError("scheduler", f"worker {worker} runs other rbdyn sources ({digest[:16]}) than this study "
                                      f"({_digest()[:16]}): install the same rbdyn on every worker")
    if not theirs:
        raise InputError("scheduler", f"the scheduler at {client.scheduler.address} has no workers; start some "
                                      f"(dask worker {client.scheduler.address})")
    shared = client.scatter(spec, broadcast=True)
    futures = [client.submit(_dask_task, shared, index, pure=False) for index in indices]
    try:
        for future in as_completed(futures, loop=client.loop):
            take(*future.result())
    finally:
        client.cancel(futures)
    return f"Dask scheduler {client.scheduler.address} ({len(theirs)} workers)"
