"""Wall time of building the whole book and of running the whole test suite.

Runs, from the root of the repository this file lives in, the two developer commands

    python3.11 dev.py book      # jupyter-book build . -W -n --keep-going (every page executed)
    python3.11 dev.py test      # pytest --nbval: unit tests and every page

and reports how long each took, its exit status and the machine (CPU, cores, load average
before and after). ``dev.py book`` writes ``_build/`` in that root. Sphinx builds
incrementally: with an earlier ``_build/`` in place and no source changed, ``dev.py book``
executes nothing and takes seconds, so ``_build/`` is deleted before the book is timed
(``--keep-build`` times the incremental build instead). Run it on an idle
machine for numbers worth comparing: other jobs on the same cores slow both commands down.
The first run after a change of ``requirements.txt`` also installs packages; the numba
cache of a fresh checkout is built by whichever command runs first (run both twice to see
the steady state, or use ``--repeat``).

Usage (from the repository root)::

    python3.11 benchmarks/suite_time.py                 # both commands, once each
    python3.11 benchmarks/suite_time.py --only test     # one of them
    python3.11 benchmarks/suite_time.py --repeat 2 --json suite_time.json

``step_cost.py --suite`` runs the same measurement after its own.
Nothing here is asserted anywhere: timings depend on the machine and on its load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ("book", "test")


def run_command(name: str, python: str = "python3.11", quiet: bool = True, clean: bool = True) -> dict:
    """Run ``python dev.py <name>`` in the repository root; wall time and exit status.

    For ``book`` with ``clean``, ``_build/`` is deleted first (a whole build, every page executed).
    """
    if name == "book" and clean:
        shutil.rmtree(ROOT / "_build", ignore_errors=True)
    cmd = [python, "dev.py", name]
    out = subprocess.DEVNULL if quiet else None
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
    tic = time.perf_counter()
    status = subprocess.run(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT if quiet else None).returncode
    seconds = time.perf_counter() - tic
    load_after = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"command": " ".join(cmd), "seconds": seconds, "exit_status": status,
            "load_before": load_before, "load_after": load_after}


def measure(commands=COMMANDS, repeat: int = 1, python: str = "python3.11", quiet: bool = True,
            echo=print, clean: bool = True) -> dict:
    """``{name: [result, ...]}`` for each command, ``repeat`` times, printing as it goes."""
    results = {}
    for name in commands:
        for _ in range(repeat):
            echo(f"  running `{python} dev.py {name}` in {ROOT} ...", flush=True)
            r = run_command(name, python, quiet, clean)
            results.setdefault(name, []).append(r)
            ok = "ok" if r["exit_status"] == 0 else f"FAILED (exit status {r['exit_status']})"
            echo(f"  {python} dev.py {name:5s} {r['seconds']:8.1f} s  ({r['seconds'] / 60:.2f} min)  {ok}",
                 flush=True)
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=COMMANDS, help="time one command only")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each command (default 1)")
    parser.add_argument("--python", default="python3.11", help="interpreter that runs dev.py")
    parser.add_argument("--verbose", action="store_true", help="show the commands' output")
    parser.add_argument("--keep-build", action="store_true",
                        help="do not delete _build/ before the book (times an incremental build)")
    parser.add_argument("--json", metavar="FILE", help="also write the numbers to FILE")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from peers import machine_info

        info = machine_info()
    except ImportError:  # rbdyn or numpy not importable by this interpreter
        info = {"cores": os.cpu_count(), "load_average": list(os.getloadavg())}
    print("Machine")
    for key, value in info.items():
        print(f"  {key:14s} {value}")
    print()
    commands = (args.only,) if args.only else COMMANDS
    results = measure(commands, args.repeat, args.python, not args.verbose, clean=not args.keep_build)
    failed = any(r["exit_status"] for rs in results.values() for r in rs)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"machine": info, "root": str(ROOT), "results": results}, fh, indent=2)
        print(f"\nwrote {args.json}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
