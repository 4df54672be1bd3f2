"""Sphinx extension: what a reader of a page needs to run it, download it and read its tables.

For every executed page (a MyST notebook) this extension

* adds a collapsed "Run this page yourself" box under the title: the command that opens the page
  as a notebook (``python3.11 dev.py lab``), the one that runs it as a test, and how long its
  cells took when this book was built (myst-nb's execution record of the page);
* offers the page as ``.ipynb``, with the outputs of this build, next to the ``.md`` source in the
  theme's download menu (the executed notebook myst-nb wrote, copied to ``_sources/``);
* adds a launch button that opens the page in the JupyterLab of ``dev.py lab``
  (``http://localhost:8888``); the book itself loads nothing from any server;
* lets wide tables scroll inside the text column instead of spilling out of the page;
* includes every script of a page once: jupyter-book 1.0.4 with Sphinx 7.4 emits the inline
  scripts of sphinx-thebe and sphinx-togglebutton twice, and the second ``const THEBE_JS_URL``
  is a SyntaxError in the console of every page.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from docutils import nodes

LAB_URL = "http://localhost:8888/lab/tree/"

_CSS = """
/* wide tables scroll inside the text column (the page itself never scrolls sideways) */
.bd-article table { display: block; max-width: 100%; overflow-x: auto; }
.bd-article table.rbdyn-matrix, .bd-article .rbdyn-matrix-wrap table { display: table; }
div.rbdyn-run-yourself p { margin-bottom: 0.4em; }
"""


def _runtime(env, docname):
    try:
        from myst_nb.sphinx_ import NbMetadataCollector

        data = NbMetadataCollector.get_exec_data(env, docname) or {}
    except (ImportError, KeyError):
        return None
    return data.get("runtime")


def _is_notebook(env, docname):
    try:
        from myst_nb.sphinx_ import NbMetadataCollector

        return NbMetadataCollector.get_exec_data(env, docname) is not None
    except (ImportError, KeyError):
        return False


def _duration(seconds):
    if seconds < 10:
        return "a few seconds"
    if seconds < 90:
        return f"about {5 * round(seconds / 5):.0f} s"
    return f"about {seconds / 60:.0f} min" if seconds >= 150 else f"about {seconds / 60:.1f} min"


def _paragraph(*parts):
    para = nodes.paragraph()
    for part in parts:
        para += nodes.literal(text=part[1:-1]) if part.startswith("`") else nodes.Text(part)
    return para


def _add_run_box(app, doctree):
    env = app.env
    docname = env.docname
    if not _is_notebook(env, docname):
        return
    source = Path(env.doc2path(docname)).relative_to(app.srcdir).as_posix()
    box = nodes.admonition(classes=["tip", "dropdown", "rbdyn-run-yourself"])
    box += nodes.title(text="Run this page yourself")
    box += _paragraph("From a clone of rbdyn, ", "`python3.11 dev.py lab`",
                      " opens JupyterLab in the book's pinned environment; there, open ", f"`{source}`",
                      " (it opens as a notebook), change what you like and run all cells. ",
                      "As a test, with its acceptance checks: ", f"`python3.11 dev.py test {source}`", ".")
    runtime = _runtime(env, docname)
    if runtime is not None:
        cores = os.cpu_count() or 1
        box += _paragraph(f"Its cells took {_duration(runtime)} ({runtime:.0f} s) when this book was built, "
                          f"on a machine with {cores} core{'s' if cores > 1 else ''} that ran pages side by side.")
    sections = list(doctree.findall(nodes.section))
    if sections and sections[0].children and isinstance(sections[0][0], nodes.title):
        sections[0].insert(1, box)
    else:
        doctree.insert(0, box)


def _page_context(app, pagename, templatename, context, doctree):
    if doctree is None or not _is_notebook(app.env, pagename):
        return
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if executed.exists():
        target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(executed, target)
        context["ipynb_source"] = f"{pagename}.ipynb"
    source = Path(app.env.doc2path(pagename)).relative_to(app.srcdir).as_posix()
    context.setdefault("header_buttons", []).append({
        "type": "group",
        "tooltip": "Launch this page",
        "icon": "fas fa-rocket",
        "label": "launch-buttons",
        "buttons": [{
            "type": "link",
            "url": LAB_URL + source,
            "text": "JupyterLab (python3.11 dev.py lab)",
            "tooltip": "Open this page as a notebook in the JupyterLab that `python3.11 dev.py lab` starts",
            "icon": "fas fa-rocket",
            "label": "launch-jupyterlab-button",
        }],
    })


def _dedupe_scripts(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for js in scripts:
        # by what the tag will say: a script object's str() is its address in some builds
        filename = getattr(js, "filename", js)
        attributes = getattr(js, "attributes", {}) or {}
        key = (str(filename or ""), tuple(sorted((k, str(v)) for k, v in attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    scripts[:] = unique


def _write_css(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir, "_static")
    static.mkdir(exist_ok=True)
    (static / "rbdyn-reader.css").write_text(_CSS, encoding="utf-8")


def setup(app):
    app.connect("doctree-read", _add_run_box)
    # after the theme's prep_header_buttons (priority 500, registered first) and before its
    # add_header_buttons (501), which reads ipynb_source
    app.connect("html-page-context", _page_context, priority=500)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    app.connect("build-finished", _write_css)
    app.add_css_file("rbdyn-reader.css")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
