"""What importing rbdyn does: it only imports.

``import rbdyn`` creates, deletes or changes no file (bytecode aside), and touches no global
state of another library: the garbage collector's thresholds and callbacks, warning filters,
numba's configuration. It loads no scipy module it does not use (scipy's special functions,
integrators and linear algebra take about a third of a second to import; rbdyn imports each where
it is used).
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import rbdyn

HEAVY = ("scipy.special", "scipy.integrate", "scipy.linalg")
PACKAGE = Path(rbdyn.__file__).resolve().parent


def _run(code, **kw):
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, **kw)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _tree(root):
    """Every file under ``root`` but bytecode, with its size and modification time."""
    return {p.relative_to(root).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file() and p.suffix != ".pyc"}


def test_importing_rbdyn_compiles_nothing():
    """The schemes' settings and the lists of schemes and scenarios are plain Python: numba
    (about half a second to import) comes in only when a model or a kernel is built."""
    code = ("import json, sys, rbdyn\n"
            "rbdyn.get_scheme('gen_alpha', rho_inf=0.5); rbdyn.schemes(); rbdyn.builtin_scenarios()\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'llvmlite'))))")
    assert _run(code) == []


def test_importing_rbdyn_loads_no_scipy_module_it_does_not_use():
    code = f"import json, sys, rbdyn\nprint(json.dumps(sorted(m for m in sys.modules if m.startswith({HEAVY!r}))))"
    assert _run(code) == []


def test_importing_an_edited_rbdyn_changes_no_file(tmp_path):
    """A copy of the package, one of its sources edited (as a developer does): importing it
    writes, deletes and changes nothing (Python's own bytecode aside)."""
    copy = tmp_path / "rbdyn"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    source = copy / "so3.py"
    source.write_text(source.read_text() + "\n# an edit\n")
    before = _tree(copy)
    _run("import json, rbdyn\nprint(json.dumps(rbdyn.__file__))", cwd=tmp_path)
    assert _tree(copy) == before


def test_importing_rbdyn_touches_no_global_state():
    code = ("import gc, json, warnings\n"
            "import numba\n"
            "before = [gc.get_threshold(), len(gc.callbacks), len(warnings.filters), numba.config.DISABLE_JIT]\n"
            "import rbdyn\n"
            "after = [gc.get_threshold(), len(gc.callbacks), len(warnings.filters), numba.config.DISABLE_JIT]\n"
            "print(json.dumps([before, after]))")
    before, after = _run(code)
    assert before == after
