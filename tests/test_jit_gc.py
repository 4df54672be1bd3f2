"""While numba compiles a function of rbdyn, the garbage collector runs less often (rbdyn._jit._CompileGC).

Each check compiles in a fresh interpreter with an empty numba cache of its own (so that numba
compiles instead of loading, and nothing is added to rbdyn's own cache), and records the
collector's thresholds from a second listener of numba's compile events:

* during a compile of rbdyn's ``so3.hat`` (and of the functions numba compiles for it), the
  thresholds are rbdyn's, and Python's afterwards;
* a compile that fails restores them too;
* a function that is not rbdyn's compiles with the thresholds it finds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = r"""
import gc, json, sys
import numba, numpy as np
from numba.core import event

import rbdyn  # registers rbdyn's listener first: numba tells the listeners in that order
from rbdyn import so3

seen = []

class Record(event.Listener):
    def on_start(self, ev):
        seen.append([ev.data["dispatcher"].py_func.__name__, list(gc.get_threshold())])
    def on_end(self, ev):
        pass

event.register("numba:compile", Record())
gc.set_threshold(701, 11, 12)  # a user's own setting, to be found again after each compile
out = {}
so3.hat(np.zeros(3, dtype=np.float32))  # a signature nobody compiled: numba compiles it here
out["rbdyn"], seen[:] = seen[:], []
out["after"] = list(gc.get_threshold())
try:
    so3.hat("not an array")
except numba.core.errors.TypingError:
    out["failed"] = True
out["after failure"] = list(gc.get_threshold())
seen.clear()
numba.njit(lambda a: a + 1)(1.0)
out["other"] = seen[:]
out["rbdyn threshold"] = list(rbdyn._jit.COMPILE_GC_THRESHOLD)
print(json.dumps(out))
"""


def _run(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    env.pop("NUMBA_DISABLE_JIT", None)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_compiles_of_rbdyn_collect_less_often_and_restore_the_thresholds(tmp_path):
    out = _run(tmp_path)
    user = [701, 11, 12]
    relaxed = out["rbdyn threshold"]
    # the relaxed thresholds collect less often than Python's defaults in every generation
    assert all(r > d for r, d in zip(relaxed, (700, 10, 10)))
    names = [name for name, _ in out["rbdyn"]]
    assert names[0] == "hat" and len(names) > 1  # hat and what numba compiles for it
    assert all(threshold == relaxed for _, threshold in out["rbdyn"])
    assert out["after"] == user
    assert out["failed"] and out["after failure"] == user
    assert out["other"] and all(threshold == user for _, threshold in out["other"])
