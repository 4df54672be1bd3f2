"""Every constraint kind of the registry, against central differences and in every scheme.

For random configurations of two bodies (and of a body and the world), each kind's compiled
gradient, geometric stiffness and velocity product are compared with central differences of
its own residual (and of the generalized reaction ``B^T lam``); then every scheme that handles
constraints runs with every kind and keeps the residual at its solver's tolerance.
A new kind registered in ``rbdyn.constraints.KINDS`` is tested here without a new line: what
a kind needs to be valid (a rod's world end, a hinge's axis) comes from its own
``Constraint.random_keys``, and every kind is checked against the limits of the packed data and
the schemes' scratch (``DATA_WIDTH``, ``MAX_ROWS``, ``SCRATCH_VECTORS``).
"""

import numpy as np
import pytest

import rbdyn
from rbdyn import so3
from rbdyn.constraints import KINDS
from rbdyn.constraints.base import DATA_WIDTH, MAX_ROWS, SCRATCH_VECTORS

EPS = 1e-6
CONSTRAINED = [n for n, c in rbdyn.schemes().items() if c.supports_constraints]


def _make(kind, other, rng):
    """A constraint of ``kind`` between body a and b (or the world), resolved in a system at a
    random initial pose, so that the kind's defaults (held points, axes) are filled."""
    J = rbdyn.box_inertia(1.0, (0.3, 0.2, 0.1))
    a = rbdyn.RigidBody("a", 1.0, J, position=rng.normal(size=3), rotvec=rng.normal(size=3))
    b = rbdyn.RigidBody("b", 2.0, 2 * J, position=rng.normal(size=3), rotvec=rng.normal(size=3))
    kw = {"body": "a", "point_body": 0.3 * rng.normal(size=3)}
    if other:
        kw["other"] = "b"
    kw.update(kind.random_keys(rng, to_world=not other))
    system = rbdyn.System([a, b] if other else [a], constraints=[kind(**kw)])
    return system.constraints[0], len(system.bodies)


def _perturbed(n, rng):
    x = rng.normal(size=(n, 3))
    R = np.array([so3.exp(rng.normal(size=3)) for _ in range(n)])
    return x, R


def _moved(x, R, q):
    """Configuration moved by the world increments q = (dx_a, dth_a, dx_b, dth_b)."""
    x2, R2 = x.copy(), R.copy()
    for i in range(len(x)):
        x2[i] = x[i] + q[6 * i: 6 * i + 3]
        R2[i] = so3.exp(q[6 * i + 3: 6 * i + 6]) @ R[i]
    return x2, R2


def _cases():
    return [(k, other) for k in KINDS for other in (True, False)]


@pytest.mark.parametrize("kind, other", _cases(), ids=lambda v: v.kind if isinstance(v, type) else ("body" if v else "world"))
@pytest.mark.parametrize("seed", range(3))
def test_gradient_matches_central_differences(kind, other, seed):
    rng = np.random.default_rng(seed)
    c, n = _make(kind, other, rng)
    x, R = _perturbed(n, rng)
    Ba, Bb = c.gradient(x, R)
    B = np.hstack([Ba, Bb])[:, : 6 * n]
    fd = np.zeros_like(B)
    for col in range(6 * n):
        e = np.zeros(6 * n)
        e[col] = EPS
        fd[:, col] = (c.residual(*_moved(x, R, e)) - c.residual(*_moved(x, R, -e))) / (2 * EPS)
    assert np.max(np.abs(B - fd)) <= 1e-7 * (1 + np.max(np.abs(fd))), (B, fd)


@pytest.mark.parametrize("kind, other", _cases(), ids=lambda v: v.kind if isinstance(v, type) else ("body" if v else "world"))
@pytest.mark.parametrize("seed", range(3))
def test_stiffness_matches_central_differences(kind, other, seed):
    rng = np.random.default_rng(10 + seed)
    c, n = _make(kind, other, rng)
    x, R = _perturbed(n, rng)
    lam = rng.normal(size=c.n_eq)

    def reaction(x_, R_):
        Ba, Bb = c.gradient(x_, R_)
        return np.concatenate([Ba.T @ lam, Bb.T @ lam])[: 6 * n]

    K = c.stiffness(x, R, lam)[: 6 * n, : 6 * n]
    fd = np.zeros_like(K)
    for col in range(6 * n):
        e = np.zeros(6 * n)
        e[col] = EPS
        fd[:, col] = (reaction(*_moved(x, R, e)) - reaction(*_moved(x, R, -e))) / (2 * EPS)
    assert np.max(np.abs(K - fd)) <= 1e-6 * (1 + np.max(np.abs(fd))), (K - fd)


@pytest.mark.parametrize("kind, other", _cases(), ids=lambda v: v.kind if isinstance(v, type) else ("body" if v else "world"))
@pytest.mark.parametrize("seed", range(3))
def test_velocity_product_matches_the_second_difference(kind, other, seed):
    """Along x(t) = x + v t, Lambda(t) = exp[w t] Lambda (zero accelerations), g'' = gamma."""
    rng = np.random.default_rng(20 + seed)
    c, n = _make(kind, other, rng)
    x, R = _perturbed(n, rng)
    v, w = rng.normal(size=(n, 3)), rng.normal(size=(n, 3))

    def g(t):
        return c.residual(x + v * t, np.array([so3.exp(w[i] * t) @ R[i] for i in range(n)]))

    tau = 1e-4
    fd = (g(tau) - 2 * g(0.0) + g(-tau)) / tau**2
    gam = c.velocity_product(x, R, v, w)
    assert np.max(np.abs(gam - fd)) <= 1e-5 * (1 + np.max(np.abs(fd))), (gam, fd)


@pytest.mark.parametrize("scheme", CONSTRAINED)
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.kind)
def test_every_scheme_runs_every_kind(scheme, kind):
    """Two tumbling bodies joined by the kind, the first also held to the world by it, under gravity
    (for the weld: a held still by the world, and b welded to it)."""
    rng = np.random.default_rng(3)
    J = rbdyn.box_inertia(1.0, (0.3, 0.2, 0.1))
    a = rbdyn.RigidBody("a", 1.0, J, position=(0.0, 0.0, 0.0), omega_body=(1.0, 2.0, 3.0), velocity=(0.1, 0.0, 0.0))
    b = rbdyn.RigidBody("b", 2.0, 2 * J, position=(0.3, 0.1, -0.2), omega_body=(-1.0, 0.5, 2.0))
    to_world = kind("a", point_body=(0.0, 0.0, 0.2), **kind.random_keys(rng, to_world=True))
    between = kind("b", point_body=(-0.15, -0.05, 0.1), other="a", **kind.random_keys(rng, to_world=False))
    system = rbdyn.System([a, b], constraints=[to_world, between], gravity=(0.0, 0.0, -9.81))
    traj = rbdyn.simulate(system, scheme, 1e-3, 0.2, every=20)
    assert traj.status == "success"
    tol = 1e-12 if "constraint_tol" in rbdyn.get_scheme(scheme).__dataclass_fields__ else 1e-9
    assert traj.constraint.max() <= tol, traj.constraint.max()
    assert traj.constraint_residuals.shape[1] == 2 * kind.n_eq  # both constraints ran


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.kind)
def test_kind_fits_the_limits(kind):
    """Every kind stays within the limits that size the packed data and the schemes' scratch:
    at most MAX_ROWS rows, a data row of DATA_WIDTH numbers, and (its functions run in Python,
    where an index past the end raises) no more than SCRATCH_VECTORS scratch vectors, data
    numbers, or rows of g, floor, Ba, Bb and gam than it declares."""
    assert 1 <= kind.n_eq <= MAX_ROWS
    rng = np.random.default_rng(5)
    for other in (True, False):
        c, n = _make(kind, other, rng)
        data = c.data()
        assert data.shape == (DATA_WIDTH,) and np.all(np.isfinite(data))
        x, R = _perturbed(n, rng)
        xa, Ra, xb, Rb = c._poses(x, R)
        rows, s = kind.n_eq, np.zeros((SCRATCH_VECTORS, 3))
        g, floor = np.zeros(rows), np.zeros(rows)
        kind.functions.residual.py_func(data[None, :], 0, xa, Ra, xb, Rb, g, floor, 0, s)
        Ba, Bb = np.zeros((rows, 6)), np.zeros((rows, 6))
        kind.functions.gradient.py_func(data[None, :], 0, xa, Ra, xb, Rb, Ba, Bb, s)
        kind.functions.stiffness.py_func(data[None, :], 0, xa, Ra, xb, Rb, rng.normal(size=rows), 0, np.zeros((12, 12)), s)
        v, w = rng.normal(size=(2, 3))
        kind.functions.velocity_product.py_func(data[None, :], 0, xa, Ra, v, w, xb, Rb, -v, -w, np.zeros(rows), 0, s)
        np.testing.assert_array_equal(g, c.residual(x, R))
        np.testing.assert_array_equal(np.hstack([Ba, Bb]), np.hstack(c.gradient(x, R)))


def test_registry_is_complete():
    names = [k.kind for k in KINDS]
    assert len(set(names)) == len(names)
    for k in KINDS:
        assert issubclass(k, rbdyn.constraints.Constraint)
        assert k.functions._fields == ("residual", "gradient", "stiffness", "velocity_product")
