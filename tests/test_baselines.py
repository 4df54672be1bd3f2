"""Accuracy of every registered scheme on problems with an exact solution.

Written over :func:`rbdyn.schemes` (free bodies only, so constraint support
does not matter): a new scheme is tested as soon as it registers.

* torque-free symmetric top: the fitted order of convergence of the error at
  ``t_end`` equals ``scheme.order`` within 0.3;
* projectile under gravity: symplectic Euler's position error is exactly
  ``h t |g| / 2``; every scheme's translation error is exact or of its order;
* the rotation stays a rotation (quaternion norm, orthonormality) over 10^5
  steps;
* symplectic Euler reproduces the Open Dynamics Engine's published errors on
  the Boxes benchmark (complex scenario).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import rbdyn
from rbdyn import verify
from rbdyn import so3

SCHEMES = list(rbdyn.schemes())
E3 = np.array([0.0, 0.0, 1.0])

# ---------------------------------------------------------------------------
# torque-free symmetric top, J = diag(a, a, c)
# ---------------------------------------------------------------------------
# Euler's equations give W3 constant and (W1, W2) turning about E3 at the
# body-frame precession rate nu = (c - a)/a * W3, so W(t) = exp(t nu E3) W0.
# The world angular momentum L = R J W is constant, and
#     R(t) = exp(t L / a) R0 exp(-t nu E3)
# since then R^T R' = hat(R^T L / a - nu E3) = hat(J W / a - nu E3) = hat(W)
# (J W / a = (W1, W2, c W3 / a)), and R^T L = exp(t nu E3) R0^T L = J W(t)
# because J commutes with rotations about E3. The test below checks this
# against a high-accuracy numerical solution before it is used.
TOP_A, TOP_C = 1.0, 1.6
TOP_W0 = np.array([0.6, -0.4, 1.5])
TOP_R0 = so3.exp(np.array([0.3, -0.2, 0.5]))
TOP_T = 2.0
TOP_N = [20, 40, 80, 160, 320]  # steps to TOP_T
ORDER_TOL = 0.3
# Below this the error is round-off (rk4 reaches ~4e-11 at N = 320).
ROUNDOFF_FLOOR = 1e-11


def top_exact(t):
    J = np.diag([TOP_A, TOP_A, TOP_C])
    L = TOP_R0 @ J @ TOP_W0
    nu = (TOP_C - TOP_A) / TOP_A * TOP_W0[2]
    return so3.exp(t * L / TOP_A) @ TOP_R0 @ so3.exp(-t * nu * E3), so3.exp(t * nu * E3) @ TOP_W0


def top_system():
    body = rbdyn.RigidBody("top", 1.0, [TOP_A, TOP_A, TOP_C], R_world_body=TOP_R0, omega_body=TOP_W0)
    return rbdyn.System([body])


def test_symmetric_top_closed_form_against_the_toolkit_reference():
    times = np.linspace(0.0, TOP_T, 9)
    ref = verify.rigid_body_reference([TOP_A, TOP_A, TOP_C], TOP_R0, TOP_W0, times, rtol=1e-12)
    for k, t in enumerate(times):
        R_ex, W_ex = top_exact(t)
        np.testing.assert_allclose(ref.R_world_body[k], R_ex, rtol=0, atol=1e-9)
        np.testing.assert_allclose(ref.omega_body[k], W_ex, rtol=0, atol=1e-9)
    # and the closed form is not trivially constant
    assert np.linalg.norm(top_exact(TOP_T)[0] - TOP_R0) > 0.5
    assert np.linalg.norm(top_exact(TOP_T)[1] - TOP_W0) > 0.5


def fitted_order(hs, errs):
    """The book's order rule (rbdyn.verify.fit_order), on at least 3 points above round-off."""
    fit = verify.fit_order(hs, errs, floor=ROUNDOFF_FLOOR)
    assert fit.errors.size >= 3, f"too few errors above round-off to fit an order: {errs}"
    return fit.order


@pytest.mark.parametrize("scheme", SCHEMES)
def test_order_of_convergence_symmetric_top(scheme):
    R_ex, W_ex = top_exact(TOP_T)
    system = top_system()
    hs, errs = [], []
    for n in TOP_N:
        h = TOP_T / n
        traj = rbdyn.simulate(system, scheme, h, TOP_T, every=n)
        assert traj.steps == n and traj.t[-1] == pytest.approx(TOP_T, abs=1e-14)
        R, W = traj.R_world_body[-1, 0], traj.omega_body[-1, 0]
        hs.append(h)
        errs.append(np.linalg.norm(so3.log(R_ex.T @ R)) + np.linalg.norm(W - W_ex))
    order = verify.literature()[scheme].order
    slope = fitted_order(hs, errs)
    assert abs(slope - order) <= ORDER_TOL, (scheme, order, slope, errs)
    assert errs[0] < 0.5  # the coarsest run is already in the asymptotic range


# ---------------------------------------------------------------------------
# projectile under gravity (translation)
# ---------------------------------------------------------------------------
G = np.array([0.0, 0.0, -9.81])
X0, V0 = np.array([0.5, 0.0, 1.0]), np.array([1.0, -2.0, 5.0])
PROJ_T = 1.0


def projectile_system():
    body = rbdyn.RigidBody("ball", 2.0, rbdyn.box_inertia(2.0, (0.1, 0.4, 0.9)), position=X0, velocity=V0,
                           rotvec=[0.1, 0.2, 0.3], omega_body=[0.1, 5.0, 0.1])
    return rbdyn.System([body], gravity=G)


def projectile_exact(t):
    t = np.asarray(t)[:, None]
    return X0 + V0 * t + 0.5 * G * t * t, V0 + G * t


@pytest.mark.parametrize("n", [10, 100, 1000])
def test_symplectic_euler_projectile_error_formula(n):
    """v_k = v0 + k h g, x_k = x0 + t v0 + h^2 g k(k+1)/2 = exact + g h t / 2."""
    h = PROJ_T / n
    traj = rbdyn.simulate(projectile_system(), "symplectic_euler", h, PROJ_T, every=1)
    x_ex, v_ex = projectile_exact(traj.t)
    err = traj.x_com[:, 0] - x_ex
    np.testing.assert_allclose(err, 0.5 * G * h * traj.t[:, None], rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(err, axis=1), 0.5 * 9.81 * h * traj.t, rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(traj.v_com[:, 0], v_ex, rtol=0, atol=1e-12)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_projectile_translation_error(scheme):
    """Exact (to round-off) for constant acceleration, or converging at the scheme's order."""
    hs, errs = [], []
    for n in [10, 20, 40, 80, 160]:
        h = PROJ_T / n
        traj = rbdyn.simulate(projectile_system(), scheme, h, PROJ_T, every=1)
        x_ex, _ = projectile_exact(traj.t)
        hs.append(h)
        errs.append(float(np.max(np.linalg.norm(traj.x_com[:, 0] - x_ex, axis=1))))
    if max(errs) < 1e-10:
        return  # exact for a parabola (rk4, the RIG schemes' half-step update)
    order = verify.literature()[scheme].order
    slope = fitted_order(hs, errs)
    assert abs(slope - order) <= ORDER_TOL, (scheme, order, slope, errs)


# ---------------------------------------------------------------------------
# the rotation stays a rotation over 10^5 steps
# ---------------------------------------------------------------------------
LONG_STEPS = 100_000
LONG_DT = 1e-3
# The quaternion is normalised when it is recorded: its norm is 1 to a few ulps.
TOL_QNORM = 1e-13
# A scheme that updates R by products of rotations (the RIG schemes: no projection) makes a
# round-off error of a few ulps per step in R^T R - I; with no systematic bias that is a random
# walk, sqrt(10^5) * k * 1.1e-16 = 3.5e-14 k after 10^5 steps. Observed: rig_pos 2.2e-13,
# rig_neg 3.5e-13 (k ~ 10), the baselines, which renormalise, ~3e-15. 1e-12 allows k ~ 28; a
# systematic drift of one ulp per step would reach 1.1e-11 and fail it.
TOL_ORTHO = 1e-12


def _long_problems():
    box = rbdyn.load_scenario("boxes-complex").system.bodies[0]  # tumbling about its unstable axis
    top = rbdyn.RigidBody("top", 1.0, [TOP_A, TOP_A, TOP_C], R_world_body=TOP_R0, omega_body=TOP_W0)
    return {"box": rbdyn.System([box]), "top": rbdyn.System([top])}


@functools.lru_cache(maxsize=None)
def long_run_errors(scheme):
    """Worst orthonormality error of R and |1 - |q|| over 10^5 steps, per problem."""
    out = {}
    for name, system in _long_problems().items():
        traj = rbdyn.simulate(system, scheme, LONG_DT, LONG_STEPS * LONG_DT, every=1000)
        assert traj.steps == LONG_STEPS and len(traj.t) == 101
        ortho = max(so3.orthonormality_error(R) for R in traj.R_world_body[:, 0])
        qnorm = float(np.max(np.abs(np.linalg.norm(traj.quat_wxyz[:, 0], axis=1) - 1.0)))
        out[name] = (ortho, qnorm)
    return out


@pytest.mark.parametrize(
    "scheme",
    SCHEMES,
)
def test_rotation_stays_orthonormal_over_1e5_steps(scheme):
    for name, (ortho, qnorm) in long_run_errors(scheme).items():
        assert qnorm <= TOL_QNORM, (name, qnorm)
        assert ortho <= TOL_ORTHO, (name, ortho)


@pytest.mark.parametrize(
    "scheme",
    SCHEMES,
)
def test_rotation_error_does_not_drift(scheme):
    """No systematic drift: at most 10x the random-walk level (the orthonormality bound of
    the test above, TOL_ORTHO, on its own)."""
    for name, (ortho, _) in long_run_errors(scheme).items():
        assert ortho <= 1e-12, (name, ortho)


# ---------------------------------------------------------------------------
# small steps must work for every scheme
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "scheme",
    SCHEMES,
)
def test_small_step_runs(scheme):
    traj = rbdyn.load_scenario("boxes-complex").run(scheme=scheme, dt=1e-4, t_end=0.01, every=10)
    assert traj.status == "success" and traj.steps == 100


# ---------------------------------------------------------------------------
# the Boxes benchmark: symplectic Euler against the published ODE numbers
# ---------------------------------------------------------------------------
# Peters & Hsu (ROSCon 2014), complex scenario, ODE at dt = 1e-3, maxima over
# the 10 s run: position error, relative energy error, relative error of the
# angular momentum about the mass centre.
ODE_POSITION = 0.0490
ODE_ENERGY = 1.246e-2
ODE_MOMENTUM = 1.307e-2


def _agree(value, published):
    """Equal to the published number to 3 significant digits."""
    return f"{value:.3g}" == f"{published:.3g}" and abs(value - published) <= 5e-4 * published


def test_symplectic_euler_reproduces_ode_boxes_complex():
    sc = rbdyn.load_scenario("boxes-complex")
    assert sc.scheme.name == "symplectic_euler" and sc.dt == 1e-3 and sc.t_end == 10.0
    traj = sc.run(every=1)
    assert traj.steps == 10_000 and len(traj.t) == 10_001
    body = sc.system.bodies[0]
    x_ex = body.position + body.velocity * traj.t[:, None] + 0.5 * sc.system.gravity * traj.t[:, None] ** 2
    pos = float(np.max(np.linalg.norm(traj.x_com[:, 0] - x_ex, axis=1)))
    E = traj.energy
    energy = float(np.max(np.abs(E - E[0])) / abs(E[0]))
    L = np.einsum("rij,jk,rk->ri", traj.R_world_body[:, 0], body.inertia, traj.omega_body[:, 0])
    momentum = float(np.max(np.linalg.norm(L - L[0], axis=1)) / np.linalg.norm(L[0]))
    assert _agree(pos, ODE_POSITION), pos
    assert _agree(energy, ODE_ENERGY), energy
    assert _agree(momentum, ODE_MOMENTUM), momentum
    # the position error is the scheme's exact h t |g| / 2 (at t = 10 s: 0.049 m)
    assert pos == pytest.approx(0.5 * 9.8 * 1e-3 * 10.0, rel=1e-6)
