"""What a page of the validation manual shows: its tolerances, its tables and its glued numbers.

Written once for every page (and for a user's own page, see the chapter on adding a
benchmark), so that a page's code cells hold its problem and its checks, not its layout.

* :class:`Tolerances`: a page's acceptance tolerances, each declared once with its unit and
  its reason. The header box shows them (:meth:`Tolerances.table`, glued as ``<prefix>table``),
  the prose quotes them (glued as ``<prefix><name>``) and the acceptance cell checks against
  them (:meth:`Tolerances.check`): one declaration, three readers.
* :class:`Table`: a Markdown table built from columns and rows of values; displayed as
  Markdown by Jupyter and by the book (MyST, so cells may hold math). :func:`comparison`
  builds the manual's *Target / rbdyn / Ratio* table, :func:`convergence` a table of errors
  and orders from :func:`rbdyn.verify.fit_order`.
* :func:`put`, :func:`put_text`, :func:`put_markdown`: glue a number, a string or a piece of
  Markdown for the prose (myst-nb's ``glue``, imported when first used: outside a book build
  it only records the value in the cell's output).

Nothing here computes an expectation: the numbers come from the page.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from ._acceptance import Check, check

__all__ = ["Tolerance", "Tolerances", "Table", "comparison", "convergence", "put", "put_text", "put_markdown",
           "number"]


# -- glue --------------------------------------------------------------------------------------
def _glue(name: str, value) -> None:
    from myst_nb import glue  # only a page needs it; importing rbdyn.verify must not

    glue(name, value, display=False)


def put(name: str, value) -> None:
    """Glue a number for the prose, as a plain ``int`` or ``float`` (so that the prose's format
    spec, such as ``.2e`` after the key in a ``glue:text`` role, applies)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"put({name!r}, ...) takes a real number, got {type(value).__name__}; "
                        "use put_text or put_markdown")
    _glue(name, int(value) if isinstance(value, numbers.Integral) else float(value))


def put_text(name: str, text: str) -> None:
    """Glue a plain string (shown verbatim by a ``glue:text`` role)."""
    _glue(name, str(text))


def put_markdown(name: str, text: str) -> None:
    """Glue a piece of Markdown (code, math, links), shown by a ``glue:md`` role with the ``myst``
    format."""
    from IPython.display import Markdown

    _glue(name, Markdown(str(text)))


# -- numbers in cells --------------------------------------------------------------------------
def number(value, spec: str = ".6g") -> str:
    """A table cell for a number: ``spec`` for a finite one, ``0`` for zero, a dash for a
    missing one, ``nan``/``inf`` written out (a table never hides a failure)."""
    if value is None:
        return "–"
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    value = float(value)
    if value == 0.0:
        return "0"
    if not math.isfinite(value):
        return str(value)
    return format(value, spec)


# -- tables ------------------------------------------------------------------------------------
class Table:
    """A Markdown table.

    Parameters
    ----------
    columns : sequence of str
        The header cells (Markdown).
    rows : iterable of sequences, optional
        The rows, each as many cells as there are columns: strings are Markdown, numbers are
        written with ``spec`` (see :func:`number`).
    spec : str
        Format of the numeric cells.

    Examples
    --------
    >>> t = Table(["quantity", "value"])
    >>> t.add("period (s)", 2.3606)
    >>> print(t.markdown())
    | quantity | value |
    |---|---|
    | period (s) | 2.3606 |
    """

    def __init__(self, columns: Sequence[str], rows: Iterable[Sequence] = (), spec: str = ".6g"):
        self.columns = [str(c) for c in columns]
        self.spec = spec
        self.rows: list[list[str]] = []
        for row in rows:
            self.add(*row)

    def add(self, *cells) -> None:
        """Append a row."""
        if len(cells) != len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells in a table of {len(self.columns)} columns")
        self.rows.append([number(c, self.spec).replace("|", r"\|").replace("\n", " ") for c in cells])

    def markdown(self) -> str:
        """The table as Markdown."""
        lines = ["| " + " | ".join(self.columns) + " |", "|" + "---|" * len(self.columns)]
        lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def __str__(self) -> str:
        return self.markdown()

    def __len__(self) -> int:
        return len(self.rows)


def comparison(rows: Iterable[Sequence], labels: Sequence[str] = ("",), target: str = "Target",
               value: str = "rbdyn", spec: str = ".7g") -> Table:
    """The manual's results table: *Target / rbdyn / Ratio*.

    Parameters
    ----------
    rows : iterable of ``(*label_cells, target, value)``
        As many label cells as ``labels``; ``target`` a number (or a string, shown as given,
        with no ratio), ``value`` a number. The ratio is computed here, ``value / target``.
    labels : sequence of str
        The headers of the leading label columns (a quantity, a scheme, ...).
    target, value : str
        The headers of the two value columns.
    """
    labels = list(labels)
    table = Table([*labels, target, value, "Ratio"], spec=spec)
    for row in rows:
        *cells, expected, got = row
        ratio = None
        if not isinstance(expected, str) and expected is not None and got is not None and float(expected) != 0.0:
            ratio = float(got) / float(expected)
        table.add(*cells, expected, got, ratio)
    return table


def convergence(steps: Sequence[float], errors: Mapping[str, Sequence[float]], fits: Mapping | None = None,
                step: str = "$h$ (s)", spec: str = ".2e") -> Table:
    """Errors per step size, one column per series (a scheme, a quantity), and when ``fits``
    (:class:`rbdyn.verify.OrderFit` per series) are given, the fitted order with its uncertainty
    (:attr:`rbdyn.verify.OrderFit.uncertainty`) and the range of the local orders as the last
    two rows."""
    names = list(errors)
    table = Table([step, *names], spec=spec)
    for i, h in enumerate(steps):
        table.add(number(h, "g"), *(errors[n][i] for n in names))
    if fits:
        table.add("fitted order", *(f"{fits[n]:.2f}" if n in fits else "–" for n in names))
        table.add("local orders", *(_local_range(fits[n]) if n in fits else "–" for n in names))
    return table


def _local_range(fit) -> str:
    local = np.asarray(fit.local, dtype=float)
    if local.size == 0:
        return "–"
    return f"{local.min():.2f} … {local.max():.2f}" if local.size > 1 else f"{local[0]:.2f}"


# -- tolerances --------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Tolerance:
    """One acceptance tolerance.

    Attributes
    ----------
    value : float or mapping of str to float
        The bound, or one bound per scheme (or per case).
    unit : str
        Its unit (``"m"``, ``"rel."``, ``""`` for a pure number).
    reason : str
        Why this bound: what the check measures and what sets its size.
    spec : str
        How the header box writes the value.
    """

    value: float | Mapping[str, float]
    unit: str
    reason: str
    spec: str = ".0e"


class Tolerances(Mapping):
    """A page's tolerances, each declared once with its unit and its reason.

    Parameters
    ----------
    page : str
        The page's document name (``"validation/pendulum"``), under which the checks are recorded.
    prefix : str
        Prefix of the glued names (``tol_`` gives ``tol_<name>`` and ``tol_table``).
    **entries : Tolerance or tuple
        ``name=(value, unit, reason)`` or ``name=(value, unit, reason, spec)``.

    Notes
    -----
    ``TOL[name]`` is the value (a float, or a mapping per scheme); :meth:`check` asserts a
    measurement against it and records the check for the validation matrix.
    """

    def __init__(self, page: str, prefix: str = "tol_", **entries):
        self.page, self.prefix = page, prefix
        self._entries: dict[str, Tolerance] = {}
        for name, entry in entries.items():
            entry = entry if isinstance(entry, Tolerance) else Tolerance(*entry)
            values = entry.value.values() if isinstance(entry.value, Mapping) else [entry.value]
            for v in values:
                if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not float(v) >= 0.0:
                    raise ValueError(f"tolerance {name!r}: {v!r} is not a non-negative number")
            if not entry.reason.strip():
                raise ValueError(f"tolerance {name!r} has no reason")
            self._entries[name] = entry

    def __getitem__(self, name):
        return self._entries[name].value

    def __iter__(self):
        return iter(self._entries)

    def __len__(self):
        return len(self._entries)

    def entry(self, name: str) -> Tolerance:
        """The declaration of ``name`` (value, unit, reason)."""
        return self._entries[name]

    def value(self, name: str, key: str | None = None) -> float:
        """The bound ``name``; for one declared per scheme (or case), that of ``key``."""
        v = self._entries[name].value
        if isinstance(v, Mapping):
            if key is None:
                raise KeyError(f"tolerance {name!r} is declared per key ({', '.join(v)}): name one")
            return float(v[key])
        return float(v)

    def check(self, what: str, measured, name: str, scheme: str | None = None, key: str | None = None) -> Check:
        """Assert ``measured <= TOL[name]`` (the value for ``key``, else for ``scheme``, when
        declared per scheme) and record it for the validation matrix (:func:`rbdyn.verify.check`)."""
        v = self._entries[name].value
        bound = self.value(name, key if key is not None else (scheme if isinstance(v, Mapping) else None))
        return check(self.page, what, measured, bound, scheme)

    def table(self) -> Table:
        """The tolerances for the header box: name, bound, unit, reason."""
        table = Table(["tolerance", "bound", "unit", "why"])
        for name, e in self._entries.items():
            if isinstance(e.value, Mapping):
                bound = "; ".join(f"{k}: {number(v, e.spec)}" for k, v in e.value.items())
            else:
                bound = number(e.value, e.spec)
            table.add(f"`{name}`", bound, e.unit, e.reason)
        return table

    def glue(self) -> None:
        """Glue every bound (``<prefix><name>``, per key ``<prefix><name>_<key>``) and the table
        (``<prefix>table``, shown in the header box with the ``glue:md`` directive)."""
        for name, e in self._entries.items():
            if isinstance(e.value, Mapping):
                for key, v in e.value.items():
                    put(f"{self.prefix}{name}_{key}", v)
            else:
                put(f"{self.prefix}{name}", e.value)
        put_markdown(f"{self.prefix}table", self.table().markdown())
