"""The browser test of the built book: every HTML page opened in headless Chromium.

Run it from the repository root after ``python3.11 dev.py book``::

    pytest tests/browser --book-html _build/html

Without ``--book-html`` nothing here is collected, so ``pytest --nbval`` from the root never runs
(nor needs) a browser; naming ``tests/browser`` without the option is a usage error instead of an
empty run. With the option, a missing book or a missing browser is one failed test whose message
says what to do: the test never passes (or skips) on a machine that cannot run it.

The browser is the system's Chromium (Debian: ``apt-get install chromium``), driven by
pytest-playwright with ``executable_path``; no Playwright browser download is needed. Set
``RBDYN_CHROMIUM`` to use another Chromium/Chrome executable.

The built HTML is served over http on 127.0.0.1 (a free port, one server per session); every
request the pages make to any other host is blocked and reported as a failure.
"""

import functools
import http.server
import os
import re
import shutil
import sys
import threading
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

OPTION = "--book-html"

BOOK_MISSING = (
    "{dir}: {problem}. Build the book first: python3.11 dev.py book "
    "(then run: pytest tests/browser --book-html _build/html)"
)
BROWSER_MISSING = (
    "Chromium was not found ({looked}). The browser test drives the system's Chromium through "
    "Playwright (no Playwright browser download): install it with `apt-get install chromium` "
    "(Debian/Ubuntu; .ci/run installs it when it is missing), or set RBDYN_CHROMIUM to a "
    "Chromium or Chrome executable."
)

# Chromium flags for a headless run as root on a machine without network: no sandbox (root), no
# GPU, and none of the background services that try to reach Google.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--metrics-recording-only",
    "--mute-audio",
]

# Output directories of Sphinx that are not pages (_static holds template fragments, *.html too).
NOT_PAGES = {"_static", "_sources", "_images", "_downloads"}

_PROBLEMS = pytest.StashKey[list]()
_CLEANED = pytest.StashKey[bool]()


# --------------------------------------------------------------------------- option, collection


def pytest_addoption(parser):
    try:
        parser.addoption(
            OPTION,
            metavar="DIR",
            default=None,
            help="run the browser test (tests/browser) on the built book in DIR, e.g. _build/html",
        )
    except ValueError:  # already declared (by the root conftest.py, for runs from the root)
        pass


def _book_html(config):
    value = config.getoption("book_html", default=None)
    return None if value is None else (config.invocation_params.dir / value).resolve()


def pytest_configure(config):
    if _book_html(config) is not None:
        return
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        if path == HERE or HERE in path.parents:
            raise pytest.UsageError(
                f"{arg}: the browser test needs {OPTION} DIR (the built book), e.g. "
                f"pytest tests/browser {OPTION} _build/html   (build it with: python3.11 dev.py book)"
            )


def pytest_ignore_collect(collection_path, config):
    # Only consulted for paths below this directory.
    if _book_html(config) is None and collection_path.name != "conftest.py":
        return True
    return None


# --------------------------------------------------------------------------- pages, prerequisites


def discover_pages(root):
    """Every HTML page of the build, as paths relative to ``root`` with '/' separators, sorted."""
    pages = []
    for path in root.rglob("*.html"):
        rel = path.relative_to(root)
        if rel.parts[0] in NOT_PAGES or any(part.startswith(".") for part in rel.parts):
            continue
        pages.append(rel.as_posix())
    return sorted(pages)


def find_chromium():
    """(path or None, description of where it looked)."""
    explicit = os.environ.get("RBDYN_CHROMIUM")
    if explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return explicit, ""
        return None, f"RBDYN_CHROMIUM={explicit} is not an executable file"
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found, ""
    fallback = "/usr/bin/chromium"
    if os.path.isfile(fallback) and os.access(fallback, os.X_OK):
        return fallback, ""
    return None, "no chromium or chromium-browser on PATH, no /usr/bin/chromium"


def pytest_generate_tests(metafunc):
    """One test per page (id = its path in the build), or one failing "prerequisites" test."""
    if "page_path" not in metafunc.fixturenames:
        return
    config = metafunc.config
    root = _book_html(config)
    problems = []
    pages = []
    if not root.is_dir():
        problems.append(BOOK_MISSING.format(dir=root, problem="no such directory"))
    else:
        pages = discover_pages(root)
        if not pages:
            problems.append(BOOK_MISSING.format(dir=root, problem="no HTML page in it"))
    chromium, looked = find_chromium()
    if chromium is None:
        problems.append(BROWSER_MISSING.format(looked=looked))
    config.stash[_PROBLEMS] = problems
    if problems:
        metafunc.parametrize("page_path", [pytest.param(None, id="prerequisites")])
    else:
        metafunc.parametrize("page_path", pages, ids=pages)


@pytest.fixture(scope="session")
def prerequisite_problems(pytestconfig):
    """What is missing to run the browser test (the book, the browser), as messages; [] if nothing."""
    return list(pytestconfig.stash.get(_PROBLEMS, []))


# --------------------------------------------------------------------------- server, browser


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature of the base class
        pass


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # The browser drops connections when a test closes its context: not an error of the book.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@pytest.fixture(scope="session")
def book_html(pytestconfig):
    return _book_html(pytestconfig)


@pytest.fixture(scope="session")
def book_server(book_html):
    """Base URL (ending in '/') of an http server on 127.0.0.1 serving the built book."""
    handler = functools.partial(_QuietHandler, directory=str(book_html))
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="book-http", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture(scope="session")
def base_url(book_server):
    """pytest-playwright's base URL (page.goto("book/intro.html") works): the book's server."""
    return book_server


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args, browser_name):
    """pytest-playwright's launch arguments (--headed, --slowmo, ...) plus the system Chromium."""
    if browser_name != "chromium":
        pytest.fail(f"the browser test runs Chromium only, not --browser {browser_name}", pytrace=False)
    chromium, looked = find_chromium()
    if chromium is None:
        pytest.fail(BROWSER_MISSING.format(looked=looked), pytrace=False)
    args = list(browser_type_launch_args.get("args", [])) + CHROMIUM_ARGS
    return {**browser_type_launch_args, "executable_path": chromium, "args": args}


def _screenshot_root(config):
    return _book_html(config).parent / "screenshots"


def _remove_old_screenshots(config):
    target = _screenshot_root(config)
    if target.is_dir():
        for png in target.rglob("*.png"):
            png.unlink()
        for sub in sorted((p for p in target.rglob("*") if p.is_dir()), reverse=True):
            if not any(sub.iterdir()):
                sub.rmdir()
    config.stash[_CLEANED] = True


def pytest_sessionstart(session):
    """Remove the screenshots of an earlier run: here once (in the controller with xdist) when
    this conftest is loaded at startup; else by the screenshot_dir fixture (see there)."""
    config = session.config
    if _book_html(config) is not None and not hasattr(config, "workerinput"):
        _remove_old_screenshots(config)


@pytest.fixture(scope="session")
def screenshot_dir(pytestconfig):
    """``_build/screenshots``: next to the HTML directory given to --book-html."""
    # Not cleaned at startup (this conftest was loaded during collection): clean here, unless this
    # is an xdist worker, which would delete the screenshots the other workers already took.
    if not pytestconfig.stash.get(_CLEANED, False) and not hasattr(pytestconfig, "workerinput"):
        _remove_old_screenshots(pytestconfig)
    target = _screenshot_root(pytestconfig)
    target.mkdir(parents=True, exist_ok=True)
    return target
