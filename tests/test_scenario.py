"""The built-in scenarios: they load, run with every capable scheme, and hold
the Boxes benchmark's data (inertia, initial momentum and energy) and the heavy
top's (Solfec's J and M g l with a physical mass centre)."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest

import rbdyn
from rbdyn import so3

BUILTIN = list(rbdyn.builtin_scenarios())


def test_builtin_names_match_files():
    files = sorted(p.name[:-5] for p in (resources.files("rbdyn") / "scenarios").iterdir() if p.name.endswith(".toml"))
    assert files and sorted(BUILTIN) == files
    for name, desc in rbdyn.builtin_scenarios().items():
        assert isinstance(desc, str) and desc, name
    assert {"boxes-complex", "boxes-simple"} <= set(BUILTIN)


@pytest.mark.parametrize("name", BUILTIN)
def test_builtin_loads(name):
    sc = rbdyn.load_scenario(name)
    assert sc.name == name
    assert sc.source == f"builtin:{name}"
    assert sc.description == rbdyn.builtin_scenarios()[name]
    assert sc.reference
    assert sc.scheme.name in rbdyn.schemes()
    assert sc.dt > 0 and sc.t_end > 0 and sc.every >= 1
    assert sc.system.n_bodies >= 1


def _capable(sc):
    return [n for n, c in rbdyn.schemes().items() if c.supports_constraints or not sc.system.constraints]


@pytest.mark.parametrize(
    "name, scheme",
    [(n, s) for n in BUILTIN for s in ["(own)"] + _capable(rbdyn.load_scenario(n))],
)
def test_builtin_runs_a_few_steps(name, scheme):
    sc = rbdyn.load_scenario(name)
    traj = sc.run(scheme=None if scheme == "(own)" else scheme, t_end=5 * sc.dt, every=1)
    assert traj.status == "success"
    assert traj.steps == 5 and len(traj.t) == 6
    assert traj.scheme.name == (sc.scheme.name if scheme == "(own)" else scheme)
    assert np.all(np.isfinite(traj.table()))
    # a few small steps change the energy very little
    assert np.max(np.abs(traj.energy - traj.energy[0])) <= 1e-2 * max(1.0, abs(traj.energy[0]))


@pytest.mark.parametrize("name", BUILTIN)
def test_own_scheme_supports_own_constraints(name):
    sc = rbdyn.load_scenario(name)
    assert sc.scheme.name in _capable(sc)


# ---------------------------------------------------------------------------
# the Boxes benchmark data (Peters & Hsu 2014): the seed's printed values
# ---------------------------------------------------------------------------
def _box_inertia(m, a, b, c):
    return m / 12.0 * np.diag([b * b + c * c, c * c + a * a, a * a + b * b])


@pytest.mark.parametrize("name", ["boxes-complex", "boxes-simple"])
def test_boxes_inertia(name):
    body = rbdyn.load_scenario(name).system.bodies[0]
    assert body.mass == 10.0
    np.testing.assert_allclose(body.inertia, _box_inertia(10.0, 0.1, 0.4, 0.9), rtol=1e-15, atol=0)
    np.testing.assert_array_equal(body.inertia, rbdyn.box_inertia(10.0, (0.1, 0.4, 0.9)))


@pytest.mark.parametrize(
    "name, L0, E0, velocity, omega, gravity",
    [
        ("boxes-complex", [0.08083333, 3.41666667, 0.01416667], 368.546416667,
         [-2.0, 2.0, 8.0], [0.1, 5.0, 0.1], [0.0, 0.0, -9.8]),
        ("boxes-simple", [0.40416667, 0.0, 0.0], 5.00104166667,
         [-0.9, 0.4, 0.1], [0.5, 0.0, 0.0], [0.0, 0.0, 0.0]),
    ],
)
def test_boxes_initial_momentum_and_energy(name, L0, E0, velocity, omega, gravity):
    sc = rbdyn.load_scenario(name)
    body = sc.system.bodies[0]
    np.testing.assert_array_equal(body.velocity, velocity)
    np.testing.assert_array_equal(body.omega_body, omega)
    np.testing.assert_array_equal(body.position, [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(body.R_world_body, np.eye(3))
    np.testing.assert_array_equal(sc.system.gravity, gravity)
    # angular momentum about the mass centre, R J W (printed to 8 decimals)
    L = body.R_world_body @ body.inertia @ body.omega_body
    np.testing.assert_allclose(L, L0, rtol=0, atol=5e-9)
    traj = sc.run(t_end=0.0)
    np.testing.assert_allclose(traj.angular_momentum[0], L0, rtol=0, atol=5e-9)  # the origin is the mass centre
    # energy (potential zero at z = 0; printed to 9 decimals)
    assert traj.energy[0] == pytest.approx(E0, abs=5e-10)
    assert traj.kinetic_energy[0] == pytest.approx(E0, abs=5e-10)
    assert traj.potential_energy[0] == 0.0


# ---------------------------------------------------------------------------
# the heavy symmetrical top (Solfec-1.0 manual; Simo & Wong 1991)
# ---------------------------------------------------------------------------
def test_heavy_top_solfec_data():
    """Solfec's J = diag(5, 5, 1) about O and M g l = 20 with M = 20, as a physical body.

    Solfec's own l = 1, g = 1 would put diag(-15, -15, 1) about the mass centre; the file uses
    l = 0.25, g = 4 (powers of two: M g l = 20 exactly), whose inertia about the mass centre,
    diag(3.75, 3.75, 1), is a real one.
    """
    sc = rbdyn.load_scenario("heavy-top-solfec")
    assert sc.system.n_bodies == 1 and not sc.system.constraints and not sc.system.loads
    top = sc.system.bodies[0]
    assert top.pivoted
    assert top.mass == 20.0
    np.testing.assert_array_equal(top.inertia, np.diag([5.0, 5.0, 1.0]))
    np.testing.assert_array_equal(top.pivot, np.zeros(3))
    np.testing.assert_array_equal(top.com_body, [0.0, 0.0, 0.25])
    np.testing.assert_array_equal(sc.system.gravity, [0.0, 0.0, -4.0])
    g, l = -sc.system.gravity[2], top.com_body[2]
    assert top.mass * g * l == 20.0
    np.testing.assert_array_equal(top.inertia_com, np.diag([3.75, 3.75, 1.0]))
    np.testing.assert_array_equal(top.R_world_body, so3.exp(np.array([0.05, 0.0, 0.0])))
    np.testing.assert_array_equal(top.omega_body, [0.0, 0.0, 50.0])
    assert (sc.scheme.name, sc.dt, sc.t_end, sc.every) == ("rig_neg", 0.001, 10.0, 50)
    # Solfec's potential of the torque -20 Λ(:,3) x e3 is 20 Λ33; the body's, M g (x_c . e3)
    traj = sc.run(t_end=0.0)
    assert traj.potential_energy[0] == pytest.approx(20.0 * top.R_world_body[2, 2], rel=1e-15)
    assert traj.kinetic_energy[0] == pytest.approx(0.5 * 1.0 * 50.0**2, rel=1e-15)
