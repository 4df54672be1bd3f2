"""The benchmarks run from a checkout of rbdyn: numba's cache of its kernels keyed by its sources.

numba keys a cached function by its own file alone, so after an edit elsewhere in rbdyn (the run
driver, a constraint kind) a kernel loaded from numba's default cache (``__pycache__`` next to the
sources) would be the one compiled before the edit. ``dev.py`` keeps a cache folder per digest of
rbdyn's sources (``.cache/numba/<digest>``); the benchmarks use the same folder, so that they time
the code they are run with and share the kernels the tests and the book compiled.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

__all__ = ["use_numba_cache"]


def use_numba_cache(environ=os.environ) -> Path | None:
    """Set ``NUMBA_CACHE_DIR`` in ``environ`` as ``dev.py`` does, unless it is set or this is not a
    checkout; call it before numba is imported. Returns the folder, or None."""
    if environ.get("NUMBA_CACHE_DIR"):
        return Path(environ["NUMBA_CACHE_DIR"])
    dev_py = ROOT / "dev.py"
    if not dev_py.exists():
        return None
    spec = importlib.util.spec_from_file_location("rbdyn_dev", dev_py)  # dev.py is standard library only
    dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev)
    return dev.use_numba_cache(environ)
