"""What importing rbdyn costs: every `rbdyn` command and every page pays it once.

scipy's special functions, integrators and linear algebra take about a third of a second to
import. rbdyn imports each where it is used (the exact solutions, the reference solutions, the
minimum-norm solve of a closed loop), so that ``rbdyn list``, ``rbdyn show`` and ``--help`` do
not load them. (A run loads scipy.linalg all the same: numba takes its BLAS from there.) That a
closed loop is still solved in a fresh interpreter, where rbdyn never asked numba for LAPACK, is
checked by test_constraints.py::test_closed_loop_kernels_same_without_jit.
"""

import json
import subprocess
import sys

HEAVY = ("scipy.special", "scipy.integrate", "scipy.linalg")


def test_importing_rbdyn_loads_no_scipy_module_it_does_not_use():
    code = f"import json, sys, rbdyn\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith({HEAVY!r}))))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
