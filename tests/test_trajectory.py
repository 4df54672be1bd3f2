"""Tests of :func:`rbdyn.simulate` and :class:`rbdyn.Trajectory`.

* the diagnostics (energy, momenta) against their closed forms, evaluated on
  the trajectory's own states;
* the output layout: rows, step count, CSV columns, repr-exact CSV;
* numerical failures (``NumericalError`` with time and step) and argument
  errors (``InputError``);
* the Python path (systems with a ``LoadCallback``) and the pure-Python run
  (``NUMBA_DISABLE_JIT=1``) against the compiled one.
"""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rbdyn
from rbdyn import so3

ROOT = Path(__file__).resolve().parents[1]
SCHEMES = list(rbdyn.schemes())


def schemes_with_known_bugs(bugs):
    """All registered schemes as parameters; those in ``bugs`` marked xfail(strict) with the reason."""
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=bugs[n])) if n in bugs else n
            for n in SCHEMES]
G = np.array([0.0, 0.0, -9.81])

# Diagnostics are a handful of flops on O(1..100) numbers: relative 1e-13.
TOL_DIAG = 1e-13


def rot(phi):
    return so3.exp(np.asarray(phi, dtype=float))


def free_body(name="box", **kw):
    Q = rot([0.4, -0.3, 0.8])
    J = Q @ np.diag([0.8, 1.1, 1.6]) @ Q.T  # a full (non-diagonal) inertia tensor
    kw.setdefault("position", [1.0, -2.0, 0.5])
    kw.setdefault("velocity", [0.3, 0.7, -1.2])
    kw.setdefault("rotvec", [0.2, 0.5, -0.1])
    kw.setdefault("omega_body", [0.4, 2.0, -0.7])
    return rbdyn.RigidBody(name, 2.5, 0.5 * (J + J.T), **kw)


def pendulum(name="arm", l=0.7, m=2.0, **kw):
    """A body turning about the world origin; mass centre at (0, 0, l) in the body."""
    J_com = rbdyn.box_inertia(m, (0.1, 0.2, 2 * l))
    c = np.array([0.0, 0.0, l])
    J_pivot = J_com + m * (c @ c * np.eye(3) - np.outer(c, c))
    kw.setdefault("rotvec", [1.2, 0.3, 0.0])
    kw.setdefault("omega_body", [0.5, -1.0, 3.0])
    return rbdyn.RigidBody(name, m, J_pivot, pivot=[0.0, 0.0, 0.0], com_body=c, **kw)


def close(a, b, tol=TOL_DIAG):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = max(1.0, float(np.max(np.abs(b))))
    np.testing.assert_allclose(a, b, rtol=0, atol=tol * scale)


# ---------------------------------------------------------------------------
# diagnostics against closed forms
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("scheme", SCHEMES)
def test_free_body_diagnostics(scheme):
    b = free_body()
    traj = rbdyn.simulate(rbdyn.System([b]), scheme, 0.01, 0.3, every=5)
    m, J = b.mass, b.inertia
    for r in range(len(traj.t)):
        x, v = traj.x_com[r, 0], traj.v_com[r, 0]
        R, W = traj.R_world_body[r, 0], traj.omega_body[r, 0]
        kin = 0.5 * m * v @ v + 0.5 * W @ J @ W
        close(traj.kinetic_energy[r], kin)
        close(traj.potential_energy[r], 0.0)
        close(traj.energy[r], kin)
        close(traj.linear_momentum[r], m * v)
        close(traj.angular_momentum[r], m * np.cross(x, v) + R @ J @ W)
    # row 0 is the input state
    close(traj.x_com[0, 0], b.position)
    close(traj.v_com[0, 0], b.velocity)
    np.testing.assert_array_equal(traj.R_world_body[0, 0], b.R_world_body)
    np.testing.assert_array_equal(traj.omega_body[0, 0], b.omega_body)
    close(traj.omega_world[0, 0], b.R_world_body @ b.omega_body)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_pivoted_body_diagnostics(scheme):
    l, m = 0.7, 2.0
    b = pendulum(l=l, m=m)
    J = b.inertia  # about the pivot (the origin)
    traj = rbdyn.simulate(rbdyn.System([b], gravity=G), scheme, 0.01, 0.3, every=5)
    for r in range(len(traj.t)):
        R, W = traj.R_world_body[r, 0], traj.omega_body[r, 0]
        x_com = R @ np.array([0.0, 0.0, l])
        v_com = R @ np.cross(W, [0.0, 0.0, l])
        close(traj.x_com[r, 0], x_com)
        close(traj.v_com[r, 0], v_com)
        close(traj.kinetic_energy[r], 0.5 * W @ J @ W)
        # potential = -m g . x_com = m |g| l R[2, 2] for g = (0, 0, -|g|)
        close(traj.potential_energy[r], m * 9.81 * l * R[2, 2])
        close(traj.potential_energy[r], -m * G @ x_com)
        close(traj.linear_momentum[r], m * v_com)
        close(traj.angular_momentum[r], R @ J @ W)


def test_pivoted_body_energy_is_conserved_by_rk4():
    """The sign of the potential: with it, rk4 at a small step conserves the energy."""
    traj = rbdyn.simulate(rbdyn.System([pendulum()], gravity=G), "rk4", 1e-3, 1.0, every=100)
    E = traj.energy
    assert np.ptp(traj.potential_energy) > 1.0  # the pendulum really swings
    assert np.max(np.abs(E - E[0])) < 1e-9 * abs(E[0])


def test_constant_force_potential():
    f = np.array([1.5, -0.5, 2.0])
    b = free_body()
    system = rbdyn.System([b], loads=[rbdyn.ConstantForce("box", f)], gravity=G)
    traj = rbdyn.simulate(system, "rk4", 1e-3, 0.5, every=50)
    for r in range(len(traj.t)):
        close(traj.potential_energy[r], -(b.mass * G + f) @ traj.x_com[r, 0])
    # conservative: rk4 keeps the total energy to its truncation error
    assert np.max(np.abs(traj.energy - traj.energy[0])) < 1e-9 * abs(traj.energy[0])
    assert np.ptp(traj.potential_energy) > 1.0


def test_point_force_potential_and_torque_about_pivot():
    p, f = np.array([0.1, 0.2, 0.3]), np.array([0.0, 3.0, -1.0])
    b = pendulum()
    system = rbdyn.System([b], loads=[rbdyn.PointForce("arm", p, f)], gravity=G)
    traj = rbdyn.simulate(system, "rk4", 1e-3, 0.5, every=50)
    for r in range(len(traj.t)):
        R = traj.R_world_body[r, 0]
        close(traj.potential_energy[r], -b.mass * G @ traj.x_com[r, 0] - f @ (R @ p))
    assert np.max(np.abs(traj.energy - traj.energy[0])) < 1e-9 * max(1.0, abs(traj.energy[0]))


def test_point_force_torque_on_free_body():
    """d/dt of the angular momentum about the mass centre equals r x f (r = R p).

    One rk4 step of size h: (L(h) - L(0))/h equals the trapezoidal mean of the
    torque at both ends up to O(h^2) (~1e-9 here), far below the tolerance.
    """
    h = 1e-4
    p, f = np.array([0.2, -0.1, 0.3]), np.array([1.0, -2.0, 0.5])
    b = free_body()
    system = rbdyn.System([b], loads=[rbdyn.PointForce("box", p, f)])
    traj = rbdyn.simulate(system, "rk4", h, h)
    assert traj.steps == 1 and len(traj.t) == 2
    R0, R1 = traj.R_world_body[:, 0]
    L_c = np.array([traj.R_world_body[r, 0] @ b.inertia @ traj.omega_body[r, 0] for r in range(2)])
    tau = 0.5 * (np.cross(R0 @ p, f) + np.cross(R1 @ p, f))
    np.testing.assert_allclose((L_c[1] - L_c[0]) / h, tau, rtol=0, atol=1e-6 * np.linalg.norm(tau))
    # the torque really is r x f (not zero, not f x r)
    assert np.linalg.norm(tau) > 0.1
    # linear momentum: dp/dt = f
    np.testing.assert_allclose((traj.linear_momentum[1] - traj.linear_momentum[0]) / h, f, rtol=0, atol=1e-8)
    # angular momentum about the world origin: dL/dt = (x_com + r) x f
    x = traj.x_com[:, 0]
    tau_o = 0.5 * (np.cross(x[0] + R0 @ p, f) + np.cross(x[1] + R1 @ p, f))
    np.testing.assert_allclose((traj.angular_momentum[1] - traj.angular_momentum[0]) / h, tau_o,
                               rtol=0, atol=1e-6 * np.linalg.norm(tau_o))


def test_constant_torque_has_no_potential():
    system = rbdyn.System([free_body()], loads=[rbdyn.ConstantTorque("box", [0.0, 0.0, 1.0])])
    traj = rbdyn.simulate(system, "rk4", 1e-3, 0.1, every=10)
    np.testing.assert_array_equal(traj.potential_energy, 0.0)


def test_callback_potential_is_added():
    system = rbdyn.System([free_body()], loads=[
        rbdyn.LoadCallback("box", lambda t, x, R, v, W: (np.zeros(3), np.zeros(3)),
                           potential=lambda t, x, R: 10.0 * t + x[2]),
    ])
    traj = rbdyn.simulate(system, "rk4", 0.01, 0.05)
    close(traj.potential_energy, 10.0 * traj.t + traj.x_com[:, 0, 2])


# ---------------------------------------------------------------------------
# output rows and layout
# ---------------------------------------------------------------------------
def quick_system():
    return rbdyn.System([free_body()], gravity=G)


@pytest.mark.parametrize(
    "dt, t_end, every, steps",
    [
        (0.001, 0.0105, 3, [0, 3, 6, 9, 11]),  # t_end not a multiple of every*dt nor of dt
        (0.001, 0.012, 3, [0, 3, 6, 9, 12]),   # a multiple: the last step is not repeated
        (0.001, 0.012, 1, list(range(13))),
        (0.001, 0.012, 100, [0, 12]),
        (0.1, 0.3, 1, [0, 1, 2, 3]),           # 0.3/0.1 = 2.9999999999999996
        (0.1, 1.0000001, 5, [0, 5, 10, 11]),   # just past a whole step: one more step
        (0.25, 1.0, 2, [0, 2, 4]),
    ],
)
def test_output_rows(dt, t_end, every, steps):
    traj = rbdyn.simulate(quick_system(), "symplectic_euler", dt, t_end, every)
    np.testing.assert_array_equal(traj.t, np.array(steps) * dt)
    assert traj.steps == steps[-1]
    # per step when every = 1, else the total of each output interval
    assert traj.iterations.shape == ((steps[-1],) if every == 1 else (len(steps) - 1,))
    assert traj.iteration_counts.sum() == steps[-1]
    assert traj.status == "success"
    n = len(steps)
    assert traj.x_com.shape == (n, 1, 3) and traj.R_world_body.shape == (n, 1, 3, 3)
    assert traj.energy.shape == (n,) and traj.constraint.shape == (n,)
    assert traj.dt == dt


def test_steps_is_ceil_of_t_end_over_dt():
    traj = rbdyn.simulate(quick_system(), "symplectic_euler", 0.001, 10.0, every=10_000)
    assert traj.steps == 10_000
    np.testing.assert_array_equal(traj.t, [0.0, 10.0])
    assert traj.message.startswith("reached t = 10.0 in 10000 steps")


def test_zero_duration_gives_one_row():
    b = free_body()
    traj = rbdyn.simulate(rbdyn.System([b]), "rk4", 0.01, 0.0, every=7)
    assert traj.steps == 0
    np.testing.assert_array_equal(traj.t, [0.0])
    assert traj.table().shape == (1, len(traj.columns()))
    np.testing.assert_array_equal(traj.x_com[0, 0], b.position)
    assert traj.status == "success"


def test_quaternions_unit_with_nonnegative_w():
    sc = rbdyn.load_scenario("boxes-complex")
    traj = sc.run(scheme="rk4", dt=0.01, t_end=6.0, every=1)
    q = traj.quat_wxyz[:, 0]
    assert q.shape == (len(traj.t), 4)
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, rtol=0, atol=1e-15)
    assert np.all(q[:, 0] >= 0.0)
    assert np.min(q[:, 0]) < 0.2  # the tumbling box really passes near w = 0
    for r in range(len(traj.t)):
        np.testing.assert_allclose(so3.quat_wxyz_to_matrix(q[r]), traj.R_world_body[r, 0], atol=1e-14)


def test_columns_layout():
    system = rbdyn.System([free_body("box"), pendulum("arm")], gravity=G)
    traj = rbdyn.simulate(system, "rk4", 0.01, 0.02)
    per_body = ["x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "Wx", "Wy", "Wz"]
    expected = ["t"] + [f"{n}.{c}" for n in ("box", "arm") for c in per_body] + ["energy", "constraint"]
    assert traj.columns() == expected
    table = traj.table()
    assert table.shape == (3, len(expected))
    col = {c: k for k, c in enumerate(expected)}
    for r in range(3):
        assert table[r, col["t"]] == traj.t[r]
        for b, name in enumerate(("box", "arm")):
            np.testing.assert_array_equal(table[r, col[f"{name}.x"]:col[f"{name}.z"] + 1], traj.x_com[r, b])
            np.testing.assert_array_equal(table[r, col[f"{name}.qw"]:col[f"{name}.qz"] + 1], traj.quat_wxyz[r, b])
            np.testing.assert_array_equal(table[r, col[f"{name}.vx"]:col[f"{name}.vz"] + 1], traj.v_com[r, b])
            np.testing.assert_array_equal(table[r, col[f"{name}.Wx"]:col[f"{name}.Wz"] + 1], traj.omega_body[r, b])
        assert table[r, col["energy"]] == traj.energy[r]
        assert table[r, col["constraint"]] == 0.0
    assert traj.body("arm") == 1
    with pytest.raises(rbdyn.InputError, match="unknown body 'nope'"):
        traj.body("nope")


def _parse_csv(text):
    lines = text.splitlines()
    return lines[0].split(","), [[float(s) for s in line.split(",")] for line in lines[1:]], lines


def test_csv_round_trips_floats_exactly(tmp_path):
    system = rbdyn.System([free_body("box"), pendulum("arm")], gravity=G)
    traj = rbdyn.simulate(system, "rk4", 0.013, 0.1, every=2)
    buf = io.StringIO()
    traj.to_csv(buf)
    text = buf.getvalue()
    assert text.endswith("\n") and not text.endswith("\n\n")
    header, rows, lines = _parse_csv(text)
    assert header == traj.columns()
    table = traj.table()
    assert len(rows) == table.shape[0]
    for r, row in enumerate(rows):
        assert row == table[r].tolist()  # float(repr(v)) == v: exact
        assert lines[r + 1].split(",") == [repr(v) for v in table[r].tolist()]
    # to a path: the same text
    path = tmp_path / "out.csv"
    traj.to_csv(str(path))
    assert path.read_text(encoding="utf-8") == text


# ---------------------------------------------------------------------------
# numerical failure
# ---------------------------------------------------------------------------
DT_FAIL = 1e-3
T_BAD = 0.0052  # the callback returns nan from this time on


def _failing_system(calls):
    def fn(t, x, R, v, W):
        calls.append(t)
        if t >= T_BAD:
            return np.array([math.nan, 0.0, 0.0]), np.zeros(3)
        return np.zeros(3), np.zeros(3)

    return rbdyn.System([free_body()], loads=[rbdyn.LoadCallback("box", fn)], gravity=G)


def _check_failure(err, calls, traj):
    """The step that failed is the one in which the callback first returned nan."""
    first_bad = min(t for t in calls if t >= T_BAD)
    assert isinstance(err.step, int) and err.step >= 1
    assert err.t == pytest.approx((err.step - 1) * DT_FAIL, abs=1e-15)
    # loads are evaluated within [t_n, t_n + h] of step n + 1
    assert err.t - 1e-15 <= first_bad <= err.t + DT_FAIL + 1e-15
    # the step before did not touch a bad time (else it would have failed)
    assert err.step == 1 or err.t - DT_FAIL + 1e-15 < T_BAD
    msg = str(err)
    assert f"t = {err.t!r}" in msg and f"(step {err.step})" in msg
    assert "non-finite" in msg
    # output recorded before the failure: every output row before the failed step
    assert traj.status == "failure"
    assert traj.steps == err.step - 1
    assert traj.iterations.shape == (len(range(0, err.step, 2)) - 1,)  # every = 2: one total per interval
    assert traj.iteration_counts.sum() == err.step - 1  # the failed step is not counted
    expected_rows = [s for s in range(0, err.step, 2)]
    np.testing.assert_allclose(traj.t, np.array(expected_rows) * DT_FAIL, rtol=0, atol=1e-15)
    assert np.all(np.isfinite(traj.table()))


@pytest.mark.parametrize("scheme", schemes_with_known_bugs({}))
def test_numerical_failure_raises_with_time_and_step(scheme):
    calls = []
    with pytest.raises(rbdyn.NumericalError) as info:
        rbdyn.simulate(_failing_system(calls), scheme, DT_FAIL, 0.02, every=2)
    err = info.value
    assert isinstance(err, RuntimeError)
    assert err.trajectory is not None
    _check_failure(err, calls, err.trajectory)
    assert err.trajectory.message == str(err)


def test_numerical_failure_symplectic_euler_exact_step():
    # loads at the start of each step: the first time >= 0.0052 is 0.006, step 7
    with pytest.raises(rbdyn.NumericalError) as info:
        rbdyn.simulate(_failing_system([]), "symplectic_euler", DT_FAIL, 0.02, every=2)
    assert info.value.step == 7
    assert info.value.t == pytest.approx(0.006, abs=1e-15)
    assert "(step 7)" in str(info.value)


@pytest.mark.parametrize("scheme", schemes_with_known_bugs({}))
def test_numerical_failure_return(scheme):
    calls = []
    traj = rbdyn.simulate(_failing_system(calls), scheme, DT_FAIL, 0.02, every=2, on_failure="return")
    assert traj.status == "failure"
    assert "numerical failure at t = " in traj.message and "step" in traj.message
    with pytest.raises(rbdyn.NumericalError) as info:
        rbdyn.simulate(_failing_system([]), scheme, DT_FAIL, 0.02, every=2)
    _check_failure(info.value, calls, traj)
    assert traj.message == str(info.value)


def test_compiled_path_failure():
    """A non-finite state in the compiled kernels (no callback): absurd step on a fast spin."""
    b = rbdyn.RigidBody("s", 1.0, [1.0, 2.0, 2.5], omega_body=[3.0, 4.0, 5.0])
    traj = rbdyn.simulate(rbdyn.System([b]), "rk4", 1.0, 20.0, on_failure="return")
    assert traj.status == "failure"
    assert 1 <= traj.steps < 20
    with pytest.raises(rbdyn.NumericalError) as info:
        rbdyn.simulate(rbdyn.System([b]), "rk4", 1.0, 20.0)
    assert info.value.step == traj.steps + 1
    assert info.value.t == traj.steps * 1.0


_BLOW_UPS = {
    "huge-torque": (rbdyn.ConstantTorque("s", [1e308, 1e308, 0.0]), 1.0),  # inf in the first steps
    "huge-force": (rbdyn.ConstantForce("s", [1e308, 0.0, 0.0]), 1.0),
    "huge-step": (None, 3.0),  # an absurd step on a fast spin
}


@pytest.mark.parametrize(
    "case, scheme",
    [(c, n) for c in _BLOW_UPS for n in SCHEMES],
)
def test_every_scheme_reports_blow_up_as_numerical_error(case, scheme):
    """Whatever goes wrong inside a step must come out as NumericalError (or status 'failure')."""
    load, dt = _BLOW_UPS[case]
    b = rbdyn.RigidBody("s", 1.0, [1.0, 2.0, 2.5], omega_body=[3.0, 4.0, 5.0])
    system = rbdyn.System([b], loads=[load] if load is not None else [])
    try:
        traj = rbdyn.simulate(system, scheme, dt, 200 * dt, every=10, on_failure="return")
    except rbdyn.NumericalError as exc:  # pragma: no cover - on_failure="return" must not raise
        pytest.fail(f"on_failure='return' raised {exc}")
    if traj.status == "failure":
        with pytest.raises(rbdyn.NumericalError) as info:
            rbdyn.simulate(system, scheme, dt, 200 * dt, every=10)
        assert info.value.step == traj.steps + 1
        assert f"(step {info.value.step})" in str(info.value)
    else:  # a scheme may survive the absurd step (rig_neg does); then the state is finite
        assert np.all(np.isfinite(traj.table()))


def test_callback_exception_is_input_error():
    def fn(t, x, R, v, W):
        raise KeyError("oops")

    system = rbdyn.System([free_body()], loads=[rbdyn.LoadCallback("box", fn)])
    err = pytest.raises(rbdyn.InputError, rbdyn.simulate, system, "rk4", 0.01, 0.05).value
    assert err.field == "load.box.fn"
    assert "the callback failed at t = 0.0" in str(err) and "KeyError" in str(err)


def test_callback_wrong_shape_is_input_error():
    system = rbdyn.System([free_body()], loads=[rbdyn.LoadCallback("box", lambda *a: (np.zeros(2), np.zeros(3)))])
    err = pytest.raises(rbdyn.InputError, rbdyn.simulate, system, "rk4", 0.01, 0.05).value
    assert err.field == "load.box.fn"
    assert "two 3-vectors" in str(err)


# ---------------------------------------------------------------------------
# argument errors
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kw, field, allowed",
    [
        ({"dt": 0.0}, "dt", "> 0"),
        ({"dt": -1e-3}, "dt", "> 0"),
        ({"dt": math.nan}, "dt", "finite"),
        ({"dt": math.inf}, "dt", "finite"),
        ({"dt": "0.01"}, "dt", "number"),
        ({"dt": None}, "dt", "number"),
        ({"t_end": -1.0}, "t_end", ">= 0"),
        ({"t_end": math.nan}, "t_end", "finite"),
        ({"t_end": math.inf}, "t_end", "finite"),
        ({"every": 0}, "every", "integer >= 1"),
        ({"every": -2}, "every", "integer >= 1"),
        ({"every": 1.5}, "every", "integer >= 1"),
        ({"every": 2.0}, "every", "integer >= 1"),
        ({"every": True}, "every", "integer >= 1"),
        ({"every": "2"}, "every", "integer >= 1"),
        ({"scheme": "nosuch"}, "scheme", "unknown scheme 'nosuch'"),
        ({"scheme": 3}, "scheme", "unknown scheme"),
        ({"on_failure": "ignore"}, "on_failure", "'raise' or 'return'"),
        ({"system": "boxes-complex"}, "system", "rbdyn.System"),
    ],
)
def test_simulate_argument_errors(kw, field, allowed):
    args = {"system": quick_system(), "scheme": "rk4", "dt": 0.01, "t_end": 0.1, "every": 1}
    args.update(kw)
    extra = {"on_failure": args.pop("on_failure")} if "on_failure" in args else {}
    with pytest.raises(rbdyn.InputError) as info:
        rbdyn.simulate(args["system"], args["scheme"], args["dt"], args["t_end"], args["every"], **extra)
    assert info.value.field == field
    assert str(info.value).startswith(field + ":")
    assert allowed in str(info.value)
    for name in rbdyn.schemes():  # an unknown scheme lists the allowed ones
        if field == "scheme":
            assert name in str(info.value)


def test_unknown_scheme_setting():
    err = pytest.raises(rbdyn.InputError, rbdyn.get_scheme, "rk4", foo=1.0).value
    assert err.field == "scheme.rk4" and "foo" in str(err)


@pytest.mark.parametrize("every", [1, 10**6, 10**300])
def test_absurdly_small_dt_is_input_error(every):
    # ceil(t_end/dt) ~ 1e300 steps: refused before anything is allocated, whatever `every`
    with pytest.raises(rbdyn.InputError) as info:
        rbdyn.simulate(quick_system(), "rk4", 1e-300, 1.0, every=every)
    assert info.value.field == "dt"
    assert str(info.value).startswith("dt:") and "increase dt" in str(info.value)


def test_too_many_output_rows_is_input_error():
    # 1e9 steps are allowed, but one output row per step (~250 GB) is not: refused up front,
    # before any step is taken, naming every
    with pytest.raises(rbdyn.InputError) as info:
        rbdyn.simulate(quick_system(), "rk4", 1e-9, 1.0, every=1)
    assert info.value.field == "every"
    assert str(info.value).startswith("every:") and "increase every" in str(info.value)


class _NoConstraints(rbdyn.RK4):
    """An unregistered scheme (no own ``name``) without constraint support."""

    supports_constraints = False


@pytest.mark.parametrize(
    "scheme",
    [n for n, c in rbdyn.schemes().items() if not c.supports_constraints] + [_NoConstraints()],
    ids=lambda s: s if isinstance(s, str) else "unregistered",
)
def test_constraints_need_a_capable_scheme(scheme):
    a = rbdyn.RigidBody("a", 1.0, [1.0, 1.0, 1.0])
    system = rbdyn.System([a], constraints=[rbdyn.SphericalJoint("a", point_body=[0.0, 0.0, 0.5])])
    with pytest.raises(rbdyn.InputError) as info:
        rbdyn.simulate(system, scheme, 0.01, 0.1)
    name = scheme if isinstance(scheme, str) else scheme.name
    assert info.value.field == "scheme"
    assert f"{name} does not handle constraints" in str(info.value)
    for able, cls in rbdyn.schemes().items():
        if cls.supports_constraints:
            assert able in str(info.value)


# ---------------------------------------------------------------------------
# Python path (callbacks) and pure-Python run against the compiled kernels
# ---------------------------------------------------------------------------
def _bodies():
    box = rbdyn.RigidBody("box", 10.0, rbdyn.box_inertia(10.0, (0.1, 0.4, 0.9)), velocity=[-2.0, 2.0, 8.0],
                          omega_body=[0.1, 5.0, 0.1])
    return [box, pendulum("arm", rotvec=[0.5, 0.2, 0.0], omega_body=[1.0, 2.0, 0.5])]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_callback_gravity_equals_builtin_gravity(scheme):
    builtin = rbdyn.System(_bodies(), gravity=G)
    cbs = [
        rbdyn.LoadCallback(b.name, lambda t, x, R, v, W, m=b.mass: (m * G, np.zeros(3)),
                           potential=lambda t, x, R, m=b.mass: -m * G @ x)
        for b in _bodies()
    ]
    python = rbdyn.System(_bodies(), loads=cbs)
    a = rbdyn.simulate(builtin, scheme, 1e-3, 0.1, every=10)
    b = rbdyn.simulate(python, scheme, 1e-3, 0.1, every=10)
    A, B = a.table(), b.table()
    assert A.shape == B.shape
    scale = np.maximum(1.0, np.max(np.abs(A), axis=0))
    assert np.all(np.abs(A - B) <= 1e-14 * scale), np.max(np.abs(A - B) / scale)
    np.testing.assert_array_equal(a.iterations, b.iterations)


_NOJIT_SCRIPT = r"""
import json, sys
import numpy as np
import rbdyn
box = rbdyn.load_scenario("boxes-complex").system.bodies[0]
# inertia about the pivot: diag(0.3, 0.25, 0.1) about the mass centre c = (0.1, 0, -0.4)
# plus m (|c|^2 I - c c^T) = [[0.32, 0, 0.08], [0, 0.34, 0], [0.08, 0, 0.02]]
arm = rbdyn.RigidBody("arm", 2.0, [[0.62, 0.0, 0.08], [0.0, 0.59, 0.0], [0.08, 0.0, 0.12]],
                      pivot=[0.0, 0.0, 1.0], com_body=[0.1, 0.0, -0.4],
                      rotvec=[0.5, 0.2, 0.0], omega_body=[1.0, 2.0, 0.5])
system = rbdyn.System(
    [box, arm],
    loads=[rbdyn.PointForce("box", [0.05, 0.1, 0.2], [1.0, 2.0, 3.0]),
           rbdyn.ConstantTorque("arm", [0.1, 0.0, 0.0]),
           rbdyn.ConstantForce("box", [0.0, 0.0, 1.0])],
    gravity=[0.0, 0.0, -9.8])
out = {name: rbdyn.simulate(system, name, 1e-3, 0.03, 3).table().tolist() for name in sys.argv[1:]}
json.dump(out, sys.stdout)
"""


def test_pure_python_matches_compiled():
    if os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"):
        pytest.skip("this test process itself runs with NUMBA_DISABLE_JIT=1")
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-c", _NOJIT_SCRIPT, *SCHEMES], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    pure = json.loads(proc.stdout)
    compiled = json.loads(subprocess.run([sys.executable, "-c", _NOJIT_SCRIPT, *SCHEMES],
                                         env=dict(env, NUMBA_DISABLE_JIT="0"), cwd=ROOT, capture_output=True,
                                         text=True, timeout=300, check=True).stdout)
    assert set(pure) == set(SCHEMES)
    for name in SCHEMES:
        P, C = np.array(pure[name]), np.array(compiled[name])
        assert P.shape == C.shape == (11, 1 + 13 * 2 + 2)
        scale = np.maximum(np.abs(C), 1e-2 * np.max(np.abs(C), axis=0))
        assert np.all(np.abs(P - C) <= 1e-13 * scale), (name, np.max(np.abs(P - C) / scale))
