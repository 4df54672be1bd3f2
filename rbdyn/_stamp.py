"""The stamp of the code: rbdyn's version, a digest of its sources, and the versions around it.

Standard library only, so that the development tools (``dev.py``, ``conftest.py``, the book's
Sphinx extensions) can load this file by its path without importing rbdyn or numpy.

:func:`sources_digest` is the one digest of rbdyn's sources: ``rbdyn --version`` prints it, every
page of the book shows it, the book's execution cache and numba's kernel cache of the
development tools are keyed by it. It covers every file of the package that can change a result
(Python sources, built-in scenarios, the literature table, the figure style), by path and content.
"""

from __future__ import annotations

import hashlib
import os
import platform
from importlib import metadata
from pathlib import Path

__all__ = ["PACKAGE", "package_version", "sources_digest", "short_digest", "versions", "machine", "stamp"]

#: The package directory (``rbdyn/``).
PACKAGE = Path(__file__).resolve().parent
#: The files that make up rbdyn's sources (a compiled cache or bytecode is not a source).
SOURCE_SUFFIXES = (".py", ".toml", ".mplstyle")
#: How many hex digits of the digest are shown and used to name caches.
SHORT = 16
#: The packages whose versions the stamp reports, besides Python.
DEPENDENCIES = ("numpy", "scipy", "sympy", "numba", "matplotlib")


def package_version(package: Path = PACKAGE) -> str:
    """rbdyn's ``__version__``, read from the text of its ``__init__.py`` (nothing is imported)."""
    for line in (package / "__init__.py").read_text(encoding="utf-8").splitlines():
        if line.startswith("__version__"):
            return line.split("=", 1)[1].strip().strip("\"'")
    return "unknown"


def sources_digest(package: Path = PACKAGE) -> str:
    """SHA-256 (hex) of rbdyn's source files: each relative path and its bytes, in sorted order."""
    digest = hashlib.sha256()
    files = sorted(p for p in package.rglob("*")
                   if p.suffix in SOURCE_SUFFIXES and p.is_file() and "__pycache__" not in p.parts)
    for path in files:
        digest.update(path.relative_to(package).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def short_digest(package: Path = PACKAGE) -> str:
    """The first :data:`SHORT` hex digits of :func:`sources_digest`."""
    return sources_digest(package)[:SHORT]


def versions() -> dict[str, str]:
    """Python's version and those of :data:`DEPENDENCIES` ("not installed" where missing),
    read from the installed distributions' metadata (nothing is imported)."""
    out = {"python": platform.python_version()}
    for name in DEPENDENCIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def machine() -> dict[str, object]:
    """The processor's model name (Linux: ``/proc/cpuinfo``) and the number of cores."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count() or 1}


def stamp(package: Path = PACKAGE) -> dict[str, object]:
    """Everything above in one record: rbdyn's version, the short digest of its sources, the
    versions of Python and the libraries, the processor and its cores."""
    return {"rbdyn": package_version(package), "sources": short_digest(package), **versions(), **machine()}
