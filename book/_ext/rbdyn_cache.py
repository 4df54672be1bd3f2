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
  Sphinx re-reads only the pages whose source changed;
* sets ``RBDYN_CHECKS_DIR`` to the folder's ``checks/``, where each page's acceptance cell
  (``rbdyn.verify.check``) writes its records for the validation matrix: the records of a page
  are kept as long as its executed notebook, and a page taken from the cache keeps its records;
* sets ``NUMBA_CACHE_DIR`` to ``.cache/numba/<digest>/`` unless it is set (as ``dev.py`` and
  ``conftest.py`` do), so that the pages' kernels find rbdyn's compiled kernels.

The kernels myst-nb starts inherit these variables. When the build finishes, it logs which pages
were executed in this build (the cache's records created since it started).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from sphinx.util import logging

ROOT = Path(__file__).resolve().parents[2]
logger = logging.getLogger(__name__)


def _dev():
    """dev.py (standard library only), loaded by its path: the one definition of the caches' key."""
    spec = importlib.util.spec_from_file_location("rbdyn_dev", ROOT / "dev.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _config_inited(app, config):
    dev = _dev()
    digest = dev.short_digest()
    dev.use_numba_cache(os.environ, digest)
    cache = dev.book_cache(digest)
    checks = cache / "checks"
    checks.mkdir(parents=True, exist_ok=True)
    os.environ["RBDYN_CHECKS_DIR"] = str(checks)
    config.nb_execution_cache_path = str(cache)
    app.rbdyn_cache = {"digest": digest, "path": cache, "before": {}}
    logger.info(f"rbdyn: sources digest {digest}; execution cache {cache}; numba cache {os.environ['NUMBA_CACHE_DIR']}")


def _records(path):
    from jupyter_cache import get_cache

    return {record.pk: (record.uri, record.created) for record in get_cache(str(path)).list_cache_records()}


def _builder_inited(app):
    app.rbdyn_cache["before"] = _records(app.rbdyn_cache["path"])


def _build_finished(app, exception):
    before = app.rbdyn_cache["before"]
    executed = sorted(Path(uri).relative_to(ROOT).as_posix() if Path(uri).is_relative_to(ROOT) else uri
                      for pk, (uri, created) in _records(app.rbdyn_cache["path"]).items()
                      if before.get(pk, (None, None))[1] != created)
    logger.info(f"rbdyn: {len(executed)} page(s) executed in this build"
                + "".join(f"\n  {page}" for page in executed))


def setup(app):
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _builder_inited)
    app.connect("build-finished", _build_finished)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
