"""The cost table: rbdyn next to MuJoCo, and the performance targets of issue 16, in one table from one run.

What it measures (everything on one thread; each number is the median of ``repeats`` samples,
each calibrated to take about ``target`` seconds; the samples of one problem, rbdyn's and
MuJoCo's, are taken in turn, round after round, so that a change of the machine's load hits
them alike):

* **step**: microseconds per step of every rbdyn scheme that can run the problem, next to
  MuJoCo's ``Euler`` and ``RK4`` (and ``implicit``, ``implicitfast`` where they are cheap:
  one body, or up to 100 boxes), with the ratios rbdyn / MuJoCo:

  - free bodies: N non-interacting boxes of ``boxes-complex`` (N = 1, 100, 10^3, 10^4, 10^5;
    ``--quick``: 1, 10^3, 10^4), microseconds per *body*-step. A MuJoCo model holds at most
    :data:`peers.MAX_BODIES` bodies and its compiler is quadratic in them (about 15 s for
    10^4 boxes): MuJoCo is measured up to 10^4 boxes (``--quick``: 10^3);
  - a pivoted body: the heavy top of ``heavy-top-solfec`` (MuJoCo: a ball joint);
  - jointed bodies: ``pendulum-solfec`` (a rod; MuJoCo: a hinge), ``double-pendulum`` (two
    rods; two hinges) and ``heavy-top-kynema`` (a free body on a spherical joint; a ball
    joint), the MuJoCo twins of ``peers.py``.

  Both engines restart from the scenario's initial state after the scenario's own duration
  (10 s for the boxes, 0.8 s for Kynema's top). rbdyn's time is ``Trajectory.wall_time`` of
  runs that record only their first and last rows, less the fixed cost of entering the
  compiled loop, which ``wall_time`` includes once per call (measured on runs of no step,
  about 50 µs, given in the note column): the table's step costs are marginal.
  MuJoCo's is the faster of ``mujoco.rollout`` (less its fixed cost per call, measured on
  one-step rollouts) and an ``mj_step`` loop, chosen on one sample.
* **step, many bodies**: per scheme, microseconds per body-step at the largest N over those
  at 10^3 boxes.
* **run setup**: what ``simulate`` spends outside ``wall_time`` (checks, the scheme's initial
  state, allocation), per call with one box and per body with the most.
* **recording**: per scheme, on one box, the whole ``simulate()`` call of 10^5 steps recording
  every step (``every=1``: the kernel and the trajectory's rows assembled after it) over the
  same call recording nothing, and the stepping with the streaming reductions
  (``reduce=True``) over the stepping with no output. Its floor, taken in turn with them: writing
  the rows' bytes once into a fresh numpy array (:class:`FreshRows`), what recording would cost
  if it derived nothing, measured on the same memory (on a virtual machine, a fresh page's first
  touch costs several times the writing of its bytes).
* **loads**: per scheme, on one box, a step with a compiled load (:func:`spring_drag`, a
  spring to a world point and linear drags, written with ``rbdyn.compiled_load``) and with the
  same law as a Python ``rbdyn.LoadCallback`` (:func:`spring_drag_python`).
* **build**: building a ``System`` of N boxes, microseconds per body, at 10^3 and 10^5
  bodies (``--quick``: 10^4): the ``RigidBody`` objects and the ``System``, and the
  ``System`` from given bodies; the per-body ratio of the two sizes.
* **memory**: per scheme, the bytes per body of the arrays a run works on (the system's
  model and the scheme's state: their ``nbytes``, at the most bodies (a kernel's scratch is
  allocated inside it, per call, and not counted);
  ``--quick``: 10^3), and of a recorded row; the Python objects of the bodies and the system
  per body (``tracemalloc``).

The last two columns hold the targets and, generated from the measurement, the ratio of
the measured value to the target's limit followed by "met" or "not met". The targets, as
this script reads them:

* recording every step costs at most 1.5 x the run with no output, whole calls, for every scheme;
* on the pendulum, the double pendulum and the jointed top, a step of ``rig_pos`` and
  ``rig_neg`` costs no more than MuJoCo ``Euler``'s, and one of ``rig_imp`` and
  ``gen_alpha`` no more than MuJoCo ``RK4``'s;
* from 10^3 to 10^5 free bodies, building the system costs at most 2 x as much per
  body, and a step at most 1.5 x as much per body-step.

Under the table: the MuJoCo twins move as rbdyn's problems (MuJoCo's RK4 against
``rig_imp`` at h = 1e-5), and the Python load is the compiled one.

Usage (from the repository root)::

    .venv/bin/python benchmarks/cost_table.py                 # 5 samples of ~0.3 s, N up to 10^5: ~6 minutes
    .venv/bin/python benchmarks/cost_table.py --quick         # 3 samples of ~0.03 s, N up to 10^4: ~20 s
    .venv/bin/python benchmarks/cost_table.py --json out.json # also every number and sample to out.json

The book's *Accuracy and cost* chapter runs :func:`measure` with ``quick=True`` when it
is built and shows :func:`markdown` of the result. Timings depend on the machine and its
load; nothing here is asserted by the tests.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
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

__all__ = ["measure", "table_rows", "targets", "markdown", "text", "header", "footer", "spring_drag",
           "spring_drag_python", "main", "Settings", "settings"]

# ---------------------------------------------------------------------------
# settings
# ---------------------------------------------------------------------------
N_REF = 1000  # the reference size for the large-N targets


@dataclasses.dataclass
class Settings:
    """What one run measures. :func:`settings` gives the full and the quick ones."""

    bodies: tuple  # numbers of boxes stepped by rbdyn
    mujoco_bodies: tuple  # numbers of boxes stepped by MuJoCo (at most peers.MAX_BODIES)
    build_bodies: tuple  # the two sizes of the build measurement
    repeats: int
    target: float  # seconds per sample
    implicit_max_bodies: int = 100  # MuJoCo's implicit integrators up to this many boxes
    twin_time: float = 0.1  # seconds of the MuJoCo-twin check, at h = 1e-5
    quick: bool = False


def settings(quick: bool = False, bodies=None, repeats=None, target=None) -> Settings:
    if quick:
        s = Settings(bodies=(1, 1000, 10000), mujoco_bodies=(1, 1000), build_bodies=(1000, 10000),
                     repeats=3, target=0.03, implicit_max_bodies=1, quick=True)
    else:
        s = Settings(bodies=(1, 100, 1000, 10000, 100000), mujoco_bodies=(1, 100, 1000, 10000),
                     build_bodies=(1000, 100000), repeats=5, target=0.3)
    if bodies:
        s.bodies = tuple(sorted(set(bodies)))
        s.mujoco_bodies = tuple(n for n in s.bodies if n <= 10000)
        big = max(s.bodies)
        s.build_bodies = (min(N_REF, big), big) if big > N_REF else (big,)
    if repeats:
        s.repeats = repeats
    if target:
        s.target = target
    return s


MUJOCO_MAIN = ("Euler", "RK4")
MUJOCO_ALL = tuple(peers.INTEGRATORS)  # Euler, RK4, implicit, implicitfast
JOINTED = ("pendulum-solfec", "double-pendulum", "heavy-top-kynema")
# The step target on the jointed problems: the explicit RIG schemes against MuJoCo's
# Euler, the implicit schemes against MuJoCo's RK4.
JOINT_TARGET = {"rig_pos": "Euler", "rig_neg": "Euler", "rig_imp": "RK4", "gen_alpha": "RK4"}
RECORD_TARGET = 1.5
RECORD_STEPS = 10**5  # the recording's whole simulate() calls: 10^5 steps of the tumbling box
BUILD_TARGET = 2.0
SCALING_TARGET = 1.5


# ---------------------------------------------------------------------------
# a compiled load and the same law in Python
# ---------------------------------------------------------------------------
@rbdyn.compiled_load
def spring_drag(t, x_com, R_world_body, v_com, omega_body, params, force, torque):
    """A spring from the mass centre to the world point ``params[2:5]`` (stiffness ``params[0]``,
    zero rest length), a linear drag ``-params[1] v`` and a rotational drag ``-params[5] omega``."""
    k, c, cr = params[0], params[1], params[5]
    for i in range(3):
        force[i] = -k * (x_com[i] - params[2 + i]) - c * v_com[i]
    R, W = R_world_body, omega_body
    for i in range(3):
        torque[i] = -cr * (R[i, 0] * W[0] + R[i, 1] * W[1] + R[i, 2] * W[2])


def spring_drag_python(params):
    """:func:`spring_drag` as a Python ``LoadCallback`` function."""
    k, c, anchor, cr = float(params[0]), float(params[1]), np.array(params[2:5], dtype=float), float(params[5])

    def fn(t, x_com, R_world_body, v_com, omega_body):
        return -k * (x_com - anchor) - c * v_com, -cr * (R_world_body @ omega_body)

    return fn


# ---------------------------------------------------------------------------
# measurements
# ---------------------------------------------------------------------------
@dataclasses.dataclass
class Item:
    """One measurement: ``runners[how](n) -> seconds`` of ``n`` units (steps, or builds)."""

    key: str
    runners: dict
    per: float = 1.0  # a sample is seconds / (n * per), in microseconds
    start: int = 16  # units of the first calibration run
    n: int = 0
    how: str = ""
    samples: list = dataclasses.field(default_factory=list)
    error: str | None = None

    @property
    def median(self):
        return statistics.median(self.samples) if self.samples else None

    @property
    def runner(self):
        return self.runners[self.how]

    def sample(self):
        self.samples.append(self.runner(self.n) / (self.n * self.per) * 1e6)


class FreshRows:
    """``run(n) -> seconds``: the floor of recording ``n`` steps, in calls of ``rows`` rows each: a
    fresh numpy array of the rows' bytes (one box, :func:`rbdyn.driver.records.row_bytes`, the
    iteration count included), every element written once, as a kernel writes its rows. Taken in
    turn with the recording runs, it sees the same memory: fresh pages, whose first touch the
    operating system pays for (on a virtual machine, its host too)."""

    def __init__(self, rows: int, n_bodies: int = 1):
        from rbdyn.driver.records import row_bytes

        self.rows, self.row_bytes = rows, row_bytes(n_bodies, 0)

    def _fill(self):
        tic = time.perf_counter()
        np.empty(self.rows * self.row_bytes // 8).fill(1.0)
        return time.perf_counter() - tic

    def __call__(self, n_steps):
        calls = max(1, round(n_steps / self.rows))
        return sum(self._fill() for _ in range(calls)) * n_steps / (calls * self.rows)


def calibrate(run, target: float, start: int):
    """``(n, n_last, seconds of n_last units or None)``: units for which ``run(n)`` takes about
    ``target`` s; the last calibration run is returned as a sample when it took 0.5 to 2 times
    ``target`` or had the calibrated length."""
    n = max(1, start)
    while True:
        seconds = run(n)
        if seconds >= 0.2 * target:
            break
        n = int(min(n * 1000, max(2 * n, n * 0.3 * target / max(seconds, 1e-7))))
    calibrated = max(1, int(round(n * target / seconds)))
    return calibrated, n, (seconds if calibrated == n or 0.5 * target <= seconds <= 2.0 * target else None)


def measure_group(items, repeats: int, target: float, echo=None):
    """Calibrate every item, then take the samples in turn (item after item, ``repeats`` rounds,
    each round starting one item further), so that the items of a group see the same load.
    An item with several runners (MuJoCo's rollout and mj_step loop) keeps the faster one,
    chosen on one run of the calibrated length of each."""
    live = []
    for it in items:
        try:
            choice = []
            for how, run in it.runners.items():
                if not choice:
                    n, n_run, seconds = calibrate(run, target, it.start)
                    if seconds is None or len(it.runners) > 1:
                        n_run, seconds = n, run(n)
                else:
                    n_run, seconds = n, run(n)
                choice.append((seconds / n_run, how, n_run, seconds))
            _, it.how, n_run, seconds = min(choice)
            it.n = n
            it.samples.append(seconds / (n_run * it.per) * 1e6)  # the calibration's run is the first sample
            live.append(it)
        except Exception as exc:  # noqa: BLE001 -- report it in the table, do not stop the benchmark
            it.error = f"{type(exc).__name__}: {exc}"
            if echo:
                echo(f"  {it.key}: {it.error}")
    for r in range(repeats):
        for j in range(len(live)):
            it = live[(j + r) % len(live)]
            if len(it.samples) < repeats:
                it.sample()
    if echo:
        for it in live:
            call = getattr(it.runner, "call", 0.0) * 1e6
            echo(f"  {it.key:58s} {it.median:10.4g} us  ({it.n} x {repeats}{', ' + it.how if it.how else ''}"
                 f"{f', {call:.0f} us per call' if call else ''})")


class RbdynRun:
    """``run(n) -> seconds``: the stepping time of ``n`` steps of ``scheme``, in ``rbdyn.simulate``
    runs of at most ``chunk`` steps from the initial state (recording every step with ``every=1``,
    else the first and last rows; ``reduce`` keeps the streaming reductions).

    The time is ``Trajectory.wall_time`` less, for each call, its fixed part ``call`` (the
    median ``wall_time`` of runs of no step: what entering the compiled loop costs, whatever
    the steps), measured here unless given. ``setup`` collects, per call, the seconds
    ``simulate`` spends outside ``wall_time`` (checks, the scheme's initial state, allocation).

    With ``whole``, the time is instead that of the whole ``simulate`` call a user makes, in
    calls of exactly ``chunk`` steps each (the trajectory's rows assembled after the kernel
    included), scaled to ``n`` steps.
    """

    def __init__(self, system, scheme, dt, chunk, every=None, reduce=False, warm=True, call=None, whole=False):
        self.system, self.scheme, self.dt, self.chunk = system, scheme, dt, chunk
        self.every, self.reduce, self.whole = every, reduce, whole
        self.setup = []
        if warm:
            self._simulate(1)  # compiles, or loads the cached machine code
        if whole:
            self.call = 0.0
        else:
            self.call = statistics.median(self._simulate(0) for _ in range(7)) if call is None else call

    def _simulate(self, m):
        tic = time.perf_counter()
        tr = rbdyn.simulate(self.system, self.scheme, self.dt, m * self.dt, every=1 if self.every == 1 else max(m, 1),
                            reduce=self.reduce)
        clock = time.perf_counter() - tic
        if tr.steps != m:
            raise RuntimeError(f"took {tr.steps} steps instead of {m}")
        self.setup.append(clock - tr.wall_time)
        return clock if self.whole else tr.wall_time

    def __call__(self, n_steps):
        if self.whole:
            calls = max(1, round(n_steps / self.chunk))
            return sum(self._simulate(self.chunk) for _ in range(calls)) * n_steps / (calls * self.chunk)
        seconds, left = 0.0, n_steps
        while left > 0:
            m = min(left, self.chunk)
            seconds += self._simulate(m) - self.call
            left -= m
        return max(seconds, 0.0)


class MujocoRun:
    """``run(n) -> seconds``: MuJoCo stepping ``n`` steps, restarting from the initial state every
    ``chunk`` steps, by ``mujoco.rollout`` (less its fixed cost per call, ``call``: the time of
    a one-step rollout less a step) or by ``mj_step`` in a Python loop (``call`` = 0)."""

    def __init__(self, peer, chunk, how):
        self.chunk, self.how = chunk, how
        self._run = peers.rollout_runner(peer) if how == "rollout" else peers.loop_runner(peer)
        self.call = 0.0
        if how == "rollout":
            one = statistics.median(self._run(1) for _ in range(7))
            step = self._run(64) / 64
            self.call = max(0.0, one - step)

    def __call__(self, n_steps):
        seconds, left = 0.0, n_steps
        while left > 0:
            m = min(left, self.chunk)
            seconds += self._run(m) - self.call
            left -= m
        return max(seconds, 0.0)


def mujoco_runners(peer, chunk):
    """MuJoCo's two ways to step a model."""
    return {how: MujocoRun(peer, chunk, how) for how in ("rollout", "mj_step loop")}


@dataclasses.dataclass
class Problem:
    key: str  # "boxes N=100", "heavy-top-solfec", ...
    kind: str  # "free", "pivoted", "jointed"
    system: object
    dt: float
    chunk: int  # steps of one run from the initial state
    per: int  # bodies per step for a body-step (boxes), else 1
    peer: object  # MuJoCo twin (Euler), or None
    mujoco: tuple  # MuJoCo integrators measured
    mujoco_note: str = ""


def _scenario_problem(name, kind, peer_fn, integrators=MUJOCO_ALL):
    sc = rbdyn.load_scenario(name)
    chunk = max(1, int(round(sc.t_end / sc.dt)))
    peer = peer_fn("Euler") if mujoco is not None else None
    return Problem(name, kind, sc.system, sc.dt, chunk, 1, peer, integrators if peer is not None else ())


def _can_run(scheme_cls, system):
    return not system.constraints or scheme_cls.supports_constraints


def box_bodies(n, template, name="box"):
    """``n`` copies of the box of ``boxes-complex`` (as peers.boxes_system builds them)."""
    b = template
    return [rbdyn.RigidBody(f"{name}{i}", mass=b.mass, inertia=b.inertia, position=b.position, velocity=b.velocity,
                            R_world_body=b.R_world_body, omega_body=b.omega_body) for i in range(n)]


def _array_bytes(obj, seen) -> int:
    """Bytes of the numpy arrays in ``obj`` (nested tuples), each buffer counted once."""
    if isinstance(obj, np.ndarray):
        root = obj
        while isinstance(root.base, np.ndarray):
            root = root.base
        if id(root) in seen:
            return 0
        seen.add(id(root))
        return root.nbytes
    if isinstance(obj, tuple):
        return sum(_array_bytes(x, seen) for x in obj)
    return 0


def measure(quick: bool = False, echo=print, bodies=None, repeats=None, target=None) -> dict:
    """Run every measurement; a dict of plain numbers (JSON-ready) that :func:`table_rows` turns
    into the table. ``echo`` (``print`` or None) reports progress."""
    cfg = settings(quick, bodies, repeats, target)
    say = echo or (lambda *a, **k: None)
    tic_all = time.perf_counter()
    info = machine_info()
    schemes = rbdyn.schemes()
    box_scenario = rbdyn.load_scenario("boxes-complex")
    (template,) = box_scenario.system.bodies
    gravity = box_scenario.system.gravity
    box_dt = box_scenario.dt
    box_chunk = int(round(box_scenario.t_end / box_dt))
    res = {"machine": info, "settings": dataclasses.asdict(cfg), "step": {}, "mujoco_how": {}, "errors": {},
           "recording": {}, "loads": {}, "build": {}, "memory": {}, "twins": {}, "notes": {},
           "samples": {}}

    # ---- build: RigidBody objects + System, and System alone -----------------------------------
    say(f"build (us per body), N = {', '.join(map(str, cfg.build_bodies))}")
    systems = {}
    box_bodies(10, template)  # warm-up
    rbdyn.System(box_bodies(10, template), gravity=gravity)
    items = []
    for n in cfg.build_bodies:
        bodies_n = box_bodies(n, template)

        def both(k, n=n):
            tic = time.perf_counter()
            for _ in range(k):
                systems[n] = rbdyn.System(box_bodies(n, template), gravity=gravity)
            return time.perf_counter() - tic

        def alone(k, bodies_n=bodies_n):
            tic = time.perf_counter()
            for _ in range(k):
                rbdyn.System(bodies_n, gravity=gravity)
            return time.perf_counter() - tic

        items.append(Item(f"build|RigidBody objects + System|{n}", {"": both}, per=n, start=1))
        items.append(Item(f"build|System from the bodies|{n}", {"": alone}, per=n, start=1))
    measure_group(items, min(cfg.repeats, 3) if max(cfg.build_bodies) > 10**4 else cfg.repeats, cfg.target, echo)
    for it in items:
        _, what, n = it.key.split("|")
        res["build"].setdefault(what, {})[n] = it.median
        res["samples"][it.key] = {"n": it.n, "us": it.samples, "how": it.how}
    if mujoco is not None and not quick:  # MuJoCo's compiler, for comparison (quadratic in the bodies)
        n = N_REF
        xml = peers.boxes_xml(n)
        tic = time.perf_counter()
        mujoco.MjModel.from_xml_string(xml)
        res["build"].setdefault("MuJoCo MjModel from MJCF", {})[str(n)] = (time.perf_counter() - tic) / n * 1e6

    # ---- memory ---------------------------------------------------------------------------------
    n_mem = max(systems) if systems and not quick else N_REF
    system = systems.get(n_mem) or rbdyn.System(box_bodies(n_mem, template), gravity=gravity)
    model_bytes = _array_bytes(tuple(system.model), set())
    row = rbdyn.simulate(rbdyn.System([template], gravity=gravity), "rk4", box_dt, 0.0)
    row_bytes = sum(getattr(row, k).nbytes for k in ("x_com", "v_com", "R_world_body", "omega_body"))
    for name in schemes:
        sch = rbdyn.get_scheme(name)
        state = sch.init(system, system.initial_state())
        seen = set()
        res["memory"][name] = {"bodies": n_mem, "model": model_bytes / n_mem,
                               "state": _array_bytes(tuple(state), seen) / n_mem,
                               "row": float(row_bytes)}
    n_py = N_REF
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    held = rbdyn.System(box_bodies(n_py, template), gravity=gravity)
    res["memory_python"] = {"bodies": n_py, "bytes_per_body": (tracemalloc.get_traced_memory()[0] - base) / n_py}
    tracemalloc.stop()
    del held

    # ---- step: free, pivoted and jointed bodies ---------------------------------------------------
    problems = []
    for n in cfg.bodies:
        sys_n = systems.get(n) or (peers.boxes_system(n) if n < 10 else
                                   rbdyn.System(box_bodies(n, template), gravity=gravity))
        peer, ints, note = None, (), ""
        if mujoco is not None and n in cfg.mujoco_bodies and n <= peers.MAX_BODIES:
            peer = peers.boxes(n, "Euler", box_dt)
            ints = MUJOCO_ALL if n <= cfg.implicit_max_bodies else MUJOCO_MAIN
        elif mujoco is not None:
            note = (f"impossible: at most {peers.MAX_BODIES} bodies in a MuJoCo model" if n > peers.MAX_BODIES else
                    "not measured: compiling the model takes a time quadratic in N")
        problems.append(Problem(f"boxes N={n}", "free", sys_n, box_dt, box_chunk, n, peer, ints, note))
    problems.append(_scenario_problem("heavy-top-solfec", "pivoted", peers.heavy_top))
    problems.append(_scenario_problem("pendulum-solfec", "jointed", peers.pendulum))
    problems.append(_scenario_problem("double-pendulum", "jointed", peers.double_pendulum))
    problems.append(_scenario_problem("heavy-top-kynema", "jointed", peers.jointed_top))

    box1 = next((p for p in problems if p.key == "boxes N=1"), None)
    per_body_step = {}  # the last N's microseconds per body-step
    calls = {}  # the fixed cost of a call of each (scheme, every, reduce) on the boxes, measured on one box

    def rbdyn_run(p, system, name, every=None, reduce=False):
        family = (name, every, reduce) if p.kind == "free" else None
        first = family not in calls
        run = RbdynRun(system, name, p.dt, p.chunk, every, reduce, warm=first or family is None,
                       call=None if first or family is None else calls[family])
        if family is not None and first:
            calls[family] = run.call
        return run

    for p in problems:
        say(f"step: {p.key} (dt = {p.dt:g}, runs of {p.chunk} steps from the initial state)")
        items = []
        for name, cls in schemes.items():
            if _can_run(cls, p.system):
                try:
                    run = rbdyn_run(p, p.system, name)
                except Exception as exc:  # noqa: BLE001 -- report it, do not stop the benchmark
                    res["errors"][f"{p.key}|rbdyn {name}"] = f"{type(exc).__name__}: {exc}"
                    continue
                start = max(1, 64 // p.per)
                if p.kind == "free" and f"rbdyn {name}" in per_body_step:  # from the last N: one run to calibrate
                    start = max(1, int(0.7 * cfg.target / (per_body_step[f"rbdyn {name}"] * 1e-6 * p.per)))
                items.append(Item(f"{p.key}|rbdyn {name}", {"": run}, per=p.per, start=start))
        for integ in p.mujoco:
            peer = p.peer if integ == p.peer.integrator else peers.with_integrator(p.peer, integ)
            items.append(Item(f"{p.key}|MuJoCo {integ}", mujoco_runners(peer, p.chunk), per=p.per,
                              start=max(1, 64 // p.per)))
        if p is box1:  # the recording, reduction and load runs of one box, taken in turn with its steps
            params = np.concatenate([[100.0, 0.5], template.position, [0.01]])
            with_compiled = rbdyn.System([template], loads=[rbdyn.CompiledLoad(template.name, spring_drag, params)],
                                         gravity=gravity)
            python_load = rbdyn.LoadCallback(template.name, spring_drag_python(params))
            with_python = rbdyn.System([template], loads=[python_load], gravity=gravity)
            for name in schemes:
                # as a user calls it: one simulate() of 10^5 steps, recording every step or nothing
                items.append(Item(f"recording|every=1|{name}",
                                  {"": RbdynRun(p.system, name, p.dt, RECORD_STEPS, every=1, whole=True)},
                                  start=RECORD_STEPS))
                items.append(Item(f"recording|whole, no output|{name}",
                                  {"": RbdynRun(p.system, name, p.dt, RECORD_STEPS, whole=True)}, start=RECORD_STEPS))
                items.append(Item(f"recording|reduce=True|{name}",
                                  {"": RbdynRun(p.system, name, p.dt, p.chunk, reduce=True)}))
                items.append(Item(f"loads|compiled|{name}", {"": RbdynRun(with_compiled, name, p.dt, p.chunk)}))
                items.append(Item(f"loads|python|{name}", {"": RbdynRun(with_python, name, p.dt, p.chunk)}, start=2))
            items.append(Item("row floor", {"": FreshRows(RECORD_STEPS)}, start=RECORD_STEPS))
        measure_group(items, cfg.repeats, cfg.target, echo)
        res["step"][p.key] = {"kind": p.kind, "dt": p.dt, "chunk": p.chunk, "bodies": p.per, "us": {}, "call_us": {},
                              "setup_us": {}}
        if p.mujoco_note:
            res["notes"][p.key] = p.mujoco_note
        for it in items:
            res["samples"][it.key] = {"n": it.n, "us": it.samples, "how": it.how}
            if it.error:
                res["errors"][it.key] = it.error
                continue
            if it.key == "row floor":
                res["row_floor"] = {"us": it.median, "bytes": it.runners[""].row_bytes}
                continue
            if it.key.startswith(("recording|", "loads|")):
                section, what, name = it.key.split("|")
                res[section].setdefault(name, {})[what] = it.median
                continue
            who = it.key.split("|", 1)[1]
            res["step"][p.key]["us"][who] = it.median
            if p.kind == "free":
                per_body_step[who] = it.median
            res["step"][p.key]["call_us"][who] = it.runner.call * 1e6
            if isinstance(it.runner, RbdynRun):
                res["step"][p.key]["setup_us"][who] = statistics.median(it.runner.setup) * 1e6
            if it.how:
                res["mujoco_how"][it.key] = it.how
        if p is box1:
            for name in schemes:
                for section in ("recording", "loads"):
                    if name in res[section]:
                        res[section][name]["none"] = res["step"][p.key]["us"].get(f"rbdyn {name}")
            # the two laws are the same load
            a = rbdyn.simulate(with_compiled, "rk4", box_dt, 0.05, every=50)
            b = rbdyn.simulate(with_python, "rk4", box_dt, 0.05, every=50)
            res["loads_agree_m"] = float(np.max(np.abs(a.x_com - b.x_com)))

    # ---- the MuJoCo twins move as rbdyn's problems ----------------------------------------------------
    if mujoco is not None:
        h = 1e-5
        for p in problems:
            if p.peer is None or (p.kind == "free" and p.per > 1):
                continue
            run = peers.simulate(_rebuilt(p, "RK4", h), cfg.twin_time, every=10**9)
            scheme = "rig_imp"
            tr = rbdyn.simulate(p.system, scheme, h, cfg.twin_time, every=10**9)
            res["twins"][p.key] = {"t": cfg.twin_time, "h": h, "rbdyn": scheme, "MuJoCo": "RK4",
                                   "x_com_diff_m": float(np.max(np.abs(run.state()["x_com"][-1] - tr.x_com[-1])))}
    res["seconds"] = time.perf_counter() - tic_all
    say(f"measured in {res['seconds']:.1f} s")
    return res


def _rebuilt(p, integrator, dt):
    """The MuJoCo twin of problem ``p`` at another step."""
    if p.kind == "free":
        return peers.boxes(p.per, integrator, dt)
    return {"heavy-top-solfec": peers.heavy_top, "pendulum-solfec": peers.pendulum,
            "double-pendulum": peers.double_pendulum, "heavy-top-kynema": peers.jointed_top}[p.key](integrator, dt)


# ---------------------------------------------------------------------------
# the table
# ---------------------------------------------------------------------------
COLUMNS = ("measurement", "case", "integrator", "value", "÷ MuJoCo Euler", "÷ MuJoCo RK4", "note", "target",
           "vs target")


def _num(x, spec=".3g"):
    return "–" if x is None or not np.isfinite(x) else format(x, spec)


def _verdict(measured, limit):
    """(measured / limit, "met" / "not met"), or (None, "not measured")."""
    if measured is None or not np.isfinite(measured):
        return None, "not measured"
    r = measured / limit
    return r, "met" if r <= 1.0 else "not met"


def table_rows(res) -> list[dict]:
    """The table as rows: every column of :data:`COLUMNS` as text, plus ``number`` (the value),
    ``ratio_to_target`` and ``status`` ("met", "not met", "not measured"; "" without a target)
    for prose generated from the run."""
    rows = []

    def add(measurement, case, integrator, value, unit, note="", vs_e=None, vs_r=None, target="", measured=None,
            limit=None):
        ratio, status = _verdict(measured, limit) if target else (None, "")
        spec = ".0f" if unit == "B" else ".3g"
        rows.append({
            "measurement": measurement, "case": case, "integrator": integrator,
            "value": "–" if value is None or not np.isfinite(value) else f"{value:{spec}} {unit}".strip(),
            "÷ MuJoCo Euler": "" if vs_e is None else _num(vs_e, ".2f"),
            "÷ MuJoCo RK4": "" if vs_r is None else _num(vs_r, ".2f"),
            "note": note, "target": target,
            "vs target": f"{ratio:.2f} {status}" if ratio is not None else status,
            "number": value, "ratio_to_target": ratio, "status": status,
        })

    how = res.get("mujoco_how", {})
    # step: free, pivoted and jointed bodies, next to MuJoCo
    for key, p in res["step"].items():
        us = p["us"]
        unit = "µs/body-step" if p["kind"] == "free" else "µs/step"
        e, r4 = us.get("MuJoCo Euler"), us.get("MuJoCo RK4")
        what = {"free": "step, free bodies", "pivoted": "step, pivoted body",
                "jointed": "step, jointed bodies"}[p["kind"]]
        case = f"{key}, h = {p['dt']:g}"
        for who, v in us.items():
            engine, name = who.split(" ", 1)
            target, measured = "", None
            if p["kind"] == "jointed" and engine == "rbdyn" and name in JOINT_TARGET:
                ref = JOINT_TARGET[name]
                target = f"≤ 1 × MuJoCo {ref}"
                measured = v / us[f"MuJoCo {ref}"] if f"MuJoCo {ref}" in us else None
            call = p.get("call_us", {}).get(who)
            note = how.get(f"{key}|{who}", "")
            if call:
                note += f"{', ' if note else ''}+ {call:.0f} µs per call"
            add(what, case, who, v, unit, vs_e=v / e if e else None, vs_r=v / r4 if r4 else None,
                note=note, target=target, measured=measured, limit=1.0)
        if key in res.get("notes", {}):
            add(what, case, "MuJoCo", None, "", note=res["notes"][key])
    # the step with many bodies
    ns = sorted(int(k.split("=")[1]) for k, p in res["step"].items() if p["kind"] == "free")
    if N_REF in ns and max(ns) > N_REF:
        big = max(ns)
        lo_us, hi_us = res["step"][f"boxes N={N_REF}"]["us"], res["step"][f"boxes N={big}"]["us"]
        for who in lo_us:
            if who in hi_us and who.startswith("rbdyn "):
                ratio = hi_us[who] / lo_us[who]
                add("step, many bodies", f"per body-step, N={big} ÷ N={N_REF}", who, ratio, "×",
                    note=f"{_num(hi_us[who])} ÷ {_num(lo_us[who])} µs", target=f"≤ {SCALING_TARGET:g}",
                    measured=ratio, limit=SCALING_TARGET)
        mj = [int(k.split("=")[1]) for k, p in res["step"].items() if p["kind"] == "free" and "MuJoCo Euler" in p["us"]]
        if mj and max(mj) > N_REF:
            m_big = max(mj)
            mj_hi = res["step"][f"boxes N={m_big}"]["us"]
            for who in ("MuJoCo Euler", "MuJoCo RK4"):
                if who in mj_hi and who in lo_us:
                    add("step, many bodies", f"per body-step, N={m_big} ÷ N={N_REF}", who, mj_hi[who] / lo_us[who],
                        "×", note=f"{_num(mj_hi[who])} ÷ {_num(lo_us[who])} µs")
    # setting up a run: simulate's time outside wall_time
    free = [k for k, p in res["step"].items() if p["kind"] == "free"]
    if free:
        small, large = free[0], free[-1]
        for who, v in res["step"][small].get("setup_us", {}).items():
            add("run setup (outside wall_time)", f"{small}: µs per simulate call", who, v, "µs")
        if large != small:
            n_large = res["step"][large]["bodies"]
            for who, v in res["step"][large].get("setup_us", {}).items():
                add("run setup (outside wall_time)", f"{large}: µs per body", who, v / n_large, "µs/body")
    # recording
    for name, d in res["recording"].items():
        for what, base, label, target in (
                ("every=1", "whole, no output", "whole simulate() call of 10^5 steps, every=1 ÷ no output",
                 f"≤ {RECORD_TARGET:g}"),
                ("reduce=True", "none", "stepping, reduce=True ÷ no output", "")):
            v, none = d.get(what), d.get(base)
            ratio = v / none if v and none else None
            add("recording, one box", label, f"rbdyn {name}", ratio, "×", note=f"{_num(v)} ÷ {_num(none)} µs/step",
                target=target, measured=ratio, limit=RECORD_TARGET if target else None)
    floor, se = res.get("row_floor"), res["recording"].get("symplectic_euler", {})
    if floor and floor["us"] and se.get("whole, no output"):
        least = (se["whole, no output"] + floor["us"]) / se["whole, no output"]
        add("recording, one box", "floor: a row's bytes written once into a fresh numpy array, per step", "numpy",
            floor["us"], "µs/step", note=f"{floor['bytes']} B a row; with symplectic_euler's step and nothing "
                                          f"derived: {least:.2f} × no output")
    # loads
    for name, d in res["loads"].items():
        none, comp, py = d.get("none"), d.get("compiled"), d.get("python")
        add("loads, one box", "compiled load (spring + drag)", f"rbdyn {name}", comp, "µs/step",
            note=f"{_num(comp / none if comp and none else None, '.2f')} × no load ({_num(none)} µs/step)")
        add("loads, one box", "the same law as a Python LoadCallback", f"rbdyn {name}", py, "µs/step",
            note=f"{_num(py / comp if py and comp else None, '.0f')} × the compiled load")
    # build
    sizes = sorted({int(n) for d in res["build"].values() for n in d})
    for what, d in res["build"].items():
        for n in sizes:
            if str(n) in d:
                add("build a System", f"N={n}", what, d[str(n)], "µs/body")
        present = [n for n in sizes if str(n) in d]
        if len(present) == 2 and what != "MuJoCo MjModel from MJCF":
            lo, hi = d[str(present[0])], d[str(present[1])]
            add("build a System", f"per body, N={present[1]} ÷ N={present[0]}", what, hi / lo, "×",
                target=f"≤ {BUILD_TARGET:g}", measured=hi / lo, limit=BUILD_TARGET)
    # memory
    for name, m in res["memory"].items():
        total = m["model"] + m["state"]
        add("memory per body", f"arrays of a run, N={m['bodies']}", f"rbdyn {name}", total, "B",
            note=f"model {m['model']:.0f} + state {m['state']:.0f} B (the kernel's scratch not counted); "
                 f"and {m['row']:.0f} B per recorded row (at least 2)")
    if "memory_python" in res:
        mp = res["memory_python"]
        add("memory per body", f"Python objects, N={mp['bodies']}", "RigidBody objects + System", mp["bytes_per_body"],
            "B", note="tracemalloc, arrays included")
    return rows


def targets(res) -> dict:
    """The rows with a target: ``{"met": [...], "not met": [...], "not measured": [...]}`` of
    ``"measurement, case, integrator"`` texts (for generated prose)."""
    out = {"met": [], "not met": [], "not measured": []}
    for r in table_rows(res):
        if r["target"]:
            out[r["status"]].append(f"{r['measurement']}: {r['case']}, {r['integrator']}")
    return out


def _cells(row):
    return [row[c] for c in COLUMNS]


def text(res) -> str:
    """The table as fixed-width text, with the machine and the settings above it and the checks below."""
    rows = table_rows(res)
    widths = [max(len(c), *(len(r[c]) for r in rows)) for c in COLUMNS]
    line = lambda cells: "  ".join(f"{c:<{w}}" for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    out = [header(res), "", line(COLUMNS), line("-" * w for w in widths)]
    last = None
    for r in rows:
        if last is not None and r["measurement"] != last:
            out.append("")
        last = r["measurement"]
        out.append(line(_cells(r)))
    t = targets(res)
    out += ["", f"targets: {len(t['met'])} met, {len(t['not met'])} not met, {len(t['not measured'])} not measured",
            footer(res)]
    return "\n".join(out)


def markdown(res) -> str:
    """The table as Markdown (for the book)."""
    rows = table_rows(res)
    esc = lambda s: str(s).replace("|", "\\|")  # noqa: E731
    out = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    out += ["| " + " | ".join(esc(c) for c in _cells(r)) + " |" for r in rows]
    return "\n".join(out)


def header(res) -> str:
    """The machine and the settings, in two lines."""
    m, s = res["machine"], res["settings"]
    load = m.get("load_average") or [math.nan] * 3
    return (f"Machine: {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable), load average "
            f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; Python {m['python']}, numpy {m['numpy']}, numba {m['numba']}, "
            f"MuJoCo {m['mujoco']}, rbdyn {m['rbdyn']}\n"
            f"One thread; median of {s['repeats']} samples of ~{s['target']:g} s each, rbdyn and MuJoCo in turn"
            f"{' (--quick)' if s['quick'] else ''}.")


def footer(res) -> str:
    """The checks that both engines run the same problems, what was not measured, the run's duration."""
    lines = []
    for key, t in res.get("twins", {}).items():
        lines.append(f"same motion: {key}, MuJoCo {t['MuJoCo']} against rbdyn {t['rbdyn']}, h = {t['h']:g}, "
                     f"t = {t['t']:g} s: largest mass-centre difference {t['x_com_diff_m']:.1e} m")
    if "loads_agree_m" in res:
        lines.append(f"same load: compiled and Python spring + drag, rk4, 0.05 s: positions differ by "
                     f"{res['loads_agree_m']:.1e} m")
    for key, err in res.get("errors", {}).items():
        lines.append(f"not measured: {key}: {err}")
    lines.append(f"measured in {res['seconds']:.1f} s")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="N up to 10^4, 3 short repeats (the book's run)")
    parser.add_argument("--json", metavar="FILE", help="also write every number to FILE")
    parser.add_argument("--bodies", type=int, nargs="+", help="numbers of boxes (default 1 100 1000 10000 100000)")
    parser.add_argument("--repeats", type=int, help="samples per measurement (default 5; --quick 3)")
    parser.add_argument("--target", type=float, help="seconds per sample (default 0.3; --quick 0.04)")
    parser.add_argument("--quiet", action="store_true", help="print only the table")
    args = parser.parse_args(argv)
    res = measure(args.quick, None if args.quiet else print, args.bodies, args.repeats, args.target)
    print()
    print(text(res))
    if args.json:
        res = dict(res, table=[{c: r[c] for c in COLUMNS} for r in table_rows(res)])
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=2, default=float)
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
