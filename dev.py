"""Developer entry point for rbdyn (standard library only).

    python3.11 dev.py book                 build the HTML validation manual afresh into _build/html
    python3.11 dev.py test                 everything: unit tests, every page (nbval), the strict
                                           book build and the browser test of every HTML page
    python3.11 dev.py test [pytest args]   only pytest with these arguments, e.g. -k so3 -x
    python3.11 dev.py lab                  JupyterLab, where the book's .md pages open as notebooks

Every command creates ``.venv`` in the repository root if it is missing and (re)installs
``requirements.txt`` plus an editable ``rbdyn`` whenever requirements.txt or pyproject.toml
changed since the last install (a sha256 stamp is kept in ``.venv/.rbdyn-stamp``).

How the book is built: the pages are executed once, by pytest under nbval (in parallel, one
kernel per page, forked from a process that has imported the pages' libraries: see conftest.py
and tests/forkkernel.py), which writes every page whose cells all passed as an executed notebook; those
notebooks are put into myst-nb's execution cache, and Sphinx renders them from there with
``-W -n --keep-going`` and a fresh environment. So the tests and the book check the very same
execution, and nothing is read from an earlier build.
"""

import gc
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / "bin"
STAMP = VENV / ".rbdyn-stamp"
INPUTS = ("requirements.txt", "pyproject.toml")
BUILD = ROOT / "_build"
HTML = BUILD / "html"
EXECUTED = BUILD / "executed"  # the executed pages, written by conftest.py (RBDYN_EXECUTED_DIR)
CHECKS = BUILD / "checks"  # every page's acceptance checks, written by rbdyn.verify.check (RBDYN_CHECKS_DIR)
CACHE = BUILD / ".jupyter_cache"
SCREENSHOTS = BUILD / "screenshots"
# the digest of rbdyn's sources its cached kernels were compiled from (written by rbdyn._jit on import)
SOURCES = ROOT / "rbdyn" / "__pycache__" / "rbdyn-sources.sha256"
PRECOMPILED = ROOT / "rbdyn" / "__pycache__" / "rbdyn-precompiled"  # what precompile() last compiled for

# Everything a build leaves that could show results of an older rbdyn: the HTML, Sphinx's
# environment (it skips pages whose source did not change, so a change in rbdyn/ alone would reach
# no page), the executed pages and their cache, the acceptance records of the validation matrix,
# and the browser test's screenshots.
STALE = ("html", ".doctrees", "jupyter_execute", ".jupyter_cache", "checks", "executed", "screenshots")


def workers():
    """Parallel pytest workers: one per core (a page is one kernel, busy on one core)."""
    return str(max(1, min(os.cpu_count() or 1, 8)))


def environment(**extra):
    env = dict(os.environ, PYTHONHASHSEED="0", VIRTUAL_ENV=str(VENV), **extra)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    # An inherited MPLBACKEND (e.g. Agg) would override the inline backend in the notebook
    # kernels and drop every figure from the pages; headless matplotlib falls back to Agg anyway.
    env.pop("MPLBACKEND", None)
    # the book's one matplotlib style, for every figure of the pages (conftest.py sets the same)
    env.setdefault("MATPLOTLIBRC", str(ROOT / "rbdyn" / "book.mplstyle"))
    return env


def call(*cmd, **extra):
    """Run a command from the repository root in the environment; return its exit status."""
    return subprocess.run([str(c) for c in cmd], cwd=ROOT, env=environment(**extra)).returncode


def run(*cmd):
    """Run a command; exit with its status if it fails."""
    status = call(*cmd)
    if status:
        sys.exit(status)


def ensure_venv():
    if not (BIN / "python").exists():
        print("dev.py: creating .venv", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    digest = hashlib.sha256(b"".join((ROOT / f).read_bytes() for f in INPUTS)).hexdigest()
    if STAMP.exists() and STAMP.read_text().strip() == digest:
        return
    print("dev.py: installing requirements.txt and rbdyn (editable) into .venv", flush=True)
    # -qq: pip prints errors only
    pip = (BIN / "python", "-m", "pip", "install", "-qq", "--disable-pip-version-check")
    run(*pip, "-r", "requirements.txt")
    run(*pip, "--no-deps", "-e", ".")
    STAMP.write_text(digest + "\n")


def clear():
    for name in STALE:
        shutil.rmtree(BUILD / name, ignore_errors=True)
    precompile()


def precompile():
    """Fill numba's cache with rbdyn's kernels, in as many processes as there are workers
    (``python -m rbdyn._precompile``): pytest's workers would otherwise each compile the same
    kernels at the same time. Skipped when the last one compiled these very sources with
    these very requirements (``PRECOMPILED`` holds both digests)."""
    start = time.perf_counter()
    # Importing rbdyn once, before the parallel workers start, drops its compiled code if any
    # source of rbdyn changed since it was compiled (see rbdyn._jit): numba checks a cached
    # kernel against its own file only. It also brings SOURCES up to date for the test below.
    # The same process lists the schemes and their kernels, for the split below.
    listing = subprocess.run([str(BIN / "python"), "-c", "import rbdyn\n"
                              "for n, c in rbdyn.schemes().items():\n"
                              "    k = c.kernel\n"
                              "    print(int(c.supports_constraints), f'{k.py_func.__module__}.{k.__name__}', n)"],
                             cwd=ROOT, env=environment(), capture_output=True, text=True)
    if listing.returncode:
        sys.exit(listing.stderr + f"dev.py: importing rbdyn failed (exit status {listing.returncode})")
    listing = listing.stdout.split()
    # rbdyn rewrites SOURCES whenever it empties its cache, also for sources changed back to ones
    # compiled before: its time tells that the kernels of those sources are gone
    done = (f"{SOURCES.read_text()}{SOURCES.stat().st_mtime_ns}\n" if SOURCES.exists() else "missing") \
        + (STAMP.read_text() if STAMP.exists() else "")
    if PRECOMPILED.exists() and PRECOMPILED.read_text() == done:
        print("dev.py: rbdyn's kernels were compiled for these sources already", flush=True)
        return
    # The schemes that share a kernel (the three RIG schemes) compile it once, in one process.
    # The processes get the kernels costliest first, each to the least loaded: a kernel that
    # handles constraints compiles for about three times as long as one that does not.
    kernels = {}
    for constrained, kernel, name in zip(listing[::3], listing[1::3], listing[2::3]):
        kernels.setdefault(kernel, (1 + 2 * int(constrained), []))[1].append(name)
    loads = [[0, []] for _ in range(int(workers()))]
    for weight, names in sorted(kernels.values(), key=lambda wn: -wn[0]):
        least = min(loads, key=lambda load: load[0])
        least[0] += weight
        least[1] += names
    running = [subprocess.Popen([str(BIN / "python"), "-m", "rbdyn._precompile", *names], cwd=ROOT,
                                env=environment(), stdout=subprocess.DEVNULL) for _, names in loads if names]
    status = 0
    for proc in running:
        status = proc.wait() or status
    if status:
        sys.exit(status)
    PRECOMPILED.write_text(done)
    print(f"dev.py: rbdyn's kernels compiled or found in the cache in {time.perf_counter() - start:.0f} s", flush=True)


def pytest(*args, pages=True):
    """pytest with nbval over ``args`` in parallel; executed pages and checks go to _build."""
    extra = {"RBDYN_EXECUTED_DIR": str(EXECUTED), "RBDYN_CHECKS_DIR": str(CHECKS)} if pages else {}
    # clear() has just compiled rbdyn's kernels (precompile): the processes that fork the pages'
    # kernels load them once, instead of every page loading its own (conftest.py)
    extra["RBDYN_KERNELS_COMPILED"] = "1"
    # --dist loadfile: the cells of one page run in order in one worker (one kernel)
    return call(BIN / "python", "-m", "pytest", "--nbval", "-n", workers(), "--dist", "loadfile", *args, **extra)


def render(args=()):
    """Render the executed pages into _build/html (a strict Sphinx build; see ``_render``)."""
    return call(BIN / "python", Path(__file__), "_render", *args, RBDYN_CHECKS_DIR=str(CHECKS))


def browser():
    # one Chromium per worker: a page's load, checks and full-page screenshot wait mostly on the
    # browser's own process, so two workers take about two thirds of one's time
    return call(BIN / "python", "-m", "pytest", "tests/browser", "--book-html", HTML, "-n", workers())


def timed(label, fn, *args, **kwargs):
    start = time.perf_counter()
    status = fn(*args, **kwargs)
    print(f"dev.py: {label}: {'passed' if status == 0 else 'FAILED'} in {time.perf_counter() - start:.0f} s",
          flush=True)
    return status


def book(args):
    clear()
    # hypothesis's pytest plugin imports all of hypothesis (about a second in each of pytest's
    # processes, the first of them before any page starts); no page uses it
    executed = timed("pages executed (pytest --nbval book)", pytest, "book", "-p", "no:hypothesispytest")
    rendered = timed("book rendered (-W -n)", render, args)
    print(f"dev.py: HTML in {HTML / 'index.html'}"
          + ("" if executed == rendered == 0 else " (build FAILED: see the failures above)"))
    return executed or rendered


def test(args):
    if args:  # only pytest, with the given arguments
        return call(BIN / "python", "-m", "pytest", "--nbval", *args)
    start = time.perf_counter()
    clear()
    statuses = [
        timed("unit tests and every page (pytest --nbval)", pytest),
        timed("book rendered (-W -n)", render),
        timed("browser test of every page", browser),
    ]
    failed = any(statuses)
    print(f"dev.py test: {'FAILED' if failed else 'passed'} in {time.perf_counter() - start:.0f} s "
          f"(HTML in {HTML}, screenshots in {SCREENSHOTS})", flush=True)
    return 1 if failed else 0


def lab(args):
    """JupyterLab on the repository, the .md pages opening as notebooks (jupytext)."""
    # jupytext's contents manager opens MyST .md files as notebooks on a double click
    config = BUILD / "lab-config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "jupyter_server_config.json").write_text(json.dumps({
        "ServerApp": {"jpserver_extensions": {"jupytext": True}},
    }), encoding="utf-8")
    (config / "labconfig").mkdir(exist_ok=True)
    (config / "labconfig" / "default_setting_overrides.json").write_text(json.dumps({
        "@jupyterlab/docmanager-extension:plugin": {
            "defaultViewers": {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"},
        },
    }), encoding="utf-8")
    env = {"JUPYTER_CONFIG_PATH": str(config)}
    return call(BIN / "jupyter", "lab", f"--notebook-dir={ROOT}", *args, **env)


# --------------------------------------------------------------------------------------------
# Run by the environment's Python (``dev.py _render``): the packages of requirements.txt.


def _toc_pages():
    import yaml

    def walk(entry):
        if "file" in entry:
            yield entry["file"]
        for key in ("parts", "chapters", "sections"):
            for child in entry.get(key, []):
                yield from walk(child)

    return list(walk(yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))))


def _is_notebook(path):
    text = path.read_text(encoding="utf-8")
    return text.startswith("---") and "jupytext" in text[: text.find("\n---", 3)]


def _render(args):
    """Put the executed pages into myst-nb's cache and build the HTML from it, strictly.

    A page that pytest did not execute (it failed there) is not executed again: it is rendered
    without outputs, listed here, and the build fails.
    """
    # jsonschema, which nbformat imports, builds 38 lark parsers on import (about a second of this
    # serial step) for the formats of rfc3987-syntax, which only JupyterLab's event schemas use
    # (jupyter-events installs it). Without the module, jsonschema leaves those formats unchecked.
    sys.modules.setdefault("rfc3987_syntax", None)
    # Sphinx builds and drops docutils nodes by the million; the collector's default thresholds
    # (700, 10, 10) run it often enough to be a sixth of this step (10.6 s, 8.8 s with these)
    gc.set_threshold(100_000, 50, 50)
    import nbformat
    from jupyter_book.sphinx import build_sphinx
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    cache = get_cache(str(CACHE))
    missing = []
    for page in _toc_pages():
        source = ROOT / f"{page}.md"
        if not source.exists() or not _is_notebook(source):
            continue
        executed = EXECUTED / f"{page}.ipynb"
        if not executed.exists():
            missing.append(f"{page}.md")
            continue
        record = json.loads(executed.with_suffix(".json").read_text(encoding="utf-8"))
        cache.cache_notebook_bundle(
            CacheBundleIn(nbformat.read(str(executed), as_version=4), uri=str(source),
                          data={"execution_seconds": record["execution_seconds"]}),
            check_validity=False, overwrite=True)
    if missing:
        print("dev.py: these pages failed under pytest and are rendered WITHOUT outputs:\n  "
              + "\n  ".join(missing), flush=True)
    overrides = {
        "external_toc_path": "_toc.yml",
        "latex_individualpages": False,
        "nitpicky": True,
        # render the outputs of the pages pytest executed; never execute a page here
        "nb_execution_mode": "cache",
        "nb_execution_cache_path": str(CACHE),
        "nb_execution_excludepatterns": missing,
    }
    # Pages are read by as many processes as pytest has workers. Three extensions do not declare
    # whether that is safe, so Sphinx would read serially: jupyter-book's section numbering only
    # renumbers the merged table of contents after reading, the offline MathJax only copies files
    # when the build finishes, and jupyter-book's LaTeX extension acts on LaTeX builds. (The HTML
    # of a parallel build was compared with a serial one's: the same files.)
    import importlib

    for name in ("sphinx_multitoc_numbering", "sphinx-mathjax-offline", "sphinx_jupyterbook_latex"):
        module = importlib.import_module(name)
        declared = module.setup
        module.setup = lambda app, declared=declared: {**(declared(app) or {}), "parallel_read_safe": True,
                                                       "parallel_write_safe": True}
    result = build_sphinx(ROOT, HTML, use_external_toc=True, noconfig=True, path_config=str(ROOT / "_config.yml"),
                          confoverrides=overrides, builder="html", warningiserror=True, keep_going=True,
                          freshenv=True, force_all=True, jobs=int(workers()))
    if isinstance(result, Exception):
        print(f"dev.py: the book build failed: {result}", file=sys.stderr)
        return 1
    return 1 if (result or missing) else 0


COMMANDS = {"book": book, "test": test, "lab": lab}


def main(argv):
    if argv and argv[0] == "_render":  # internal: already in the environment's Python
        sys.exit(_render(argv[1:]))
    if not argv or argv[0] not in COMMANDS:
        sys.exit(__doc__)
    ensure_venv()
    sys.exit(COMMANDS[argv[0]](argv[1:]))


if __name__ == "__main__":
    main(sys.argv[1:])
