"""The schemes against the book's literature table (``rbdyn.verify.literature``).

Three kinds of test:

* the provenance: every entry of the table (each column, and each conservation property listed
  or not) is cited (a key of ``references.bib`` and where in it) or derived here (a page of
  ``_toc.yml`` and the label of the section that derives and measures it);
* the binding: every registered scheme has a row, and each declared class
  attribute equals the table, so that editing a scheme's declared order,
  ``conserves`` set, energy behaviour or symmetry alone fails here;
* the behaviour: every property the *table* lists holds in a run built to
  test it, and every conservation property it does not list is visibly
  violated in the same run, so that a false row fails too.

Expectations come from the table only, never from the class attributes.
"""

import re
from pathlib import Path

import numpy as np
import pytest

import rbdyn
from rbdyn import so3, verify
from rbdyn.verify._literature import PROVENANCE, Cited, Derived, Provenances

TABLE = verify.literature()
NAMES = list(rbdyn.schemes())


def test_every_scheme_has_a_row_and_every_row_a_scheme():
    assert set(TABLE) == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_declared_attributes_equal_the_table(name):
    cls, row = rbdyn.schemes()[name], TABLE[name]
    assert cls.order == row.order
    assert cls.constrained_order == row.constrained_order
    assert cls.supports_constraints == (row.constrained_order is not None)
    assert cls.implicit == row.implicit
    assert cls.conserves == row.conserves
    assert cls.energy == row.energy
    assert cls.constrained_energy == row.constrained_energy
    assert cls.symmetric == row.symmetric


ROOT = Path(__file__).resolve().parents[1]
BIB = (ROOT / "references.bib").read_text(encoding="utf-8")
TOC = (ROOT / "_toc.yml").read_text(encoding="utf-8")


def test_table_cites_known_bibliography_keys():
    for row in TABLE.values():
        assert row.citations, row.name
        for key in row.citations:
            assert "{" + key + "," in BIB, (row.name, key)


# -- where every entry comes from: cited (a key of references.bib and where in it) or derived here
# (a page of the book and the section that derives and measures it) -----------------------------


def test_every_row_has_a_provenance_and_only_the_rows():
    assert set(PROVENANCE) == set(TABLE)
    for name, row in TABLE.items():
        assert isinstance(row.provenance, Provenances), name


@pytest.mark.parametrize("name", list(TABLE))
def test_every_entry_is_cited_or_derived(name):
    """Every column of the row, and every conservation property (listed or not), has one
    provenance: a Cited with a source and a place in it, or a Derived with a page, a section and
    what it does."""
    entries = TABLE[name].provenance.entries()
    assert [c for c, _ in entries] == ["order", "order with constraints", "implicit", *verify.PROPERTIES,
                                       "energy over long times", "energy with constraints", "symmetric"]
    for column, prov in entries:
        assert isinstance(prov, (Cited, Derived)), (name, column, prov)
        fields = (prov.source, prov.where) if isinstance(prov, Cited) else (prov.page, prov.label, prov.how)
        assert all(isinstance(f, str) and f.strip() for f in fields), (name, column, prov)


def test_provenances_refuse_a_missing_conservation_property():
    p = TABLE["rk4"].provenance
    with pytest.raises(ValueError, match="one provenance per property"):
        Provenances(p.order, p.constrained_order, p.implicit, {"energy": p.energy}, p.energy, p.constrained_energy,
                    p.symmetric)


@pytest.mark.parametrize("name", list(TABLE))
def test_cited_sources_are_bibliography_keys(name):
    for column, prov in TABLE[name].provenance.entries():
        if isinstance(prov, Cited):
            assert "{" + prov.source + "," in BIB, (name, column, prov.source)


@pytest.mark.parametrize("name", list(TABLE))
def test_derived_pages_are_in_the_book_with_their_section(name):
    """A derived entry names a page of _toc.yml and a label that page defines."""
    for column, prov in TABLE[name].provenance.entries():
        if isinstance(prov, Derived):
            assert re.search(rf"^\s*- file: book/{re.escape(prov.page)}\s*$", TOC, re.M), (name, column, prov.page)
            text = (ROOT / "book" / f"{prov.page}.md").read_text(encoding="utf-8")
            assert re.search(rf"^\({re.escape(prov.label)}\)=$", text, re.M), (name, column, prov.page, prov.label)


# -- runs built to test one property each -----------------------------------------------------------


def tumbling_box():
    """An asymmetric box spinning near its unstable axis, no loads: L and E are invariants."""
    J = rbdyn.box_inertia(10.0, (0.1, 0.4, 0.9))
    box = rbdyn.RigidBody("box", 10.0, J, velocity=(-0.9, 0.4, 0.1), omega_body=(0.1, 5.0, 0.1))
    return rbdyn.System([box])


def two_bodies(joined):
    """Two free bodies in zero gravity, joined at a point away from both mass centres if asked."""
    J = rbdyn.box_inertia(1.0, (0.2, 0.3, 0.4))
    a = rbdyn.RigidBody("a", 1.0, J, velocity=(0.1, 0.2, 0.3), omega_body=(1.0, 2.0, 3.0))
    b = rbdyn.RigidBody("b", 2.0, 2 * J, position=(0.2, 0.3, 0.4), velocity=(-0.1, 0.0, 0.1), omega_body=(-2.0, 1.0, 0.5))
    joints = [rbdyn.SphericalJoint("a", point_body=(0.1, 0.15, 0.2), other="b")] if joined else []
    return rbdyn.System([a, b], constraints=joints)


def world_angular_momentum(traj):
    """R J Omega of the (single) body about its mass centre, from the trajectory."""
    J = rbdyn.box_inertia(10.0, (0.1, 0.4, 0.9))
    return np.einsum("nij,jk,nk->ni", traj.R_world_body[:, 0], J, traj.omega_body[:, 0])


@pytest.fixture(scope="module")
def box_runs():
    """Every scheme on the tumbling box, 3 s at h = 0.01 (large enough to show what is not conserved)."""
    return {name: rbdyn.simulate(tumbling_box(), name, 0.01, 3.0) for name in NAMES}


def relative_change(traj, prop):
    """Largest relative change over the run of the box's world angular momentum or energy."""
    if prop == "angular momentum":
        L = world_angular_momentum(traj)
        return np.max(np.linalg.norm(L - L[0], axis=1)) / np.linalg.norm(L[0])
    return np.max(np.abs(traj.energy - traj.energy[0])) / traj.energy[0]


# (property, lowest change that counts as "visibly violated"): far above round-off, so that a false
# claim of conservation fails here
INVARIANTS = [("angular momentum", 1e-8), ("energy", 1e-9)]


@pytest.mark.parametrize("prop, violated", INVARIANTS)
@pytest.mark.parametrize("name", NAMES)
def test_invariants_of_the_free_box_as_the_table_says(name, prop, violated, box_runs):
    change = relative_change(box_runs[name], prop)
    if prop in TABLE[name].conserves:
        assert change <= 1e-13, change
    else:
        assert change >= violated, change


@pytest.mark.parametrize("name", NAMES)
def test_rotation_properties_as_the_table_says(name, box_runs):
    traj = box_runs[name]
    if "orthonormality" in TABLE[name].conserves:
        err = max(so3.orthonormality_error(R) for R in traj.R_world_body[:, 0])
        assert err <= 1e-14, err
    if "quaternion norm" in TABLE[name].conserves:
        q = traj.quat_wxyz[:, 0]
        assert np.max(np.abs(np.linalg.norm(q, axis=1) - 1.0)) <= 1e-14


@pytest.mark.parametrize("name", NAMES)
def test_linear_momentum_as_the_table_says(name):
    joined = TABLE[name].constrained_order is not None  # an internal joint where the scheme handles one
    traj = rbdyn.simulate(two_bodies(joined), name, 1e-3, 0.5, every=50)
    p = traj.linear_momentum
    change = np.max(np.abs(p - p[0]))
    if "linear momentum" in TABLE[name].conserves:
        assert change <= 1e-13, change
    else:
        assert change >= 1e-9, change


def test_every_conservation_property_is_tested_above():
    tested = {"angular momentum", "energy", "orthonormality", "quaternion norm", "linear momentum"}
    assert set(verify.PROPERTIES) == tested


@pytest.mark.parametrize("name", NAMES)
def test_energy_behaviour_on_the_solfec_top(name):
    """Solfec's heavy top for 10 s at h = 0.009, its coarsest step: the energy's trend.

    A scheme without a stated behaviour only has to change the energy; first-order schemes run at
    h = 0.001 (the explicit gyroscopic term of symplectic_euler does not survive 0.009 at 50 rad/s).
    """
    behaviour = TABLE[name].energy
    h = 0.001 if TABLE[name].order == 1 else 0.009
    traj = rbdyn.load_scenario("heavy-top-solfec").run(scheme=name, dt=h, t_end=10.0, every=1)
    E = traj.energy
    dev = (E - E[0]) / abs(E[0])
    third = len(dev) // 3
    trend = dev[-third:].mean() - dev[:third].mean()  # growth between the first and last thirds
    spread = np.max(np.abs(dev))
    if behaviour == "increases":
        assert dev[-1] > 0 and trend > 0.5 * spread, (dev[-1], trend, spread)
    elif behaviour == "decreases":
        assert dev[-1] < 0 and trend < -0.5 * spread, (dev[-1], trend, spread)
    elif behaviour == "bounded":
        # no trend: the mean moves by less than a tenth of the oscillation's size
        assert abs(trend) <= 0.1 * spread, (trend, spread)
    else:
        assert behaviour == "not conserved"
        assert spread >= 1e-10, spread


def _jointed_top(spin, tilt):
    """A top on a spherical joint 0.5 m below its mass centre, under gravity (conservative)."""
    J = np.diag([0.5, 0.5, 0.2])
    c = np.array([0.0, 0.0, 0.5])
    R0 = so3.exp(np.array([tilt, 0.0, 0.0]))
    W = np.array([0.3, 0.0, spin])
    top = rbdyn.RigidBody("top", 1.0, J, position=R0 @ c, R_world_body=R0, velocity=np.cross(R0 @ W, R0 @ c),
                          omega_body=W)
    return rbdyn.System([top], constraints=[rbdyn.SphericalJoint("top", point_body=-c)], gravity=(0.0, 0.0, -9.81))


#: Jointed conservative runs (system, step, duration): two built-in mechanisms and two tops.
JOINTED = {
    "Kynema's top": (lambda: rbdyn.load_scenario("heavy-top-kynema").system, 5e-4, 2.0),
    "Bricard's mechanism": (lambda: rbdyn.load_scenario("bricard").system, 2e-3, 10.0),
    "top, 20 rad/s": (lambda: _jointed_top(20.0, 0.5), 5e-3, 20.0),
    "top, 5 rad/s": (lambda: _jointed_top(5.0, 1.0), 1e-2, 20.0),
}


def _drift_over_oscillation(traj):
    """The energy's drift over the run (slope of a straight-line fit times the duration) over the
    peak-to-peak size of what the line leaves (the oscillation)."""
    t, dE = traj.t, traj.energy - traj.energy[0]
    A = np.vstack([np.ones_like(t), t]).T
    coef, *_ = np.linalg.lstsq(A, dE, rcond=None)
    return coef[1] * (t[-1] - t[0]) / np.ptp(dE - A @ coef)


@pytest.fixture(scope="module")
def jointed_drifts():
    systems = {key: (make(), h, t_end) for key, (make, h, t_end) in JOINTED.items()}
    return {(name, key): _drift_over_oscillation(rbdyn.simulate(s, name, h, t_end, every=max(1, round(0.01 / h))))
            for name in NAMES if TABLE[name].constrained_energy for key, (s, h, t_end) in systems.items()}


@pytest.mark.parametrize("name", [n for n in NAMES if TABLE[n].constrained_energy])
def test_energy_behaviour_with_joints(name, jointed_drifts):
    """The table's column for jointed motion, on four jointed conservative runs: a drift that
    exceeds the oscillation on every run with the stated sign ("increases", "decreases"), beyond it
    upwards on one run and downwards on another ("either sign"), or within a third of it on every
    run ("bounded"). The four behaviours exclude each other, so changing an entry fails here."""
    behaviour = TABLE[name].constrained_energy
    drifts = {key: jointed_drifts[name, key] for key in JOINTED}
    if behaviour == "increases":
        assert all(d > 1.0 for d in drifts.values()), drifts
    elif behaviour == "decreases":
        assert all(d < -1.0 for d in drifts.values()), drifts
    elif behaviour == "either sign":
        assert max(drifts.values()) > 1.0 and min(drifts.values()) < -1.0, drifts
    else:
        assert behaviour == "bounded"
        assert all(abs(d) <= 1 / 3 for d in drifts.values()), drifts


def _step_there_and_back(name, system, h):
    """One step of ``h`` then one of ``-h`` through the scheme's kernel; returns (start, end) states."""
    scheme = rbdyn.get_scheme(name)
    carry = scheme.init(system, system.initial_state())
    start = [a.copy() for a in carry[:4]]
    counters = np.zeros(2, dtype=np.int64)
    code, _ = scheme.advance(system, carry, 0.0, h, 1, counters, 0)
    assert code == 0
    code, _ = scheme.advance(system, carry, h, -h, 1, counters, 1)
    assert code == 0
    return start, carry[:4]


@pytest.mark.parametrize("name", NAMES)
def test_time_symmetry_as_the_table_says(name):
    """A symmetric step is undone by the step of -h (free box; no loads that depend on time)."""
    h = 0.1  # h |omega| = 0.5: the defect of a non-symmetric step is far above round-off
    start, end = _step_there_and_back(name, tumbling_box(), h)
    back = max(so3.rotation_distance(end[1][0], start[1][0]),
               np.max(np.abs(end[3][0] - start[3][0])) / np.linalg.norm(start[3][0]))
    if TABLE[name].symmetric:
        assert back <= 1e-13, back
    else:
        # a non-symmetric second-order step misses the start by O(h^3) at least
        assert back >= 1e-8, back


@pytest.mark.parametrize("name", NAMES)
def test_order_on_the_pivoted_heavy_top(name):
    """Observed order against an independent DOP853 reference, fitted by the book's rule."""
    sc = rbdyn.load_scenario("heavy-top-solfec")
    body = sc.system.bodies[0]  # pivoted: its inertia is about the pivot
    t_end = 10.0  # Solfec's horizon; at 1 s symplectic_euler's first-order term has not yet grown
    ref = verify.heavy_top_reference(
        body.inertia, body.com_body, body.mass, sc.system.gravity, body.R_world_body, body.omega_body, [0.0, t_end], rtol=1e-13)
    # steps in each order's asymptotic range over 10 s of a 50 rad/s spin
    hs = {1: [1e-4, 5e-5, 2.5e-5], 2: [2e-3, 1e-3, 5e-4], 4: [2e-2, 1e-2, 5e-3]}[TABLE[name].order]
    errs = [so3.rotation_distance(sc.run(scheme=name, dt=h, t_end=t_end, every=10**6).R_world_body[-1, 0],
                                  ref.R_world_body[-1]) for h in hs]
    fit = verify.fit_order(hs, errs, floor=1e-12)
    assert abs(fit.order - TABLE[name].order) <= 0.3, (fit.order, errs)



def test_literature_row_reads_a_row_as_the_table_does():
    """A row given outside the package (the contributor page's) is parsed and checked like the
    file's rows: the file's own rows come back unchanged, bad ones are refused."""
    import tomllib
    from importlib import resources

    data = tomllib.loads(resources.files("rbdyn.verify").joinpath("literature.toml").read_text(encoding="utf-8"))
    table = verify.literature()
    for name, row in data.items():
        assert verify.literature_row(name, row) == table[name]
    row = dict(data["rk4"])
    with pytest.raises(ValueError, match="unknown property"):
        verify.literature_row("x", dict(row, conserves=["energy", "charm"]))
    with pytest.raises(ValueError, match="energy must be one of"):
        verify.literature_row("x", dict(row, energy="wobbles"))
    with pytest.raises(ValueError, match="constrained_energy must be one of"):
        verify.literature_row("x", dict(row, constrained_energy="wobbles"))
    del row["order"]
    with pytest.raises(ValueError, match="missing key 'order'"):
        verify.literature_row("x", row)
