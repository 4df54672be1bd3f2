"""What importing rbdyn costs: every `rbdyn` command and every page pays it once.

scipy's special functions, integrators and linear algebra take about a third of a second to
import. rbdyn imports each where it is used (the exact solutions, the reference solutions, the
minimum-norm solve of a closed loop), so that ``rbdyn list``, ``rbdyn show`` and ``--help`` do
not load them. (A run loads scipy.linalg all the same: numba takes its BLAS from there.)
"""

import json
import subprocess
import sys

import pytest

HEAVY = ("scipy.special", "scipy.integrate", "scipy.linalg")


def _fresh(code):
    """Run ``code`` in a new interpreter; its last printed line, parsed as JSON."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_rbdyn_loads_no_scipy_module_it_does_not_use():
    loaded = _fresh(f"import json, sys, rbdyn\n"
                    f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({HEAVY!r}))))")
    assert loaded == []


@pytest.mark.parametrize("scheme", ["rig_pos", "gen_alpha"])
def test_a_closed_loop_is_solved_in_a_fresh_process(scheme):
    # the kernel names dgelsd without having asked numba for its LAPACK: numba's helper looks the
    # routine up itself when the kernel first calls it
    out = _fresh(f"import json, numpy as np, rbdyn\n"
                 f"sc = rbdyn.load_scenario('bricard')\n"
                 f"tr = rbdyn.simulate(sc.system, {scheme!r}, 1e-3, 0.01, reduce=True)\n"
                 f"print(json.dumps([bool(np.isfinite(tr.x_com).all()), tr.reductions['constraint'].max]))")
    finite, closure = out
    assert finite
    assert closure < 1e-8
