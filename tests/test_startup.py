"""What importing rbdyn costs: every `rbdyn` command and every page pays it once.

scipy's special functions, integrators and linear algebra take about a third of a second to
import. rbdyn imports each where it is used (the exact solutions, the reference solutions, the
minimum-norm solve of a closed loop), so that ``rbdyn list``, ``rbdyn show`` and ``--help`` do
not load them. (A run loads scipy.linalg all the same: numba takes its BLAS from there.) That a
closed loop is still solved in a fresh interpreter, where rbdyn never asked numba for LAPACK, is
checked by test_constraints.py::test_closed_loop_kernels_same_without_jit.

A run also builds typed lists (its compiled loads, potentials and metrics, mostly none). numba's
own ``List.empty_list`` compiles the list's constructor in every process (about a quarter of a
second of a short ``rbdyn run``); rbdyn builds them with code numba caches, of the same type.
"""

import json
import subprocess
import sys

HEAVY = ("scipy.special", "scipy.integrate", "scipy.linalg")


def test_importing_rbdyn_loads_no_scipy_module_it_does_not_use():
    code = f"import json, sys, rbdyn\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith({HEAVY!r}))))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_a_run_builds_its_typed_lists_from_cached_code():
    code = ("import json, numba, rbdyn\n"
            "from numba.typed import typedlist\n"
            "rbdyn.load_scenario('pendulum-solfec').run(t_end=0.01)\n"
            "print(json.dumps(len(typedlist._make_list.overloads)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == 0  # numba's constructor never compiled


def test_typed_lists_have_numbas_type():
    import numba

    from rbdyn import _jit
    from rbdyn._data import LOAD_SIGNATURE

    ours = _jit.function_list(LOAD_SIGNATURE, [])
    theirs = numba.typed.List.empty_list(numba.types.FunctionType(LOAD_SIGNATURE))
    assert numba.typeof(ours) == numba.typeof(theirs) and len(ours) == 0
