"""Malformed input, hostile use: every case gets the answer the CLI contract promises.

The contract (``rbdyn/_errors.py``): exit 0 = finished, every number written finite; exit 2 = invalid
input, one printable line ``rbdyn: error: FIELD: ...``; exit 1 = numerical failure, one line naming
the time and the step; exit 3 = internal error; never a traceback; a refused or failed run never
creates or changes ``--out``.

The cases are generated deterministically from the built-in scenarios (``random.Random(0)``):
deleted, unknown and misspelt keys, values of the wrong type, nan/inf, huge and tiny numbers,
invalid inertias and rotations, broken constraints, loads and scheme settings, syntax errors,
binary garbage, deep nesting, long strings and control characters; then misuses of the command
line and of the Python API. Most cases run in this process through ``rbdyn.cli.main``; a few run
``rbdyn`` as a subprocess to see what a user sees.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import os
import random
import re
import stat
import subprocess
import sys
import tomllib
import warnings
from importlib import resources

import numpy as np
import pytest

import rbdyn
import rbdyn.driver.records
import rbdyn.simulation
from rbdyn import cli

RNG = random.Random(0)
BUILTINS = sorted(p.name[:-5] for p in (resources.files("rbdyn") / "scenarios").iterdir() if p.name.endswith(".toml"))
T_SHORT = "0.004"  # every fuzzed run is short: the contract, not the physics, is under test


# -- a small TOML writer for the structures of scenario files -------------------------------------
def _value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # TOML basic strings take JSON's escapes
    if isinstance(v, list):
        return "[" + ", ".join(_value(e) for e in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_value(e)}" for k, e in v.items()) + "}"
    raise TypeError(type(v))


def dumps(data: dict) -> str:
    lines = []
    for k, v in data.items():
        if not isinstance(v, (dict, list)) or (isinstance(v, list) and not all(isinstance(e, dict) for e in v)) or v == []:
            lines.append(f"{json.dumps(k)} = {_value(v)}")
    for k, v in data.items():
        if isinstance(v, dict):
            scalars = {a: b for a, b in v.items() if not isinstance(b, dict)}
            lines.append(f"[{json.dumps(k)}]")
            lines += [f"{json.dumps(a)} = {_value(b)}" for a, b in scalars.items()]
            for a, b in v.items():
                if isinstance(b, dict):
                    lines.append(f"[{json.dumps(k)}.{json.dumps(a)}]")
                    lines += [f"{json.dumps(c)} = {_value(d)}" for c, d in b.items()]
        elif isinstance(v, list) and v and all(isinstance(e, dict) for e in v):
            for e in v:
                lines.append(f"[[{json.dumps(k)}]]")
                lines += [f"{json.dumps(a)} = {_value(b)}" for a, b in e.items()]
    return "\n".join(lines) + "\n"


def _load_builtin(name):
    return tomllib.loads((resources.files("rbdyn") / "scenarios" / f"{name}.toml").read_text(encoding="utf-8"))


def test_writer_round_trips_every_builtin():
    for name in BUILTINS:
        data = _load_builtin(name)
        assert tomllib.loads(dumps(data)) == data, name


# -- the malformed scenarios ------------------------------------------------------------------------
BAD_VALUES = [
    "text", "", True, [], {}, [1.0], [[1.0, 2.0], [3.0]], [1.0, "x", 3.0], float("nan"), float("inf"), float("-inf"),
    1e308, -1e308, 1e-320, 0, -1, 10**400, -(10**400), [1e154, 1e154, 1e154], [1e300, 0.0, 0.0], [1e308, 1e308, 1e308],
    [float("nan"), 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [1e154, 0.0, 0.0, 0.0], "x" * 5000, "a\x01b\nc",
    "\x1b[31mred", {"nested": {"deeper": 1}}, [[0.0] * 3] * 3, 5, 2**63, -(2**63) - 1,
]


def _leaf_paths(data):
    """(container, key) of every value in the parsed file, for tables and arrays of tables."""
    out = []
    for k, v in data.items():
        out.append((data, k))
        if isinstance(v, dict):
            for a, b in v.items():
                out.append((v, a))
                if isinstance(b, dict):
                    out += [(b, c) for c in b]
        elif isinstance(v, list) and v and all(isinstance(e, dict) for e in v):
            for e in v:
                out += [(e, a) for a in e]
    return out


def _mutants(name, rng, n_values):
    base = _load_builtin(name)
    cases = []
    n_paths = len(_leaf_paths(base))
    for i in range(n_paths):
        # delete the key
        data = copy.deepcopy(base)
        cont, key = _leaf_paths(data)[i]
        del cont[key]
        cases.append((f"{name}: delete {key}", dumps(data)))
        # a misspelt key (the value kept under a wrong name)
        data = copy.deepcopy(base)
        cont, key = _leaf_paths(data)[i]
        cont[key + "x"] = cont.pop(key)
        cases.append((f"{name}: misspell {key}", dumps(data)))
        # wrong values
        for value in rng.sample(BAD_VALUES, n_values):
            data = copy.deepcopy(base)
            cont, key = _leaf_paths(data)[i]
            cont[key] = copy.deepcopy(value)
            cases.append((f"{name}: {key} = {str(value)[:40]!r}", dumps(data)))
    # an unknown key in each table
    data = copy.deepcopy(base)
    data["bogus"] = 1
    cases.append((f"{name}: unknown top-level key", dumps(data)))
    return cases


def _text_cases(rng):
    text = (resources.files("rbdyn") / "scenarios" / "boxes-complex.toml").read_text(encoding="utf-8")
    cases = [
        ("empty file", ""),
        ("byte-order mark", "\ufeff" + text),
        ("deep nesting of arrays", "x = " + "[" * 500 + "]" * 500 + "\n"),
        ("deep nesting of tables", "x = " + "{a = " * 300 + "1" + "}" * 300 + "\n"),
        ("control characters", text.replace("box", "b\x00x", 1)),
        ("duplicate key", text + "\n[run]\ndt = 0.1\n"),
        ("long line", "a = \"" + "y" * 200000 + "\"\n"),
        ("type as array", text + '\n[[constraint]]\ntype = ["rod"]\nbody = "box"\n'),
        ("type as table", text + '\n[[constraint]]\ntype = {rod = 1}\nbody = "box"\n'),
        ("load type as array", text + '\n[[load]]\ntype = ["force"]\nbody = "box"\n'),
        ("name as number", text.replace('name = "box"', "name = 5")),
        ("description as array", text.replace('description = "free box', 'description = ["free box').replace(
            '10 s (Gazebo Boxes benchmark)"', '10 s (Gazebo Boxes benchmark)"]', 1)),
        ("rod with coincident ends", text + '\n[[constraint]]\ntype = "rod"\nbody = "box"\nother_point = [0.0, 0.0, 0.0]\n'
                                            'length = 1e-12\n'),
        ("com_body on a free body", text.replace("omega_body = [0.1, 5.0, 0.1]",
                                                 "omega_body = [0.1, 5.0, 0.1]\ncom_body = [0.0, 0.0, 0.0]")),
        ("huge integer mass", text.replace("mass = 10.0", "mass = 1" + "0" * 310)),
        ("mass 1e308", text.replace("mass = 10.0", "mass = 1e308")),
        ("velocity 1e200", text.replace("velocity = [-2.0, 2.0, 8.0]", "velocity = [1e200, 0.0, 0.0]")),
        ("gravity -1e300", text.replace("gravity = [0.0, 0.0, -9.8]", "gravity = [0.0, 0.0, -1e300]")),
        ("omega 1e300", text.replace("omega_body = [0.1, 5.0, 0.1]", "omega_body = [1e300, 0.0, 0.0]")),
        ("quaternion 1e200", text.replace("quat_wxyz = [1.0, 0.0, 0.0, 0.0]", "quat_wxyz = [1e200, 1e200, 0.0, 0.0]")),
    ]
    for _ in range(30):  # cut the file anywhere
        k = rng.randrange(len(text))
        cases.append((f"truncated at {k}", text[:k]))
    for _ in range(20):  # garbage spliced in
        k = rng.randrange(len(text))
        junk = "".join(chr(rng.randrange(0, 0x250)) for _ in range(rng.randrange(1, 12)))
        cases.append((f"garbage at {k}", text[:k] + junk + text[k:]))
    return cases


def scenario_cases():
    rng = random.Random(0)
    cases = []
    for name in BUILTINS:
        cases += _mutants(name, rng, 4)
    cases += _text_cases(rng)
    return cases


CASES = scenario_cases()


def test_enough_cases():
    assert len(CASES) >= 300, len(CASES)


# ``rbdyn: error: [WHERE: ]FIELD: what is wrong``: WHERE is the file or "arguments"/"output"; FIELD is an
# option (--out) or a path of keys with the entry's index (body[1].name, world.gravity, load[0].anchor)
FIELD_LINE = re.compile(r"^rbdyn: error: (?:(?:builtin:)?[^:]*: )?(--[a-z][a-z-]*|[A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])?"
                        r"(?:\.[A-Za-z_][A-Za-z0-9_]*(?:\[\d+\])?)*): \S")


def field_of(line):
    """The FIELD of an exit-2 line, or fail: it must name one."""
    m = FIELD_LINE.match(line)
    assert m, f"no field named: {line}"
    return m.group(1)


def _contract(code, err, out_path, before, from_file=False):
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "Traceback" not in err, err
    assert code in (0, 1, 2), (code, err)
    if code == 0:
        assert not lines, err
        if out_path is not None:
            table = np.loadtxt(out_path, delimiter=",", skiprows=1, ndmin=2)
            assert np.all(np.isfinite(table)), "exit 0 with a non-finite number written"
        return
    assert len(lines) == 1, err
    assert lines[0].startswith("rbdyn: error: "), err
    assert lines[0].isprintable(), repr(lines[0])
    if code == 1:
        assert "t = " in lines[0] and "step" in lines[0], err
    if code == 2:
        fld = field_of(lines[0])
        if from_file:  # a key of the file: an entry of an array of tables has its index, a global its table
            assert fld not in ("system", "gravity", "dt", "t_end", "every"), err
            assert not re.match(r"(body|load|constraint)\.", fld), err
    if out_path is not None:
        now = out_path.read_bytes() if out_path.exists() else None
        assert now == before, "a refused or failed run created or changed --out"


@pytest.mark.parametrize("label, text", CASES, ids=[c[0][:60] for c in CASES])
def test_malformed_scenario(label, text, tmp_path, capsys):
    src = tmp_path / "scenario.toml"
    src.write_text(text, encoding="utf-8", errors="surrogatepass") if isinstance(text, str) else src.write_bytes(text)
    out = tmp_path / "out.csv"
    out.write_text("previous good output\n")
    before = out.read_bytes()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would be a second line on the user's stderr
        code = cli.main(["run", str(src), "--t-end", T_SHORT, "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    if code == 0:
        _contract(code, err, out, None)
    else:
        _contract(code, err, out, before, from_file=True)
    # malformed input is exit 2; exit 1 only for these mutants, valid inputs whose run genuinely fails
    assert code != 1 or label in VALID_BUT_FAILING, (label, err)
    if code == 1:
        assert "constraints cannot be met" in err, err


# Mutants that are valid input (finite, of moderate size, consistent) whose run fails numerically: a step
# of 5 s or 2**63 s (t_end 0.004 gives one step of dt) through the mechanisms' closed loops, and one body
# 1e19-1e308 times heavier than its neighbours, which makes the constraint solve singular in float64.
# Each is a numerical failure, exit 1, with the time and the step.
VALID_BUT_FAILING = {
    "andrews: dt = '5'", "double-pendulum: dt = '9223372036854775808'",
    "andrews: mass = '9223372036854775808'", "andrews: mass = '1e+308'", "double-pendulum: mass = '9223372036854775808'",
}


# Derived quantities that overflow, named by the entry and key that cause them (issue 15's audit)
def _bc(old, new):
    text = (resources.files("rbdyn") / "scenarios" / "boxes-complex.toml").read_text(encoding="utf-8")
    assert old in text, old
    return text.replace(old, new, 1)


def _builtin_text(name):
    return (resources.files("rbdyn") / "scenarios" / f"{name}.toml").read_text(encoding="utf-8")


FIELD_CASES = [
    ("position 1e305 under gravity", _bc("position = [0.0, 0.0, 0.0]", "position = [0.0, 0.0, 1e305]"),
     "body[0].position"),
    ("gravity -1e300", _bc("gravity = [0.0, 0.0, -9.8]", "gravity = [0.0, 0.0, -1e300]"), "world.gravity"),
    ("velocity 1e200", _bc("velocity = [-2.0, 2.0, 8.0]", "velocity = [1e200, 0.0, 0.0]"), "body[0].velocity"),
    ("com_body 1e200 on a pivoted body",
     re.sub(r"com_body = \[[^]]*\]", "com_body = [0.0, 0.0, 1e200]", _builtin_text("heavy-top-solfec"), count=1),
     "body[0].com_body"),
    ("point force 1e200 x 1e200", _bc("", "") + '\n[[load]]\ntype = "point_force"\nbody = "box"\n'
     "point_body = [1e200, 0.0, 0.0]\nforce = [0.0, 1e199, 0.0]\n", "load[0].point_body"),
    ("point force 1e308 at 10", _bc("", "") + '\n[[load]]\ntype = "point_force"\nbody = "box"\n'
     "point_body = [10.0, 0.0, 0.0]\nforce = [0.0, 1e308, 0.0]\n", "load[0].force"),
    ("spring anchor 1e200", _bc("", "") + '\n[[load]]\ntype = "spring"\nbody = "box"\npoint_body = [0.0, 0.0, 0.0]\n'
     "anchor = [1e200, 0.0, 0.0]\nstiffness = 1.0\nrest_length = 0.0\n", "load[0].anchor"),
    ("spring stiffness 1e308", _bc("", "") + '\n[[load]]\ntype = "spring"\nbody = "box"\npoint_body = [0.0, 0.0, 0.0]\n'
     "anchor = [100.0, 0.0, 0.0]\nstiffness = 1e308\nrest_length = 0.0\n", "load[0].stiffness"),
    ("two forces that overflow together", _bc("", "") + '\n[[load]]\ntype = "force"\nbody = "box"\n'
     'force = [1e308, 0.0, 0.0]\n\n[[load]]\ntype = "force"\nbody = "box"\nforce = [1e308, 0.0, 0.0]\n',
     "load[1].force"),
    ("duplicate body name", _builtin_text("double-pendulum").replace('name = "lower"', 'name = "upper"'),
     "body[1].name"),
    ("body name with a space", _builtin_text("double-pendulum").replace('name = "lower"', 'name = "lo wer"'),
     "body[1].name"),
    ("body name with a newline", _bc('name = "box"', 'name = "b\\nx"'), "body[0].name"),
]


@pytest.mark.parametrize("label, text, field", FIELD_CASES, ids=[c[0] for c in FIELD_CASES])
def test_derived_quantities_name_the_input(label, text, field, tmp_path, capsys):
    src = tmp_path / "scenario.toml"
    src.write_text(text, encoding="utf-8")
    out = tmp_path / "out.csv"
    code = cli.main(["run", str(src), "--t-end", T_SHORT, "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    _contract(code, err, out, None, from_file=True)
    assert code == 2 and field_of(err.strip()) == field, err


def test_binary_garbage(tmp_path, capsys):
    src = tmp_path / "garbage.toml"
    src.write_bytes(bytes(RNG.randrange(256) for _ in range(4096)))
    code = cli.main(["run", str(src), "--no-progress"])
    _contract(code, capsys.readouterr().err, None, None)
    assert code == 2


# -- command-line misuse ----------------------------------------------------------------------------
CLI_CASES = [
    [], ["bogus"], ["run"], ["list", "extra"], ["show"], ["show", "nope"], ["show", "../pyproject"],
    ["show", "/etc/passwd"], ["show", "boxes-complex.toml"], ["run", "nope"], ["run", "boxes-complex", "--scheme", ""],
    ["run", "boxes-complex", "--scheme", "nope"], ["run", "boxes-complex", "--dt", "0"], ["run", "boxes-complex", "--dt", "-1"],
    ["run", "boxes-complex", "--dt", "nan"], ["run", "boxes-complex", "--dt", "inf"], ["run", "boxes-complex", "--dt", "x"],
    ["run", "boxes-complex", "--dt", "1e-300"], ["run", "boxes-complex", "--dt", "1e-12", "--t-end", "1000"],
    ["run", "boxes-complex", "--t-end", "-1"], ["run", "boxes-complex", "--t-end", "nan"], ["run", "boxes-complex", "--t-end", "1e300"],
    ["run", "boxes-complex", "--every", "0"], ["run", "boxes-complex", "--every", "-3"], ["run", "boxes-complex", "--every", "1.5"],
    ["run", "boxes-complex", "--out", ""],
    ["run", "boxes-complex", "--out", "/nonexistent/dir/x.csv"], ["run", "boxes-complex", "--rho-inf", "0.5"],
    ["run", "heavy-top-kynema", "--rho-inf", "2"], ["run", "heavy-top-kynema", "--rho-inf", "nan"],
    ["run", "heavy-top-kynema", "--newton-max-iter", "9223372036854775807"], ["run", "heavy-top-kynema", "--newton-max-iter", "0"],
    ["run", "heavy-top-kynema", "--newton-atol", "-1"], ["run", "heavy-top-kynema", "--newton-rtol", "inf"],
    ["run", "pendulum-solfec", "--constraint-tol", "0"], ["run", "pendulum-solfec", "--constraint-max-iter", "10000000000000000000"],
    ["run", "pendulum-solfec", "--scheme", "rk4"], ["run", "pendulum-solfec", "--scheme", "symplectic_euler"],
    ["run", "boxes-complex", "--newton-tol", "1e-3"], ["run", "boxes-complex", "--scheme", "rig_imp", "--newton-tol", "0"],
    ["run", "boxes-complex", "--scheme", "rig_imp", "--newton-max-iter", "-5"], ["run", "boxes-complex", "--unknown"],
    ["run", "boxes-complex", "--dt"], ["run", "boxes-complex", "--t-end", "1", "--t-end", "x"], ["run", "/dev/null"],
    ["run", "."], ["run", "boxes-complex", "--every", "1", "--dt", "1e-9", "--t-end", "100"],
    ["run", "heavy-top-kynema", "--rho-inf", "-0.5"], ["run", "heavy-top-kynema", "--newton-max-iter", "1e30"],
    ["run", "boxes-complex", "--out", "x" * 300 + ".csv"], ["run", "\x01\x02"], ["show", "\x1b[31m"],
    # more steps than MAX_STEPS (1e9), whatever --every is: refused before running, not run for days
    ["run", "boxes-complex", "--dt", "1e-12", "--t-end", "1", "--every", "1000000000000"],
    ["run", "boxes-complex", "--dt", "1e-9", "--t-end", "10", "--every", "1000000000"],
    ["run", "boxes-complex", "--out", "."], ["run", "boxes-complex", "--plot", "."],
]


@pytest.mark.parametrize("argv", CLI_CASES, ids=[" ".join(a)[:60] or "no arguments" for a in CLI_CASES])
def test_cli_misuse(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = [a if a != "x" * 300 + ".csv" else str(tmp_path / a) for a in argv]
    code = cli.main(argv)
    captured = capsys.readouterr()
    _contract(code, captured.err, None, None)
    assert code == 2, (argv, code, captured.err)


def test_enough_cli_cases():
    assert len(CLI_CASES) >= 50, len(CLI_CASES)


def test_out_may_not_be_the_scenario_file(tmp_path, capsys):
    src = tmp_path / "s.toml"
    src.write_text(rbdyn.cli.builtin_scenario_text("boxes-simple"), encoding="utf-8")
    before = src.read_bytes()
    code = cli.main(["run", str(src), "--t-end", T_SHORT, "--out", str(src)])
    _contract(code, capsys.readouterr().err, None, None)
    assert code == 2 and src.read_bytes() == before


def _scenario_file(path, name="boxes-simple"):
    path.write_text(rbdyn.cli.builtin_scenario_text(name), encoding="utf-8")
    return path.read_bytes()


def test_plot_may_not_be_the_scenario_file(tmp_path, capsys):
    src = tmp_path / "scen.png"
    before = _scenario_file(src)
    code = cli.main(["run", str(src), "--t-end", T_SHORT, "--no-progress", "--plot", str(src)])
    err = capsys.readouterr().err
    _contract(code, err, None, None)
    assert code == 2 and field_of(err) == "--plot" and src.read_bytes() == before


def test_partial_file_may_not_be_the_scenario_file(tmp_path, capsys):
    # the rows of a failed run would go to blowx.partial.toml: refused before the run, whatever its outcome
    src = tmp_path / "blowx.partial.toml"
    before = _scenario_file(src, "heavy-top-solfec")
    code = cli.main(["run", str(src), "--scheme", "symplectic_euler", "--dt", "0.009", "--every", "1",
                     "--no-progress", "--out", str(tmp_path / "blowx.toml")])
    err = capsys.readouterr().err
    _contract(code, err, None, None)
    assert code == 2 and field_of(err) == "--out" and "scenario file" in err
    assert src.read_bytes() == before and not (tmp_path / "blowx.toml").exists()


@pytest.mark.parametrize("option", ["--out", "--plot"])
def test_outputs_to_fifos_and_devices(option, tmp_path, capsys, monkeypatch):
    real_replace = os.replace

    def guarded(src, dst, *a, **k):  # a regression must fail here, not replace /dev/null (as root it could)
        assert os.path.realpath(dst).startswith(str(tmp_path.resolve())), dst
        return real_replace(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", guarded)
    fifo = tmp_path / ("fifo.csv" if option == "--out" else "fifo.png")
    os.mkfifo(fifo)
    link = tmp_path / ("null.csv" if option == "--out" else "null.png")
    link.symlink_to(os.devnull)
    for target in (fifo, link):
        code = cli.main(["run", "boxes-simple", "--t-end", T_SHORT, "--no-progress", option, str(target)])
        err = capsys.readouterr().err
        _contract(code, err, None, None)
        if option == "--plot":  # a figure is written whole and renamed into place: a regular file only
            assert code == 2 and field_of(err) == option and "not a regular file" in err
        elif target == fifo:  # the table is streamed into a pipe in place, but not into one nobody reads
            assert code == 2 and field_of(err) == option and "no reader" in err
        else:  # a device takes the table in place
            assert code == 0 and err == ""
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and os.path.realpath(link) == os.devnull


def test_outputs_honour_the_umask_and_keep_a_files_mode(tmp_path, capsys):
    new, old = tmp_path / "new.csv", tmp_path / "old.csv"
    old.write_text("previous\n")
    os.chmod(old, 0o640)
    mask = os.umask(0o027)
    try:
        for out in (new, old):
            assert cli.main(["run", "boxes-simple", "--t-end", T_SHORT, "--no-progress", "--out", str(out)]) == 0
    finally:
        os.umask(mask)
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o640 & ~0o027 and stat.S_IMODE(os.stat(old).st_mode) == 0o640
    assert capsys.readouterr().err == ""


def test_ctrl_c_is_one_line_exit_130_and_leaves_out_alone(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out.csv"
    out.write_text("previous good output\n")
    calls = []

    def interrupted(*args, **kw):  # Ctrl-C in the middle of the run's steps
        calls.append(1)
        exc = KeyboardInterrupt()
        exc.rbdyn_t, exc.rbdyn_step = 0.5, 500
        raise exc

    monkeypatch.setattr(rbdyn.simulation, "run", interrupted)
    code = cli.main(["run", "boxes-simple", "--no-progress", "--out", str(out)])
    err = capsys.readouterr().err
    assert calls and code == 130 and "Traceback" not in err and len(err.splitlines()) == 1
    assert err.startswith("rbdyn: interrupted at t = 0.5 (step 500)")
    assert out.read_text() == "previous good output\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_memory_error_is_input_error(monkeypatch, tmp_path, capsys):
    def no_memory(*args, **kw):
        raise MemoryError

    monkeypatch.setattr(rbdyn.driver.records, "output", no_memory)
    with pytest.raises(rbdyn.InputError) as info:
        rbdyn.simulate(rbdyn.System([_box()]), "rk4", 0.1, 1.0)
    assert info.value.field == "every" and "more memory than is available" in str(info.value)
    out = tmp_path / "out.csv"
    code = cli.main(["run", "boxes-simple", "--t-end", T_SHORT, "--no-progress", "--out", str(out)])
    err = capsys.readouterr().err
    _contract(code, err, out, None)
    assert code == 2 and field_of(err) == "run.every", err  # every is the file's (not given as --every)
    assert "MiB" in err and not out.exists()


def test_numerical_failure_keeps_out_and_writes_partial(tmp_path, capsys):
    out = tmp_path / "out.csv"
    out.write_text("previous good output\n")
    # symplectic_euler's explicit gyroscopic term blows up on the fast top at this step
    code = cli.main(["run", "heavy-top-solfec", "--scheme", "symplectic_euler", "--dt", "0.009", "--t-end", "10",
                     "--every", "1", "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    _contract(code, err, out, b"previous good output\n")
    assert code == 1
    partial = tmp_path / "out.partial.csv"
    assert partial.exists() and "out.partial.csv" in err
    assert np.all(np.isfinite(np.loadtxt(partial, delimiter=",", skiprows=1, ndmin=2)))


def test_success_writes_atomically(tmp_path, capsys):
    out = tmp_path / "out.csv"
    out.write_text("previous good output\n")
    code = cli.main(["run", "boxes-simple", "--t-end", "0.01", "--out", str(out), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    assert out.read_text().startswith("t,") and list(tmp_path.iterdir()) == [out]


def test_internal_error_is_exit_3_without_traceback(monkeypatch, capsys):
    def boom(*a, **k):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(cli, "_list", boom)
    code = cli.main(["list"])
    err = capsys.readouterr().err
    assert code == 3 and "Traceback" not in err and "internal error, please report" in err and len(err.splitlines()) == 1


def test_debug_shows_the_traceback(monkeypatch, capsys):
    def boom(*a, **k):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(cli, "_list", boom)
    monkeypatch.setenv("RBDYN_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        cli.main(["list"])


def test_a_few_cases_as_a_user_sees_them(tmp_path):
    for argv, code in ((["run", "nope"], 2), (["show", "../x"], 2), (["list"], 0)):
        res = subprocess.run([sys.executable, "-m", "rbdyn.cli", *argv], capture_output=True, text=True, cwd=tmp_path)
        assert res.returncode == code, (argv, res.stderr)
        assert "Traceback" not in res.stderr


# -- API misuse -------------------------------------------------------------------------------------
def _box(**kw):
    args = dict(name="b", mass=1.0, inertia=[1.0, 1.0, 1.0])
    args.update(kw)
    return rbdyn.RigidBody(**args)


API_CASES = [
    lambda: _box(mass="1"), lambda: _box(mass=10**400), lambda: _box(mass=float("nan")), lambda: _box(mass=-1.0),
    lambda: _box(mass=1e308, velocity=[1e200, 0, 0]), lambda: _box(inertia="x"), lambda: _box(inertia=[[1, 2], [3]]),
    lambda: _box(inertia=[1e308, 1e308, 1e308], pivot=[0, 0, 0], com_body=[0, 0, 1]),
    lambda: _box(quat_wxyz=[1e-13, 0, 0, 0]), lambda: _box(quat_wxyz=[0, 0, 0, 0]), lambda: _box(rotvec=[1e200, 0, 0]),
    lambda: _box(R_world_body=np.ones((3, 3))), lambda: _box(omega_body=[1e300, 0, 0]), lambda: _box(name=5),
    lambda: _box(name="a\x01b"), lambda: _box(name=""), lambda: _box(com_body=[0, 0, 0]), lambda: _box(position={"a": 1}),
    lambda: rbdyn.System("not a list"), lambda: rbdyn.System([_box(), _box()]), lambda: rbdyn.System([_box()], gravity=[0, 0]),
    lambda: rbdyn.System([_box()], gravity=[0, 0, -1e300]),
    lambda: rbdyn.System([_box()], constraints=[rbdyn.Rod("b", other_point=(0, 0, 0), length=1e-12)]),
    lambda: rbdyn.System([_box()], loads=[rbdyn.ConstantForce("nobody", [0, 0, 1])]),
    lambda: rbdyn.simulate("system", "rk4", 0.1, 1.0), lambda: rbdyn.simulate(rbdyn.System([_box()]), "nope", 0.1, 1.0),
    lambda: rbdyn.simulate(rbdyn.System([_box()]), "rk4", "0.1", 1.0),
    lambda: rbdyn.simulate(rbdyn.System([_box()]), "rk4", 1e-300, 1.0),
    lambda: rbdyn.simulate(rbdyn.System([_box()]), "rk4", 1e-9, 1e3),
    lambda: rbdyn.simulate(rbdyn.System([_box()]), "rk4", 0.1, 1.0, every=0),
    lambda: rbdyn.simulate(rbdyn.System([_box()]), "rk4", 0.1, 1.0, on_failure="ignore"),
    lambda: rbdyn.get_scheme("gen_alpha", rho_inf=2.0), lambda: rbdyn.get_scheme("rig_imp", newton_max_iter=2**63),
    lambda: rbdyn.get_scheme("rig_imp", bogus=1), lambda: rbdyn.load_scenario("nope"),
    lambda: rbdyn.load_scenario(12345), lambda: rbdyn.simulate(rbdyn.System([_box(velocity=[1e200, 0, 0])]), "rk4", 0.1, 0.2),
]


@functools.lru_cache(maxsize=None)
def _traj():
    return rbdyn.simulate(rbdyn.System([_box()]), "rk4", 0.1, 0.2)


def _one_box(**loads):
    return rbdyn.System([_box()], **loads)


# Calls that used to leak TypeError, OverflowError, ValueError, FileNotFoundError or AttributeError,
# or to pass text as numbers: each is an InputError naming the argument (and the entry's index).
API_INPUT_CASES = [
    (lambda: rbdyn.RigidBody("b", 1.0, [10**400, 1, 1]), "body.b.inertia"),
    (lambda: rbdyn.RigidBody("b", 1.0, ["1", "1", "1"]), "body.b.inertia"),
    (lambda: rbdyn.RigidBody("b", 1.0, [1, 1, 1], velocity=["1", 0, 0]), "body.b.velocity"),
    (lambda: rbdyn.RigidBody("b", 1.0, [1, 1, 1], position=[10**400, 0, 0]), "body.b.position"),
    (lambda: rbdyn.RigidBody("b", 1.0, [1, 1, 1], omega_body=np.array(["0", "1", "2"])), "body.b.omega_body"),
    (lambda: rbdyn.RigidBody("b", 1.0, [5, 5, 1], pivot=[0, 0, 0], com_body=[0, 0, 1e200]), "body.b.com_body"),
    (lambda: rbdyn.box_inertia(10**400, [1, 1, 1]), "mass"),
    (lambda: rbdyn.box_inertia("x", [1, 1, 1]), "mass"),
    (lambda: rbdyn.box_inertia(1.0, [1, "2", 3]), "size"),
    (lambda: rbdyn.box_inertia(1.0, [1, 0, 3]), "size"),
    (lambda: rbdyn.System(None), "bodies"), (lambda: rbdyn.System(5), "bodies"),
    (lambda: rbdyn.System([_box()], loads=5), "loads"), (lambda: rbdyn.System([_box()], constraints=None), "constraints"),
    (lambda: rbdyn.System([_box()], constraints=5), "constraints"),
    (lambda: rbdyn.System([_box()], gravity=["0", "0", "-9.8"]), "gravity"),
    (lambda: rbdyn.System([_box(), _box()]), "body[1].name"),
    (lambda: rbdyn.System([_box(position=[0, 0, 1e305])], gravity=[0, 0, -9.8]), "body[0].position"),
    (lambda: _one_box(loads=[rbdyn.PointForce("b", [1e200, 0, 0], [0, 1e200, 0])]), "load[0].point_body"),
    (lambda: _one_box(loads=[rbdyn.ConstantForce("b", [0, 0, 1]), rbdyn.Spring("b", [0, 0, 0], [1e200, 0, 0], 1.0, 0.0)]),
     "load[1].anchor"),
    (lambda: rbdyn.ConstantForce("b", ["1", 0, 0]), "load.b.force"),
    (lambda: _traj().to_csv("/nonexistent/x.csv"), "out"), (lambda: _traj().to_csv(None), "out"),
    (lambda: _traj().to_csv(5), "out"), (lambda: _traj().to_csv(""), "out"),
    (lambda: rbdyn.simulate(rbdyn.System([_box()]), "rk4", 1e-12, 1.0, every=10**12), "dt"),
    (lambda: rbdyn.simulate(rbdyn.System([_box()]), "rk4", 0.1, 0.2, progress="yes"), "progress"),
]


@pytest.mark.parametrize("k", range(len(API_INPUT_CASES)))
def test_api_misuse_is_input_error_naming_the_argument(k):
    fn, field = API_INPUT_CASES[k]
    with pytest.raises(rbdyn.InputError) as info:
        fn()
    assert info.value.field == field, str(info.value)


def test_to_csv_writes_a_path_atomically_with_the_umask(tmp_path):
    out = tmp_path / "t.csv"
    _traj().to_csv(out)
    assert out.read_text().startswith("t,") and stat.S_IMODE(os.stat(out).st_mode) == 0o666 & ~_umask()
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("k", range(len(API_CASES)))
def test_api_misuse_raises_only_documented_errors(k):
    try:
        API_CASES[k]()
    except (rbdyn.InputError, rbdyn.NumericalError):
        return
    pytest.fail("accepted")


def test_enough_api_cases():
    assert len(API_CASES) + len(API_INPUT_CASES) >= 30, len(API_CASES)


def test_huge_quaternion_is_normalised_without_overflow():
    R = _box(quat_wxyz=[1e200, 1e200, 0, 0]).R_world_body
    assert np.all(np.isfinite(R)) and rbdyn.so3.orthonormality_error(R) < 1e-15


def test_body_arrays_are_frozen():
    body = _box(velocity=[1.0, 0.0, 0.0])
    system = rbdyn.System([body])
    with pytest.raises((ValueError, TypeError)):
        body.velocity[0] = 5.0
    assert rbdyn.simulate(system, "rk4", 0.1, 0.1).v_com[-1, 0, 0] == 1.0
