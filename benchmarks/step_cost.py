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

The MuJoCo models (and the rbdyn System of N boxes) come from ``peers.py``, which the
book's *Accuracy and cost* chapter uses too; the scenario's numbers are read from rbdyn's
``boxes-complex`` scenario file.

As a sanity check that both engines integrate the same problem, the script also prints
each engine's maximum position error over 10 s at dt = 1e-3 against the exact parabola
(about 0.049 m for a first-order Euler step, round-off for a higher-order one).

Constrained problems: the microseconds per step of every scheme that handles
constraints on ``heavy-top-kynema`` (a heavy top on a spherical joint, dt = 2e-3),
``pendulum-solfec`` (a rod, dt = 1e-3) and ``double-pendulum`` (two rods, dt = 1e-3), next
to MuJoCo's twins from ``peers.py`` (a ball joint, a hinge, two hinges).

``cost_table.py`` measures all of this and more (pivoted bodies, up to 10^5 bodies, the
cost of recording and of loads, building a system, memory) in one table; this script stays
for its accuracy checks and its calibrated per-scheme numbers.

With ``--suite`` it finally times ``python3.11 dev.py book`` and ``python3.11 dev.py test``
(see ``suite_time.py``; several minutes).

Usage (from the repository root)::

    .venv/bin/python benchmarks/step_cost.py            # full run, about a minute
    .venv/bin/python benchmarks/step_cost.py --quick    # fewer repeats and bodies
    .venv/bin/python benchmarks/step_cost.py --json step_cost.json
    .venv/bin/python benchmarks/step_cost.py --suite    # plus the book build and test suite

Timings depend on the machine and on its load; nothing here is asserted by the tests.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import checkout  # noqa: E402

checkout.use_numba_cache()  # before numba is imported: the kernels of these sources
try:
    import rbdyn
except ImportError:  # run from a checkout without an installed rbdyn
    sys.path.insert(0, str(HERE.parent))
    import rbdyn

import peers  # noqa: E402 -- the MuJoCo models, shared with the book
from peers import machine_info, mujoco  # noqa: E402

# The Boxes complex scenario, as rbdyn's scenario file gives it.
_BOX = rbdyn.load_scenario("boxes-complex")
GRAVITY = _BOX.system.gravity
VELOCITY = _BOX.system.bodies[0].velocity
DT = 1e-3
T_CHECK = 10.0  # duration of the accuracy check
# Long measurements are made of runs of at most the benchmark's 10 s, each from the initial
# state: an explicit scheme is not stable for ever (symplectic Euler's explicit gyroscopic
# term blows up after some hundreds of seconds), and the problem stays the Boxes one.
CHUNK = int(round(T_CHECK / DT))

MUJOCO_INTEGRATORS = ("Euler", "RK4")


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
def rbdyn_runner(scheme: str, n_bodies: int):
    """``run(n_steps) -> seconds`` of stepping, or raise why the scheme cannot run."""
    cls = rbdyn.schemes()[scheme]
    if getattr(cls, "requires_constraints", False):
        raise RuntimeError("needs constraints")
    system = peers.boxes_system(n_bodies)

    def run(n_steps):
        traj = rbdyn.simulate(system, scheme, DT, n_steps * DT, every=n_steps)
        if traj.steps != n_steps:
            raise RuntimeError(f"took {traj.steps} steps instead of {n_steps}")
        return traj.wall_time

    run(10)  # warm-up: compiles (or loads the cached machine code)
    return chunked(run)


def parabola_error(t, x_com) -> float:
    """Max over the samples of |c(t) - (c0 + v0 t + g t^2 / 2)| for body 0."""
    t = t[:, None]
    exact = _BOX.system.bodies[0].position + VELOCITY * t + 0.5 * GRAVITY * t * t
    return float(np.max(np.linalg.norm(x_com[:, 0] - exact, axis=1)))


def rbdyn_check(scheme: str):
    """Max over 10 s of the position error, sampled after every step,
    and the final ``(R_world_body, omega_body)``."""
    traj = rbdyn.simulate(peers.boxes_system(1), scheme, DT, T_CHECK, every=1)
    return parabola_error(traj.t, traj.x_com), traj.R_world_body[-1, 0], traj.omega_body[-1, 0]


# Constrained problems: (scenario for rbdyn, MuJoCo model of the same mechanism). MuJoCo's
# twin of heavy-top-kynema's top (a free body on a spherical joint) is a ball joint.
CONSTRAINED = (
    ("heavy-top-kynema", lambda integ: peers.jointed_top(integ)),
    ("pendulum-solfec", lambda integ: peers.pendulum(integ)),
    ("double-pendulum", lambda integ: peers.double_pendulum(integ)),
)


def constrained_runner(scenario, scheme: str):
    """``run(n_steps) -> seconds`` of a constrained scenario at its own dt, from its start."""
    system, dt = scenario.system, scenario.dt
    size = max(1, int(round(scenario.t_end / dt)))

    def run(n_steps):
        traj = rbdyn.simulate(system, scheme, dt, n_steps * dt, every=n_steps)
        if traj.steps != n_steps:
            raise RuntimeError(f"took {traj.steps} steps instead of {n_steps}")
        return traj.wall_time

    run(10)  # warm-up
    return chunked(run, size)


# ---------------------------------------------------------------------------
# MuJoCo (models and runners in peers.py)
# ---------------------------------------------------------------------------
def mujoco_check(integrator: str):
    """As :func:`rbdyn_check`, for one MuJoCo free box (rolled out, every step recorded)."""
    run = peers.simulate(peers.boxes(1, integrator, DT), T_CHECK, every=1)
    state = run.state()
    return parabola_error(run.t, state["x_com"]), state["R_world_body"][-1, 0], state["omega_body"][-1, 0]


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
    parser.add_argument("--suite", action="store_true",
                        help="also time `python3.11 dev.py book` and `python3.11 dev.py test`")
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
                peer = peers.boxes(n, integ, DT)
                loop = chunked(peers.loop_runner(peer))
                n_steps = calibrate(loop, target)
                record(f"MuJoCo {integ} (mj_step loop)", n, repeat(loop, n_steps, n, repeats), n_steps)
                roll = chunked(peers.rollout_runner(peer))
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

    # ---- constrained problems ----------------------------------------------
    print("\nConstrained problems: microseconds per step (median), one body")
    constrained = {}
    for scenario_name, peer_fn in CONSTRAINED:
        scenario = rbdyn.load_scenario(scenario_name)
        for name, cls in rbdyn.schemes().items():
            if not cls.supports_constraints:
                continue
            try:
                run = constrained_runner(scenario, name)
                n_steps = calibrate(run, target)
                us = statistics.median(repeat(run, n_steps, 1, repeats))
            except Exception as exc:  # noqa: BLE001 -- report, do not stop the benchmark
                print(f"  {scenario_name:18s} rbdyn {name:18s} skipped: {type(exc).__name__}: {exc}")
                continue
            constrained[f"{scenario_name} rbdyn {name}"] = us
            print(f"  {scenario_name:18s} rbdyn {name:18s} {us:8.3f} us  (dt = {scenario.dt:g})", flush=True)
        if mujoco is not None and peer_fn is not None:
            for integ in peers.INTEGRATORS:
                peer = peer_fn(integ)
                # from the initial state every scenario duration, as rbdyn (MuJoCo's Euler leaves
                # Kynema's fast top soon after its 0.8 s)
                run = chunked(peers.rollout_runner(peer), max(1, int(round(scenario.t_end / scenario.dt))))
                n_steps = calibrate(run, target)
                us = statistics.median(repeat(run, n_steps, 1, repeats))
                key = f"{peer.scenario} MuJoCo {integ}"
                constrained[key] = us
                print(f"  {peer.scenario:18s} MuJoCo {integ:17s} {us:8.3f} us  (dt = {peer.dt:g})", flush=True)

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

    suite = None
    if args.suite:
        import suite_time

        print("\nWhole book build and whole test suite (wall time)")
        suite = suite_time.measure()

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
                    "constrained_us_per_step": constrained,
                    "suite_seconds": suite,
                },
                fh,
                indent=2,
            )
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
