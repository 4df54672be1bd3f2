"""pytest configuration shared by the unit tests and the notebook pages of the book.

With ``--nbval`` (or ``--nbval-lax``), MyST Markdown notebooks -- ``.md`` files whose YAML front
matter has ``jupytext`` and ``kernelspec`` -- are collected like ``.ipynb`` notebooks: every code
cell is a test item, executed in a kernel of the current environment (``--nbval-current-env`` is
the default here; ``--nbval-kernel-name`` still overrides it). The pages carry no stored outputs,
so nothing is compared: a page fails through an exception, i.e. its acceptance ``assert`` cells.

The pages are read with myst-nb's own reader, so that the cells nbval runs are exactly those the
book renders. When the environment variable ``RBDYN_EXECUTED_DIR`` names a directory (``dev.py``
sets it), every page whose cells all passed is written there as an executed notebook with its
outputs and its execution time; ``dev.py`` then hands them to the book build (myst-nb's cache),
which renders them instead of executing the pages a second time.

Kernels: on Linux, every page runs in a kernel forked from a server process (one per pytest
worker, ``tests/forkkernel.py``) that imported the pages' libraries once (``KERNEL_SERVER_IMPORTS``),
instead of a kernel that starts Python and imports them again (about two seconds per page). A
page is still a new process: its own directory, environment and namespace. When dev.py has just
compiled rbdyn's kernels (``RBDYN_KERNELS_COMPILED=1``), the server also loads them from numba's
cache (``rbdyn._precompile.main``), so that no page loads them again. A page whose front
matter has ``rbdyn: {kernel: own process}`` gets a kernel started the usual way; so does every page
with ``RBDYN_FORK_KERNELS=0``, or ``--nbval-kernel-name``.

Guards:
* nothing under ``_build/`` (executed copies of the pages) is ever collected, and naming such a
  path on the command line is a usage error;
* if the ``book`` directory was part of the collection and not a single notebook cell was
  collected, the run fails instead of passing vacuously.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

try:
    import nbformat
    import yaml
    from myst_nb.core.read import read_myst_markdown_notebook
    from nbval import kernel as nbval_kernel
    from nbval import plugin as nbval_plugin
except ImportError:  # without nbval there is no --nbval, hence nothing to collect
    nbval_plugin = None

ROOT = Path(__file__).resolve().parent
BOOK = ROOT / "book"
BUILD = ROOT / "_build"
# how long each page took when it last ran here (seconds), for the order of the next run
PAGE_SECONDS = ROOT / ".cache" / "rbdyn-page-seconds.json"
# the book's one matplotlib style (rbdyn/book.mplstyle) for every page the kernels run
os.environ.setdefault("MATPLOTLIBRC", str(ROOT / "rbdyn" / "book.mplstyle"))


def _nbval_active(config):
    return bool(getattr(config.option, "nbval", False) or getattr(config.option, "nbval_lax", False))


def _is_myst_notebook(path):
    """True for a .md file whose YAML front matter declares jupytext and a kernelspec."""
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return False
    end = text.find("\n---", 3)
    if end < 0:
        return False
    try:
        meta = yaml.safe_load(text[3:end])
    except yaml.YAMLError:
        return False
    return isinstance(meta, dict) and "jupytext" in meta and "kernelspec" in meta


def pytest_configure(config):
    # Explicit paths bypass norecursedirs and pytest_ignore_collect, so refuse them up front.
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        if path == BUILD or BUILD in path.parents:
            raise pytest.UsageError(
                f"{arg}: _build/ holds generated copies of the pages and is never tested; "
                "test the sources under book/ instead"
            )
    config._rbdyn_book_visited = False
    if _nbval_active(config) and not config.option.nbval_kernel_name:
        config.option.nbval_current_env = True


def pytest_ignore_collect(collection_path, config):
    if collection_path == BUILD or BUILD in collection_path.parents:
        return True
    return None


def pytest_collect_file(file_path, parent):
    config = parent.config
    if BOOK in file_path.parents:
        config._rbdyn_book_visited = True
    if _nbval_active(config) and file_path.suffix == ".md" and _is_myst_notebook(file_path):
        _start_kernel_server(config)
        return MystNotebookFile.from_parent(parent, path=file_path)
    return None


# ---- the pages' kernels, forked from a server that has imported their libraries (tests/forkkernel.py)

FORKKERNEL = ROOT / "tests" / "forkkernel.py"
# what the pages import; a page imports anything else itself, as in any kernel
KERNEL_SERVER_IMPORTS = ("numpy", "scipy.integrate", "scipy.special", "scipy.linalg", "sympy", "mpmath",
                         "matplotlib.pyplot", "IPython.display", "myst_nb", "yaml", "numba",
                         "rbdyn", "rbdyn.constraints", "rbdyn.plotting", "rbdyn.verify")
# A page whose front matter says ``rbdyn: {kernel: own process}`` gets a kernel started the usual
# way: it sets up the environment that a library reads when it is imported (add_scheme sends
# numba's cache elsewhere before numba is imported), which a forked kernel has imported already.
OWN_PROCESS = "own process"
_fork_next_kernel = False  # set by MystNotebookFile.setup for the kernel it is about to start


def _fork_kernels(config):
    """Whether the pages' kernels are forked here: on Linux, for nbval's current-environment
    kernel, unless RBDYN_FORK_KERNELS=0 (then every page starts its kernel the usual way)."""
    return (sys.platform == "linux" and hasattr(os, "pidfd_open") and config.option.nbval_current_env
            and not config.option.nbval_kernel_name and os.environ.get("RBDYN_FORK_KERNELS", "1") != "0")


def _start_kernel_server(config):
    """Start this process's kernel server when its first page is collected (its imports then
    overlap the rest of the collection), and route nbval's current-environment kernels through it."""
    if getattr(config, "_rbdyn_kernel_server", None) is not None or not _fork_kernels(config):
        return
    folder = tempfile.mkdtemp(prefix="rbdyn-kernels-")
    path = os.path.join(folder, "server.sock")
    # With rbdyn's kernels compiled (dev.py says so), the server also loads them, so that every
    # page finds them in memory; otherwise a page compiles what it needs, as it would anyway.
    then = ["--then", "rbdyn._precompile:main"] if os.environ.get("RBDYN_KERNELS_COMPILED") == "1" else []
    # its standard input is our end of a pipe: it stops when we close it, or when we die
    server = subprocess.Popen([sys.executable, str(FORKKERNEL), "serve", path, *KERNEL_SERVER_IMPORTS, *then],
                              stdin=subprocess.PIPE, cwd=ROOT)
    config._rbdyn_kernel_server = (server, folder)
    declared = nbval_kernel.NbvalKernelspecManager.get_kernel_spec

    def get_kernel_spec(self, kernel_name):
        spec = declared(self, kernel_name)
        if (_fork_next_kernel and kernel_name == nbval_kernel.CURRENT_ENV_KERNEL_NAME
                and spec.argv[1:3] == ["-m", "ipykernel_launcher"]):
            # [python, -m, ipykernel_launcher, -f, {connection_file}] -> the server's client
            spec.argv = [sys.executable, "-I", "-S", str(FORKKERNEL), "connect", path, *spec.argv[3:]]
        return spec

    nbval_kernel.NbvalKernelspecManager.get_kernel_spec = get_kernel_spec


def pytest_unconfigure(config):
    started = getattr(config, "_rbdyn_kernel_server", None)
    if started is None:
        return
    server, folder = started
    server.stdin.close()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
    try:
        os.rmdir(folder)
    except OSError:
        pass


def _order_key(item, seconds):
    """Pages before the unit tests, the costliest first: the workers take one file at a time in
    this order, so that the longest pages do not start last and leave one core idle. A page's
    cost is its time in the last run here, else the validation and contributor pages are taken
    as the costly ones."""
    path = Path(str(item.fspath)).resolve()
    if BOOK not in path.parents:
        return (1, 0.0)
    page = path.relative_to(ROOT).as_posix()
    default = 60.0 if page.startswith(("book/validation/", "book/contributing/")) else 0.0
    return (0, -seconds.get(page, default))


@pytest.hookimpl(tryfirst=True)  # before -k/-m deselection: count what was collected
def pytest_collection_modifyitems(session, config, items):
    if not (_nbval_active(config) and config._rbdyn_book_visited):
        return
    try:
        seconds = json.loads(PAGE_SECONDS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        seconds = {}
    # a stable sort: each file's items stay together and in their order
    items.sort(key=lambda item: _order_key(item, seconds))
    if not any(isinstance(item.parent, nbval_plugin.IPyNbFile) for item in items):
        pytest.exit(
            "--nbval was given and book/ was collected, but no notebook cell was collected: "
            "no page under book/ is a MyST notebook (front matter with jupytext and kernelspec), "
            "or none of them has a code cell.",
            returncode=pytest.ExitCode.TESTS_FAILED,
        )


if nbval_plugin is not None:

    class MystNotebookFile(nbval_plugin.IPyNbFile):
        """nbval's notebook collector, reading the notebook with myst-nb's reader.

        ``IPyNbFile.collect`` loads the file with ``nbformat.read``, looked up in
        ``nbval.plugin``'s namespace; while ``collect`` runs, that name is bound to a proxy whose
        ``read`` returns the notebook myst-nb read (the cells the book renders). After the last
        cell, :meth:`teardown` writes the executed notebook for the book (see the module docs).
        """

        def collect(self):
            real = nbval_plugin.nbformat
            notebook = read_myst_markdown_notebook(self.path.read_text(encoding="utf-8"), path=str(self.path))
            nbval_plugin.nbformat = _NotebookReader(real, notebook)
            try:
                yield from super().collect()
            finally:
                nbval_plugin.nbformat = real

        def setup(self):
            global _fork_next_kernel
            self._started = time.perf_counter()
            wanted = (self.nb.metadata.get("rbdyn") or {}).get("kernel")
            _fork_next_kernel = wanted != OWN_PROCESS
            try:
                super().setup()
            finally:
                _fork_next_kernel = False

        def teardown(self):
            super().teardown()
            seconds = time.perf_counter() - self._started
            _remember_seconds(self.path, seconds)
            folder = os.environ.get("RBDYN_EXECUTED_DIR")
            cells = [c for c in self.session.items if c.parent is self]
            if not folder or not cells or not all(getattr(c, "_rbdyn_passed", False) for c in cells):
                return
            # the notebook as the book reads it, with the outputs this run produced
            notebook = read_myst_markdown_notebook(self.path.read_text(encoding="utf-8"), path=str(self.path))
            code = [cell for cell in notebook.cells if cell.cell_type == "code"]
            for count, (cell, item) in enumerate(zip(code, cells), start=1):
                cell.outputs = list(item.test_outputs or [])
                cell.execution_count = count
            relative = self.path.resolve().relative_to(ROOT).with_suffix(".ipynb")
            target = Path(folder) / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(notebook, str(target))
            record = {"source": str(self.path.resolve()), "execution_seconds": seconds}
            target.with_suffix(".json").write_text(json.dumps(record), encoding="utf-8")


def _remember_seconds(path, seconds):
    """Record a page's time in PAGE_SECONDS (a race between workers loses an entry at worst)."""
    try:
        known = json.loads(PAGE_SECONDS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    known[Path(path).resolve().relative_to(ROOT).as_posix()] = round(seconds, 1)
    try:
        PAGE_SECONDS.parent.mkdir(exist_ok=True)
        tmp = PAGE_SECONDS.with_name(f"{PAGE_SECONDS.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(known, sort_keys=True), encoding="utf-8")
        os.replace(tmp, PAGE_SECONDS)
    except OSError:
        pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Mark each notebook cell that ran and passed (for the executed notebook of the book)."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and nbval_plugin is not None and isinstance(item, nbval_plugin.IPyNbCell):
        item._rbdyn_passed = report.passed


class _NotebookReader:
    """Stand-in for the ``nbformat`` module whose ``read`` returns an already loaded notebook."""

    def __init__(self, module, nb):
        self._module, self._nb = module, nb

    def read(self, *args, **kwargs):
        return self._nb

    def __getattr__(self, name):
        return getattr(self._module, name)
