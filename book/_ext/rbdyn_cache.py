"""Sphinx extension: the book's execution cache, keyed by each page and by rbdyn's sources.

The book is built with ``execute_notebooks: cache`` (myst-nb and jupyter-cache): a page is
executed only when no executed notebook with the same code is in the cache. That alone would keep
showing numbers of an older rbdyn, so the cache is one folder per digest of rbdyn's sources
(``_build/.jupyter_cache/<digest>/``, ``dev.short_digest``): any change to a file of rbdyn starts
an empty cache, and every page is executed again.

When the build starts (``config-inited``), this extension

* sets ``nb_execution_cache_path`` to that folder. myst-nb declares its settings as changing
  Sphinx's environment, so a new folder makes Sphinx read every page again, and the pages it
  re-reads take their outputs from the new cache (or are executed into it); with the same digest
  Sphinx re-reads only the pages whose source changed (and every page if the cache is empty);
* sets ``RBDYN_CHECKS_DIR`` to the folder's ``checks/``, where each page's acceptance cell
  (``rbdyn.verify.check``) writes its records for the validation matrix: the records of a page
  are kept as long as its executed notebook, and a page taken from the cache keeps its records;
* sets ``NUMBA_CACHE_DIR`` to ``.cache/numba/<digest>/`` and ``MATPLOTLIBRC`` to the book's
  figure style unless they are set (``dev.page_environment``, as ``dev.py`` and ``conftest.py``
  do), so that the pages' kernels find rbdyn's compiled kernels and draw the book's figures.

The kernels myst-nb starts inherit these variables.

myst-nb executes the pages one after the other, as Sphinx reads them. So before Sphinx reads the
pages it is about to read (``env-before-read-docs``), the notebooks among them that the cache does
not hold are executed into the cache in parallel, one process per core, by jupyter-cache's
``local-parallel`` executor. They are read with myst-nb's own reader for jupyter-cache
(``myst_nb_md``, the one myst-nb records its pages with), so they have the very hashes myst-nb
looks up: reading them, myst-nb takes every one from the cache. A page that fails there is left
out of the cache, and myst-nb executes it again while reading, which fails the build with that
page's error. When the build finishes, the extension logs which pages were executed in this build.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from sphinx.util import logging

ROOT = Path(__file__).resolve().parents[2]
logger = logging.getLogger(__name__)
# this build's cache: dev.py, the digest, the folder, its records when the build started, the
# pages executed in parallel
_state = {}


def _dev():
    """dev.py (standard library only), loaded by its path: the one definition of the caches' key."""
    spec = importlib.util.spec_from_file_location("rbdyn_dev", ROOT / "dev.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _config_inited(app, config):
    dev = _dev()
    digest = dev.short_digest()
    dev.page_environment(os.environ, digest)
    cache = dev.book_cache(digest)
    checks = cache / "checks"
    checks.mkdir(parents=True, exist_ok=True)
    os.environ["RBDYN_CHECKS_DIR"] = str(checks)
    config.nb_execution_cache_path = str(cache)
    _state.update(dev=dev, digest=digest, path=cache, before={}, parallel=[])
    logger.info(f"rbdyn: sources digest {digest}; execution cache {cache}; numba cache {os.environ['NUMBA_CACHE_DIR']}")


def _records(path):
    from jupyter_cache import get_cache

    return {record.pk: (record.uri, record.created) for record in get_cache(str(path)).list_cache_records()}


def _builder_inited(app):
    _state["before"] = _records(_state["path"])


def _reread_into_empty_cache(app, env, added, changed, removed):
    """An empty cache (deleted, say) with Sphinx's environment kept: read every page again, or the
    book would keep outputs that are in no cache and lose their acceptance records."""
    if not _state["before"]:
        return sorted(env.found_docs - added - changed)
    return []


def _execute_in_parallel(app, env, docnames):
    """Execute the notebooks about to be read that the cache does not hold, in parallel."""
    processes = os.cpu_count() or 1
    if app.config.nb_execution_mode != "cache" or processes < 2:
        return
    from jupyter_cache import get_cache
    from jupyter_cache.executors import load_executor

    cache = get_cache(str(_state["path"]))
    sources = [Path(env.doc2path(docname)) for docname in sorted(docnames)]
    pks = [cache.add_nb_to_project(str(source), read_data={"name": "myst_nb_md", "type": "plugin"}).pk
           for source in sources if source.suffix == ".md" and _state["dev"].is_myst_notebook(source)]
    todo = [record.pk for record in cache.list_unexecuted(filter_pks=pks)]
    if len(todo) < 2:  # myst-nb executes it while reading it
        return
    logger.info(f"rbdyn: executing {len(todo)} page(s) into the cache, {processes} at a time")
    result = load_executor("local-parallel", cache=cache).run_and_cache(
        filter_pks=todo, timeout=app.config.nb_execution_timeout, allow_errors=app.config.nb_execution_allow_errors)
    _state["parallel"] = result.succeeded
    failed = result.excepted + result.errored
    if failed:  # executed again while read: the build then fails with the page's error
        logger.info("rbdyn: these pages failed: " + ", ".join(failed))


def _build_finished(app, exception):
    before = _state["before"]
    executed = sorted(uri for pk, (uri, created) in _records(_state["path"]).items()
                      if before.get(pk, (None, None))[1] != created)
    parallel = set(_state["parallel"])

    def name(uri):
        return Path(uri).relative_to(ROOT).as_posix() if Path(uri).is_relative_to(ROOT) else uri

    logger.info(f"rbdyn: {len(executed)} page(s) executed in this build"
                + (f", {len(parallel)} of them in parallel before Sphinx read them" if parallel else "")
                + "".join(f"\n  {name(uri)}" for uri in executed))


def setup(app):
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _builder_inited)
    app.connect("env-get-outdated", _reread_into_empty_cache)
    app.connect("env-before-read-docs", _execute_in_parallel)
    app.connect("build-finished", _build_finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
