"""The Lie-group generalized-α scheme (``gen_alpha``): Kynema's regression,
consistency of the initial accelerations, orders of convergence (free,
pivoted and constrained bodies), the constraint residual, the settings and
the failure modes.

References: notes/kynema.md (the algorithm, the regression numbers and the
reference solution), Brüls, Cardona & Arnold 2012, Arnold & Brüls 2007.
"""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import rbdyn
from rbdyn import so3, verify
from rbdyn.kernels.gen_alpha import consistent_accelerations
from rbdyn.integrators.gen_alpha import GenAlpha, gen_alpha_coefficients

ORDER_TOL = 0.3
# expected orders from the literature table (rbdyn/verify/literature.toml), not from the scheme class
ORDER = verify.literature()["gen_alpha"].order
CONSTRAINED_ORDER = verify.literature()["gen_alpha"].constrained_order

# Kynema's HeavyTopTest.FinalState (notes/kynema.md): 400 steps of 0.002, rho_inf = 0.9,
# at most 10 Newton iterations, atol 1e-5, rtol 1e-3; absolute tolerance 1e-10.
KYNEMA_X_R = np.array([0.0, 1.0, 0.0])
KYNEMA_U = np.array([-0.42217802273894345, -0.09458263530050703, -0.04455460488952848])
KYNEMA_Q = np.array([-0.17919607435565366, 0.21677896640311572, -0.9594776960853596, -0.017268392381761217])
KYNEMA_OMEGA_DOT0 = np.array([661.3461692307691919, 0.0, 0.0])
KYNEMA_U_DDOT0 = np.array([0.0, -21.3017325444000001, -30.9608307692308244])
# Kynema's reference solution (material-frame run, dt = 2e-6): u and q at t = 1 and t = 2.
REF_U = {
    1.0: np.array([0.1733440435722807, -0.3599112987333657, -0.7484906793466106]),
    2.0: np.array([-0.1504168894608856, -1.7241654846852867, -0.6730223697288009]),
}
REF_Q = {
    1.0: np.array([0.7329439942283007, -0.2782856278135421, 0.5318246439927058, -0.3201761370231893]),
    2.0: np.array([0.1229471344095339, -0.4910798717314375, 0.3504301068655838, -0.7879868665928781]),
}


def kynema():
    return rbdyn.load_scenario("heavy-top-kynema")


def quat_distance(q, p):
    """max |q - p| up to the sign of the quaternion."""
    return min(np.abs(q - p).max(), np.abs(q + p).max())


def fitted_order(hs, errs):
    return verify.fit_order(hs, errs).order


def pivoted_top_reference(t_eval, J_O, c, m, g, R0, W0, rtol=1e-13):
    """A top about a fixed point (rbdyn.verify's DOP853). Returns R at t_eval."""
    return list(verify.heavy_top_reference(J_O, c, m, g, R0, W0, t_eval, rtol=rtol).R_world_body)


# ---------------------------------------------------------------------------
# declaration and settings
# ---------------------------------------------------------------------------
def test_declared_capabilities():
    cls = rbdyn.schemes()["gen_alpha"]
    assert cls is GenAlpha
    # order, constraint support and conservation are bound to the literature table in test_literature
    assert "Brüls" in cls.reference and "generalized" in cls.label
    assert GenAlpha().rho_inf == 0.9


@pytest.mark.parametrize(
    "rho, expected",
    [(1.0, (0.5, 0.5, 0.5, 0.25)), (0.0, (-1.0, 0.0, 1.5, 1.0)), (0.5, (0.0, 1.0 / 3.0, 5.0 / 6.0, 4.0 / 9.0))],
)
def test_coefficients(rho, expected):
    np.testing.assert_allclose(gen_alpha_coefficients(rho), expected, rtol=1e-15, atol=1e-15)
    am, af, gamma, beta = GenAlpha(rho_inf=rho).coefficients
    # second order and the optimal high-frequency dissipation (Chung & Hulbert)
    assert gamma == pytest.approx(0.5 + af - am)
    assert beta == pytest.approx(0.25 * (gamma + 0.5) ** 2)


@pytest.mark.parametrize("bad", [-0.1, 1.1, float("nan"), float("inf"), "0.5", True, None])
def test_rho_inf_outside_bounds_is_an_input_error(bad):
    with pytest.raises(rbdyn.InputError, match=r"scheme\.gen_alpha\.rho_inf: must be a number in \[0, 1\]"):
        rbdyn.get_scheme("gen_alpha", rho_inf=bad)


def test_newton_settings_are_validated():
    for fld, bad in (("newton_atol", 0.0), ("newton_atol", -1e-5), ("newton_atol", float("nan")),
                     ("newton_rtol", -1e-3), ("newton_rtol", float("inf")), ("newton_max_iter", 0),
                     ("newton_max_iter", 2.5), ("newton_max_iter", True)):
        with pytest.raises(rbdyn.InputError, match=rf"scheme\.gen_alpha\.{fld}"):
            GenAlpha(**{fld: bad})
    GenAlpha(newton_rtol=0.0)  # a purely absolute test is allowed
    with pytest.raises(rbdyn.InputError, match="unknown setting"):
        rbdyn.get_scheme("gen_alpha", newton_tol=1e-9)


@pytest.mark.parametrize("rho", [0.0, 0.5, 1.0])
def test_rho_inf_bounds_run(rho):
    traj = kynema().run(scheme=GenAlpha(rho_inf=rho), t_end=0.2)
    assert traj.status == "success" and traj.constraint.max() <= 1e-14


# ---------------------------------------------------------------------------
# Kynema's heavy top
# ---------------------------------------------------------------------------
def test_kynema_scenarios_hold_the_documented_data():
    sc = kynema()
    body = sc.system.bodies[0]
    assert sc.scheme == GenAlpha(rho_inf=0.9, newton_atol=1e-5, newton_rtol=1e-3, newton_max_iter=10)
    assert (sc.dt, sc.t_end) == (0.002, 0.8)
    np.testing.assert_array_equal(body.inertia, np.diag([0.234375, 0.46875, 0.234375]))
    np.testing.assert_array_equal(body.position, KYNEMA_X_R)
    np.testing.assert_array_equal(body.R_world_body, np.eye(3))
    omega = body.R_world_body @ body.omega_body
    np.testing.assert_array_equal(omega, [0.0, 150.0, -4.61538])
    np.testing.assert_allclose(body.velocity, np.cross(omega, KYNEMA_X_R), rtol=0, atol=1e-15)
    seed = rbdyn.load_scenario("heavy-top-kynema-seed")
    sb = seed.system.bodies[0]
    x_r, u_init = np.array([0.0, 0.0, -1.0]), np.array([0.0, 1.0, 1.0])
    np.testing.assert_array_equal(sb.inertia, np.diag([0.234375, 0.234375, 0.46875]))
    np.testing.assert_allclose(sb.R_world_body, so3.exp(np.array([math.pi / 2, 0.0, 0.0])), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(sb.position, x_r + u_init)
    omega_seed = sb.R_world_body @ sb.omega_body
    np.testing.assert_array_equal(omega_seed, [-4.61538, -150.0, 0.0])
    np.testing.assert_array_equal(sb.velocity, np.cross(omega_seed, x_r + u_init))
    # both start on the constraint, and their geometries coincide: R_init maps x_r and J onto the tested ones
    for s in (sc, seed):
        assert np.abs(s.system.constraint_residuals(*s.system.initial_state()[:2])).max() == 0.0
    np.testing.assert_allclose(sb.R_world_body @ x_r, KYNEMA_X_R, atol=1e-15)
    np.testing.assert_allclose(sb.R_world_body @ sb.inertia @ sb.R_world_body.T, body.inertia, atol=1e-15)


def test_consistent_initial_accelerations_match_kynema():
    sc = kynema()
    carry = sc.scheme.init(sc.system, sc.system.initial_state())
    a0, vd0, lam0 = carry[4], carry[5], carry[6]
    np.testing.assert_allclose(vd0[0, 3:], KYNEMA_OMEGA_DOT0, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(vd0[0, :3], KYNEMA_U_DDOT0, rtol=1e-13, atol=1e-12)
    np.testing.assert_array_equal(a0, vd0)
    # the reaction -lam holds the mass centre on its circle against gravity
    m, g = 15.0, np.array([0.0, 0.0, -9.81])
    np.testing.assert_allclose(m * vd0[0, :3], m * g - lam0, rtol=1e-13)


def test_kynema_regression_final_state():
    traj = kynema().run(every=400)
    assert traj.steps == 400 and traj.t[-1] == pytest.approx(0.8)
    u = traj.x_com[-1, 0] - KYNEMA_X_R
    assert np.abs(u - KYNEMA_U).max() <= 1e-10, u - KYNEMA_U
    assert quat_distance(traj.quat_wxyz[-1, 0], KYNEMA_Q) <= 1e-10
    # Kynema's convergence test: three Newton iterations in every step
    assert traj.iteration_counts[3] == 400 and traj.iteration_counts.sum() == 400


def test_tight_newton_tolerance_gives_the_same_answer():
    loose = kynema().run(every=400)
    # (much tighter is below round-off: a position residual of one ulp moves lambda by ~ m eps / (beta h^2))
    tight = kynema().run(scheme=GenAlpha(newton_atol=1e-10, newton_rtol=1e-10, newton_max_iter=20), every=400)
    assert np.abs(loose.x_com - tight.x_com).max() <= 1e-12
    assert tight.max_iterations > loose.max_iterations


def test_chunked_runs_are_identical():
    # the carry keeps a, vd and lambda between advance calls
    a = kynema().run(every=1)
    b = kynema().run(every=400)
    np.testing.assert_array_equal(a.x_com[-1], b.x_com[-1])
    np.testing.assert_array_equal(a.R_world_body[-1], b.R_world_body[-1])


def test_kynema_reference_solution_and_second_order():
    sc = kynema()
    traj = sc.run(dt=2.5e-4, t_end=2.0, every=4000)
    for t in (1.0, 2.0):
        row = int(np.flatnonzero(np.isclose(traj.t, t))[0])
        u = traj.x_com[row, 0] - KYNEMA_X_R
        assert np.abs(u - REF_U[t]).max() <= 2e-4  # Kynema's verification: 5e-4 at h = 2e-4
        assert quat_distance(traj.quat_wxyz[row, 0], REF_Q[t]) <= 2e-4
    hs = np.array([4e-3, 2e-3, 1e-3, 5e-4])
    errs = [abs(sc.run(dt=h, t_end=2.0, every=10**6).x_com[-1, 0, 2] - KYNEMA_X_R[2] - REF_U[2.0][2]) for h in hs]
    assert abs(fitted_order(hs, errs) - CONSTRAINED_ORDER) <= ORDER_TOL, errs


def test_constraint_residual_at_newton_tolerance():
    traj = kynema().run()
    assert traj.constraint.max() <= 1e-14  # the joint residual is linear in x: round-off
    # rods: the residual left by the last (applied) Newton increment is quadratic in it
    for scheme in (GenAlpha(), GenAlpha(newton_atol=1e-8, newton_rtol=1e-8)):
        dp = rbdyn.simulate(rbdyn.load_scenario("double-pendulum").system, scheme, 1e-3, 2.0, every=10)
        assert dp.constraint.max() <= max(1e-13, 1e-5 * scheme.newton_atol), dp.constraint.max()


def test_newton_iterations_per_step_are_recorded():
    every_step = kynema().run(every=1)
    assert every_step.iterations.shape == (400,)
    assert every_step.iterations.min() >= 1 and every_step.iterations.max() <= 10
    # with every = 10: the total of each interval, and the same histogram
    traj = kynema().run(every=10)
    assert traj.iterations.shape == (40,)
    np.testing.assert_array_equal(traj.iterations, every_step.iterations.reshape(40, 10).sum(axis=1))
    np.testing.assert_array_equal(traj.iteration_counts, np.bincount(every_step.iterations, minlength=66))


def test_newton_failure_is_a_numerical_error():
    # with lambda = 0 in the predictor the first iteration never passes the test
    with pytest.raises(rbdyn.NumericalError) as info:
        kynema().run(scheme=GenAlpha(newton_max_iter=1), every=5)
    err = info.value
    assert err.step == 1 and err.t == 0.0
    assert "Newton" in str(err) and "step 1" in str(err)
    assert err.trajectory.status == "failure"


def test_same_results_without_jit():
    code = (
        "import rbdyn;"
        "t = rbdyn.load_scenario('heavy-top-kynema').run(t_end=0.02);"
        "c = rbdyn.load_scenario('double-pendulum').run(scheme='gen_alpha', dt=0.01, t_end=0.05);"
        "print(repr(t.x_com[-1, 0].tolist() + t.R_world_body[-1, 0].ravel().tolist() + c.x_com[-1].ravel().tolist()))"
    )
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    slow = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    env["NUMBA_DISABLE_JIT"] = "0"
    fast = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    a = np.array(eval(slow.stdout))  # noqa: S307 (our own repr output)
    b = np.array(eval(fast.stdout))  # noqa: S307
    assert np.abs(a - b).max() < 1e-14


# ---------------------------------------------------------------------------
# free and pivoted bodies
# ---------------------------------------------------------------------------
def tumbling_box():
    return rbdyn.load_scenario("boxes-complex").system  # under gravity, near its unstable axis


def test_free_box_translation_is_exact_and_rotation_second_order():
    system = tumbling_box()
    body = system.bodies[0]
    t_end = 2.0
    ref = rbdyn.simulate(system, "rk4", 1e-4, t_end, every=10**6)
    hs = np.array([8e-3, 4e-3, 2e-3, 1e-3])
    errs = []
    for h in hs:
        traj = rbdyn.simulate(system, "gen_alpha", h, t_end, every=50)
        # constant acceleration: the Newmark translation is exact
        x_ex = body.position + body.velocity * traj.t[:, None] + 0.5 * system.gravity * traj.t[:, None] ** 2
        assert np.abs(traj.x_com[:, 0] - x_ex).max() <= 1e-12
        errs.append(so3.rotation_distance(traj.R_world_body[-1, 0], ref.R_world_body[-1, 0]))
    assert abs(fitted_order(hs, errs) - ORDER) <= ORDER_TOL, errs
    assert errs[-1] <= 1e-4


def test_free_box_invariants_stay_close():
    traj = rbdyn.simulate(tumbling_box(), "gen_alpha", 1e-3, 10.0, every=10)
    body = tumbling_box().bodies[0]
    L = np.einsum("rij,jk,rk->ri", traj.R_world_body[:, 0], body.inertia, traj.omega_body[:, 0])
    assert np.linalg.norm(L - L[0], axis=1).max() / np.linalg.norm(L[0]) <= 1e-3
    assert np.abs(traj.energy - traj.energy[0]).max() / traj.energy[0] <= 1e-4
    # linear momentum: m (v0 + g t) to round-off (accumulated over 10^4 steps)
    p = 10.0 * (body.velocity + traj.t[:, None] * np.array([0, 0, -9.8]))
    assert np.abs(traj.linear_momentum - p).max() <= 1e-11 * np.abs(p).max()


def test_pivoted_heavy_top_solfec_second_order():
    sc = rbdyn.load_scenario("heavy-top-solfec")
    body = sc.system.bodies[0]
    t_end = 1.0
    R_ref = pivoted_top_reference([t_end], body.inertia, body.com_body, body.mass, sc.system.gravity,
                                  body.R_world_body, body.omega_body)[0]
    hs = np.array([4e-3, 2e-3, 1e-3, 5e-4])
    errs = []
    for h in hs:
        traj = sc.run(scheme="gen_alpha", dt=h, t_end=t_end, every=10**6)
        errs.append(so3.rotation_distance(traj.R_world_body[-1, 0], R_ref))
    assert abs(fitted_order(hs, errs) - ORDER) <= ORDER_TOL, errs


def test_kynema_top_as_a_pivoted_body():
    # The same top as a pivoted body (rotation only, J about the pivot, no joint): also second
    # order, but with a much larger error constant than the free body on a joint (the arm's slow
    # motion is then carried by the rotation of a body spinning at 150 rad/s; an independent
    # implementation of the SO(3) step gives the same numbers).
    m, c = 15.0, KYNEMA_X_R
    J_O = np.diag([0.234375, 0.46875, 0.234375]) + m * (c @ c * np.eye(3) - np.outer(c, c))
    piv = rbdyn.System([rbdyn.RigidBody("top", m, J_O, pivot=(0, 0, 0), com_body=c, omega_body=(0, 150, -4.61538))],
                       gravity=(0, 0, -9.81))
    R_ref = pivoted_top_reference([0.8], J_O, c, m, piv.gravity, np.eye(3), np.array([0, 150, -4.61538]))[0]
    hs = np.array([1e-3, 5e-4, 2.5e-4])
    err_piv, err_joint = [], []
    for h in hs:
        b = rbdyn.simulate(piv, "gen_alpha", h, 0.8, every=10**6)
        err_piv.append(so3.rotation_distance(b.R_world_body[-1, 0], R_ref))
        a = kynema().run(dt=h, every=10**6)
        err_joint.append(so3.rotation_distance(a.R_world_body[-1, 0], R_ref))
    assert abs(fitted_order(hs, err_piv) - ORDER) <= ORDER_TOL, err_piv
    assert abs(fitted_order(hs, err_joint) - CONSTRAINED_ORDER) <= ORDER_TOL, err_joint
    assert all(e_j < e_p / 10 for e_j, e_p in zip(err_joint, err_piv)), (err_joint, err_piv)


# ---------------------------------------------------------------------------
# constraints: joints between bodies, rods
# ---------------------------------------------------------------------------
def test_internal_joint_conserves_linear_momentum():
    J = rbdyn.box_inertia(1.0, (0.2, 0.3, 0.4))
    a = rbdyn.RigidBody("a", 1.0, J, velocity=(0.1, 0.2, 0.3), omega_body=(1.0, 2.0, 3.0))
    b = rbdyn.RigidBody("b", 2.0, 2 * J, position=(0.2, 0.3, 0.4), velocity=(-0.1, 0.0, 0.1), omega_body=(-2.0, 1.0, 0.5))
    joint = rbdyn.SphericalJoint("a", point_body=(0.1, 0.15, 0.2), other="b")
    traj = rbdyn.simulate(rbdyn.System([a, b], constraints=[joint]), "gen_alpha", 1e-3, 1.0, every=100)
    assert "linear momentum" in verify.literature()["gen_alpha"].conserves
    assert np.abs(traj.linear_momentum - traj.linear_momentum[0]).max() <= 1e-13
    assert traj.constraint.max() <= 1e-13


def test_double_pendulum_second_order_against_minimal_coordinates():

    system = rbdyn.load_scenario("double-pendulum").system
    errors = []
    for h in (2e-3, 1e-3):
        traj = rbdyn.simulate(system, "gen_alpha", h, 2.0, every=int(round(0.01 / h)))
        ref = verify.double_pendulum_reference(traj.t, (math.pi / 2, math.pi / 2))
        upper, lower = ref.upper, ref.lower
        errors.append(max(np.abs(traj.x_com[:, 0] - upper).max(), np.abs(traj.x_com[:, 1] - lower).max()))
    assert errors[1] <= 1e-3, errors
    order = verify.literature()["gen_alpha"].order  # rods at the mass centres: the free order
    assert abs(verify.fit_order((2e-3, 1e-3), errors).order - order) < ORDER_TOL, errors


def test_pendulum_period():
    traj = rbdyn.load_scenario("pendulum-solfec").run(scheme="gen_alpha", t_end=5.0, every=1)
    tc = verify.sign_changes(traj.t, traj.v_com[:, 0, 2])
    T_exact = verify.pendulum_period(1.0, math.pi**2, math.pi / 2)
    assert abs(tc[3] - T_exact) <= 1e-5 * T_exact, (tc[3], T_exact)
    assert traj.constraint.max() <= 1e-10


def test_pivoted_body_with_a_rod_and_loads():
    bar = rbdyn.RigidBody("bar", 1.0, np.diag([1.0 / 3.0, 1.0 / 3.0, 0.01]), pivot=(0.0, 0.0, 0.0),
                          com_body=(0.0, 0.0, 0.5), R_world_body=np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]]))
    rod = rbdyn.Rod("bar", point_body=(0.0, 0.0, 1.0), other_point=(0.0, -1.0, 1.0))
    loads = [rbdyn.PointForce("bar", (0.0, 0.0, 0.8), (0.0, 0.0, -1.0)), rbdyn.ConstantTorque("bar", (0.0, 0.0, 0.0))]
    system = rbdyn.System([bar], loads=loads, constraints=[rod], gravity=(0.0, 0.0, -9.81))
    traj = rbdyn.simulate(system, "gen_alpha", 1e-3, 2.0, every=10)
    assert traj.constraint.max() <= 1e-12
    # the damping of rho_inf = 0.9 is O(h^2) at this step: the energy stays within 1e-4
    assert np.abs(traj.energy - traj.energy[0]).max() <= 1e-4


def test_consistent_accelerations_satisfy_the_constraints_second_derivative():
    # the double pendulum at rest, horizontal: finite differences of two tiny steps
    system = rbdyn.load_scenario("double-pendulum").system
    vd, lam = consistent_accelerations(system, system.initial_state())
    # both masses start to fall at g, the rods pull horizontally only
    np.testing.assert_allclose(vd[:, :3], [[0.0, 0.0, -9.81], [0.0, 0.0, -9.81]], atol=1e-12)
    np.testing.assert_allclose(lam, 0.0, atol=1e-12)
    # a swinging pendulum: centripetal acceleration along the rod
    body = rbdyn.RigidBody("m", 1.0, np.eye(3), position=(0.0, 0.0, -1.0), velocity=(2.0, 0.0, 0.0))
    pend = rbdyn.System([body], constraints=[rbdyn.Rod("m", other_point=(0.0, 0.0, 0.0))], gravity=(0.0, 0.0, -9.81))
    vd, lam = consistent_accelerations(pend, pend.initial_state())
    np.testing.assert_allclose(vd[0, :3], [0.0, 0.0, 4.0], atol=1e-12)  # v^2 / l towards the pivot
    assert lam[0] == pytest.approx(4.0 + 9.81)  # tension: reaction -lam n on the mass, n = (0, 0, -1)
