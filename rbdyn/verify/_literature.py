"""The book's table of scheme properties (``literature.toml``) and where each entry comes from.

Expected orders and conservation properties are read from this table, never
from a scheme's own class attributes: the unit tests check that the class
attributes equal the table, and pages check the runs against the table.

Every entry of the table is either ``Cited`` (a source that states it: a key of
``references.bib`` and the place in it) or ``Derived`` (derived and measured in this book, on the
page and section named). The provenance of every row is declared once, in ``PROVENANCE`` below,
and read through the row (``SchemeProperties.provenance``).
"""

from __future__ import annotations

import dataclasses
import functools
import tomllib
from importlib import resources
from typing import ClassVar

__all__ = ["SchemeProperties", "literature", "literature_row", "PROPERTIES", "ENERGY_BEHAVIOURS",
           "CONSTRAINED_ENERGY_BEHAVIOURS", "Cited", "Derived", "Provenances", "PROVENANCE"]

PROPERTIES = ("linear momentum", "angular momentum", "energy", "quaternion norm", "orthonormality")
ENERGY_BEHAVIOURS = ("increases", "decreases", "bounded", "not conserved")
#: With constraints, measured on jointed runs: "either sign" is a drift beyond the oscillation
#: whose sign depends on the motion (up on one run, down on another).
CONSTRAINED_ENERGY_BEHAVIOURS = ("increases", "decreases", "bounded", "either sign")


@dataclasses.dataclass(frozen=True)
class Cited:
    """An entry that a source states.

    Attributes
    ----------
    source : str
        A key of ``references.bib``.
    where : str
        Where in the source, and what it says (a section, an equation, a table, a quotation).
    """

    source: str
    where: str
    kind: ClassVar[str] = "cited"


@dataclasses.dataclass(frozen=True)
class Derived:
    """An entry derived and measured in this book.

    Attributes
    ----------
    page : str
        The page's document name under ``book/`` (``"methods/rig"``), a page of ``_toc.yml``.
    label : str
        The label of the section that derives and measures it (``"rig-symmetry"``).
    how : str
        What that section does, in one line.
    """

    page: str
    label: str
    how: str
    kind: ClassVar[str] = "derived here"


#: Where one entry comes from.
Provenance = Cited | Derived


@dataclasses.dataclass(frozen=True)
class Provenances:
    """Where every entry of one row comes from: one ``Cited`` or ``Derived`` per column, and for
    ``conserves`` one per property of ``PROPERTIES`` (whether the row lists it or not: that a
    scheme does not conserve a property is an entry too)."""

    order: Provenance
    constrained_order: Provenance
    implicit: Provenance
    conserves: dict
    energy: Provenance
    constrained_energy: Provenance
    symmetric: Provenance

    def __post_init__(self):
        if set(self.conserves) != set(PROPERTIES):
            raise ValueError(f"conserves: one provenance per property of {PROPERTIES}, got {sorted(self.conserves)}")

    def entries(self):
        """``(column, provenance)`` for every entry, in the order of the book's table: the
        conservation columns are named by their property (``"angular momentum"``), the energy
        behaviours ``"energy over long times"`` and ``"energy with constraints"``."""
        return [("order", self.order), ("order with constraints", self.constrained_order),
                ("implicit", self.implicit), *((p, self.conserves[p]) for p in PROPERTIES),
                ("energy over long times", self.energy), ("energy with constraints", self.constrained_energy),
                ("symmetric", self.symmetric)]


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
    def provenance(self):
        """Where each entry of the row comes from: the row's ``Provenances`` (one ``Cited`` or
        ``Derived`` per entry, declared in ``PROVENANCE`` of ``rbdyn/verify/_literature.py``), or
        None for a scheme that has no declaration there (one outside the package)."""
        return PROVENANCE.get(self.name)

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


# -- where every entry comes from ----------------------------------------------------------------
# One declaration for the whole table. Cited: the source states the entry (quotations from
# Solfec-1.0's documentation as read in parmes/parmes at the commit given in references.bib).
# Derived: the book derives the entry and measures it, on the page and in the section named.

_SOLFEC_TIMEINT = "theory manual, Time integration (solfec-1.0/theory/timeint.rst), list of rigid schemes"
_SOLFEC_BODY = "user manual, BODY object (solfec-1.0/user/body.rst), table 'Time integration schema'"
_SOLFEC_ORDER = Cited("solfec_manual", "validation manual, 'Heavy symmetrical top', summary box: 'the second order "
                                       "accuracy can be exemplified' (its plots: RIG_POS, RIG_NEG, RIG_IMP)")

# the baselines
_BASE_NO_CONSTRAINTS = Derived("methods/baselines", "baselines-steps",
                               "the steps have no reaction term, and rbdyn refuses a system with constraints for "
                               "them (asserted)")
_BASE_CHANGED = Derived("methods/baselines", "baselines-conservation",
                        "changed far beyond round-off on a torque-free tumbling box (asserted)")
_BASE_NORMALISED = Derived("methods/baselines", "baselines-conservation",
                           "the quaternion is normalised every step and the rotation built from it: unit and "
                           "orthonormal to round-off on the tumbling box (asserted)")
_BASE_SYMMETRY = Derived("methods/baselines", "baselines-symmetry",
                         "a step of -h after a step of h misses the start, at the order the argument there gives "
                         "(asserted)")
# the RIG schemes
_RIG_CONSTRAINED_ORDER = Derived("methods/constraints", "rig-constraints",
                                 "where the step takes the reaction impulse; fitted orders on a spherical joint and "
                                 "a hinge away from the mass centre (asserted)")
_RIG_NO_QUATERNION = Derived("methods/rig", "methods-rig", "the step carries the rotation, no quaternion")
_RIG_ORTHONORMAL = Derived("methods/rig", "rig-conservation",
                           "exponential map and one Newton-Schulz step; orthonormal to round-off over a run "
                           "(asserted)")
_RIG_SYMMETRY = Derived("methods/rig", "rig-symmetry",
                        "the step of -h derived, and the miss of a step of h then -h measured (asserted)")
# gen_alpha
_GA_MEASURED = Derived("methods/gen_alpha", "gen-alpha-conservation",
                       "changed far beyond round-off on a torque-free tumbling box (asserted)")
_GA_NO_QUATERNION = Derived("methods/gen_alpha", "gen-alpha-step", "the step carries the rotation, no quaternion")
# every scheme
_LINEAR_MOMENTUM = Derived("methods/properties", "properties-measured",
                           "impulses linear in the forces and reactions equal and opposite; kept to round-off by "
                           "two bodies, joined where the scheme takes constraints (asserted)")
_JOINTED_ENERGY = Derived("methods/properties", "properties-measured",
                          "drift over oscillation of the energy on four jointed conservative runs (asserted)")


def _baseline(order, implicit):
    return Provenances(
        order=order, constrained_order=_BASE_NO_CONSTRAINTS, implicit=implicit,
        conserves={"linear momentum": _LINEAR_MOMENTUM, "angular momentum": _BASE_CHANGED, "energy": _BASE_CHANGED,
                   "quaternion norm": _BASE_NORMALISED, "orthonormality": _BASE_NORMALISED},
        energy=_BASE_CHANGED, constrained_energy=_BASE_NO_CONSTRAINTS, symmetric=_BASE_SYMMETRY)


def _rig(scheme, implicit, momentum, energy):
    """A RIG row: ``implicit`` and ``energy`` quote the theory manual, ``momentum`` the user manual."""
    energy = Cited("solfec_docs", f"{_SOLFEC_TIMEINT}: '{scheme} -- {energy}'")
    return Provenances(
        order=_SOLFEC_ORDER, constrained_order=_RIG_CONSTRAINED_ORDER,
        implicit=Cited("solfec_docs", f"{_SOLFEC_TIMEINT}: '{scheme} -- {implicit}'"),
        conserves={"linear momentum": _LINEAR_MOMENTUM,
                   "angular momentum": Cited("solfec_docs", f"{_SOLFEC_BODY}, {scheme}: '{momentum}'"),
                   "energy": energy, "quaternion norm": _RIG_NO_QUATERNION, "orthonormality": _RIG_ORTHONORMAL},
        energy=energy, constrained_energy=_JOINTED_ENERGY, symmetric=_RIG_SYMMETRY)


#: Where every entry of the table comes from, by scheme name.
PROVENANCE: dict[str, Provenances] = {
    "symplectic_euler": _baseline(
        order=Cited("hairer2006", "Sect. I.1, the symplectic Euler methods: order 1"),
        implicit=Derived("methods/baselines", "baselines-steps",
                         "every update is an explicit formula (the gyroscopic term at the start of the step)")),
    "rk4": _baseline(
        order=Cited("hairer1993", "Sect. II.1, the classical Runge-Kutta method: order 4"),
        implicit=Cited("hairer1993", "Sect. II.1: an explicit Runge-Kutta method")),
    "rig_pos": _rig("RIG_POS", "a semi-explicit scheme", "no momentum conservation",
                    "a semi-explicit scheme with a positive energy drift"),
    "rig_neg": _rig("RIG_NEG", "a semi-explicit scheme", "exact momentum conservation",
                    "a semi-explicit scheme with a negative energy drift"),
    # the theory manual's eq. W3(t+h) is an equation to solve for the new rate; the user manual's
    # table calls RIG_IMP "semi-explicit"
    "rig_imp": _rig("RIG_IMP", "a semi-implicit [scheme]", "exact momentum conservation",
                    "a semi-implicit without energy drift (but rather, oscillation)"),
    "gen_alpha": Provenances(
        order=Cited("chung1993", "the accuracy analysis: second order for every rho_inf in [0, 1] with "
                                 "gamma = 1/2 - alpha_m + alpha_f"),
        constrained_order=Cited("arnold2015", "the convergence analysis: global second order of the positions for "
                                              "index-3 constraints (the order the pages measure)"),
        implicit=Derived("methods/gen_alpha", "gen-alpha-step",
                         "a Newton corrector solves the equations of motion at the end of the step"),
        conserves={"linear momentum": _LINEAR_MOMENTUM, "angular momentum": _GA_MEASURED, "energy": _GA_MEASURED,
                   "quaternion norm": _GA_NO_QUATERNION,
                   "orthonormality": Derived("methods/gen_alpha", "gen-alpha-conservation",
                                             "exponential map and one Newton-Schulz step; orthonormal to round-off "
                                             "on the tumbling box (asserted)")},
        energy=Derived("methods/gen_alpha", "gen-alpha-conservation",
                       "the energy error changes on the box and has no sign: it grows on Solfec's top and falls on "
                       "the jointed top (asserted on those pages)"),
        constrained_energy=_JOINTED_ENERGY,
        symmetric=Derived("methods/gen_alpha", "gen-alpha-conservation",
                          "a step of -h after a step of h, by hand, misses the start (asserted)")),
}
