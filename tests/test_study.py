"""Studies (:func:`rbdyn.study`, ``rbdyn study``): the grid, the errors and orders, the outputs, the
CLI contract, resuming an interrupted study, and the same bits on a Dask cluster.

Kept short: a few steps of the pendulum (order 2 from three steps in 2 s) and of the boxes. The
test that starts a real Dask scheduler and two workers (subprocesses on 127.0.0.1, ports chosen
by the scheduler, stopped at the end) uses the fixture ``dask_cluster``: select it with
``-k dask``.
"""

from __future__ import annotations

import csv
import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import rbdyn
from rbdyn import verify
from rbdyn.cli import main
from rbdyn.studies import execute as study_execute

ROOT = Path(__file__).resolve().parents[1]
DONE_WHEN = ["study", "pendulum-solfec", "--schemes", "rig_neg,rig_imp", "--dt", "4e-3,2e-3,1e-3", "--t-end", "2",
             "--no-progress"]


def cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def one_error_line(err):
    assert "Traceback" not in err
    assert err.endswith("\n") and err.count("\n") == 1, repr(err)
    assert err.startswith("rbdyn: error: ")
    return err[:-1]


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# -- the grid, the errors, the orders ------------------------------------------------------------
def test_pendulum_errors_fall_at_order_two():
    result = rbdyn.study("pendulum-solfec", ["rig_neg", "rig_imp"], [4e-3, 2e-3, 1e-3], t_end=2.0, workers=1,
                         progress=False)
    assert isinstance(result, rbdyn.StudyResult)
    assert len(result.rows) == 6 and result.failed == 0
    assert [(r["scheme"], r["dt"]) for r in result.rows] == [(s, h) for s in ("rig_neg", "rig_imp")
                                                              for h in (4e-3, 2e-3, 1e-3)]
    for label in result.labels:
        fit = result.orders[label, ""]
        assert abs(fit.order - 2.0) < 0.05 and fit.uncertainty < 0.05, f"{fit:.3f}"
    assert result.references[""]["kind"] == "pendulum" and "pendulum_period" in result.rows[0]["reference"]
    for row in result.rows:
        assert row["status"] == "ok" and row["steps"] == round(2.0 / row["dt"])
        assert row["iterations"] > 0 and row["constraint_drift"] < 1e-12 and row["energy_drift"] > 0
        assert row["wall_s"] > 0 and row["cpu_s"] >= 0 and row["worker"] == f"{socket.gethostname()}:{os.getpid()}"
    # the error is the page's period error as a phase: the sign changes of the vertical velocity
    # against jT/4 (the pendulum page's rule), recomputed here
    period = verify.pendulum_period(1.0, math.pi**2, math.pi / 2)
    traj = rbdyn.load_scenario("pendulum-solfec").run("rig_neg", dt=4e-3, t_end=2.0, every=1)
    t_c = verify.sign_changes(traj.t, traj.v_com[:, 0, 2])
    n = int((traj.t[-1] - period / 8) // (period / 4))
    assert result.rows[0]["error"] == np.max(np.abs(t_c[:n] - np.arange(1, n + 1) * period / 4))


def test_references_by_system_and_the_reference_run():
    free = rbdyn.study("boxes-complex", ["rk4", "symplectic_euler"], [4e-3, 2e-3], t_end=1.0, workers=1)
    assert free.references[""]["kind"] == "free" and "euler_poinsot" in free.references[""]["label"]
    assert abs(free.orders["symplectic_euler", ""].order - 1.0) < 0.1
    loop = rbdyn.study("bricard", ["rig_neg", "rig_imp"], [4e-3, 2e-3], t_end=0.2, workers=1)
    ref = loop.references[""]
    # the most accurate of the study's schemes (the literature table; first among equals) at a
    # quarter of the smallest step, and the study says so
    assert ref["kind"] == "run" and ref["label"] == "run rig_neg dt=0.0005" and "no closed form" in ref["note"]
    assert all(r["status"] == "ok" and 0 < r["error"] < 1e-4 for r in loop.rows)
    assert "reference: run rig_neg dt=0.0005" in loop.summary()
    asked = rbdyn.study("pendulum-solfec", ["rig_neg"], [4e-3, 2e-3], t_end=1.0, reference=("rig_imp", 2.5e-4),
                        workers=1)
    assert asked.references[""]["label"] == "run rig_imp dt=0.00025"


def make_measure():
    """A user's measure: half the flip period of the box from the sign changes of W_y, against
    the exact one. Made inside a function, as in a notebook, so that it travels to a Dask worker
    by value (this test module is not importable there)."""

    def flip_half_period(traj, system):
        body = system.bodies[0]
        flips = verify.sign_changes(traj.t, traj.omega_body[:, 0, 1])
        exact_half = rbdyn.exact.euler_poinsot_period(np.diag(body.inertia), body.omega_body) / 2
        half = float(np.mean(np.diff(flips)))
        return {"error": abs(half - exact_half), "half_period": half}

    return flip_half_period


def test_settings_variants_and_a_measure():
    variants = {"a": {"body[0].omega_body": [0.1, 5.0, 0.1]}, "b": {"body[0].omega_body": [0.2, 5.0, 0.05]}}
    result = rbdyn.study("boxes-complex", ["rig_imp", "gen_alpha"], [2e-3], t_end=9.0,
                         settings={"gen_alpha": {"rho_inf": [0.5, 1.0]}}, overrides=variants,
                         measure=make_measure(), workers=1)
    assert result.labels == ("rig_imp", "gen_alpha(rho_inf=0.5)", "gen_alpha(rho_inf=1.0)")
    assert result.variants == ("a", "b") and len(result.rows) == 6
    assert result.columns[result.columns.index("error") + 1] == "half_period"
    assert all(r["status"] == "ok" and r["error"] < 0.05 for r in result.rows)
    halves = {r["variant"]: r["half_period"] for r in result.rows if r["label"] == "rig_imp"}
    assert halves["a"] != halves["b"]  # each variant its own initial rates
    assert result.references["a"]["kind"] == "measure"


def test_without_drift_the_same_errors_and_no_drift_columns(capsys, tmp_path):
    args = dict(schemes=["rig_neg"], dt=[4e-3, 2e-3], t_end=1.0, workers=1, progress=False)
    with_drift = rbdyn.study("pendulum-solfec", **args)
    without = rbdyn.study("pendulum-solfec", drift=False, **args)
    assert [r["error"] for r in without.rows] == [r["error"] for r in with_drift.rows]  # the same bits
    assert all(math.isfinite(r["energy_drift"]) for r in with_drift.rows)
    assert "energy_drift" not in without.columns and "constraint_drift" not in without.columns
    assert all("energy_drift" not in r for r in without.rows)
    rc, out, err = cli(capsys, *DONE_WHEN[:3], "rig_neg", "--dt", "4e-3", "--t-end", "1", "--no-progress",
                       "--no-drift", "--out", tmp_path / "s.csv")
    assert rc == 0 and err == ""
    rows = read_csv(tmp_path / "s.csv")
    assert "energy_drift" not in rows[0] and float(rows[0]["error"]) == without.rows[0]["error"]
    assert json.loads((tmp_path / "s.json").read_text())["drift"] is False


def test_a_run_that_fails_is_a_row_and_the_study_goes_on(capsys, tmp_path):
    out = tmp_path / "f.csv"
    rc, stdout, err = cli(capsys, "study", "heavy-top-solfec", "--schemes", "symplectic_euler,rig_neg", "--dt",
                          "0.009", "--t-end", "10", "--workers", "1", "--no-progress", "--out", out)
    assert rc == 0 and err == ""
    failed, ok = read_csv(out)
    assert failed["error"] == "nan" and failed["status"].startswith("failed: numerical failure at t = ")
    assert "\n" not in failed["status"] and ok["status"] == "ok" and math.isfinite(float(ok["error"]))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.csv", "f.json"]


def test_a_study_whose_every_run_fails_writes_nothing(capsys, tmp_path):
    out = tmp_path / "f.csv"
    out.write_text("previous\n")
    rc, stdout, err = cli(capsys, "study", "heavy-top-solfec", "--schemes", "symplectic_euler", "--dt", "0.009",
                          "--t-end", "10", "--workers", "1", "--no-progress", "--out", out)
    assert rc == 1 and "every run failed" in one_error_line(err)
    assert out.read_text() == "previous\n" and not (tmp_path / "f.json").exists()
    assert (tmp_path / "f.csv.journal").exists()  # the failed rows are kept
    with pytest.raises(rbdyn.NumericalError):
        rbdyn.study("heavy-top-solfec", "symplectic_euler", 0.009, t_end=10.0, workers=1)


# -- outputs and the command line ------------------------------------------------------------------
def test_done_when_command_on_this_machine(capsys, tmp_path):
    out, figure = tmp_path / "s.csv", tmp_path / "s.png"
    rc, stdout, err = cli(capsys, *DONE_WHEN, "--out", out, "--plot", figure)
    assert rc == 0 and err == "", err
    rows = read_csv(out)
    assert len(rows) == 6 and {"scheme", "dt", "error", "wall_s", "worker", "status"} <= set(rows[0])
    for scheme in ("rig_neg", "rig_imp"):
        fit = verify.fit_order([float(r["dt"]) for r in rows if r["scheme"] == scheme],
                               [float(r["error"]) for r in rows if r["scheme"] == scheme])
        assert abs(fit.order - 2.0) < 0.05
        assert f"{scheme}  order {fit:.2f}" in stdout
    host = socket.gethostname()
    assert all(r["worker"].startswith(host + ":") and r["worker"] != f"{host}:{os.getpid()}" for r in rows)
    record = json.loads((tmp_path / "s.json").read_text())
    from rbdyn._stamp import short_digest

    assert record["stamp"]["sources"] == short_digest() and record["stamp"]["rbdyn"] == rbdyn.__version__
    assert record["dt"] == [4e-3, 2e-3, 1e-3] and record["runs"] == 6 and record["failed"] == 0
    assert [o["label"] for o in record["orders"]] == ["rig_neg", "rig_imp"] and "±" in record["orders"][0]["text"]
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.csv", "s.json", "s.png"]  # no journal left
    # the same numbers in this process (one worker) as in the pool: the runs are pure
    local = rbdyn.study("pendulum-solfec", ["rig_neg", "rig_imp"], [4e-3, 2e-3, 1e-3], t_end=2.0, workers=1)
    assert [repr(r["error"]) for r in local.rows] == [r["error"] for r in rows]


def test_csv_to_standard_output_without_out(capsys):
    rc, stdout, err = cli(capsys, "study", "pendulum-solfec", "--schemes", "rig_neg", "--dt", "4e-3,2e-3",
                          "--t-end", "1", "--workers", "1", "--no-progress")
    assert rc == 0 and stdout.startswith("scheme,settings,label,variant,dt,") and len(stdout.splitlines()) == 3
    assert "order" in err  # the summary goes to stderr when the CSV takes stdout


STUDY_ARG_CASES = [
    ("unknown-scheme", ["--schemes", "rig_neg,nope"], ["--schemes[1]", "unknown scheme 'nope'", "allowed: "]),
    ("dt-negative", ["--dt", "4e-3,2e-3,-1e-3"], ["--dt[2]: must be > 0"]),
    ("dt-zero", ["--dt", "0"], ["--dt[0]: must be > 0"]),
    ("dt-not-a-number", ["--dt", "4e-3,x"], ["--dt[1]", "not a number"]),
    ("dt-twice", ["--dt", "4e-3,4e-3"], ["--dt[1]", "twice"]),
    ("dt-empty", ["--dt", "4e-3,,1e-3"], ["--dt[1]", "empty"]),
    ("scheme-without-constraints", ["--schemes", "rk4"], ["--schemes[0]", "does not handle constraints"]),
    ("setting-unknown", ["--setting", "rig_neg.rho_inf=0.5"], ["--setting rig_neg.rho_inf", "not a setting"]),
    ("setting-invalid", ["--schemes", "gen_alpha", "--setting", "gen_alpha.rho_inf=0.5,2"],
     ["--setting gen_alpha.rho_inf[1]"]),
    ("setting-other-scheme", ["--setting", "gen_alpha.rho_inf=0.5"], ["--setting gen_alpha", "not a scheme of"]),
    ("override-bad-key", ["--override", "a:body[3].mass=2.0"], ["--override [a].body[3].mass", "no entry [3]"]),
    ("override-bad-value", ["--override", "a:body[0].mass=-1.0"], ["--override [a].body[0].mass"]),
    ("override-run", ["--override", "a:run.dt=0.1"], ["--override [a].run.dt", "set by the study"]),
    ("t-end-zero", ["--t-end", "0"], ["--t-end", "> 0"]),
    ("workers-zero", ["--workers", "0"], ["--workers", ">= 1"]),
    ("reference-bad", ["--reference", "nope@x"], ["--reference"]),
    ("reference-unknown-scheme", ["--reference", "nope@1e-4"], ["--reference[0]", "unknown scheme"]),
    ("out-trailing-slash", ["--out", "{tmp}/x.csv/"], ["--out", "slash"]),
    ("out-json", ["--out", "{tmp}/x.json"], ["--out", ".json"]),
    ("plot-suffix", ["--plot", "{tmp}/x.txt"], ["--plot", ".png"]),
]


@pytest.mark.parametrize("args, expected", [c[1:] for c in STUDY_ARG_CASES], ids=[c[0] for c in STUDY_ARG_CASES])
def test_invalid_study_arguments(capsys, tmp_path, args, expected):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    rc, out, err = cli(capsys, "study", "pendulum-solfec", "--t-end", "0.5", "--no-progress", *args)
    assert rc == 2 and out == ""
    line = one_error_line(err)
    for s in expected:
        assert s in line, (s, line)
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_an_unreachable_scheduler_is_invalid_input(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(study_execute, "SCHEDULER_TIMEOUT", 1.0)
    with socket.socket() as s:  # a free port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for address in (f"tcp://127.0.0.1:{port}", "127.0.0.1:0", "no-port"):
        rc, out, err = cli(capsys, *DONE_WHEN, "--out", tmp_path / "s.csv", "--scheduler", address)
        line = one_error_line(err)
        assert rc == 2 and "arguments: --scheduler: " in line and "tcp://127.0.0.1:8786" in line, line
    assert "cannot reach a Dask scheduler" in line or "HOST:PORT" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("call, field", [
    (lambda: rbdyn.study(3), "scenario"),
    (lambda: rbdyn.study("pendulum-solfec", schemes=5), "schemes"),
    (lambda: rbdyn.study("pendulum-solfec", dt="x"), "dt[0]"),
    (lambda: rbdyn.study("pendulum-solfec", dt=[1e-3, None]), "dt[1]"),
    (lambda: rbdyn.study("pendulum-solfec", t_end="2"), "t_end"),
    (lambda: rbdyn.study("pendulum-solfec", settings=[1]), "settings"),
    (lambda: rbdyn.study("pendulum-solfec", overrides=3), "overrides"),
    (lambda: rbdyn.study("pendulum-solfec", overrides=[{"body[0].mass": object()}]), "overrides[0].body[0].mass"),
    (lambda: rbdyn.study("pendulum-solfec", measure=3), "measure"),
    (lambda: rbdyn.study("pendulum-solfec", reference=3), "reference"),
    (lambda: rbdyn.study("pendulum-solfec", workers=1.5), "workers"),
    (lambda: rbdyn.study("pendulum-solfec", out=3), "out"),
    (lambda: rbdyn.study("pendulum-solfec", scheduler=3), "scheduler"),
    (lambda: rbdyn.study("pendulum-solfec", progress="yes"), "progress"),
    (lambda: rbdyn.study("pendulum-solfec", drift=1), "drift"),
], ids=["scenario", "schemes", "dt", "dt-none", "t_end", "settings", "overrides", "override-value", "measure",
        "reference", "workers", "out", "scheduler", "progress", "drift"])
def test_the_api_raises_input_error_for_wrong_types(call, field):
    with pytest.raises(rbdyn.InputError) as info:
        call()
    assert info.value.field == field, str(info.value)


# -- resuming ----------------------------------------------------------------------------------------
def test_an_interrupted_study_resumes_without_running_its_finished_runs(tmp_path, monkeypatch, capsys):
    real, calls = study_execute.execute_run, []

    def interrupted_after_two(spec, index, worker=None):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(index)
        return real(spec, index, worker)

    out = tmp_path / "s.csv"
    args = ("pendulum-solfec", ["rig_neg", "rig_imp"], [4e-3, 2e-3, 1e-3])
    monkeypatch.setattr(study_execute, "execute_run", interrupted_after_two)
    with pytest.raises(KeyboardInterrupt) as info:
        rbdyn.study(*args, t_end=2.0, out=out, workers=1)
    assert info.value.rbdyn_study == (2, 6, tmp_path.resolve() / "s.csv.journal")
    assert not out.exists() and len((tmp_path / "s.csv.journal").read_text().splitlines()) == 3  # header + 2
    first, again = list(calls), []

    def counted(spec, index, worker=None):
        again.append(index)
        return real(spec, index, worker)

    monkeypatch.setattr(study_execute, "execute_run", counted)
    result = rbdyn.study(*args, t_end=2.0, out=out, workers=1)
    assert sorted(again) == sorted(set(range(6)) - set(first)) and result.resumed == 2
    assert not (tmp_path / "s.csv.journal").exists() and len(read_csv(out)) == 6
    fresh = rbdyn.study(*args, t_end=2.0, workers=1)
    assert [r["error"] for r in result.rows] == [r["error"] for r in fresh.rows]
    # Ctrl-C on the command line: one line, exit 130, the journal named
    monkeypatch.setattr(study_execute, "execute_run", interrupted_after_two)
    calls.clear()
    rc, stdout, err = cli(capsys, *DONE_WHEN, "--workers", "1", "--out", tmp_path / "c.csv")
    assert rc == 130 and err.count("\n") == 1 and "interrupted after 2 of 6 runs" in err and "c.csv.journal" in err


def test_a_killed_study_resumes_from_its_journal(tmp_path, monkeypatch):
    """A subprocess running a study is killed (SIGKILL) once its first rows are journaled; the
    same study then runs only the runs the journal does not hold."""
    out = tmp_path / "k.csv"
    journal = tmp_path / "k.csv.journal"
    dts = [1e-4, 2e-4, 4e-4, 8e-4, 1.6e-3]  # the dearest run first: the others take a second or more
    argv = [sys.executable, "-m", "rbdyn", "study", "pendulum-solfec", "--schemes", "rig_neg,rig_imp", "--dt",
            ",".join(map(str, dts)), "--t-end", "20", "--workers", "1", "--no-progress", "--out", str(out)]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if journal.exists() and len(journal.read_text().splitlines()) >= 2:  # header and a row
                break
            time.sleep(0.01)
        assert proc.poll() is None, f"the study ended before it could be killed: {proc.stderr.read()}"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
    kept = [json.loads(line) for line in journal.read_text().splitlines()[1:] if line.endswith("}")]
    assert 1 <= len(kept) < 10 and not out.exists()
    real, ran = study_execute.execute_run, []

    def counted(spec, index, worker=None):
        ran.append(index)
        return real(spec, index, worker)

    monkeypatch.setattr(study_execute, "execute_run", counted)
    result = rbdyn.study("pendulum-solfec", ["rig_neg", "rig_imp"], dts, t_end=20.0, out=out, workers=1)
    assert len(ran) == 10 - len(kept) and result.resumed == len(kept)
    keys = {run.key: run.index for run in
            rbdyn.studies.grid.declare("pendulum-solfec", ["rig_neg", "rig_imp"], dts, t_end=20.0).runs()}
    assert not {keys[entry["run"]] for entry in kept} & set(ran)  # no finished run ran again
    assert len(read_csv(out)) == 10 and not journal.exists()


# -- a Dask cluster ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    """A Dask scheduler and two workers (one process, one thread each) on 127.0.0.1, started with
    the environment's ``dask`` command as subprocesses that inherit this environment
    (``NUMBA_CACHE_DIR``); the scheduler picks a free port and writes it to its scheduler file.
    Yields the scheduler's address; stops them all at the end."""
    distributed = pytest.importorskip("distributed")
    folder = tmp_path_factory.mktemp("dask")
    dask_cmd = Path(sys.executable).with_name("dask")
    assert dask_cmd.exists(), f"no dask command beside {sys.executable}"
    file = folder / "scheduler.json"
    common = {"cwd": folder, "env": dict(os.environ), "stdout": subprocess.DEVNULL, "stderr": subprocess.STDOUT,
              "start_new_session": True}
    procs = [subprocess.Popen([str(dask_cmd), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", str(file)], **common)]
    try:
        deadline = time.monotonic() + 120
        while not (file.exists() and file.stat().st_size) and time.monotonic() < deadline:
            assert procs[0].poll() is None, "the Dask scheduler did not start"
            time.sleep(0.1)
        address = json.loads(file.read_text())["address"]
        procs += [subprocess.Popen([str(dask_cmd), "worker", address, "--nworkers", "1", "--nthreads", "1",
                                    "--no-dashboard", "--host", "127.0.0.1"], **common) for _ in range(2)]
        with distributed.Client(address, timeout=120, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=180)
        yield address
    finally:
        for proc in reversed(procs):  # workers first, then the scheduler
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)


def test_dask_cluster_gives_the_same_bits_and_names_its_workers(dask_cluster, capsys, tmp_path):
    local, remote = tmp_path / "local.csv", tmp_path / "dask.csv"
    assert cli(capsys, *DONE_WHEN, "--out", local)[0] == 0
    rc, stdout, err = cli(capsys, *DONE_WHEN, "--out", remote, "--scheduler", dask_cluster)
    assert rc == 0 and err == "", err
    here, there = read_csv(local), read_csv(remote)
    assert len(there) == 6
    assert [r["error"] for r in there] == [r["error"] for r in here]  # the same bits, as written
    for column in ("scheme", "dt", "steps", "iterations", "energy_drift", "constraint_drift", "reference"):
        assert [r[column] for r in there] == [r[column] for r in here], column
    workers = {r["worker"] for r in there}
    assert workers and all(w.startswith("tcp://127.0.0.1:") for w in workers)
    import distributed

    with distributed.Client(dask_cluster, timeout=60, set_as_default=False) as client:
        assert workers <= set(client.scheduler_info()["workers"])
    assert "Dask scheduler" in json.loads((tmp_path / "dask.json").read_text())["backend"]
    # an ensemble with a measure defined here travels to the workers (cloudpickle) and gives the
    # same bits as in this process
    variants = [{"body[0].omega_body": [0.1 + 0.05 * k, 5.0, 0.1]} for k in range(3)]
    kw = dict(t_end=9.0, overrides=variants, measure=make_measure())
    on_dask = rbdyn.study("boxes-complex", ["rig_imp", "rk4"], [2e-3], scheduler=dask_cluster, **kw)
    here_ = rbdyn.study("boxes-complex", ["rig_imp", "rk4"], [2e-3], workers=1, **kw)
    assert [(r["error"], r["half_period"]) for r in on_dask.rows] == [(r["error"], r["half_period"])
                                                                      for r in here_.rows]
