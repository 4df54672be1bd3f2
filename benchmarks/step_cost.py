"""Cost of one body-step: every rbdyn scheme next to MuJoCo, on the Boxes complex scenario.

The scenario is the complex case of the Gazebo "Boxes" benchmark (see the book's Boxes
page): a free 10 kg box of 0.1 x 0.4 x 0.9 m, g = (0, 0, -9.8), initial velocity
(-2, 2, 8) m/s and body angular velocity (0.1, 5, 0.1) rad/s, stepped with dt = 1e-3.
It is run with N = 1, 100 and 1000 identical, non-interacting boxes:

* rbdyn: a ``System`` of N boxes, stepped by ``rbdyn.simulate`` for every scheme in
  ``rbdyn.schemes()``. The time is ``Trajectory.wall_time`` (stepping only, outputs
  excluded) of one run with a single output at the end, after a warm-up run so that
  compilation is not counted. Schemes that cannot run a free body (for example ones that
  need constraints) are listed as skipped, with the reason.
* MuJoCo: one model with N free bodies (free joint, same mass and inertia, contacts
  disabled), integrator ``Euler`` and ``RK4``, timestep 1e-3. It is stepped both by
  ``mujoco.mj_step`` in a Python loop and by ``mujoco.rollout`` (one thread); the lower
  of the two is used for the ratios, since the Python loop's overhead is not MuJoCo's.

Each measurement takes about ``--target`` seconds (the number of steps is calibrated);
it is repeated and the median is reported in microseconds per body-step, with the
ratios rbdyn / MuJoCo-Euler and rbdyn / MuJoCo-RK4. Everything runs on one thread.

As a sanity check that both engines integrate the same problem, the script also prints
each engine's maximum position error over 10 s at dt = 1e-3 against the exact parabola
(about 0.049 m for a first-order Euler step, round-off for a higher-order one).

Usage (from the repository root)::

    .venv/bin/python benchmarks/step_cost.py            # full run, about a minute
    .venv/bin/python benchmarks/step_cost.py --quick    # fewer repeats and bodies
    .venv/bin/python benchmarks/step_cost.py --json step_cost.json

Timings depend on the machine and on its load; nothing here is asserted by the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

try:
    import rbdyn
except ImportError:  # run from a checkout without an installed rbdyn
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import rbdyn

try:
    import mujoco
except ImportError:  # the rbdyn rows are still useful without MuJoCo
    mujoco = None

# The Boxes complex scenario.
MASS = 10.0
SIZE = (0.1, 0.4, 0.9)
GRAVITY = np.array([0.0, 0.0, -9.8])
VELOCITY = np.array([-2.0, 2.0, 8.0])
OMEGA_BODY = np.array([0.1, 5.0, 0.1])
DT = 1e-3
T_CHECK = 10.0  # duration of the accuracy check
# Long measurements are made of runs of at most the benchmark's 10 s, each from the initial
# state: an explicit scheme is not stable for ever (symplectic Euler's explicit gyroscopic
# term blows up after some hundreds of seconds), and the problem stays the Boxes one.
CHUNK = int(round(T_CHECK / DT))

MUJOCO_INTEGRATORS = ("Euler", "RK4")


# ---------------------------------------------------------------------------
# machine
# ---------------------------------------------------------------------------
def machine_info() -> dict:
    """CPU model, core counts, load and package versions."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    import numba

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "mujoco": mujoco.__version__ if mujoco is not None else None,
        "rbdyn": rbdyn.__version__,
    }


# ---------------------------------------------------------------------------
# timing helpers
# ---------------------------------------------------------------------------
def calibrate(run, target: float, start: int = 8) -> int:
    """Number of steps for which ``run(n_steps)`` (returning seconds) takes ~``target`` s."""
    n = start
    while True:
        seconds = run(n)
        if seconds >= 0.2 * target:
            break
        n *= 4
    return max(1, int(n * target / seconds))


def chunked(run_chunk, size: int = CHUNK):
    """``run(n_steps)``: the sum of ``run_chunk(m)`` over runs of at most ``size`` steps."""

    def run(n_steps):
        seconds, left = 0.0, n_steps
        while left > 0:
            m = min(left, size)
            seconds += run_chunk(m)
            left -= m
        return seconds

    return run


def repeat(run, n_steps: int, n_bodies: int, repeats: int) -> list[float]:
    """Microseconds per body-step of ``repeats`` runs of ``n_steps`` steps."""
    return [run(n_steps) / (n_steps * n_bodies) * 1e6 for _ in range(repeats)]


# ---------------------------------------------------------------------------
# rbdyn
# ---------------------------------------------------------------------------
def rbdyn_system(n_bodies: int) -> rbdyn.System:
    inertia = rbdyn.box_inertia(MASS, SIZE)
    bodies = [
        rbdyn.RigidBody(f"box{i}", mass=MASS, inertia=inertia, velocity=VELOCITY, omega_body=OMEGA_BODY)
        for i in range(n_bodies)
    ]
    return rbdyn.System(bodies, gravity=GRAVITY)


def rbdyn_runner(scheme: str, n_bodies: int):
    """``run(n_steps) -> seconds`` of stepping, or raise why the scheme cannot run."""
    cls = rbdyn.schemes()[scheme]
    if getattr(cls, "requires_constraints", False):
        raise RuntimeError("needs constraints")
    system = rbdyn_system(n_bodies)

    def run(n_steps):
        traj = rbdyn.simulate(system, scheme, DT, n_steps * DT, every=n_steps)
        if traj.steps != n_steps:
            raise RuntimeError(f"took {traj.steps} steps instead of {n_steps}")
        return traj.wall_time

    run(10)  # warm-up: compiles (or loads the cached machine code)
    return chunked(run)


def rbdyn_check(scheme: str):
    """Max over 10 s of |c(t) - (c0 + v0 t + g t^2 / 2)|, sampled after every step,
    and the final ``(R_world_body, omega_body)``."""
    traj = rbdyn.simulate(rbdyn_system(1), scheme, DT, T_CHECK, every=1)
    t = traj.t[:, None]
    exact = VELOCITY * t + 0.5 * GRAVITY * t * t
    err = float(np.max(np.linalg.norm(traj.x_com[:, 0] - exact, axis=1)))
    return err, traj.R_world_body[-1, 0], traj.omega_body[-1, 0]


# ---------------------------------------------------------------------------
# MuJoCo
# ---------------------------------------------------------------------------
def mujoco_xml(n_bodies: int, integrator: str) -> str:
    """N free boxes with the Boxes mass and inertia; no contacts."""
    Ixx, Iyy, Izz = (float(c) for c in np.diag(rbdyn.box_inertia(MASS, SIZE)))
    half = " ".join(repr(0.5 * float(s)) for s in SIZE)
    body = (
        '<body name="box{i}"><freejoint/>'
        f'<inertial pos="0 0 0" mass="{MASS!r}" diaginertia="{Ixx!r} {Iyy!r} {Izz!r}"/>'
        f'<geom type="box" size="{half}" contype="0" conaffinity="0"/></body>'
    )
    bodies = "\n    ".join(body.format(i=i) for i in range(n_bodies))
    g = " ".join(repr(float(c)) for c in GRAVITY)
    return f"""<mujoco model="boxes">
  <option timestep="{DT!r}" gravity="{g}" integrator="{integrator}">
    <flag contact="disable"/>
  </option>
  <worldbody>
    {bodies}
  </worldbody>
</mujoco>"""


def mujoco_setup(n_bodies: int, integrator: str):
    """Model, data and the full initial state (for mj_setState and rollout)."""
    model = mujoco.MjModel.from_xml_string(mujoco_xml(n_bodies, integrator))
    data = mujoco.MjData(model)
    for i in range(n_bodies):
        # Free joint: qpos = (position, quaternion wxyz), qvel = (linear velocity in world
        # axes, angular velocity in BODY axes) -- checked by experiment; with R(0) = I the
        # two frames agree at t = 0 anyway.
        data.qpos[7 * i : 7 * i + 7] = (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
        data.qvel[6 * i : 6 * i + 3] = VELOCITY
        data.qvel[6 * i + 3 : 6 * i + 6] = OMEGA_BODY
    mujoco.mj_forward(model, data)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state0 = np.empty(mujoco.mj_stateSize(model, spec))
    mujoco.mj_getState(model, data, state0, spec)
    return model, data, state0


def mujoco_loop_runner(model, data, state0):
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    step = mujoco.mj_step

    def run(n_steps):
        mujoco.mj_setState(model, data, state0, spec)
        tic = time.perf_counter()
        for _ in range(n_steps):
            step(model, data)
        return time.perf_counter() - tic

    return chunked(run)


def mujoco_rollout_runner(model, data, state0):
    """``run(n_steps)`` with ``mujoco.rollout`` (single thread), or None if unavailable."""
    try:
        from mujoco import rollout
    except ImportError:
        return None
    init = state0[None, :]
    # rollout writes the full state after every step: keep that buffer <= 64 MB.
    limit = max(1, int(64e6 / (8 * state0.size)))
    buffers = {}

    def run(n_steps):
        out = buffers.get(n_steps)
        if out is None:
            if len(buffers) > 2:
                buffers.clear()
            out = buffers[n_steps] = np.empty((1, n_steps, state0.size))
        tic = time.perf_counter()
        rollout.rollout(model, data, init, nstep=n_steps, state=out)
        return time.perf_counter() - tic

    run(2)  # warm-up
    return chunked(run, min(CHUNK, limit))


def mujoco_check(integrator: str):
    """As :func:`rbdyn_check`, for one MuJoCo free box."""
    model, data, _ = mujoco_setup(1, integrator)
    n_steps = int(round(T_CHECK / DT))
    err = 0.0
    for k in range(1, n_steps + 1):
        mujoco.mj_step(model, data)
        t = k * DT
        exact = VELOCITY * t + 0.5 * GRAVITY * t * t
        err = max(err, float(np.linalg.norm(data.qpos[:3] - exact)))
    R = np.empty(9)
    mujoco.mju_quat2Mat(R, data.qpos[3:7])
    return err, R.reshape(3, 3), data.qvel[3:6].copy()  # qvel angular part: body axes


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------
def fmt(x, width=10, spec=".3g"):
    return f"{x:{width}{spec}}" if x is not None else f"{'-':>{width}}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats, N = 1 and 100, shorter runs")
    parser.add_argument("--json", metavar="FILE", help="also write all numbers to FILE")
    parser.add_argument("--bodies", type=int, nargs="+", help="numbers of bodies (default 1 100 1000)")
    parser.add_argument("--repeats", type=int, help="repeats per measurement (default 5)")
    parser.add_argument("--target", type=float, help="seconds per measurement (default 0.3)")
    args = parser.parse_args(argv)
    repeats = args.repeats or (3 if args.quick else 5)
    bodies = args.bodies or ([1, 100] if args.quick else [1, 100, 1000])
    target = args.target or (0.1 if args.quick else 0.3)

    info = machine_info()
    print("Machine")
    for key, value in info.items():
        print(f"  {key:14s} {value}")
    print(f"\nBoxes complex scenario, dt = {DT}; median of {repeats} runs of ~{target} s each; "
          "microseconds per body-step (one thread)\n")

    results = {}  # row name -> {N: {...}}
    skipped = {}

    def record(row, n, samples, n_steps):
        results.setdefault(row, {})[n] = {
            "median_us": statistics.median(samples), "samples_us": samples, "n_steps": n_steps,
        }
        print(f"  {row:34s} N={n:<5d} {statistics.median(samples):9.3f} us  ({n_steps} steps x {repeats})",
              flush=True)

    scheme_names = list(rbdyn.schemes())
    for name in scheme_names:
        row = f"rbdyn {name}"
        for n in bodies:
            try:
                run = rbdyn_runner(name, n)
                n_steps = calibrate(run, target)
                record(row, n, repeat(run, n_steps, n, repeats), n_steps)
            except Exception as exc:  # noqa: BLE001 -- report, do not stop the benchmark
                skipped[name] = f"{type(exc).__name__}: {exc}"
                print(f"  {row:34s} skipped: {skipped[name]}", flush=True)
                break

    if mujoco is not None:
        for integ in MUJOCO_INTEGRATORS:
            for n in bodies:
                model, data, state0 = mujoco_setup(n, integ)
                loop = mujoco_loop_runner(model, data, state0)
                loop(2)
                n_steps = calibrate(loop, target)
                record(f"MuJoCo {integ} (mj_step loop)", n, repeat(loop, n_steps, n, repeats), n_steps)
                roll = mujoco_rollout_runner(model, data, state0)
                if roll is not None:
                    n_steps = calibrate(roll, target)
                    record(f"MuJoCo {integ} (rollout)", n, repeat(roll, n_steps, n, repeats), n_steps)
                best = min(
                    results[f"MuJoCo {integ} ({how})"][n]["median_us"]
                    for how in ("mj_step loop", "rollout")
                    if f"MuJoCo {integ} ({how})" in results
                )
                results.setdefault(f"MuJoCo {integ} (best)", {})[n] = {"median_us": best}
    else:
        print("  MuJoCo is not installed: no MuJoCo rows, no ratios")

    # ---- table -----------------------------------------------------------
    def median(row, n):
        return results.get(row, {}).get(n, {}).get("median_us")

    head = f"{'us per body-step (median)':36s}" + "".join(f"{'N=' + str(n):>10s}" for n in bodies)
    print("\n" + head + "\n" + "-" * len(head))
    for row in results:
        print(f"{row:36s}" + "".join(fmt(median(row, n)) for n in bodies))
    for name, why in skipped.items():
        print(f"{'rbdyn ' + name:36s}  skipped: {why}")

    ratios = {}
    if mujoco is not None:
        for integ in MUJOCO_INTEGRATORS:
            ref = f"MuJoCo {integ} (best)"
            print(f"\n{'ratio rbdyn / ' + ref:36s}" + "".join(f"{'N=' + str(n):>10s}" for n in bodies))
            for name in scheme_names:
                row = f"rbdyn {name}"
                if row not in results:
                    continue
                r = {n: median(row, n) / median(ref, n) for n in bodies if median(row, n) and median(ref, n)}
                ratios[f"{name} / MuJoCo {integ}"] = r
                print(f"  {name:34s}" + "".join(fmt(r.get(n), spec=".3f") for n in bodies))

    # ---- accuracy sanity check -------------------------------------------
    print(f"\nSanity check: max position error over {T_CHECK:g} s at dt = {DT} (first order: ~0.049 m)")
    accuracy, final = {}, {}
    for name in scheme_names:
        if name in skipped:
            continue
        accuracy[f"rbdyn {name}"], *final[f"rbdyn {name}"] = rbdyn_check(name)
    if mujoco is not None:
        for integ in MUJOCO_INTEGRATORS:
            accuracy[f"MuJoCo {integ}"], *final[f"MuJoCo {integ}"] = mujoco_check(integ)
    for row, err in accuracy.items():
        print(f"  {row:34s} {err:.4e} m")
    # Same initial attitude rate in both engines: the fourth-order runs must end in the
    # same attitude (up to the round-off amplified by the tumbling).
    pairs = [("rbdyn rk4", "MuJoCo RK4"), ("rbdyn symplectic_euler", "MuJoCo Euler")]
    attitude = {}
    for a, b in pairs:
        if a in final and b in final:
            angle = float(rbdyn.so3.rotation_distance(final[a][0], final[b][0]))
            dw = float(np.linalg.norm(final[a][1] - final[b][1]))
            attitude[f"{a} vs {b}"] = {"rotation_rad": angle, "omega_body_diff": dw}
            print(f"  at t = {T_CHECK:g} s, {a} vs {b}: attitude differs by {angle:.3e} rad, "
                  f"omega_body by {dw:.3e} rad/s")

    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "machine": info,
                    "settings": {"dt": DT, "bodies": bodies, "repeats": repeats, "target_s": target},
                    "us_per_body_step": {row: {str(n): v for n, v in d.items()} for row, d in results.items()},
                    "skipped": skipped,
                    "ratios": {k: {str(n): v for n, v in d.items()} for k, d in ratios.items()},
                    "max_position_error_m": accuracy,
                    "final_state_difference": attitude,
                },
                fh,
                indent=2,
            )
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
