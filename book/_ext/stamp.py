"""Sphinx extension: the stamp of the code under every page.

Every page ends in a small note saying what computed its numbers: rbdyn's version and the digest
of its sources (``rbdyn --version`` prints the same; the book's execution cache is keyed by it,
so after an edit to rbdyn every page is executed again and shows the new digest), the versions of
Python and the libraries, when the page was executed (myst-nb's record of the run the page's
outputs come from, which may be an earlier build's, from the cache) and on which processor. The
same stamp heads ``validation-matrix.json`` (``validation_matrix.py``).

The stamp is read from ``rbdyn/_stamp.py``, loaded by its path (standard library only).
"""

from __future__ import annotations

import datetime
import importlib.util
from pathlib import Path

from docutils import nodes

ROOT = Path(__file__).resolve().parents[2]

_CSS = """
div.rbdyn-stamp { margin-top: 2.5em; padding-top: 0.4em; border-top: 1px solid #ccc;
                  font-size: 0.75em; color: #666; }
div.rbdyn-stamp p { margin: 0; }
"""


def load_stamp():
    """rbdyn/_stamp.py as a module, loaded by its path."""
    spec = importlib.util.spec_from_file_location("rbdyn_stamp", ROOT / "rbdyn" / "_stamp.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _executed(env, docname):
    """When the page's outputs were computed (UTC), or None for a page without code."""
    try:
        from myst_nb.sphinx_ import NbMetadataCollector

        data = NbMetadataCollector.get_exec_data(env, docname)
    except (ImportError, KeyError):
        return None
    if not data or data.get("mtime") is None:
        return None
    return datetime.datetime.fromtimestamp(data["mtime"], tz=datetime.timezone.utc)


def stamp_text(stamp, executed):
    libs = ", ".join(f"{name} {stamp[name]}" for name in ("python", "numpy", "scipy", "sympy", "numba", "matplotlib"))
    when = (f"executed {executed:%Y-%m-%d %H:%M} UTC on {stamp['cpu']} ({stamp['cores']} cores)"
            if executed is not None else f"built on {stamp['cpu']} ({stamp['cores']} cores)")
    return f"rbdyn {stamp['rbdyn']}, sources {stamp['sources']} · {libs} · {when}"


def _add_stamp(app, doctree):
    stamp = load_stamp().stamp()
    note = nodes.container(classes=["rbdyn-stamp"])
    note += nodes.paragraph(text=stamp_text(stamp, _executed(app.env, app.env.docname)))
    doctree += note


def _write_css(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir, "_static")
    static.mkdir(exist_ok=True)
    (static / "rbdyn-stamp.css").write_text(_CSS, encoding="utf-8")


def setup(app):
    app.connect("doctree-read", _add_stamp)
    app.connect("build-finished", _write_css)
    app.add_css_file("rbdyn-stamp.css")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
