"""pytest configuration shared by the unit tests and the notebook pages of the book.

With ``--nbval`` (or ``--nbval-lax``), MyST Markdown notebooks -- ``.md`` files whose YAML front
matter has ``jupytext`` and ``kernelspec`` -- are tested like ``.ipynb`` notebooks: every code
cell is a test item, executed in nbval's kernel of the current environment
(``--nbval-current-env`` is the default here; ``--nbval-kernel-name`` still overrides it). The
pages carry no stored outputs, so nothing is compared: a page fails through an exception, i.e.
its acceptance checks.

nbval collects ``.ipynb`` files only. So a page ``book/X/P.md`` is collected as a :class:`MystPage`
whose one child is what nbval's own ``pytest_collect_file`` hook returns for the page converted
by jupytext (``jupytext.read``, ``jupytext.write``) to ``_build/nbval/book/X/P.ipynb`` (written
when its content changed). nbval starts the page's kernel in that folder, where a page may write
scratch files; pages find the repository through ``Path(rbdyn.__file__).resolve().parents[1]``.
``pytest --nbval book/X/P.md`` runs that one page; ``-n 2 --dist loadfile`` keeps each page in
one worker (its test ids start with the converted file's path).

Before anything imports numba, ``NUMBA_CACHE_DIR`` is set to ``.cache/numba/<digest of rbdyn's
sources>`` unless it is set (``dev.page_environment``, which also sets the book's matplotlib
style): pytest's processes, its workers and the pages' kernels inherit it, so compiled code of an
older rbdyn is never loaded.

Guards:
* nothing under ``_build/`` (converted or executed copies of the pages) is collected by walking
  the tree, and naming such a path on the command line is a usage error;
* if the ``book`` directory was part of the collection and not a single notebook cell was
  collected, the run fails instead of passing vacuously.

The pages run before the unit tests, the costliest first, by their times in the last run here
(``.cache/rbdyn-page-seconds.json``).
"""

import importlib.util
import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
BOOK = ROOT / "book"
BUILD = ROOT / "_build"
MIRROR = BUILD / "nbval"  # the pages converted to .ipynb for nbval, at their paths relative to ROOT
# how long each page took when it last ran here (seconds), for the order of the next run
PAGE_SECONDS = ROOT / ".cache" / "rbdyn-page-seconds.json"

_BOOK_VISITED = pytest.StashKey[bool]()


def _load_dev():
    """dev.py (standard library only), loaded by its path: the one definition of the caches' key
    and of a MyST notebook page."""
    spec = importlib.util.spec_from_file_location("rbdyn_dev", ROOT / "dev.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


dev = _load_dev()
_is_myst_notebook = dev.is_myst_notebook  # a .md with jupytext and kernelspec in its front matter


def _nbval_active(config):
    return bool(getattr(config.option, "nbval", False) or getattr(config.option, "nbval_lax", False))


def _page_of(path):
    """``book/X/P.md`` for an item of the converted page ``_build/nbval/book/X/P.ipynb``, else None."""
    path = Path(path)
    if MIRROR not in path.parents:
        return None
    return path.relative_to(MIRROR).with_suffix(".md").as_posix()


def pytest_configure(config):
    # numba's cache and the book's figure style, before any test module (or nbval's kernels)
    # imports numba
    dev.page_environment(os.environ)
    # Explicit paths bypass norecursedirs and pytest_ignore_collect, so refuse them up front.
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        if path == BUILD or BUILD in path.parents:
            raise pytest.UsageError(
                f"{arg}: _build/ holds generated copies of the pages and is never tested; "
                "test the sources under book/ instead (e.g. book/validation/pendulum.md)"
            )
    config.stash[_BOOK_VISITED] = False
    config.pluginmanager.register(PageTimes(), "rbdyn-page-times")
    if _nbval_active(config) and not config.option.nbval_kernel_name:
        config.option.nbval_current_env = True


def pytest_ignore_collect(collection_path, config):
    if collection_path == BUILD or BUILD in collection_path.parents:
        return True
    return None


def pytest_collect_file(file_path, parent):
    config = parent.config
    if BOOK in file_path.parents:
        config.stash[_BOOK_VISITED] = True
    if _nbval_active(config) and file_path.suffix == ".md" and _is_myst_notebook(file_path):
        return MystPage.from_parent(parent, path=file_path)
    return None


class MystPage(pytest.File):
    """A MyST notebook page: collects nbval's notebook for its conversion under ``_build/nbval/``."""

    def collect(self):
        import jupytext

        target = MIRROR / self.path.resolve().relative_to(ROOT).with_suffix(".ipynb")
        text = jupytext.writes(jupytext.read(self.path), fmt="ipynb")
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            # pytest's workers collect every page at the same time: write whole files only
            tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, target)
        yield from self.ihook.pytest_collect_file(file_path=target, parent=self)


def _order_key(item, seconds):
    """Pages before the unit tests, the costliest first: the workers take one file at a time in
    this order, so that the longest pages do not start last and leave one core idle. A page's
    cost is its time in the last run here, else the validation and contributor pages are taken
    as the costly ones."""
    page = _page_of(item.path)
    if page is None:
        return (1, 0.0)
    default = 60.0 if page.startswith(("book/validation/", "book/contributing/")) else 0.0
    return (0, -seconds.get(page, default))


@pytest.hookimpl(tryfirst=True)  # before -k/-m deselection: count what was collected
def pytest_collection_modifyitems(session, config, items):
    if not (_nbval_active(config) and config.stash[_BOOK_VISITED]):
        return
    try:
        seconds = json.loads(PAGE_SECONDS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        seconds = {}
    # a stable sort: each file's items stay together and in their order
    items.sort(key=lambda item: _order_key(item, seconds))
    if not any(_page_of(item.path) for item in items):
        pytest.exit(
            "--nbval was given and book/ was collected, but no notebook cell was collected: "
            "no page under book/ is a MyST notebook (front matter with jupytext and kernelspec), "
            "or none of them has a code cell.",
            returncode=pytest.ExitCode.TESTS_FAILED,
        )


class PageTimes:
    """Each page's time, its kernel's start (in the first cell's setup), cells and shutdown added
    up, recorded at the end of the run for the order of the next one. With xdist the controller
    gets the reports of every worker and records them."""

    def __init__(self):
        self.seconds = {}

    def pytest_runtest_logreport(self, report):
        page = _page_of(ROOT / report.nodeid.split("::")[0])
        if page is not None:
            self.seconds[page] = self.seconds.get(page, 0.0) + report.duration

    def pytest_sessionfinish(self, session):
        if not self.seconds or hasattr(session.config, "workerinput"):
            return
        try:
            known = json.loads(PAGE_SECONDS.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            known = {}
        known.update({page: round(seconds, 1) for page, seconds in self.seconds.items()})
        try:
            PAGE_SECONDS.parent.mkdir(exist_ok=True)
            tmp = PAGE_SECONDS.with_name(f"{PAGE_SECONDS.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(known, sort_keys=True, indent=1), encoding="utf-8")
            os.replace(tmp, PAGE_SECONDS)
        except OSError:
            pass
