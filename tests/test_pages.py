"""The book's pages as sources: what nbval runs is what the book shows, and helpers are written once.

* jupytext (which converts a page for nbval, see ``conftest.py``) finds every code cell the page
  declares: a fenced block inside a directive (a backtick fence in a header box, say) can make
  it read a code cell as Markdown, and nbval would then skip it while the book runs it.
* No function or class is defined on two pages: a helper that two pages need lives in
  :mod:`rbdyn.verify` (or is a different thing and gets its own name).
* Every page that checks something ends in its acceptance cell, and every page whose code
  calls ``Tolerances`` shows the tolerance table in its header box.
"""

import ast
import collections
import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
TOC = (ROOT / "_toc.yml").read_text(encoding="utf-8")

def _is_notebook(page):
    """A MyST notebook page: front matter with ``jupytext`` and ``kernelspec`` (as dev.py reads it)."""
    head = page.read_text(encoding="utf-8").split("\n---", 1)[0]
    return "\njupytext:" in head and "\nkernelspec:" in head


PAGES = [p for p in sorted(ROOT / f"{m}.md" for m in re.findall(r"(?:file|root):\s*(\S+)", TOC)) if _is_notebook(p)]


def _declared_cells(text):
    """The ``{code-cell}`` fences of a page at its top level (not those shown inside an example
    fenced with more backticks)."""
    count, outer = 0, None
    for line in text.splitlines():
        fence = re.match(r"^(`{3,})", line)
        if outer is None and fence:
            outer = fence.group(1)
            count += line.startswith("```{code-cell}") and len(outer) == 3
        elif outer is not None and line.rstrip() == outer:
            outer = None
    return count


def _code_cells(page):
    return [c.source for c in jupytext.read(page).cells if c.cell_type == "code"]


def _without_magics(source):
    return "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_jupytext_reads_every_code_cell(page):
    assert len(_code_cells(page)) == _declared_cells(page.read_text(encoding="utf-8"))


def test_no_function_is_defined_on_two_pages():
    where = collections.defaultdict(set)
    for page in PAGES:
        for source in _code_cells(page):
            for node in ast.walk(ast.parse(_without_magics(source))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    where[node.name].add(page.relative_to(ROOT).as_posix())
    # (special methods such as __init__ belong to their class, not to the page)
    twice = {name: sorted(pages) for name, pages in where.items() if len(pages) > 1 and not name.startswith("__")}
    assert not twice, f"defined on more than one page (move to rbdyn.verify, or name each for what it is): {twice}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_tolerances_are_shown_in_the_header_box_and_checked_last(page):
    text = page.read_text(encoding="utf-8")
    cells = _code_cells(page)
    if not any("verify.Tolerances(" in c for c in cells):
        return
    assert re.search(r"^:::\{glue:md\} \w*tol_table", text, re.MULTILINE) or "{glue:md} " in text
    assert re.search(r"\bcheck(_true)?\(", cells[-1]), "the last cell is the acceptance cell"
