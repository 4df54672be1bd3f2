"""Sphinx extension: the validation matrix of the book, made from the pages' own acceptance checks.

Every page's acceptance cell calls :func:`rbdyn.verify.check`, which asserts the check and, when the
environment variable ``RBDYN_CHECKS_DIR`` is set, writes the page's records to
``$RBDYN_CHECKS_DIR/<page>.json``. ``rbdyn_cache.py`` points that variable into the book's
execution cache, so a page taken from the cache keeps the records of the run that filled it.
Sphinx executes a page (or takes it from the cache) while it *reads* it; the ``validation-matrix``
directive leaves a placeholder that is filled when the doctrees are *resolved*, after every page
has been read: a summary with one row per page and one column per scheme (the checks passed of
those made, and the smallest margin, tolerance over measured value), linking to each page's
acceptance section, then each page's checks in full, folded. The pages holding a matrix are
written again on every build (``env-updated``), even when only another page was read again. The
same records are written to ``validation-matrix.json`` in the HTML output, under the stamp of the
code that made them (``stamp.py``), so that a release can be compared with the previous one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

_CSS = """
table.rbdyn-matrix { font-size: 0.8em; border-collapse: collapse; }
table.rbdyn-matrix td, table.rbdyn-matrix th { padding: 0.15em 0.4em; white-space: nowrap; }
table.rbdyn-matrix td.rbdyn-pass { background: #d8f0d8; }
table.rbdyn-matrix td.rbdyn-fail { background: #f6d0d0; font-weight: bold; }
div.rbdyn-matrix-wrap { overflow-x: auto; max-width: 100%; }
"""


class matrix_placeholder(nodes.General, nodes.Element):
    """Replaced by the matrix once every page has been executed."""


class ValidationMatrix(SphinxDirective):
    has_content = False

    def run(self):
        return [matrix_placeholder()]


def _records(app):
    folder = os.environ.get("RBDYN_CHECKS_DIR")
    if not folder or not Path(folder).is_dir():
        return []
    out = []
    for path in sorted(Path(folder).glob("*.json")):
        out.extend(json.loads(path.read_text(encoding="utf-8")))
    return out


def _fmt(x):
    return "0" if x == 0 else f"{x:.2g}"


def margin(record):
    """How far a check is from failing: its tolerance over its measured value (``inf`` for a
    measured 0 under a positive tolerance); ``None`` for a yes/no check (tolerance 0), which has
    no margin; below 1 for a failed check."""
    tol, got = record["tolerance"], record["measured"]
    if tol == 0:
        return None
    return float("inf") if got == 0 else tol / got


def _margin_text(value):
    if value is None:
        return ""
    if value == float("inf"):
        return "×∞"
    text = f"{value:.2g}" if value < 100 else f"{value:.0e}"
    return "×" + text.replace("e+0", "e").replace("e+", "e")


def _table(cols, rows, classes=("rbdyn-matrix",)):
    """A docutils table: ``rows`` are lists of (node or text, classes) per column."""
    table = nodes.table(classes=list(classes))
    group = nodes.tgroup(cols=len(cols))
    table += group
    for _ in cols:
        group += nodes.colspec(colwidth=1)
    head = nodes.thead()
    group += head
    hrow = nodes.row()
    for c in cols:
        hrow += nodes.entry("", nodes.paragraph(text=c))
    head += hrow
    body = nodes.tbody()
    group += body
    for cells in rows:
        row = nodes.row()
        for content, cls in cells:
            para = content if isinstance(content, nodes.paragraph) else nodes.paragraph(text=content)
            row += nodes.entry("", para, classes=list(cls))
        body += row
    wrap = nodes.container(classes=["rbdyn-matrix-wrap"])
    wrap += table
    return wrap


def _link(app, fromdocname, doc, title, anchor=""):
    uri = app.builder.get_relative_uri(fromdocname, doc) + (f"#{anchor}" if anchor else "")
    return nodes.paragraph("", "", nodes.reference("", title, internal=True, refuri=uri))


def _acceptance_anchor(app, doc):
    """The id of the page's "Acceptance" section, where its checks are made ("" if none)."""
    try:
        doctree = app.env.get_doctree(doc)
    except Exception:  # a page Sphinx did not keep: link to its top
        return ""
    for section in doctree.findall(nodes.section):
        if section.children and section[0].astext().strip().lower() == "acceptance" and section["ids"]:
            return section["ids"][0]
    return ""


def _matrix(app, fromdocname, records):
    """The summary (one row per page, one column per scheme: checks passed of made, the smallest
    margin) and, per page, the full list of its checks folded in a dropdown."""
    schemes = sorted({r["scheme"] for r in records if r["scheme"]}, key=_scheme_order(app))
    cols = schemes + ["(set-up)"]
    by_page = {}
    for r in records:
        by_page.setdefault(r["page"], []).append(r)
    order = {doc: k for k, doc in enumerate(_toc_order(app))}
    docs = {page: _docname(app, page) for page in by_page}
    pages = sorted(by_page, key=lambda page: (order.get(docs[page], 1e9), page))

    def title(page):
        doc = docs[page]
        return app.env.titles[doc].astext() if doc in app.env.titles else page

    summary_rows = []
    for page in pages:
        doc = docs[page]
        link = nodes.paragraph(text=title(page)) if doc is None else \
            _link(app, fromdocname, doc, title(page), _acceptance_anchor(app, doc))
        row = [(link, ())]
        for c in cols:
            mine = [r for r in by_page[page] if (r["scheme"] or "(set-up)") == c]
            if not mine:
                row.append(("", ()))
                continue
            passed = sum(r["passed"] for r in mine)
            margins = [m for m in (margin(r) for r in mine) if m is not None]
            text = f"{passed}/{len(mine)}" + (f" {_margin_text(min(margins))}" if margins else "")
            row.append((text, ("rbdyn-pass" if passed == len(mine) else "rbdyn-fail",)))
        summary_rows.append(row)
    out = [_table(["benchmark"] + cols, summary_rows)]
    note = nodes.paragraph(text=f"{sum(r['passed'] for r in records)} of {len(records)} checks passed on "
                                f"{len(pages)} pages. A cell: the checks passed of those made, and the smallest "
                                "margin among them (tolerance ÷ measured value; yes/no checks have none).")
    out.insert(0, note)
    for page in pages:
        rows = {}
        for r in by_page[page]:
            rows.setdefault(r["name"], {})[r["scheme"] or "(set-up)"] = r
        detail_rows = []
        for name, cells in rows.items():
            row = [(name, ())]
            for c in cols:
                r = cells.get(c)
                if r is None:
                    row.append(("", ()))
                    continue
                text = f"{_fmt(r['measured'])} ≤ {_fmt(r['tolerance'])} {_margin_text(margin(r))}".rstrip()
                row.append((text, ("rbdyn-pass" if r["passed"] else "rbdyn-fail",)))
            detail_rows.append(row)
        mine = by_page[page]
        failed = sum(not r["passed"] for r in mine)
        fold = nodes.admonition(classes=["dropdown", "rbdyn-matrix-page"])
        fold += nodes.title(text=f"{title(page)}: {len(mine)} checks, "
                                 + ("all passed" if not failed else f"{failed} FAILED"))
        fold += _table(["check"] + cols, detail_rows)
        out.append(fold)
    return out


def _scheme_order(app):
    try:
        import rbdyn

        names = list(rbdyn.schemes())
    except Exception:  # the book cannot build without rbdyn anyway
        names = []
    return lambda s: (names.index(s) if s in names else len(names), s)


def _toc_order(app):
    """Document names in the order of the table of contents (depth first)."""
    site_map = getattr(app.env, "external_site_map", None) or getattr(app.config, "external_site_map", None)
    if site_map is None:
        return sorted(app.env.found_docs)
    order = []

    def walk(docname):
        if docname in order or docname not in site_map:
            return
        order.append(docname)
        for item in site_map[docname].child_files():
            walk(item)

    walk(site_map.root.docname)
    return order + sorted(set(app.env.found_docs) - set(order))


def _docname(app, page):
    """The document a check's page names: ``validation/pendulum`` is ``book/validation/pendulum``."""
    for candidate in (page, f"book/{page}"):
        if candidate in app.env.found_docs:
            return candidate
    return None


def _note_matrix(app, doctree):
    if any(doctree.findall(matrix_placeholder)):
        _matrix_docs(app.env).add(app.env.docname)


def _matrix_docs(env):
    if not hasattr(env, "rbdyn_matrix_docs"):
        env.rbdyn_matrix_docs = set()
    return env.rbdyn_matrix_docs


def _purge(app, env, docname):
    _matrix_docs(env).discard(docname)


def _merge(app, env, docnames, other):
    _matrix_docs(env).update(_matrix_docs(other) & set(docnames))


def _rewrite_matrix(app, env):
    """The pages with a matrix, written again with the records of this build."""
    return sorted(_matrix_docs(env) & env.found_docs)


def _resolve(app, doctree, fromdocname):
    placeholders = list(doctree.findall(matrix_placeholder))
    if not placeholders:
        return
    records = _records(app)
    for node in placeholders:
        if not records:
            node.replace_self(nodes.paragraph(text="(no acceptance checks were recorded: RBDYN_CHECKS_DIR unset)"))
            continue
        node.replace_self(_matrix(app, fromdocname, records))


def _write_outputs(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    records = _records(app)
    from stamp import load_stamp  # the stamp of the code, as under every page (book/_ext/stamp.py)

    document = {"stamp": load_stamp().stamp(), "records": records}
    Path(app.outdir, "validation-matrix.json").write_text(json.dumps(document, indent=1), encoding="utf-8")
    static = Path(app.outdir, "_static")
    static.mkdir(exist_ok=True)
    (static / "rbdyn-matrix.css").write_text(_CSS, encoding="utf-8")


def setup(app):
    app.add_node(matrix_placeholder)
    app.add_directive("validation-matrix", ValidationMatrix)
    app.connect("doctree-read", _note_matrix)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-updated", _rewrite_matrix)
    app.connect("doctree-resolved", _resolve)
    app.connect("build-finished", _write_outputs)
    app.add_css_file("rbdyn-matrix.css")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
