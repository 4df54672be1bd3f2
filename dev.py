"""Developer entry point for rbdyn (standard library only).

    python3.11 dev.py book                 build the HTML validation manual into _build/html
    python3.11 dev.py test                 everything: unit tests, every page (nbval), the strict
                                           book build and the browser test of every HTML page
    python3.11 dev.py test [pytest args]   only pytest with these arguments, e.g. -k so3 -x
    python3.11 dev.py lab                  JupyterLab, where the book's .md pages open as notebooks

Every command creates ``.venv`` in the repository root if it is missing and (re)installs
``requirements.txt`` plus an editable ``rbdyn`` whenever requirements.txt or pyproject.toml
changed since the last install (a sha256 stamp is kept in ``.venv/.rbdyn-stamp``).

Caches keyed by rbdyn's sources (the digest of ``rbdyn/_stamp.py``, :func:`short_digest`):

* numba's compiled kernels go to ``.cache/numba/<digest>/`` (``NUMBA_CACHE_DIR``, unless it is
  set already), for everything dev.py runs; ``conftest.py`` and the book's extension
  ``book/_ext/rbdyn_cache.py`` set the same for pytest and for the book's kernels;
* the book's executed pages (jupyter-cache, myst-nb's ``execute_notebooks: cache``) and their
  acceptance records go to ``_build/.jupyter_cache/<digest>/`` (set by ``book/_ext/rbdyn_cache.py``).

So a page is executed again when its code or any file of rbdyn changed, and only then. The folders
of other digests are removed when dev.py builds or tests. This file is also loaded by its path by
``conftest.py`` and by the book's extension, for :func:`page_environment`, :func:`book_cache` and
:func:`is_myst_notebook`.
"""

import hashlib
import importlib.util
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
SCREENSHOTS = BUILD / "screenshots"
NUMBA_CACHES = ROOT / ".cache" / "numba"  # numba's cache of rbdyn's kernels, one folder per digest
BOOK_CACHES = BUILD / ".jupyter_cache"  # the book's executed pages, one folder per digest


# --------------------------------------------------------------------------------------------
# The caches' key, shared with conftest.py and book/_ext/rbdyn_cache.py (standard library only)


def short_digest():
    """The short digest of rbdyn's sources (``rbdyn/_stamp.py``, loaded by its path: importing
    rbdyn would import numba, and numba must see ``NUMBA_CACHE_DIR`` before it is imported)."""
    spec = importlib.util.spec_from_file_location("rbdyn_stamp", ROOT / "rbdyn" / "_stamp.py")
    stamp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(stamp)
    return stamp.short_digest()


def use_numba_cache(environ=os.environ, digest=None):
    """Set ``NUMBA_CACHE_DIR`` in ``environ`` to ``.cache/numba/<digest>`` unless it is set;
    return the folder numba caches in."""
    if not environ.get("NUMBA_CACHE_DIR"):
        environ["NUMBA_CACHE_DIR"] = str(NUMBA_CACHES / (digest or short_digest()))
    return Path(environ["NUMBA_CACHE_DIR"])


def page_environment(environ=os.environ, digest=None):
    """What every process that runs rbdyn's tests or pages sets for itself and its kernels, unless
    set: numba's cache keyed by rbdyn's sources, and the book's one matplotlib style for every
    figure (``rbdyn/book.mplstyle``). Returns numba's cache folder."""
    environ.setdefault("MATPLOTLIBRC", str(ROOT / "rbdyn" / "book.mplstyle"))
    return use_numba_cache(environ, digest)


def book_cache(digest=None):
    """The book's execution cache (jupyter-cache) for these sources of rbdyn."""
    return BOOK_CACHES / (digest or short_digest())


def is_myst_notebook(path):
    """A MyST Markdown notebook: a .md file whose YAML front matter has the keys ``jupytext`` and
    ``kernelspec`` (the pages pytest collects with nbval and the book executes)."""
    path = Path(path)
    if path.suffix != ".md":
        return False
    text = path.read_text(encoding="utf-8")
    end = text.find("\n---", 3) if text.startswith("---\n") else -1
    keys = {line.split(":", 1)[0].strip() for line in text[4:end].splitlines()
            if line.strip() and not line[0].isspace() and ":" in line}
    return end > 0 and {"jupytext", "kernelspec"} <= keys


def prune(folder, keep):
    """Remove the subfolders of ``folder`` but ``keep`` (the caches of other digests)."""
    if folder.is_dir():
        for sub in folder.iterdir():
            if sub.name != keep and sub.is_dir():
                shutil.rmtree(sub, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# The commands


def workers():
    """Parallel processes: one per core (a page is one kernel, busy on one core)."""
    return str(max(1, min(os.cpu_count() or 1, 8)))


def environment(**extra):
    env = dict(os.environ, PYTHONHASHSEED="0", VIRTUAL_ENV=str(VENV), **extra)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    # An inherited MPLBACKEND (e.g. Agg) would override the inline backend in the notebook
    # kernels and drop every figure from the pages; headless matplotlib falls back to Agg anyway.
    env.pop("MPLBACKEND", None)
    page_environment(env)
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


def prune_caches():
    """Drop the caches of other digests of rbdyn's sources (numba's, if dev.py chose its folder)."""
    digest = short_digest()
    if not os.environ.get("NUMBA_CACHE_DIR"):
        prune(NUMBA_CACHES, digest)
    prune(BOOK_CACHES, digest)


def precompile():
    """Fill numba's cache with rbdyn's kernels, in as many processes as there are workers
    (``python -m rbdyn._precompile``): pytest's workers would otherwise each compile the same
    kernels at the same time. Skipped when it was done for this cache folder (keyed by rbdyn's
    sources) with these requirements."""
    start = time.perf_counter()
    cache = Path(environment()["NUMBA_CACHE_DIR"])
    done = cache / "rbdyn-precompiled"
    key = f"{short_digest()} {STAMP.read_text().strip() if STAMP.exists() else ''}\n"
    if done.exists() and done.read_text() == key:
        print(f"dev.py: rbdyn's kernels were compiled already ({cache.relative_to(ROOT) if ROOT in cache.parents else cache})",
              flush=True)
        return
    # One process lists the schemes and their kernels, for the split below.
    listing = subprocess.run([str(BIN / "python"), "-c", "import rbdyn\n"
                              "for n, c in rbdyn.schemes().items():\n"
                              "    k = c.kernel()\n"
                              "    print(int(c.supports_constraints), f'{k.py_func.__module__}.{k.__name__}', n)"],
                             cwd=ROOT, env=environment(), capture_output=True, text=True)
    if listing.returncode:
        sys.exit(listing.stderr + f"dev.py: importing rbdyn failed (exit status {listing.returncode})")
    listing = listing.stdout.split()
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
    cache.mkdir(parents=True, exist_ok=True)
    done.write_text(key)
    print(f"dev.py: rbdyn's kernels compiled in {time.perf_counter() - start:.0f} s", flush=True)


def pytest(*args):
    """pytest with nbval: the unit tests and every page, one kernel per page on every core."""
    # --dist loadfile: the cells of one page run in order in one worker (one kernel)
    return call(BIN / "python", "-m", "pytest", "--nbval", "-n", workers(), "--dist", "loadfile", *args)


def build_book(args=()):
    """The strict Jupyter Book build into _build/html: pages not in the execution cache are
    executed (see book/_ext/rbdyn_cache.py); any warning or failed cell fails it."""
    return call(BIN / "jupyter-book", "build", ".", "-W", "-n", "--keep-going", *args)


def browser():
    # one Chromium per worker: a page's load, checks and full-page screenshot wait mostly on the
    # browser's process, so two workers take about two thirds of one's time
    return call(BIN / "python", "-m", "pytest", "tests/browser", "--book-html", HTML, "-n", workers())


def timed(label, fn, *args, **kwargs):
    start = time.perf_counter()
    status = fn(*args, **kwargs)
    print(f"dev.py: {label}: {'passed' if status == 0 else 'FAILED'} in {time.perf_counter() - start:.0f} s",
          flush=True)
    return status


def book(args):
    start = time.perf_counter()
    prune_caches()
    precompile()
    status = timed("book built (jupyter-book build -W -n --keep-going)", build_book, args)
    print(f"dev.py book: {'FAILED' if status else 'passed'} in {time.perf_counter() - start:.0f} s "
          f"(HTML in {HTML / 'index.html'})", flush=True)
    return status


def test(args):
    if args:  # only pytest, with the given arguments
        return call(BIN / "python", "-m", "pytest", "--nbval", *args)
    start = time.perf_counter()
    prune_caches()
    precompile()
    statuses = [
        timed("unit tests and every page (pytest --nbval)", pytest),
        timed("book built (jupyter-book build -W -n --keep-going)", build_book),
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


COMMANDS = {"book": book, "test": test, "lab": lab}


def main(argv):
    if not argv or argv[0] not in COMMANDS:
        sys.exit(__doc__)
    ensure_venv()
    sys.exit(COMMANDS[argv[0]](argv[1:]))


if __name__ == "__main__":
    main(sys.argv[1:])
