"""Start-up: how long a whole process takes, for the commands a new user types first.

Each command is timed as a whole process (``subprocess``, wall clock from start to exit), in
interleaved rounds (command after command, each round starting one command further, so that they
see the same load), after one untimed run of each that fills numba's cache and the operating
system's file cache, and Python's bytecode of the modules (``PYTHONDONTWRITEBYTECODE`` is
removed from the commands' environment): the times of a warm cache. Reported: the median and the range of the rounds.

The commands, from the floor up:

* ``python -c pass``: the interpreter;
* ``import numpy``, ``import numba``;
* **numba's floor**: a script that defines one ``@njit(cache=True)`` function of one line and
  calls it once, its machine code loaded from numba's cache. Any process that runs compiled code
  pays it: importing numba, and numba's first dispatch in a process, which loads its
  implementation registries (among them ``numba.np.arraymath``, which imports ``scipy.linalg``
  when SciPy is installed, for its BLAS);
* ``import rbdyn`` and ``rbdyn list``, which load no numba;
* ``rbdyn run pendulum-solfec --t-end 0.01`` (ten steps, the CSV written to a temporary file),
  and the same less numba's floor: what rbdyn itself adds (building the system, loading the one
  kernel its scheme needs, writing the rows).

Usage (from the repository root)::

    .venv/bin/python benchmarks/startup.py                 # 7 rounds
    .venv/bin/python benchmarks/startup.py --rounds 15 --json startup.json

Nothing here is asserted anywhere: timings depend on the machine and on its load.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import checkout

#: The floor of any process that runs numba-compiled code from numba's cache.
NUMBA_FLOOR = '''\
import numba


@numba.njit(cache=True)
def one_more(x):
    return x + 1


one_more(1)
'''

#: Targets of issue #29 (whole processes, warm cache).
TARGETS = {"rbdyn list": 0.5, "rbdyn run pendulum-solfec --t-end 0.01": 1.0}


def commands(work: Path) -> dict[str, list[str]]:
    """The timed commands by name, run from ``work`` (a temporary folder)."""
    py = sys.executable
    script = Path(py).with_name("rbdyn")  # the console script a user types
    rbdyn = [str(script)] if script.exists() else [py, "-m", "rbdyn"]
    (work / "numba_floor.py").write_text(NUMBA_FLOOR)
    return {
        "python -c pass": [py, "-c", "pass"],
        "import numpy": [py, "-c", "import numpy"],
        "import numba": [py, "-c", "import numba"],
        "numba's floor (one cached njit function, called once)": [py, str(work / "numba_floor.py")],
        "import rbdyn": [py, "-c", "import rbdyn"],
        "rbdyn list": [*rbdyn, "list"],
        "rbdyn run pendulum-solfec --t-end 0.01": [*rbdyn, "run", "pendulum-solfec", "--t-end", "0.01",
                                                   "--no-progress", "--out", str(work / "rows.csv")],
    }


def wall(cmd: list[str], cwd: Path, env: dict) -> float:
    """Seconds from starting ``cmd`` to its exit (which must be 0)."""
    tic = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - tic


def measure(rounds: int) -> dict:
    """Samples of every command: ``{name: [seconds, ...]}``, after one untimed run of each."""
    work = Path(tempfile.mkdtemp(prefix="rbdyn-startup-"))
    env = dict(os.environ)
    checkout.use_numba_cache(env)  # from a checkout: the kernels of its sources (see checkout.py)
    # warm caches include Python's own: the bytecode of every module, which pip writes when it
    # installs a package and Python when it first imports one, unless told not to
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        cmds = commands(work)
        for cmd in cmds.values():  # fills numba's cache (the floor's and rbdyn's kernel) and the file cache
            wall(cmd, work, env)
        names = list(cmds)
        samples = {name: [] for name in names}
        for r in range(rounds):
            for j in range(len(names)):
                name = names[(j + r) % len(names)]
                samples[name].append(wall(cmds[name], work, env))
        return samples
    finally:
        shutil.rmtree(work, ignore_errors=True)


def machine() -> dict:
    cpu = platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), cpu)
    except OSError:
        pass
    versions = {}
    for pkg in ("numpy", "numba", "scipy", "rbdyn"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(), **versions,
            "load_average": list(os.getloadavg())}


def table(samples: dict) -> str:
    """The Markdown table: median, range and target of every command, and rbdyn's run less
    numba's floor (round by round)."""
    floor_name = next(n for n in samples if n.startswith("numba's floor"))
    run_name = "rbdyn run pendulum-solfec --t-end 0.01"
    rows = ["| command (whole process) | median (s) | range (s) | target (s) | met |", "|---|---|---|---|---|"]
    for name, xs in samples.items():
        med = statistics.median(xs)
        target = TARGETS.get(name)
        met = "" if target is None else ("met" if med < target else "not met")
        rows.append(f"| {name} | {med:.3f} | {min(xs):.3f} – {max(xs):.3f} | "
                    f"{'' if target is None else f'< {target:g}'} | {met} |")
    extra = [a - b for a, b in zip(samples[run_name], samples[floor_name])]
    rows.append(f"| rbdyn run … less numba's floor (round by round) | {statistics.median(extra):.3f} | "
                f"{min(extra):.3f} – {max(extra):.3f} | | |")
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds (default 7)")
    parser.add_argument("--json", metavar="FILE", help="also write every sample to FILE")
    args = parser.parse_args(argv)
    info = machine()
    samples = measure(max(1, args.rounds))
    print(f"{info['cpu']}, {info['cores']} cores, Python {info['python']}, numpy {info['numpy']}, "
          f"numba {info['numba']}, scipy {info['scipy']}; load average before {info['load_average']}; "
          f"{args.rounds} rounds, warm caches")
    print(table(samples))
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": info, "samples": samples}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
