"""The right-hand side of ``rbdyn.verify.rigid_body_reference`` (``rigid_body_rates``) is the
rigid body's equations written with numpy, bit for bit.

The reference evaluates its right-hand side in Python floats, where numpy would spend some 17 µs
on each ``np.cross`` of two 3-vectors; the pages compute references of 10⁴–10⁵ steps. Doing the
same products and differences in the same order gives the same bits, so the book's references
(and every number compared with them) did not change. These tests hold the rewritten
right-hand side to the plain numpy form of

    q̇ = ½ q ⊗ (0, Ω),   J Ω̇ = T − Ω × JΩ,   T = c × Λᵀ m g (heavy top),

on random states, with diagonal and full inertias, and ``_cross`` to ``np.cross``.
"""

from __future__ import annotations

import numpy as np
import pytest

from rbdyn import verify
from rbdyn.verify import _references


def _numpy_quat_mul(p, q):
    pw, px, py, pz = p
    qw, qx, qy, qz = q
    return np.array([pw * qw - px * qx - py * qy - pz * qz, pw * qx + px * qw + py * qz - pz * qy,
                     pw * qy - px * qz + py * qw + pz * qx, pw * qz + px * qy - py * qx + pz * qw])


def _numpy_matrix(q):
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _numpy_rhs(J, torque):
    J_inv = np.linalg.inv(J)

    def rhs(t, y):
        q, W = y[:4], y[4:]
        T = np.zeros(3) if torque is None else torque(t, _numpy_matrix(q), W)
        dq = 0.5 * _numpy_quat_mul(q, np.array([0.0, W[0], W[1], W[2]]))
        return np.concatenate([dq, J_inv @ (T - np.cross(W, J @ W))])

    return rhs


def _inertia(rng, full):
    A = rng.normal(size=(3, 3))
    J = A @ A.T + 0.5 * np.eye(3)
    return J if full else np.diag(np.diag(J))


def _states(rng, n=300):
    y = rng.normal(size=(n, 7)) * [1, 1, 1, 1, 50, 50, 50]
    y[::7, 4] = 0.0  # some exact zeros: their signs must come out as numpy's
    y[::11, 5] = -0.0
    return y


def test_cross_is_numpy_cross_bit_for_bit():
    rng = np.random.default_rng(3)
    for a, b in rng.normal(size=(2000, 2, 3)) * rng.choice([1e-300, 1.0, 1e150], size=(2000, 2, 1)):
        assert np.array(_references._cross(a.tolist(), b.tolist())).tobytes() == np.cross(a, b).tobytes()


@pytest.mark.parametrize("full", [False, True], ids=["diagonal J", "full J"])
def test_free_body_rhs_is_the_numpy_equations(full):
    rng = np.random.default_rng(5 + full)
    J = _inertia(rng, full)
    rhs = verify.rigid_body_rates(J)
    expected = _numpy_rhs(J, None)
    for y in _states(rng):
        assert rhs(0.0, y).tobytes() == expected(0.0, y).tobytes()


@pytest.mark.parametrize("full", [False, True], ids=["diagonal J", "full J"])
def test_heavy_top_rhs_is_the_numpy_equations(full):
    rng = np.random.default_rng(7 + full)
    J, c, m = _inertia(rng, full), rng.normal(size=3), 2.5
    g = rng.normal(size=3) if full else np.array([0.0, 0.0, -9.81])
    rhs = verify.rigid_body_rates(J, verify.heavy_top_torque(c, m, g))
    expected = _numpy_rhs(J, lambda t, R, W: np.cross(c, R.T @ (m * g)))
    for y in _states(rng):
        assert rhs(0.0, y).tobytes() == expected(0.0, y).tobytes()


def test_rotation_samples_are_the_numpy_matrices():
    """The returned rotations: the normalised quaternions of DOP853's solution, as numpy forms them
    (from strided rows of the solution, as the reference takes them)."""
    rng = np.random.default_rng(11)
    qs = rng.normal(size=(4, 500))
    for q in qs.T:
        assert _references._quat_to_matrix(q).tobytes() == _numpy_matrix(q).tobytes()
