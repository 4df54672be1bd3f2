"""The closed-form torque-free solution of ``rbdyn.exact`` (Euler–Poinsot).

* the formula satisfies Euler's equations (finite-difference residual) and
  keeps 2T and L^2;
* it matches the toolkit's DOP853 solution (rbdyn.verify) to 1e-9 for both families
  of polhodes, every ordering of the principal moments and both signs of each
  component;
* the period: omega(t + T) = omega(t), the intermediate component flips every
  half period, and the flip times agree with DOP853;
* special motions: steady rotations about each principal axis, the symmetric
  top, the separatrix;
* invalid input raises rbdyn.InputError naming the argument.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import rbdyn
from rbdyn import exact, verify

BOX = np.array([97.0, 82.0, 17.0]) / 120.0  # the Boxes benchmark: 10 kg, 0.1 x 0.4 x 0.9 m
BOX_OMEGA0 = np.array([0.1, 5.0, 0.1])


def reference(I, w0, t, rtol=1e-12):
    """Body rates of the torque-free body: the verification toolkit's DOP853 (rbdyn.verify)."""
    return verify.rigid_body_reference(I, np.eye(3), w0, t, rtol=rtol).omega_body


def cases():
    """(I, omega0) pairs covering both families, every ordering and every sign pattern."""
    out = []
    base = [
        (np.array([1.0, 2.0, 3.0]), np.array([0.3, 1.0, 2.0])),  # about the largest axis
        (np.array([1.0, 2.0, 3.0]), np.array([2.0, 1.0, 0.3])),  # about the smallest axis
        (BOX[[2, 1, 0]], BOX_OMEGA0[[2, 1, 0]]),  # near the separatrix, about the largest
        (np.array([1.0, 2.0, 3.0]), np.array([0.1, 4.0, 0.05])),  # near the separatrix, about the smallest
    ]
    for I, w in base:
        for perm in itertools.permutations(range(3)):
            for signs in ((1, 1, 1), (-1, 1, 1), (1, -1, 1), (1, 1, -1), (-1, -1, -1)):
                out.append((I[list(perm)], w[list(perm)] * np.array(signs)))
    return out


CASES = cases()


def energy2(I, w):
    return np.sum(I * w * w, axis=-1)


def momentum2(I, w):
    return np.sum((I * w) ** 2, axis=-1)


@pytest.mark.parametrize("k", range(0, len(CASES), 7))
def test_satisfies_euler_equations(k):
    I, w0 = CASES[k]
    t = np.linspace(0.0, 20.0, 401)
    h = 1e-3
    w = lambda s: exact.euler_poinsot_omega(I, w0, s)  # noqa: E731
    # fourth-order central difference: truncation error ~ h^4 |w^(5)| / 30
    w_dot = (w(t - 2 * h) - 8 * w(t - h) + 8 * w(t + h) - w(t + 2 * h)) / (12 * h)
    W = w(t)
    residual = I * w_dot + np.cross(W, I * W)
    scale = np.max(I) * np.linalg.norm(w0) ** 2
    assert np.max(np.abs(residual)) <= 1e-8 * scale


@pytest.mark.parametrize("k", range(len(CASES)))
def test_invariants_and_initial_value(k):
    I, w0 = CASES[k]
    t = np.linspace(0.0, 100.0, 2001)
    W = exact.euler_poinsot_omega(I, w0, t)
    assert np.max(np.abs(W[0] - w0)) <= 1e-13 * np.linalg.norm(w0)
    e0, l0 = energy2(I, w0), momentum2(I, w0)
    assert np.max(np.abs(energy2(I, W) - e0)) <= 1e-12 * e0
    assert np.max(np.abs(momentum2(I, W) - l0)) <= 1e-12 * l0


@pytest.mark.parametrize("k", range(len(CASES)))
def test_matches_dop853(k):
    I, w0 = CASES[k]
    t = np.linspace(0.0, 10.0, 201)
    err = np.max(np.abs(exact.euler_poinsot_omega(I, w0, t) - reference(I, w0, t)))
    assert err <= 1e-9 * np.linalg.norm(w0)


def test_both_families_are_covered():
    families = {exact.euler_poinsot(I, w0).family for I, w0 in CASES}
    assert families == {"major", "minor"}
    # L^2 > 2 T I_mid: about the largest axis; L^2 < 2 T I_mid: about the smallest
    for I, w0 in CASES:
        sol = exact.euler_poinsot(I, w0)
        D = momentum2(I, w0) - energy2(I, w0) * np.sort(I)[1]
        assert sol.family == ("major" if D > 0 else "minor")
        assert I[sol.dn_axis] == (np.max(I) if D > 0 else np.min(I))
        assert I[sol.sn_axis] == np.sort(I)[1]


@pytest.mark.parametrize("k", range(0, len(CASES), 5))
def test_period_and_flip(k):
    I, w0 = CASES[k]
    sol = exact.euler_poinsot(I, w0)
    T = exact.euler_poinsot_period(I, w0)
    assert T == sol.period and 0 < T < math.inf
    t = np.linspace(0.0, 3 * T, 301)
    W = exact.euler_poinsot_omega(I, w0, t)
    assert np.max(np.abs(exact.euler_poinsot_omega(I, w0, t + T) - W)) <= 1e-10 * np.linalg.norm(w0)
    # the intermediate component is odd about its zeros: w_b(t + T/2) = -w_b(t)
    b = sol.sn_axis
    half = exact.euler_poinsot_omega(I, w0, t + T / 2)
    assert np.max(np.abs(half[:, b] + W[:, b])) <= 1e-10 * np.linalg.norm(w0)
    # and it keeps the sign of the dn component, which never changes
    d = sol.dn_axis
    assert np.all(np.sign(W[:, d]) == np.sign(w0[d]))


def test_box_flip_times_against_dop853():
    """The Boxes benchmark's complex scenario: zero crossings of omega_y over 20 s."""
    T = exact.euler_poinsot_period(BOX, BOX_OMEGA0)
    t = np.linspace(0.0, 20.0, 200001)
    wy_ref = reference(BOX, BOX_OMEGA0, t)[:, 1]
    wy_ex = exact.euler_poinsot_omega(BOX, BOX_OMEGA0, t)[:, 1]
    c_ref, c_ex = verify.sign_changes(t, wy_ref), verify.sign_changes(t, wy_ex)
    assert len(c_ref) == len(c_ex) >= 5
    assert np.max(np.abs(c_ref - c_ex)) <= 1e-7
    assert np.max(np.abs(np.diff(c_ref) - T / 2)) <= 1e-6


@pytest.mark.parametrize("axis", range(3))
def test_steady_rotation(axis):
    I = np.array([1.0, 2.0, 3.0])
    w0 = np.zeros(3)
    w0[axis] = -1.5
    sol = exact.euler_poinsot(I, w0)
    assert sol.family == "steady"
    W = exact.euler_poinsot_omega(I, w0, np.linspace(0.0, 50.0, 11))
    assert np.all(W == w0)
    # wobble period of the linearised motion about a stable axis; none about the unstable one
    j, k = [i for i in range(3) if i != axis]
    growth = (I[axis] - I[j]) * (I[axis] - I[k]) / (I[j] * I[k])
    if growth > 0:
        assert sol.period == pytest.approx(2 * math.pi / (abs(w0[axis]) * math.sqrt(growth)), rel=1e-14)
    else:
        assert sol.period == math.inf


def test_symmetric_top():
    """I = (a, a, c): (w1, w2) turn at nu = (c - a)/a w3, w3 constant."""
    a, c = 2.0, 0.5
    w0 = np.array([0.3, -0.4, 2.0])
    t = np.linspace(0.0, 10.0, 101)
    nu = (c - a) / a * w0[2]
    expected = np.stack([w0[0] * np.cos(nu * t) - w0[1] * np.sin(nu * t),
                         w0[0] * np.sin(nu * t) + w0[1] * np.cos(nu * t), np.full_like(t, w0[2])], axis=1)
    for perm in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):  # cyclic: a right-handed relabelling
        I = np.array([a, a, c])[list(perm)]
        W = exact.euler_poinsot_omega(I, w0[list(perm)], t)
        assert np.max(np.abs(W - expected[:, list(perm)])) <= 1e-13
    # a sphere turns steadily
    assert np.all(exact.euler_poinsot_omega([1.0, 1.0, 1.0], w0, t) == w0)


def test_separatrix():
    """I = (1, 2.5, 4), omega0 = (2, 0.7, 1): L^2 = 2 T I_mid exactly (in binary too)."""
    I = np.array([1.0, 2.5, 4.0])
    for signs in ((1, 1, 1), (-1, 1, 1), (1, -1, -1)):
        w0 = np.array([2.0, 0.7, 1.0]) * np.array(signs)
        sol = exact.euler_poinsot(I, w0)
        assert sol.family == "separatrix" and sol.m == 1.0 and sol.period == math.inf
        t = np.linspace(0.0, 3.0, 61)
        W = exact.euler_poinsot_omega(I, w0, t)
        assert np.max(np.abs(W - reference(I, w0, t, rtol=1e-13))) <= 1e-8
        # it tends to the steady rotation about the intermediate axis
        W_late = exact.euler_poinsot_omega(I, w0, [40.0])[0]
        assert abs(W_late[0]) < 1e-10 and abs(W_late[2]) < 1e-10
        assert abs(W_late[1]) == pytest.approx(math.sqrt(momentum2(I, w0)) / I[1], rel=1e-12)


def test_scalar_and_shaped_times():
    assert exact.euler_poinsot_omega(BOX, BOX_OMEGA0, 0.5).shape == (3,)
    t = np.linspace(0.0, 1.0, 6).reshape(2, 3)
    W = exact.euler_poinsot_omega(BOX, BOX_OMEGA0, t)
    assert W.shape == (2, 3, 3)
    assert np.array_equal(W[1, 2], exact.euler_poinsot_omega(BOX, BOX_OMEGA0, t[1, 2]))


@pytest.mark.parametrize(
    "args, field",
    [
        (([1.0, 2.0], [0.0, 1.0, 0.0], 1.0), "inertia_diag"),
        ((np.eye(3), [0.0, 1.0, 0.0], 1.0), "inertia_diag"),
        (([1.0, -2.0, 3.0], [0.0, 1.0, 0.0], 1.0), "inertia_diag"),
        (([1.0, np.nan, 3.0], [0.0, 1.0, 0.0], 1.0), "inertia_diag"),
        (("abc", [0.0, 1.0, 0.0], 1.0), "inertia_diag"),
        (([1.0, 2.0, 3.0], [0.0, 1.0], 1.0), "omega0_body"),
        (([1.0, 2.0, 3.0], [0.0, np.inf, 0.0], 1.0), "omega0_body"),
        (([1.0, 2.0, 3.0], None, 1.0), "omega0_body"),
        (([1.0, 2.0, 3.0], [0.0, 1.0, 0.5], [0.0, np.nan]), "t"),
        (([1.0, 2.0, 3.0], [0.0, 1.0, 0.5], "soon"), "t"),
    ],
)
def test_bad_input_names_the_argument(args, field):
    with pytest.raises(rbdyn.InputError) as info:
        exact.euler_poinsot_omega(*args)
    assert info.value.field == field
    assert str(info.value).startswith(field)
    if field != "t":
        with pytest.raises(rbdyn.InputError) as info:
            exact.euler_poinsot_period(*args[:2])
        assert info.value.field == field


def test_phase_accurate_next_to_the_separatrix():
    """u0 against mpmath's F(phi | m) from the same double-precision inputs, every quadrant."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    for signs in itertools.product((1, -1), repeat=3):
        w0 = BOX_OMEGA0 * np.array(signs)
        sol = exact.euler_poinsot(BOX, w0)
        I = [mpmath.mpf(float(x)) for x in BOX]
        w = [mpmath.mpf(float(x)) for x in w0]
        a, b, c = sol.cn_axis, sol.sn_axis, sol.dn_axis
        assert sol.family == "major"  # a = cn axis (smallest moment), c = dn axis (largest)
        P = I[a] * (I[c] - I[a]) * w[a] ** 2 + I[b] * (I[c] - I[b]) * w[b] ** 2
        Q = I[b] * (I[b] - I[a]) * w[b] ** 2 + I[c] * (I[c] - I[a]) * w[c] ** 2
        m = (I[b] - I[a]) * P / ((I[c] - I[b]) * Q)
        amp_b = mpmath.sqrt(P / (I[b] * (I[c] - I[b])))
        amp_a = mpmath.sqrt(P / (I[a] * (I[c] - I[a]))) * int(np.sign(sol.amplitude[a]))
        u0 = mpmath.ellipf(mpmath.atan2(w[b] / amp_b, w[a] / amp_a), m)
        K = mpmath.ellipk(m)
        d = float(abs(sol.u0 - u0) % (4 * K))  # u0 is defined modulo the period 4K
        assert min(d, float(4 * K) - d) <= 1e-14 * float(K)
