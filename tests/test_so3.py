"""Property-based tests of :mod:`rbdyn.so3`.

Every property is checked on rotation vectors drawn from a mixture of three
populations, because the closed forms of SO(3) fail in different places:

* random rotations, ``|phi|`` uniform in ``[0, pi]`` (including both ends);
* near-identity rotations, ``|phi| = 10**u`` with ``u`` in ``[-12, -3]``, and
  exactly zero (the Taylor branches of the module);
* near half turns, ``|phi| = pi - 10**u`` with ``u`` in ``[-12, -3]`` (where
  ``log`` must take the axis from the symmetric part).

Axes are uniform on the sphere, with the coordinate axes mixed in (they put
exact zeros in the matrices and exercise every branch of Shepperd's method).
All runs are deterministic (``derandomize=True``, no example database).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rbdyn import so3

# ---------------------------------------------------------------------------
# Tolerances (absolute unless stated; rotation matrices, unit quaternions and
# the Jacobians near |phi| <= pi all have O(1) entries, so an absolute bound is
# also a relative one for them).
# ---------------------------------------------------------------------------
EPS = np.finfo(float).eps  # 2.2e-16

# Identities that hold up to a handful of roundings of O(1) quantities
# (round trips, group axioms, quaternion/matrix agreement, J^-1 J = I).
# Observed worst case over thousands of samples is ~1e-15, i.e. ~5 ulp;
# 1e-14 (~45 ulp) leaves a 10x margin without hiding an O(theta^2) slip.
TOL_ROUND = 1e-14

# Relative error of log(exp(phi)) with respect to |phi|. The series branches
# keep ulp-level *relative* accuracy down to |phi| = 1e-12 (a naive arccos
# log has 100 % error there), so the bound is relative, not absolute.
TOL_LOG_REL = 1e-14

# Module output against a 40-digit mpmath evaluation of the closed form
# (exp, J_r, the Géradin-Cardona tangent operator). Observed <= 2.5 ulp.
TOL_REF = 4e-15

# Central finite differences. The step balances the O(h^2) truncation error
# against the O(eps/h) rounding error (optimum near eps**(1/3) ~ 6e-6);
# with FD_STEP = 1e-5 the observed error is ~5e-11 on random and near-pi
# samples and ~1e-14 near the identity, so 1e-9 is a 20x margin.
FD_STEP = 1e-5
TOL_FD = 1e-9

# Compiled (numba) against pure Python (NUMBA_DISABLE_JIT=1): the same
# float64 operations in the same order; observed bit-identical. Allow 1e-15
# in case a libm/LLVM intrinsic differs by an ulp on another machine.
TOL_NOJIT = 1e-15

# Inputs within this distance of |phi| = pi are at the cut of the principal
# log: exp(phi) == exp(-phi) up to rounding, so log may return either sign.
PI_CUT = 1e-13

SETTINGS = settings(derandomize=True, max_examples=250, deadline=None, database=None)

I3 = np.eye(3)
MP_DPS = 40  # digits of the mpmath references (set locally, with mpmath.workdps)


# ---------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------
_AXES = [np.array(v, dtype=float) for v in np.vstack([np.eye(3), -np.eye(3)])]
_AXES.append(np.ones(3) / np.sqrt(3.0))


@st.composite
def unit_vectors(draw):
    if draw(st.integers(0, 4)) == 0:
        return draw(st.sampled_from(_AXES)).copy()
    z = draw(st.floats(-1.0, 1.0))
    lon = draw(st.floats(0.0, 2.0 * math.pi))
    r = math.sqrt(max(0.0, 1.0 - z * z))
    u = np.array([r * math.cos(lon), r * math.sin(lon), z])
    return u / np.linalg.norm(u)


def _log_uniform(x):
    """Map x in [0, 1] to 10**u with u uniform in [-12, -3]."""
    return 10.0 ** (-12.0 + 9.0 * x)


# A fraction in [0, 1]: half from st.floats, which favours the ends and
# "simple" values (hence exact zero, 1e-12 and pi below), half from a seeded
# uniform generator (reproducible: its seed comes from Hypothesis), which
# spreads the samples over every decade. Hypothesis-generated values alone
# left the 1e-8..1e-4 band, where the series branches switch, nearly empty.
fractions = st.one_of(
    st.floats(0.0, 1.0),
    st.randoms(use_true_random=True).map(lambda r: r.random()),
)
random_angles = fractions.map(lambda x: math.pi * x)
small_angles = fractions.map(lambda x: 0.0 if x == 0.0 else _log_uniform(x))
halfturn_angles = fractions.map(lambda x: math.pi - _log_uniform(x))
angles = st.one_of(random_angles, small_angles, halfturn_angles)


@st.composite
def rotvecs(draw):
    """Rotation vectors with |phi| <= pi (up to rounding) from the three populations above."""
    return draw(angles) * draw(unit_vectors())


vectors = st.tuples(*[st.floats(-10.0, 10.0)] * 3).map(np.array)


@st.composite
def unit_quats(draw):
    """Unit quaternions of either sign (so w < 0 occurs), incl. w ~ 0."""
    q = so3.quat_wxyz_exp(draw(rotvecs()))
    return -q if draw(st.booleans()) else q


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------
def maxabs(A):
    return float(np.max(np.abs(A)))


def at_pi_cut(phi):
    return abs(np.linalg.norm(phi) - math.pi) < PI_CUT


def fd_jacobian(f, x, h=FD_STEP):
    """Central-difference Jacobian of f: R^3 -> R^n at x."""
    cols = []
    for k in range(3):
        d = np.zeros(3)
        d[k] = h
        cols.append((f(x + d) - f(x - d)) / (2.0 * h))
    return np.column_stack(cols)


def mp_hat(v):
    return mpmath.matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def mp_maxdiff(A, B):
    return float(max(abs(mpmath.mpf(float(A[i, j])) - B[i, j]) for i in range(3) for j in range(3)))


# ---------------------------------------------------------------------------
# hat / vee
# ---------------------------------------------------------------------------
@SETTINGS
@given(vectors, vectors)
def test_hat_is_cross_product(a, b):
    scale = max(1.0, np.linalg.norm(a) * np.linalg.norm(b))
    assert maxabs(so3.hat(a) @ b - np.cross(a, b)) <= TOL_ROUND * scale


@SETTINGS
@given(vectors, vectors)
def test_hat_vee_round_trip(a, s):
    A = so3.hat(a)
    assert np.array_equal(A, -A.T)
    assert np.array_equal(so3.vee(A), a)
    # vee reads the skew part only: a symmetric addition is ignored.
    S = np.outer(s, s)
    assert maxabs(so3.vee(A + S) - a) <= TOL_ROUND * max(1.0, maxabs(S))


# ---------------------------------------------------------------------------
# exp / log
# ---------------------------------------------------------------------------
@SETTINGS
@given(rotvecs())
def test_exp_is_orthonormal_with_unit_determinant(phi):
    R = so3.exp(phi)
    assert maxabs(R.T @ R - I3) <= TOL_ROUND
    assert abs(np.linalg.det(R) - 1.0) <= TOL_ROUND
    assert so3.orthonormality_error(R) <= TOL_ROUND


@SETTINGS
@given(rotvecs())
def test_exp_matches_high_precision_rodrigues(phi):
    with mpmath.workdps(MP_DPS):
        v = [mpmath.mpf(float(x)) for x in phi]
        th = mpmath.sqrt(sum(x * x for x in v))
        K = mp_hat(v)
        if th == 0:
            ref = mpmath.eye(3)
        else:
            ref = mpmath.eye(3) + mpmath.sin(th) / th * K + (1 - mpmath.cos(th)) / th**2 * (K * K)
        err = mp_maxdiff(so3.exp(phi), ref)
    assert err <= TOL_REF


@SETTINGS
@given(rotvecs())
def test_exp_of_log(phi):
    R = so3.exp(phi)
    assert maxabs(so3.exp(so3.log(R)) - R) <= TOL_ROUND


@SETTINGS
@given(rotvecs())
def test_log_of_exp(phi):
    back = so3.log(so3.exp(phi))
    theta = np.linalg.norm(phi)
    assert np.linalg.norm(back) <= math.pi * (1.0 + EPS)
    err = np.linalg.norm(back - phi)
    if at_pi_cut(phi):
        # exp(phi) == exp(-phi) at a half turn: either sign is a correct log.
        err = min(err, np.linalg.norm(back + phi))
    # Relative bound: exact zero must come back exactly.
    assert err <= TOL_LOG_REL * theta


def test_log_of_identity_and_exact_half_turns():
    assert np.array_equal(so3.log(I3), np.zeros(3))
    for k in range(3):
        R = -I3.copy()
        R[k, k] = 1.0  # rotation by pi about axis k, exactly representable
        phi = so3.log(R)
        expected = np.zeros(3)
        expected[k] = math.pi
        assert min(maxabs(phi - expected), maxabs(phi + expected)) <= TOL_ROUND


@SETTINGS
@given(rotvecs())
def test_aliases(phi):
    R = so3.exp(phi)
    assert np.array_equal(so3.rotvec_to_matrix(phi), R)
    assert np.array_equal(so3.matrix_to_rotvec(R), so3.log(R))


# ---------------------------------------------------------------------------
# Group axioms
# ---------------------------------------------------------------------------
@SETTINGS
@given(rotvecs(), rotvecs(), rotvecs())
def test_composition_is_associative(a, b, c):
    A, B, C = so3.exp(a), so3.exp(b), so3.exp(c)
    assert maxabs((A @ B) @ C - A @ (B @ C)) <= TOL_ROUND
    p, q, r = so3.quat_wxyz_exp(a), so3.quat_wxyz_exp(b), so3.quat_wxyz_exp(c)
    lhs = so3.quat_wxyz_multiply(so3.quat_wxyz_multiply(p, q), r)
    rhs = so3.quat_wxyz_multiply(p, so3.quat_wxyz_multiply(q, r))
    assert maxabs(lhs - rhs) <= TOL_ROUND


@SETTINGS
@given(rotvecs())
def test_inverse_is_transpose(phi):
    assert maxabs(so3.exp(-phi) - so3.exp(phi).T) <= TOL_ROUND
    assert maxabs(so3.exp(phi) @ so3.exp(-phi) - I3) <= TOL_ROUND


@SETTINGS
@given(rotvecs(), st.floats(-2.0, 2.0), st.floats(-2.0, 2.0))
def test_one_parameter_subgroup(phi, t, s):
    lhs = so3.exp(t * phi) @ so3.exp(s * phi)
    assert maxabs(lhs - so3.exp((t + s) * phi)) <= TOL_ROUND


# ---------------------------------------------------------------------------
# Jacobians
# ---------------------------------------------------------------------------
@SETTINGS
@given(rotvecs())
def test_right_jacobian_finite_differences(phi):
    Rt = so3.exp(phi).T
    fd = fd_jacobian(lambda x: so3.log(Rt @ so3.exp(x)), phi)
    assert maxabs(fd - so3.right_jacobian(phi)) <= TOL_FD


@SETTINGS
@given(rotvecs())
def test_left_jacobian_finite_differences(phi):
    Rt = so3.exp(phi).T
    fd = fd_jacobian(lambda x: so3.log(so3.exp(x) @ Rt), phi)
    assert maxabs(fd - so3.left_jacobian(phi)) <= TOL_FD


@SETTINGS
@given(rotvecs())
def test_left_right_jacobian_relations(phi):
    Jl = so3.left_jacobian(phi)
    assert maxabs(Jl - so3.right_jacobian(-phi)) <= TOL_ROUND
    assert maxabs(Jl - so3.right_jacobian(phi).T) <= TOL_ROUND
    assert maxabs(so3.left_jacobian_inv(phi) - so3.right_jacobian_inv(-phi)) <= TOL_ROUND


@SETTINGS
@given(rotvecs())
def test_inverse_jacobians(phi):
    # |phi| <= pi here; the inverses are singular only at |phi| = 2 pi.
    Jr, Jl = so3.right_jacobian(phi), so3.left_jacobian(phi)
    Jr_inv, Jl_inv = so3.right_jacobian_inv(phi), so3.left_jacobian_inv(phi)
    assert maxabs(Jr_inv @ Jr - I3) <= TOL_ROUND
    assert maxabs(Jr @ Jr_inv - I3) <= TOL_ROUND
    assert maxabs(Jl_inv @ Jl - I3) <= TOL_ROUND
    assert maxabs(Jl @ Jl_inv - I3) <= TOL_ROUND


def _geradin_cardona_T(psi):
    """T(psi) = I + (cos f - 1)/f^2 psi^ + (1 - sin f / f)/f^2 psi^2, f = |psi|,
    evaluated in 40-digit arithmetic (Géradin & Cardona 2001)."""
    v = [mpmath.mpf(float(x)) for x in psi]
    f = mpmath.sqrt(sum(x * x for x in v))
    if f == 0:
        return mpmath.eye(3)
    K = mp_hat(v)
    return mpmath.eye(3) + (mpmath.cos(f) - 1) / f**2 * K + (1 - mpmath.sin(f) / f) / f**2 * (K * K)


@SETTINGS
@given(rotvecs())
def test_tangent_operator(phi):
    T = so3.tangent_operator(phi)
    assert np.array_equal(T, so3.right_jacobian(phi))
    with mpmath.workdps(MP_DPS):
        err = mp_maxdiff(T, _geradin_cardona_T(phi))
    assert err <= TOL_REF


@SETTINGS
@given(rotvecs(), st.tuples(*[st.floats(-1.0, 1.0)] * 3).map(np.array))
def test_dexp_apply_finite_differences(phi, a):
    fd = fd_jacobian(lambda x: so3.exp(x) @ a, phi)
    assert maxabs(fd - so3.dexp_apply(phi, a)) <= TOL_FD * max(1.0, np.linalg.norm(a))


# ---------------------------------------------------------------------------
# Quaternions
# ---------------------------------------------------------------------------
@SETTINGS
@given(unit_quats())
def test_quaternion_round_trip(q):
    back = so3.matrix_to_quat_wxyz(so3.quat_wxyz_to_matrix(q))
    assert back[0] >= 0.0
    assert abs(np.linalg.norm(back) - 1.0) <= TOL_ROUND
    assert min(maxabs(back - q), maxabs(back + q)) <= TOL_ROUND
    if abs(q[0]) > TOL_ROUND:  # away from w = 0 the sign is determined
        assert maxabs(back - np.sign(q[0]) * q) <= TOL_ROUND


@SETTINGS
@given(rotvecs())
def test_matrix_quaternion_matrix(phi):
    R = so3.exp(phi)
    assert maxabs(so3.quat_wxyz_to_matrix(so3.matrix_to_quat_wxyz(R)) - R) <= TOL_ROUND


@SETTINGS
@given(unit_quats(), unit_quats())
def test_quaternion_product_matches_matrix_product(p, q):
    lhs = so3.quat_wxyz_to_matrix(so3.quat_wxyz_multiply(p, q))
    rhs = so3.quat_wxyz_to_matrix(p) @ so3.quat_wxyz_to_matrix(q)
    assert maxabs(lhs - rhs) <= TOL_ROUND


@SETTINGS
@given(rotvecs())
def test_quaternion_exp_matches_exp(phi):
    q = so3.quat_wxyz_exp(phi)
    assert abs(np.linalg.norm(q) - 1.0) <= TOL_ROUND
    assert q[0] >= 0.0  # |phi| <= pi
    assert maxabs(so3.quat_wxyz_to_matrix(q) - so3.exp(phi)) <= TOL_ROUND
    back = so3.matrix_to_quat_wxyz(so3.exp(phi))
    assert min(maxabs(back - q), maxabs(back + q)) <= TOL_ROUND


# ---------------------------------------------------------------------------
# Distance
# ---------------------------------------------------------------------------
@SETTINGS
@given(rotvecs())
def test_distance_to_identity_is_angle(phi):
    R = so3.exp(phi)
    theta = np.linalg.norm(phi)
    assert abs(so3.rotation_distance(I3, R) - theta) <= TOL_LOG_REL * theta
    assert so3.rotation_distance(R, R) == 0.0


@SETTINGS
@given(rotvecs(), rotvecs(), rotvecs())
def test_distance_is_a_metric(a, b, c):
    A, B, C = so3.exp(a), so3.exp(b), so3.exp(c)
    dab, dba = so3.rotation_distance(A, B), so3.rotation_distance(B, A)
    assert 0.0 <= dab <= math.pi * (1.0 + EPS)
    assert abs(dab - dba) <= TOL_ROUND
    assert so3.rotation_distance(A, C) <= dab + so3.rotation_distance(B, C) + TOL_ROUND


# ---------------------------------------------------------------------------
# Compiled == pure Python
# ---------------------------------------------------------------------------
_NOJIT_SCRIPT = r"""
import json, sys
import numpy as np
from rbdyn import so3
assert not hasattr(so3.exp, "py_func"), "JIT was not disabled"
rng = np.random.default_rng(20240611)
phis = [np.zeros(3)]
for th in [1e-12, 1e-7, 5e-5, 2e-4, 5e-4, 2e-3, 0.3, 1.0, 2.5,
           np.pi - 1e-3, np.pi - 1e-9, np.pi]:
    for _ in range(3):
        u = rng.normal(size=3)
        phis.append(th * u / np.linalg.norm(u))
a = np.array([0.3, -1.2, 0.7])
out = []
for phi in phis:
    R = so3.exp(phi)
    out.append({
        "phi": phi.tolist(), "R": R.tolist(),
        "log": so3.log(R).tolist(),
        "q": so3.matrix_to_quat_wxyz(R).tolist(),
        "qexp": so3.quat_wxyz_exp(phi).tolist(),
        "Jr": so3.right_jacobian(phi).tolist(),
        "Jr_inv": so3.right_jacobian_inv(phi).tolist(),
        "dexp": so3.dexp_apply(phi, a).tolist(),
        "dist": so3.rotation_distance(np.eye(3), R),
    })
json.dump(out, sys.stdout)
"""


def test_compiled_matches_pure_python():
    if not hasattr(so3.exp, "py_func"):
        pytest.skip("this test process itself runs with NUMBA_DISABLE_JIT=1")
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [sys.executable, "-c", _NOJIT_SCRIPT],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    records = json.loads(proc.stdout)
    a = np.array([0.3, -1.2, 0.7])
    worst = 0.0
    for rec in records:
        phi, R = np.array(rec["phi"]), np.array(rec["R"])
        compiled = {
            "R": so3.exp(phi),
            "log": so3.log(R),  # same input matrix on both sides
            "q": so3.matrix_to_quat_wxyz(R),
            "qexp": so3.quat_wxyz_exp(phi),
            "Jr": so3.right_jacobian(phi),
            "Jr_inv": so3.right_jacobian_inv(phi),
            "dexp": so3.dexp_apply(phi, a),
            "dist": so3.rotation_distance(I3, R),
        }
        for key, value in compiled.items():
            worst = max(worst, maxabs(np.asarray(value) - np.asarray(rec[key])))
    assert worst <= TOL_NOJIT
