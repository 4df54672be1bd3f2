"""The book's literature table of scheme properties (``literature.toml``).

Expected orders and conservation properties are read from this table, never
from a scheme's own class attributes: the unit tests check that the class
attributes equal the table, and pages check the runs against the table.
"""

from __future__ import annotations

import dataclasses
import functools
import tomllib
from importlib import resources

__all__ = ["SchemeProperties", "literature", "PROPERTIES", "ENERGY_BEHAVIOURS", "CONSTRAINED_ENERGY_BEHAVIOURS"]

PROPERTIES = ("linear momentum", "angular momentum", "energy", "quaternion norm", "orthonormality")
ENERGY_BEHAVIOURS = ("increases", "decreases", "bounded", "not conserved")
#: With constraints, measured on jointed runs: "either sign" is a drift beyond the oscillation
#: whose sign depends on the motion (up on one run, down on another).
CONSTRAINED_ENERGY_BEHAVIOURS = ("increases", "decreases", "bounded", "either sign")


@dataclasses.dataclass(frozen=True)
class SchemeProperties:
    """One row of the literature table.

    Attributes
    ----------
    name : str
        The scheme's name in rbdyn.
    order : int
        Global order without constraints.
    constrained_order : int or None
        Global order with constraints whose reactions turn the bodies; None
        when the scheme does not handle constraints.
    implicit : bool
    conserves : frozenset of str
        Subset of ``PROPERTIES`` preserved to round-off without loads.
    energy : str
        One of ``ENERGY_BEHAVIOURS``.
    constrained_energy : str or None
        One of ``CONSTRAINED_ENERGY_BEHAVIOURS``, for jointed motion (measured in the book);
        None when the scheme does not handle constraints.
    symmetric : bool
        Whether a step of ``-h`` undoes a step of ``h``.
    sources : tuple of str
        Keys of ``references.bib`` (and ``methods:...`` sections of the book).
    note : str
        The row's justification, in one paragraph.
    """

    name: str
    order: int
    constrained_order: int | None
    implicit: bool
    conserves: frozenset
    energy: str
    constrained_energy: str | None
    symmetric: bool
    sources: tuple
    note: str

    @property
    def citations(self) -> tuple:
        """The bibliography keys of :attr:`sources` (without the methods sections)."""
        return tuple(s for s in self.sources if not s.startswith("methods:"))


def literature_row(name: str, row: dict) -> SchemeProperties:
    """One row of the table from its TOML table ``row`` (the keys of ``literature.toml``).

    For a scheme outside the package (see the contributor page "How to add a scheme"), whose row is
    not in the package's file: the row is checked as the file's rows are.

    Raises
    ------
    ValueError
        For an unknown property, energy behaviour or a missing key.
    """
    try:
        conserves = frozenset(row["conserves"])
        if not conserves <= set(PROPERTIES):
            raise ValueError(f"literature.toml: {name}: unknown property in {sorted(conserves)}")
        if row["energy"] not in ENERGY_BEHAVIOURS:
            raise ValueError(f"literature.toml: {name}: energy must be one of {ENERGY_BEHAVIOURS}")
        co = row["constrained_order"]
        # a scheme without constraints has no behaviour with them: the key may be left out
        ce = row["constrained_energy"] if co != "none" or "constrained_energy" in row else "none"
        if (ce == "none") != (co == "none") or (ce != "none" and ce not in CONSTRAINED_ENERGY_BEHAVIOURS):
            raise ValueError(f"literature.toml: {name}: constrained_energy must be one of "
                             f"{CONSTRAINED_ENERGY_BEHAVIOURS}, or 'none' exactly when constrained_order is")
        return SchemeProperties(
            name=name,
            order=int(row["order"]),
            constrained_order=None if co == "none" else int(co),
            implicit=bool(row["implicit"]),
            conserves=conserves,
            energy=row["energy"],
            constrained_energy=None if ce == "none" else ce,
            symmetric=bool(row["symmetric"]),
            sources=tuple(row["sources"]),
            note=" ".join(row["note"].split()),
        )
    except KeyError as exc:
        raise ValueError(f"literature.toml: {name}: missing key {exc.args[0]!r}") from None


@functools.cache
def literature() -> dict[str, SchemeProperties]:
    """The table, by scheme name, in the file's order."""
    data = tomllib.loads(resources.files(__package__).joinpath("literature.toml").read_text(encoding="utf-8"))
    return {name: literature_row(name, row) for name, row in data.items()}
