"""Run the same rbdyn computation compiled and as plain Python (NUMBA_DISABLE_JIT=1).

The kernels must mean the same thing in both modes: numba compiles exactly the
Python source that runs when the JIT is disabled (that is how load callbacks
run, see rbdyn._compile.python_variant), so the two results must agree to round-off.
"""

import json
import os
import subprocess
import sys

import numpy as np


def with_and_without_jit(setup: str, expression: str):
    """``(plain, compiled)``: ``expression`` (an array-like) evaluated after ``setup`` in a
    fresh interpreter without and with the JIT, as float arrays."""
    code = f"import json, numpy as np, rbdyn\n{setup}\nprint(json.dumps(np.asarray({expression}, dtype=float).tolist()))"
    results = []
    for flag in ("1", "0"):
        env = dict(os.environ, NUMBA_DISABLE_JIT=flag)
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        results.append(np.array(json.loads(done.stdout.strip().splitlines()[-1])))
    return tuple(results)
