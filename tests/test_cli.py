"""The ``rbdyn`` command line: ``list``, ``show``, ``run``.

Run in-process through :func:`rbdyn.cli.main` (output captured with capsys)
and, for the entry point itself, as ``python -m rbdyn`` in a subprocess.

Contract: exit 0 on success; exit 2 with exactly one line on stderr that
names the file or argument and the field for every invalid input; exit 1
naming the time and step on a numerical failure (the rows computed before
it still written); never a traceback.
"""

from __future__ import annotations

import dataclasses
import io
import os
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

import rbdyn
from rbdyn.cli import main

ROOT = Path(__file__).resolve().parents[1]
PER_BODY = ["x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "Wx", "Wy", "Wz"]


def _fields(cls):
    return dataclasses.fields(cls)


def cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def run_module(*argv, timeout=120):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "rbdyn", *map(str, argv)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, check=False)


def one_error_line(err):
    """stderr holds exactly one line, the error; return it."""
    assert "Traceback" not in err
    assert err.endswith("\n") and err.count("\n") == 1, repr(err)
    assert err.startswith("rbdyn: error: ")
    return err[:-1]


def parse_csv(text):
    lines = text.splitlines()
    return lines[0].split(","), [line.split(",") for line in lines[1:]]


def assert_csv_equals(text, traj):
    header, rows = parse_csv(text)
    assert header == traj.columns()
    table = traj.table()
    assert len(rows) == table.shape[0]
    for r, row in enumerate(rows):
        assert [float(s) for s in row] == table[r].tolist()
        assert row == [repr(v) for v in table[r].tolist()]


# ---------------------------------------------------------------------------
# list, show
# ---------------------------------------------------------------------------
def test_list(capsys):
    rc, out, err = cli(capsys, "list")
    assert rc == 0 and err == ""
    lines = out.splitlines()
    entries = {}
    for line in lines:
        if line.startswith("  "):
            name, desc = line.split(None, 1)
            assert name not in entries
            entries[name] = desc.strip()
    for name, desc in rbdyn.builtin_scenarios().items():
        assert desc and entries[name] == desc
    for name, cls in rbdyn.schemes().items():
        assert entries[name] == cls.description
    kinds = rbdyn.constraints.kind_names()
    for name in kinds:  # every registered constraint kind, with the keys a scenario gives it
        assert "Keys: " in entries[name] and "body, " in entries[name]
    # the kinds section lists exactly the registry's kinds, in its order
    section = lines[lines.index("Constraint kinds ([[constraint]] type = ...):") + 1:]
    end = next((i for i, line in enumerate(section) if line and not line.startswith(" ")), len(section))
    printed = [line.split(None, 1)[0] for line in section[:end] if line.startswith("  ")]
    assert printed == [k.kind for k in rbdyn.constraints.KINDS]
    assert len(entries) == len(rbdyn.builtin_scenarios()) + len(rbdyn.schemes()) + len(kinds)
    assert lines.index("Scenarios:") < lines.index("Schemes:") < lines.index("Constraint kinds ([[constraint]] type = ...):")


@pytest.mark.parametrize("name", list(rbdyn.builtin_scenarios()))
def test_show_round_trips(capsys, tmp_path, name):
    rc, out, err = cli(capsys, "show", name)
    assert rc == 0 and err == ""
    tomllib.loads(out)  # valid TOML
    path = tmp_path / f"{name}.toml"
    path.write_text(out, encoding="utf-8")
    copy, orig = rbdyn.load_scenario(path), rbdyn.load_scenario(name)
    assert copy.source == str(path) and orig.source == f"builtin:{name}"
    assert (copy.name, copy.scheme, copy.dt, copy.t_end, copy.every) == (orig.name, orig.scheme, orig.dt, orig.t_end, orig.every)
    for a, b in zip(copy.system.bodies, orig.system.bodies, strict=True):
        assert a.name == b.name and a.mass == b.mass
        np.testing.assert_array_equal(a.inertia, b.inertia)
        np.testing.assert_array_equal(a.R_world_body, b.R_world_body)
        np.testing.assert_array_equal(a.omega_body, b.omega_body)
        np.testing.assert_array_equal(a.position, b.position)
    np.testing.assert_array_equal(copy.system.gravity, orig.system.gravity)


def test_show_unknown(capsys):
    rc, out, err = cli(capsys, "show", "nosuch")
    assert rc == 2 and out == ""
    line = one_error_line(err)
    assert "'nosuch'" in line and "boxes-complex" in line


# ---------------------------------------------------------------------------
# run
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "t_end, every, steps",
    [("0.01", "2", [0, 2, 4, 6, 8, 10]), ("0.011", "2", [0, 2, 4, 6, 8, 10, 11]), ("0.0105", "4", [0, 4, 8, 11])],
)
def test_run_rows_and_header(capsys, t_end, every, steps):
    rc, out, err = cli(capsys, "run", "boxes-simple", "--t-end", t_end, "--every", every)
    assert rc == 0 and err == ""
    header, rows = parse_csv(out)
    assert header == ["t"] + [f"box.{c}" for c in PER_BODY] + ["energy", "constraint"]
    assert [float(r[0]) for r in rows] == (np.array(steps) * 0.001).tolist()
    ref = rbdyn.load_scenario("boxes-simple").run(t_end=float(t_end), every=int(every))
    assert_csv_equals(out, ref)


def test_run_out_file(capsys, tmp_path):
    path = tmp_path / "run.csv"
    rc, out, err = cli(capsys, "run", "boxes-complex", "--t-end", "0.05", "--every", "10", "--out", path)
    assert rc == 0 and out == "" and err == ""
    assert_csv_equals(path.read_text(encoding="utf-8"), rbdyn.load_scenario("boxes-complex").run(t_end=0.05, every=10))


PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name, suffix, magic", [("pendulum-solfec", "png", PNG), ("boxes-complex", "pdf", b"%PDF"),
                                                 ("double-pendulum", "svg", b"<?xml")])
def test_run_plot(capsys, tmp_path, name, suffix, magic):
    plot, csv = tmp_path / f"run.{suffix}", tmp_path / "run.csv"
    rc, out, err = cli(capsys, "run", name, "--t-end", "0.2", "--plot", plot, "--out", csv)
    assert rc == 0 and out == "" and err == ""
    assert plot.read_bytes().startswith(magic)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([plot.name, csv.name])  # no temporary file left


def test_run_plot_to_stdout_run(capsys, tmp_path):
    plot = tmp_path / "run.png"
    rc, out, err = cli(capsys, "run", "boxes-simple", "--t-end", "0.01", "--plot", plot)
    assert rc == 0 and err == "" and out.startswith("t,")
    assert plot.read_bytes().startswith(PNG)


def test_a_figure_that_fails_leaves_the_previous_out_as_it_was(capsys, tmp_path, monkeypatch):
    """Both outputs are complete before either is renamed into place: a figure that cannot be
    drawn leaves the --out of an earlier run, and no temporary file."""
    import rbdyn.plotting

    csv, plot = tmp_path / "run.csv", tmp_path / "run.png"
    csv.write_text("an earlier run\n", encoding="utf-8")

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(rbdyn.plotting, "plot_run", broken)
    rc, out, err = cli(capsys, "run", "boxes-simple", "--t-end", "0.01", "--out", csv, "--plot", plot)
    assert rc == 2 and out == ""
    assert "--plot: cannot write run.png: No space left on device" in one_error_line(err)
    assert csv.read_text(encoding="utf-8") == "an earlier run\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv"]


def test_a_run_without_plot_does_not_import_matplotlib():
    """matplotlib is an optional dependency, needed by --plot only."""
    code = ("import contextlib, io, sys\nfrom rbdyn.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    rc = main(['run', 'boxes-simple', '--t-end', '0.01'])\n"
            "print(rc, 'matplotlib' in sys.modules)")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.stdout.split() == ["0", "False"], done.stderr


def test_a_finished_run_removes_the_partial_rows_of_an_earlier_failure(capsys, tmp_path):
    csv, partial = tmp_path / "run.csv", tmp_path / "run.partial.csv"
    partial.write_text("rows of a failed run\n", encoding="utf-8")
    rc, out, err = cli(capsys, "run", "boxes-simple", "--t-end", "0.01", "--out", csv)
    assert rc == 0 and out == "" and err == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv"]


@pytest.mark.parametrize("plot, expected", [
    ("run.gif", "--plot: must end in one of .png, .pdf, .svg"),
    ("run", "--plot: must end in one of .png, .pdf, .svg"),
    ("nodir/run.png", "--plot: cannot write"),
    ("out.png", "--plot: is the --out file"),
])
def test_run_plot_invalid(capsys, tmp_path, plot, expected):
    rc, out, err = cli(capsys, "run", "boxes-simple", "--t-end", "0.01", "--out", tmp_path / "out.png",
                       "--plot", tmp_path / plot)
    assert rc == 2 and out == ""
    assert expected in one_error_line(err)
    assert list(tmp_path.iterdir()) == []  # refused before the run: nothing written


@pytest.mark.parametrize("scheme", list(rbdyn.schemes()))
def test_run_scheme_option(capsys, scheme):
    rc, out, err = cli(capsys, "run", "boxes-complex", "--t-end", "0.02", "--scheme", scheme)
    assert rc == 0 and err == ""
    assert_csv_equals(out, rbdyn.load_scenario("boxes-complex").run(scheme=scheme, t_end=0.02, every=10))


def test_run_dt_option(capsys):
    rc, out, err = cli(capsys, "run", "boxes-complex", "--t-end", "0.1", "--dt", "0.004", "--every", "5")
    assert rc == 0 and err == ""
    ref = rbdyn.load_scenario("boxes-complex").run(dt=0.004, t_end=0.1, every=5)
    assert ref.steps == 25
    assert_csv_equals(out, ref)


def test_run_scheme_setting_option(capsys):
    name = next((n for n, c in rbdyn.schemes().items() if any(f.type in (float, "float") for f in _fields(c))), None)
    if name is None:
        pytest.skip("no registered scheme has a float setting")
    fld = next(f.name for f in _fields(rbdyn.schemes()[name]) if f.type in (float, "float"))
    opt = "--" + fld.replace("_", "-")
    default = getattr(rbdyn.schemes()[name](), fld)
    rc, out, err = cli(capsys, "run", "boxes-complex", "--t-end", "0.01", "--scheme", name, opt, repr(default * 10))
    assert rc == 0 and err == ""
    sch = rbdyn.get_scheme(name, **{fld: default * 10})
    assert_csv_equals(out, rbdyn.load_scenario("boxes-complex").run(scheme=sch, t_end=0.01, every=10))


@pytest.mark.parametrize("opts, settings", [
    (["--rho-inf", "0.5"], {"rho_inf": 0.5}),
    (["--rho-inf", "0", "--newton-atol", "1e-9", "--newton-rtol", "1e-7", "--newton-max-iter", "20"],
     {"rho_inf": 0.0, "newton_atol": 1e-9, "newton_rtol": 1e-7, "newton_max_iter": 20}),
])
def test_run_gen_alpha_options(capsys, opts, settings):
    # gen_alpha's options reach the scheme on a constrained scenario (the Kynema top).
    rc, out, err = cli(capsys, "run", "heavy-top-kynema", "--scheme", "gen_alpha", "--t-end", "0.02", "--every", "5", *opts)
    assert rc == 0 and err == ""
    sch = rbdyn.get_scheme("gen_alpha", **settings)
    assert_csv_equals(out, rbdyn.load_scenario("heavy-top-kynema").run(scheme=sch, t_end=0.02, every=5))


@pytest.mark.parametrize("value, expected", [("1.5", "[0, 1]"), ("-0.1", "[0, 1]"), ("nan", "rho")])
def test_run_gen_alpha_rho_inf_invalid(capsys, value, expected):
    rc, out, err = cli(capsys, "run", "heavy-top-kynema", "--scheme", "gen_alpha", "--rho-inf", value)
    assert rc == 2 and out == ""
    line = one_error_line(err)
    assert "--rho-inf" in line and expected in line, line


def test_run_as_module_subprocess():
    proc = run_module("run", "boxes-simple", "--t-end", "0.01", "--every", "2")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert_csv_equals(proc.stdout, rbdyn.load_scenario("boxes-simple").run(t_end=0.01, every=2))


def test_invalid_input_as_module_subprocess(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(BASE.replace("mass = 10.0", "mass = -10.0"), encoding="utf-8")
    proc = run_module("run", path)
    assert proc.returncode == 2 and proc.stdout == ""
    line = one_error_line(proc.stderr)
    assert str(path) in line and "body[0].mass" in line


def test_no_progress_bar_when_not_a_terminal(capsys):
    # 10^4 steps: long enough for the bar on a terminal; stderr is not one here
    rc, out, err = cli(capsys, "run", "boxes-simple", "--every", "10000")
    assert rc == 0 and err == ""
    assert len(parse_csv(out)[1]) == 2
    proc = run_module("run", "boxes-simple", "--every", "5000")
    assert proc.returncode == 0 and proc.stderr == ""
    assert len(parse_csv(proc.stdout)[1]) == 3


def test_progress_bar_when_asked(capsys):
    """The check above is not vacuous: the bar does write to stderr when enabled."""
    rbdyn.load_scenario("boxes-simple").run(t_end=0.1, every=10, progress=True)
    out, err = capsys.readouterr()
    assert out == "" and "step 100/100" in err and err.endswith("\n")


# ---------------------------------------------------------------------------
# invalid input: exit 2, one line naming the file/argument and the field
# ---------------------------------------------------------------------------
BASE = """\
[scenario]
name = "cli-test"
description = "a box and a pivoted arm"

[run]
scheme = "rk4"
dt = 0.001
t_end = 0.003
every = 1

[world]
gravity = [0.0, 0.0, -9.8]

[[body]]
name = "box"
mass = 10.0
box = [0.1, 0.4, 0.9]
position = [0.0, 0.0, 0.0]
velocity = [-2.0, 2.0, 8.0]
quat_wxyz = [1.0, 0.0, 0.0, 0.0]
omega_body = [0.1, 5.0, 0.1]

[[body]]
name = "arm"
mass = 1.0
inertia = [0.5, 0.5, 0.1]
pivot = [0.0, 0.0, 2.0]
com_body = [0.0, 0.0, -0.5]
omega_body = [1.0, 0.0, 0.0]

[[load]]
type = "force"
body = "box"
force = [0.0, 1.0, 0.0]

[[load]]
type = "torque"
body = "arm"
torque = [0.0, 0.1, 0.0]

[[load]]
type = "point_force"
body = "box"
point_body = [0.05, 0.0, 0.0]
force = [0.0, 0.0, 1.0]
"""

RUN_SECTION = """\
[run]
scheme = "rk4"
dt = 0.001
t_end = 0.003
every = 1
"""
assert RUN_SECTION in BASE

SPHERICAL = """
[[constraint]]
type = "spherical"
body = "box"
point_body = [0.0, 0.0, 0.45]
"""

ROD = """
[[constraint]]
type = "rod"
body = "box"
point_body = [0.0, 0.0, 0.45]
other = "arm"
other_point = [0.0, 0.0, -1.0]
"""


def test_base_scenario_is_valid(capsys, tmp_path):
    path = tmp_path / "base.toml"
    path.write_text(BASE, encoding="utf-8")
    rc, out, err = cli(capsys, "run", path)
    assert rc == 0 and err == ""
    assert len(parse_csv(out)[1]) == 4
    # the constraint blocks are valid too: the only complaint is the scheme's support, made
    # when the file's scheme is chosen (not on loading, so that a capable scheme given to
    # run(scheme=...) or --scheme can override it)
    capable = [n for n, c in rbdyn.schemes().items() if c.supports_constraints]
    for extra in (SPHERICAL, ROD):
        if capable:
            text = sub('scheme = "rk4"', f'scheme = "{capable[0]}"') + extra
            assert len(rbdyn.load_scenario(_write(tmp_path, text)).system.constraints) == 1
        path = _write(tmp_path, BASE + extra)
        scenario = rbdyn.load_scenario(path)
        assert len(scenario.system.constraints) == 1
        for choose in (scenario.scheme_named, scenario.run):
            with pytest.raises(rbdyn.InputError, match=r"run\.scheme: rk4 does not handle constraints") as info:
                choose()
            assert info.value.field == "run.scheme" and info.value.source == scenario.source
            assert str(info.value).startswith(f"{scenario.source}: run.scheme: ")
        rc, out, err = cli(capsys, "run", path)
        assert rc == 2 and out == ""
        line = one_error_line(err)
        assert str(path) in line and "run.scheme: rk4 does not handle constraints" in line
        if capable:
            assert scenario.run(scheme=capable[0]).status == "success"
            rc, out, err = cli(capsys, "run", path, "--scheme", capable[0])
            assert rc == 0 and err == ""


def _write(tmp_path, text, name="case.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def sub(old, new, text=BASE):
    assert text.count(old) >= 1, old
    return text.replace(old, new, 1)


# (id, scenario text, substrings the error line must contain besides the path)
FILE_CASES = [
    # unknown keys, every table
    ("unknown-top", "foo = 1\n" + BASE, ["foo", "unknown key"]),
    ("unknown-scenario", sub('name = "cli-test"', 'name = "cli-test"\nfoo = 1'), ["scenario.foo", "unknown key"]),
    ("unknown-run", sub("every = 1", "every = 1\nfoo = 1"), ["run.foo", "unknown key"]),
    ("unknown-world", sub("gravity = [0.0, 0.0, -9.8]", "gravity = [0.0, 0.0, -9.8]\nfoo = 1"), ["world.foo", "unknown key"]),
    ("unknown-body", sub('name = "box"', 'name = "box"\nfoo = 1'), ["body[0].foo", "unknown key"]),
    ("unknown-body-2", sub('name = "arm"', 'name = "arm"\nfoo = 1'), ["body[1].foo", "unknown key"]),
    ("unknown-load", sub('type = "torque"', 'type = "torque"\nfoo = 1'), ["load[1].foo", "unknown key"]),
    ("unknown-load-key-of-other-type", sub('type = "torque"', 'type = "torque"\npoint_body = [0.0, 0.0, 0.0]'),
     ["load[1].point_body", "unknown key"]),
    ("unknown-constraint", BASE + SPHERICAL + "foo = 1\n", ["constraint[0].foo", "unknown key"]),
    ("rod-key-on-spherical", BASE + SPHERICAL + "length = 1.0\n", ["constraint[0].length", "unknown key"]),
    ("unknown-load-type", sub('type = "torque"', 'type = "gravity"'), ["load[1].type", "force"]),
    ("unknown-constraint-type", BASE + SPHERICAL.replace('"spherical"', '"hinge"'), ["constraint[0].type", "spherical"]),
    # schemes
    ("unknown-scheme", sub('scheme = "rk4"', 'scheme = "nosuch"'), ["run.scheme", "'nosuch'", "rk4"]),
    ("scheme-not-string", sub('scheme = "rk4"', "scheme = 4"), ["run.scheme", "string"]),
    ("settings-unknown-scheme", BASE + "\n[settings.nosuch]\nfoo = 1\n", ["settings.nosuch", "'nosuch'"]),
    ("settings-unknown-key", BASE + "\n[settings.rk4]\nfoo = 1\n", ["settings.rk4", "foo", "unknown setting"]),
    ("settings-bad-value", BASE + "\n[settings.rig_imp]\nnewton_tol = -1.0\n", ["settings.rig_imp.newton_tol", "positive"]),
    ("settings-bad-int", BASE + "\n[settings.rig_imp]\nnewton_max_iter = 2.5\n",
     ["settings.rig_imp.newton_max_iter", "positive integer"]),
    ("settings-nan", BASE + "\n[settings.rig_imp]\nnewton_tol = nan\n", ["settings.rig_imp.newton_tol", "finite"]),
    ("settings-not-table", "settings = 3\n" + BASE, ["settings", "table"]),
    ("settings-entry-not-table", "settings = { rk4 = 3 }\n" + BASE, ["settings", "table"]),
    # unknown body names
    ("load-unknown-body", sub('body = "arm"', 'body = "nope"'), ["load[1].body", "'nope'", "unknown body"]),
    ("constraint-unknown-body", BASE + SPHERICAL.replace('body = "box"', 'body = "nope"'),
     ["constraint[0].body", "'nope'", "unknown body"]),
    ("constraint-unknown-other", BASE + ROD.replace('other = "arm"', 'other = "nope"'), ["constraint[0].other", "'nope'", "unknown body"]),
    ("constraint-to-itself", BASE + ROD.replace('other = "arm"', 'other = "box"'), ["constraint[0].other", "differ"]),
    ("duplicate-body", sub('name = "arm"', 'name = "box"'), ["body[1].name", "unique", "body[0]"]),
    ("bad-body-name", sub('name = "arm"', 'name = "my arm"'), ["body[1].name", "'my arm'"]),
    # masses and inertias
    ("mass-zero-box", sub("mass = 10.0", "mass = 0.0"), ["body[0].mass", "> 0"]),
    ("mass-negative", sub("mass = 1.0", "mass = -1.0"), ["body[1].mass", "> 0"]),
    ("box-edge-zero", sub("box = [0.1, 0.4, 0.9]", "box = [0.0, 0.4, 0.9]"), ["body[0].box", "> 0"]),
    ("inertia-not-pd", sub("inertia = [0.5, 0.5, 0.1]", "inertia = [0.5, 0.5, -0.1]"),
     ["body[1].inertia", "positive definite"]),
    ("inertia-not-symmetric", sub("inertia = [0.5, 0.5, 0.1]", "inertia = [[0.5, 0.1, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 0.1]]"),
     ["body[1].inertia", "symmetric"]),
    ("inertia-triangle", sub("inertia = [0.5, 0.5, 0.1]", "inertia = [0.1, 0.1, 0.5]"),
     ["body[1].inertia", "triangle inequality"]),
    ("inertia-and-box", sub("mass = 10.0", "mass = 10.0\ninertia = [1.0, 1.0, 1.0]"), ["body[0].inertia", "exactly one"]),
    ("inertia-missing", sub("inertia = [0.5, 0.5, 0.1]\n", ""), ["body[1].inertia", "exactly one"]),
    # non-finite numbers (TOML nan / inf literals)
    ("mass-nan", sub("mass = 10.0", "mass = nan"), ["body[0].mass", "finite"]),
    ("mass-inf", sub("mass = 1.0", "mass = inf"), ["body[1].mass", "finite"]),
    ("velocity-inf", sub("velocity = [-2.0, 2.0, 8.0]", "velocity = [-inf, 2.0, 8.0]"), ["body[0].velocity", "finite"]),
    ("position-nan", sub("position = [0.0, 0.0, 0.0]", "position = [0.0, nan, 0.0]"), ["body[0].position", "finite"]),
    ("omega-nan", sub("omega_body = [1.0, 0.0, 0.0]", "omega_body = [1.0, 0.0, +nan]"), ["body[1].omega_body", "finite"]),
    ("inertia-inf", sub("inertia = [0.5, 0.5, 0.1]", "inertia = [0.5, inf, 0.1]"), ["body[1].inertia", "finite"]),
    ("pivot-nan", sub("pivot = [0.0, 0.0, 2.0]", "pivot = [nan, 0.0, 2.0]"), ["body[1].pivot", "finite"]),
    ("gravity-inf", sub("gravity = [0.0, 0.0, -9.8]", "gravity = [0.0, 0.0, -inf]"), ["world.gravity", "finite"]),
    ("force-nan", sub("force = [0.0, 1.0, 0.0]", "force = [nan, 1.0, 0.0]"), ["load[0].force", "finite"]),
    ("torque-inf", sub("torque = [0.0, 0.1, 0.0]", "torque = [0.0, inf, 0.0]"), ["load[1].torque", "finite"]),
    ("dt-nan", sub("dt = 0.001", "dt = nan"), ["run.dt", "finite"]),
    ("t-end-inf", sub("t_end = 0.003", "t_end = inf"), ["run.t_end", "finite"]),
    ("rod-length-nan", BASE + ROD + "length = nan\n", ["length", "finite"]),
    # run settings
    ("dt-zero", sub("dt = 0.001", "dt = 0.0"), ["run.dt", "> 0"]),
    ("dt-negative", sub("dt = 0.001", "dt = -0.001"), ["run.dt", "> 0"]),
    ("t-end-negative", sub("t_end = 0.003", "t_end = -1.0"), ["run.t_end", ">= 0"]),
    ("every-zero", sub("every = 1", "every = 0"), ["run.every", ">= 1"]),
    ("every-negative", sub("every = 1", "every = -3"), ["run.every", ">= 1"]),
    ("every-float", sub("every = 1", "every = 2.5"), ["run.every", "integer"]),
    ("every-bool", sub("every = 1", "every = true"), ["run.every", "integer"]),
    # orientations
    ("quat-zero", sub("quat_wxyz = [1.0, 0.0, 0.0, 0.0]", "quat_wxyz = [0.0, 0.0, 0.0, 0.0]"),
     ["body[0].quat_wxyz", "non-zero"]),
    ("matrix-not-orthonormal", sub("quat_wxyz = [1.0, 0.0, 0.0, 0.0]",
                                   "R_world_body = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.1]]"),
     ["body[0].R_world_body", "rotation matrix"]),
    ("matrix-reflection", sub("quat_wxyz = [1.0, 0.0, 0.0, 0.0]",
                              "R_world_body = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]]"),
     ["body[0].R_world_body", "determinant"]),
    ("two-orientations", sub("quat_wxyz = [1.0, 0.0, 0.0, 0.0]", "quat_wxyz = [1.0, 0.0, 0.0, 0.0]\nrotvec = [0.0, 0.0, 0.1]"),
     ["body[0]", "one orientation"]),
    ("com-on-free-body", sub("omega_body = [0.1, 5.0, 0.1]", "omega_body = [0.1, 5.0, 0.1]\ncom_body = [0.0, 0.0, 0.1]"),
     ["body[0].com_body", "pivot"]),
    ("position-with-pivot", sub("pivot = [0.0, 0.0, 2.0]", "pivot = [0.0, 0.0, 2.0]\nposition = [0.0, 0.0, 1.0]"),
     ["body[1].position", "pivot"]),
    # strings where numbers are expected
    ("mass-string", sub("mass = 10.0", 'mass = "10"'), ["body[0].mass", "number"]),
    ("dt-string", sub("dt = 0.001", 'dt = "0.001"'), ["run.dt", "number"]),
    ("t-end-string", sub("t_end = 0.003", 't_end = "0.003"'), ["run.t_end", "number"]),
    ("every-string", sub("every = 1", 'every = "1"'), ["run.every", "integer"]),
    ("velocity-string", sub("velocity = [-2.0, 2.0, 8.0]", 'velocity = ["-2", 2.0, 8.0]'), ["body[0].velocity", "number"]),
    ("gravity-string", sub("gravity = [0.0, 0.0, -9.8]", 'gravity = "down"'), ["world.gravity", "shape"]),
    ("inertia-string", sub("inertia = [0.5, 0.5, 0.1]", 'inertia = "heavy"'), ["body[1].inertia", "shape"]),
    ("box-string", sub("box = [0.1, 0.4, 0.9]", 'box = ["a", "b", "c"]'), ["body[0].box", "number"]),
    ("force-string", sub("force = [0.0, 1.0, 0.0]", 'force = ["up", 1.0, 0.0]'), ["load[0].force", "number"]),
    ("rod-length-string", BASE + ROD + 'length = "1"\n', ["length", "number"]),
    ("quat-bool", sub("quat_wxyz = [1.0, 0.0, 0.0, 0.0]", "quat_wxyz = [true, 0.0, 0.0, 0.0]"), ["body[0].quat_wxyz", "number"]),
    # wrong shapes
    ("velocity-short", sub("velocity = [-2.0, 2.0, 8.0]", "velocity = [-2.0, 2.0]"), ["body[0].velocity", "shape"]),
    ("quat-short", sub("quat_wxyz = [1.0, 0.0, 0.0, 0.0]", "quat_wxyz = [1.0, 0.0, 0.0]"), ["body[0].quat_wxyz", "shape"]),
    ("inertia-2x2", sub("inertia = [0.5, 0.5, 0.1]", "inertia = [[0.5, 0.0], [0.0, 0.5]]"), ["body[1].inertia", "shape"]),
    ("inertia-ragged", sub("inertia = [0.5, 0.5, 0.1]", "inertia = [[0.5, 0.0, 0.0], [0.0, 0.5], [0.0, 0.0, 0.1]]"),
     ["body[1].inertia", "shape"]),
    ("matrix-3x2", sub("quat_wxyz = [1.0, 0.0, 0.0, 0.0]", "R_world_body = [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]"),
     ["body[0].R_world_body", "shape"]),
    ("gravity-long", sub("gravity = [0.0, 0.0, -9.8]", "gravity = [0.0, 0.0, -9.8, 0.0]"), ["world.gravity", "shape"]),
    ("pivot-nested", sub("pivot = [0.0, 0.0, 2.0]", "pivot = [[0.0, 0.0, 2.0]]"), ["body[1].pivot", "shape"]),
    ("point-body-short", sub("point_body = [0.05, 0.0, 0.0]", "point_body = [0.05]"), ["load[2].point_body", "shape"]),
    ("constraint-point-short", BASE + SPHERICAL.replace("[0.0, 0.0, 0.45]", "[0.0, 0.45]"),
     ["constraint[0].point_body", "shape"]),
    # tables of the wrong kind
    ("run-not-table", "run = 3\n" + BASE.replace(RUN_SECTION, ""), ["run", "table"]),
    ("body-not-array", "body = 3\n" + BASE[:BASE.index("[[body]]")], ["body", "array of tables"]),
    ("load-not-array", "load = 3\n" + BASE[:BASE.index("[[load]]")], ["load", "array of tables"]),
    # missing required keys
    ("run-missing", BASE.replace(RUN_SECTION, ""), ["run", "required"]),
    ("scheme-missing", sub('scheme = "rk4"\n', ""), ["run.scheme", "required"]),
    ("dt-missing", sub("dt = 0.001\n", ""), ["run.dt", "required"]),
    ("t-end-missing", sub("t_end = 0.003\n", ""), ["run.t_end", "required"]),
    ("body-name-missing", sub('name = "arm"\n', ""), ["body[1].name", "required"]),
    ("body-mass-missing", sub("mass = 1.0\n", ""), ["body[1].mass", "required"]),
    ("no-bodies", BASE[:BASE.index("[[body]]")], ["body", "at least one"]),
    ("load-type-missing", sub('type = "torque"\n', ""), ["load[1].type", "force"]),
    ("load-body-missing", sub('body = "arm"\n', ""), ["load[1].body", "required"]),
    ("load-force-missing", sub("force = [0.0, 1.0, 0.0]\n", ""), ["load[0].force", "required"]),
    ("point-force-point-missing", sub("point_body = [0.05, 0.0, 0.0]\n", ""), ["load[2].point_body", "required"]),
    ("constraint-body-missing", BASE + SPHERICAL.replace('body = "box"\n', ""), ["constraint[0].body", "required"]),
    ("constraint-type-missing", BASE + SPHERICAL.replace('type = "spherical"\n', ""), ["constraint[0].type", "spherical"]),
    ("rod-world-end-missing", BASE + '\n[[constraint]]\ntype = "rod"\nbody = "box"\n', ["constraint[0].other_point", "world point"]),
    ("rod-coincident-ends", BASE + '\n[[constraint]]\ntype = "rod"\nbody = "box"\nother_point = [0.0, 0.0, 0.0]\n',
     ["constraint[0].length", "length > 0"]),
    ("rod-off-at-start", BASE + ROD + "length = 5.0\n", ["constraint[0].length", "violates"]),
    ("rod-length-zero", BASE + ROD + "length = 0.0\n", ["length", "> 0"]),
]


@pytest.mark.parametrize("text, expected", [c[1:] for c in FILE_CASES], ids=[c[0] for c in FILE_CASES])
def test_invalid_file(capsys, tmp_path, text, expected):
    path = _write(tmp_path, text)
    rc, out, err = cli(capsys, "run", path)
    assert rc == 2, err
    assert out == ""
    line = one_error_line(err)
    assert str(path) in line, line
    for s in expected:
        assert s in line, (s, line)
    # the API raises the same error
    with pytest.raises(rbdyn.InputError) as info:
        rbdyn.load_scenario(path)
    assert err == f"rbdyn: error: {info.value}\n"


def test_invalid_files_cover_every_key():
    """Every key of the format appears in an invalid-input case above (no table left untested)."""
    from rbdyn import scenario_files as s
    joined = "\n".join(" ".join(c[2]) for c in FILE_CASES)
    for key in (s._RUN_KEYS | s._BODY_KEYS | s._WORLD_KEYS) - {"name", "rotvec"}:
        assert key in joined, key


@pytest.mark.parametrize("scheme", [n for n, c in rbdyn.schemes().items() if not c.supports_constraints])
def test_constraints_with_an_incapable_scheme(capsys, tmp_path, scheme):
    path = _write(tmp_path, sub('scheme = "rk4"', f'scheme = "{scheme}"') + SPHERICAL)
    rc, out, err = cli(capsys, "run", path)
    assert rc == 2 and out == ""
    line = one_error_line(err)
    assert str(path) in line and "run.scheme" in line and f"{scheme} does not handle constraints" in line
    # the same through --scheme on a file whose own scheme would do
    capable = [n for n, c in rbdyn.schemes().items() if c.supports_constraints]
    if capable:
        path = _write(tmp_path, sub('scheme = "rk4"', f'scheme = "{capable[0]}"') + SPHERICAL)
        rc, out, err = cli(capsys, "run", path, "--scheme", scheme)
        assert rc == 2 and out == ""
        line = one_error_line(err)
        assert "arguments" in line and "--scheme" in line and f"{scheme} does not handle constraints" in line


def test_unreadable_directory(capsys, tmp_path):
    rc, out, err = cli(capsys, "run", tmp_path)
    assert rc == 2 and out == ""
    line = one_error_line(err)
    assert str(tmp_path) in line and "cannot be read" in line


def test_missing_file(capsys, tmp_path):
    path = tmp_path / "nope.toml"
    rc, out, err = cli(capsys, "run", path)
    assert rc == 2 and out == ""
    line = one_error_line(err)
    assert str(path) in line and "no such file" in line and "boxes-complex" in line


def test_non_utf8_file(capsys, tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(BASE.replace('"a box and a pivoted arm"', '"caf\xe9"').encode("latin-1"))
    rc, out, err = cli(capsys, "run", path)
    assert rc == 2 and out == ""
    line = one_error_line(err)
    assert str(path) in line and "not UTF-8" in line


@pytest.mark.parametrize(
    "text",
    ["[run\nscheme = 'rk4'\n", "[run]\ndt = \n", "[run]\ndt = 0.1\ndt = 0.2\n", 'name = "unterminated\n', "\x00"],
    ids=["bracket", "no-value", "duplicate-key", "string", "nul"],
)
def test_malformed_toml(capsys, tmp_path, text):
    path = _write(tmp_path, text)
    rc, out, err = cli(capsys, "run", path)
    assert rc == 2 and out == ""
    line = one_error_line(err)
    assert str(path) in line and "malformed TOML" in line and "line" in line


ARG_CASES = [
    ("scheme-unknown", ["--scheme", "nosuch"], ["--scheme", "'nosuch'", "rk4"]),
    ("dt-zero", ["--dt", "0"], ["--dt", "> 0"]),
    ("dt-negative", ["--dt", "-0.001"], ["--dt", "> 0"]),
    ("dt-underflow", ["--dt", "1e-400"], ["--dt", "> 0"]),
    ("dt-nan", ["--dt", "nan"], ["--dt", "finite"]),
    ("dt-inf", ["--dt", "inf"], ["--dt", "finite"]),
    ("dt-string", ["--dt", "abc"], ["--dt", "invalid float value: 'abc'"]),
    ("t-end-negative", ["--t-end", "-1"], ["--t-end", ">= 0"]),
    ("t-end-inf", ["--t-end", "inf"], ["--t-end", "finite"]),
    ("t-end-nan", ["--t-end", "nan"], ["--t-end", "finite"]),
    ("every-zero", ["--every", "0"], ["--every", ">= 1"]),
    ("every-negative", ["--every", "-1"], ["--every", ">= 1"]),
    ("every-float", ["--every", "1.5"], ["--every", "invalid int value"]),
    ("unknown-option", ["--frobnicate", "1"], ["unrecognized arguments: --frobnicate"]),
    ("setting-of-another-scheme", ["--scheme", "rk4", "--newton-tol", "1e-6"], ["--newton-tol", "rk4"]),
    ("setting-invalid", ["--scheme", "rig_imp", "--newton-tol", "-1"], ["--newton-tol", "positive"]),
    ("setting-not-int", ["--scheme", "rig_imp", "--newton-max-iter", "2.5"], ["--newton-max-iter", "invalid int value"]),
    ("out-unwritable", ["--out", "/nonexistent-dir/x.csv"], ["--out", "/nonexistent-dir/x.csv"]),
]


SETTING_OPTIONS = {"--" + f.name.replace("_", "-") for c in rbdyn.schemes().values() for f in _fields(c)}


@pytest.mark.parametrize("args, expected", [c[1:] for c in ARG_CASES], ids=[c[0] for c in ARG_CASES])
def test_invalid_arguments(capsys, args, expected):
    for a in args:
        if a.startswith("--newton") and a not in SETTING_OPTIONS:
            pytest.fail(f"no registered scheme has the setting {a}; update this case")
    rc, out, err = cli(capsys, "run", "boxes-simple", "--t-end", "0.002", *args)
    assert rc == 2, err
    assert out == ""
    line = one_error_line(err)
    assert "arguments" in line
    for s in expected:
        assert s in line, (s, line)


@pytest.mark.parametrize("argv", [[], ["run"], ["frobnicate"], ["show"], ["list", "extra"]],
                         ids=["nothing", "run-no-scenario", "unknown-command", "show-no-name", "list-extra"])
def test_invalid_command_line(capsys, argv):
    rc, out, err = cli(capsys, *argv)
    assert rc == 2 and out == ""
    line = one_error_line(err)
    assert "arguments" in line


@pytest.mark.parametrize("every", [None, "1"], ids=["file-every", "every-1"])
def test_absurdly_small_dt(capsys, every):
    # ceil(t_end/dt) ~ 1e301 steps. simulate refuses it (field dt, no source: the CLI passes
    # its --dt on to simulate, so the line names the field dt, not the option --dt)
    argv = ["run", "boxes-simple", "--dt", "1e-300"] + (["--every", every] if every else [])
    try:
        rc, out, err = cli(capsys, *argv)
    except Exception as exc:  # the traceback a user would see
        pytest.fail(f"uncaught {type(exc).__name__}: {exc}")
    assert rc == 2 and out == ""
    line = one_error_line(err)
    assert line.startswith("rbdyn: error: arguments: --dt: ") and "increase dt" in line, line


def test_too_many_output_rows(capsys):
    # 1e9 steps with a row each would not fit in memory: exit 2 naming every, before any step
    try:
        rc, out, err = cli(capsys, "run", "boxes-simple", "--dt", "1e-9", "--t-end", "1", "--every", "1")
    except Exception as exc:  # the traceback a user would see
        pytest.fail(f"uncaught {type(exc).__name__}: {exc}")
    assert rc == 2 and out == ""
    line = one_error_line(err)
    assert line.startswith("rbdyn: error: arguments: --every: ") and "increase every" in line, line


# ---------------------------------------------------------------------------
# numerical failure: exit 1 naming the time and step; partial CSV written
# ---------------------------------------------------------------------------
# rk4 with a 1 s step on a body spinning at |W| ~ 7 rad/s about no principal
# axis: W grows like an iterated quadratic map and overflows to inf at step 4.
BLOW_UP = """\
[run]
scheme = "rk4"
dt = 1.0
t_end = 20.0
every = 1

[[body]]
name = "spinner"
mass = 1.0
inertia = [1.0, 2.0, 2.5]
omega_body = [3.0, 4.0, 5.0]
"""


def test_numerical_failure(capsys, tmp_path):
    path = _write(tmp_path, BLOW_UP, "blow-up.toml")
    ref = rbdyn.load_scenario(path).run(on_failure="return")
    assert ref.status == "failure" and ref.steps >= 2  # really non-finite, after a few good steps
    with pytest.raises(rbdyn.NumericalError) as info:
        rbdyn.load_scenario(path).run()
    step, t = info.value.step, info.value.t
    assert (step, t) == (4, 3.0)
    csv = tmp_path / "out.csv"
    rc, out, err = cli(capsys, "run", path, "--out", csv)
    assert rc == 1 and out == ""
    line = one_error_line(err)
    assert f"t = {t!r}" in line and f"step {step}" in line and "non-finite" in line
    # --out is not created; the rows before the failure are in a file that says they are partial
    assert not csv.exists() and "out.partial.csv" in line
    text = (tmp_path / "out.partial.csv").read_text(encoding="utf-8")
    assert_csv_equals(text, ref)
    assert len(parse_csv(text)[1]) == step  # rows at steps 0 .. step-1
    # a figure is drawn for finished runs only: a good one from before stays as it was
    good = tmp_path / "run.png"
    good.write_bytes(b"a good figure")
    rc, out, err = cli(capsys, "run", path, "--out", csv, "--plot", good)
    assert rc == 1 and good.read_bytes() == b"a good figure"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blow-up.toml", "out.partial.csv", "run.png"]
    # to stdout: no rows that could pass for a complete run
    rc, out, err = cli(capsys, "run", path)
    assert rc == 1 and out == ""
    assert "no rows written" in one_error_line(err)


def test_numerical_failure_as_module_subprocess(tmp_path):
    path = _write(tmp_path, BLOW_UP, "blow-up.toml")
    proc = run_module("run", path)
    assert proc.returncode == 1
    line = one_error_line(proc.stderr)
    assert "step 4" in line and "t = 3.0" in line
    assert proc.stdout == ""


def test_version_names_the_sources_and_the_libraries(tmp_path):
    """``rbdyn --version``: the version, the digest of the sources the book's pages show (16 hex
    digits), and the versions of Python and the libraries; an edited copy of the package has
    another digest."""
    import shutil
    from importlib import metadata

    from rbdyn import _stamp

    done = subprocess.run([sys.executable, "-m", "rbdyn", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and not done.stderr
    first, second = done.stdout.splitlines()
    assert first == f"rbdyn {rbdyn.__version__} (sources {_stamp.short_digest()})"
    assert len(_stamp.short_digest()) == 16 and int(_stamp.short_digest(), 16) >= 0
    for lib in ("numpy", "scipy", "sympy", "numba", "matplotlib"):
        assert f"{lib} {metadata.version(lib)}" in second
    copy = tmp_path / "rbdyn"
    shutil.copytree(Path(rbdyn.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "so3.py").write_text((copy / "so3.py").read_text() + "\n# an edit\n")
    assert _stamp.short_digest(copy) != _stamp.short_digest()


# ---------------------------------------------------------------------------
# --out: standard output, devices and named pipes in place, no trailing slash
# ---------------------------------------------------------------------------
def _expected_csv(t_end="0.01"):
    buf = io.StringIO()
    rbdyn.load_scenario("boxes-simple").run(t_end=float(t_end)).to_csv(buf)
    return buf.getvalue()


def test_out_dash_is_standard_output(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err = cli(capsys, "run", "boxes-simple", "--t-end", "0.01", "--out", "-")
    assert rc == 0 and err == "" and out == _expected_csv()
    assert list(tmp_path.iterdir()) == []  # no file called "-"


def test_out_dev_null_is_written_in_place(capsys, tmp_path, monkeypatch):
    real_replace = os.replace

    def guarded(src, dst, *a, **k):  # nothing may be renamed onto the device (as root it could be)
        assert os.path.realpath(dst) != os.devnull, dst
        return real_replace(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", guarded)
    link = tmp_path / "null.csv"
    link.symlink_to(os.devnull)
    for target in (os.devnull, str(link)):
        rc, out, err = cli(capsys, "run", "boxes-simple", "--t-end", "0.01", "--no-progress", "--out", target)
        assert rc == 0 and out == "" and err == ""
    assert os.path.realpath(link) == os.devnull and sorted(p.name for p in tmp_path.iterdir()) == ["null.csv"]
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    # a figure beside it is still written and renamed into place
    plot = tmp_path / "run.png"
    rc, out, err = cli(capsys, "run", "boxes-simple", "--t-end", "0.01", "--out", os.devnull, "--plot", plot)
    assert rc == 0 and plot.read_bytes().startswith(PNG)


def test_out_named_pipe_is_written_in_place(capsys, tmp_path):
    fifo = tmp_path / "rows.csv"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so the pipe can be opened for writing
    try:
        rc, out, err = cli(capsys, "run", "boxes-simple", "--t-end", "0.01", "--no-progress", "--out", fifo)
        assert rc == 0 and out == "" and err == ""
        chunks = []
        while True:
            try:
                chunk = os.read(reader, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(reader)
    assert b"".join(chunks).decode() == _expected_csv()
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and sorted(p.name for p in tmp_path.iterdir()) == ["rows.csv"]


def test_out_named_pipe_without_a_reader_fails_at_once(capsys, tmp_path):
    fifo = tmp_path / "rows.csv"
    os.mkfifo(fifo)
    rc, out, err = cli(capsys, "run", "boxes-simple", "--t-end", "0.01", "--no-progress", "--out", fifo)
    line = one_error_line(err)
    assert rc == 2 and out == "" and "--out" in line and "no reader" in line
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.parametrize("name", ["x.csv/", "sub/x.csv/"])
def test_out_with_a_trailing_slash_is_refused(capsys, tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    rc, out, err = cli(capsys, "run", "boxes-simple", "--t-end", "0.01", "--out", name)
    line = one_error_line(err)
    assert rc == 2 and out == "" and line.startswith("rbdyn: error: arguments: --out: ") and "slash" in line
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["sub"]
