"""Wall time of building the whole book and of running the whole test suite.

Runs, from the root of the repository this file lives in, the two developer commands

    python3.11 dev.py book      # every page executed (pytest --nbval), then the strict Sphinx build
    python3.11 dev.py test      # unit tests and every page, the strict build, the browser test

and reports how long each took and each of its steps (compiling rbdyn's kernels, executing the
pages, rendering, the browser test, as dev.py prints them), its exit status and the machine (CPU,
cores, load average before and after). Both commands start afresh every time: they delete what an
earlier build left under ``_build/``. What they keep is numba's cache of rbdyn's compiled kernels.
By default it is emptied before each command, as any change to rbdyn's sources empties it and as a
fresh clone starts without it: the times of "a fresh ``dev.py book``" (the target of issue #16).
``--warm`` keeps the cache, for the times of a build after one that compiled the same sources.
Run it on an idle machine for numbers worth comparing: other jobs on the same cores slow both
commands down. The first run after a change of ``requirements.txt`` also installs packages.

Usage (from the repository root)::

    python3.11 benchmarks/suite_time.py                 # both commands, once each, from an empty cache
    python3.11 benchmarks/suite_time.py --only book     # one of them
    python3.11 benchmarks/suite_time.py --warm --repeat 2 --json suite_time.json

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


def empty_kernel_cache() -> None:
    """Drop numba's cache of rbdyn's kernels for the current sources, as after any change to
    them (``dev.py`` keys the cache folder by the digest of rbdyn's sources)."""
    sys.path.insert(0, str(ROOT))
    import dev  # dev.py is standard library only, as this script

    shutil.rmtree(dev.NUMBA_CACHES / dev.short_digest(), ignore_errors=True)


def run_command(name: str, python: str = "python3.11", quiet: bool = True, cold: bool = True) -> dict:
    """Run ``python dev.py <name>`` in the repository root: wall time, exit status and the steps.

    ``steps`` are the lines dev.py prints about its steps and their times. With ``cold``, rbdyn's
    compiled kernels are dropped first (:func:`empty_kernel_cache`).
    """
    if cold:
        empty_kernel_cache()
    cmd = [python, "dev.py", name]
    load_before = os.getloadavg() if hasattr(os, "getloadavg") else None
    tic = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    steps = []
    for line in proc.stdout:
        if not quiet:
            print(line, end="", flush=True)
        if line.startswith("dev.py"):
            steps.append(line.strip())
    status = proc.wait()
    seconds = time.perf_counter() - tic
    load_after = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"command": " ".join(cmd), "cold": cold, "seconds": seconds, "exit_status": status, "steps": steps,
            "load_before": load_before, "load_after": load_after}


def measure(commands=COMMANDS, repeat: int = 1, python: str = "python3.11", quiet: bool = True,
            echo=print, cold: bool = True) -> dict:
    """``{name: [result, ...]}`` for each command, ``repeat`` times, printing as it goes."""
    results = {}
    for name in commands:
        for _ in range(repeat):
            echo(f"  running `{python} dev.py {name}` in {ROOT} ({'empty' if cold else 'warm'} kernel cache) ...",
                 flush=True)
            r = run_command(name, python, quiet, cold)
            results.setdefault(name, []).append(r)
            ok = "ok" if r["exit_status"] == 0 else f"FAILED (exit status {r['exit_status']})"
            echo(f"  {python} dev.py {name:5s} {r['seconds']:8.1f} s  ({r['seconds'] / 60:.2f} min)  {ok}",
                 flush=True)
            for step in r["steps"]:
                echo(f"      {step}", flush=True)
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=COMMANDS, help="time one command only")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each command (default 1)")
    parser.add_argument("--python", default="python3.11", help="interpreter that runs dev.py")
    parser.add_argument("--verbose", action="store_true", help="show the commands' output")
    parser.add_argument("--warm", action="store_true",
                        help="keep rbdyn's compiled kernels (default: emptied before each command)")
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
    results = measure(commands, args.repeat, args.python, not args.verbose, cold=not args.warm)
    failed = any(r["exit_status"] for rs in results.values() for r in rs)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"machine": info, "root": str(ROOT), "results": results}, fh, indent=2)
        print(f"\nwrote {args.json}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
