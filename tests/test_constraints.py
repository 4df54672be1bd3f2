"""The position-level constraint solve of the RIG schemes.

Checked against closed forms (the pendulum's elliptic-integral period), a
high-accuracy solution in minimal coordinates (the double pendulum), the
pivoted model of the same top (a spherical joint), exact momentum balances,
and its failure modes. References: notes/solfec.md (Solfec's rod),
Koziara & Bićanić 2010.
"""

import math

import numpy as np
import pytest

import rbdyn
from rbdyn import so3, verify
from jitcheck import with_and_without_jit
from rbdyn.constraints.solve import lu_solve_inplace, solve_min_norm

RIG = [n for n, c in rbdyn.schemes().items() if c.supports_constraints and n.startswith("rig_")]
G_PEND = math.pi**2


def pendulum():
    return rbdyn.load_scenario("pendulum-solfec").system


def test_rig_schemes_declare_constraint_support():
    assert set(RIG) == {"rig_pos", "rig_neg", "rig_imp"}
    for name in ("symplectic_euler", "rk4"):
        assert not rbdyn.schemes()[name].supports_constraints


@pytest.mark.parametrize("scheme", RIG)
def test_pendulum_length_exact_and_period(scheme):
    traj = rbdyn.simulate(pendulum(), scheme, 1e-3, 24.78)
    # position level: the rod keeps its length to round-off at every step
    assert traj.constraint.max() <= 1e-14
    # period from the interpolated zero crossings of v_z (4 per period): 1 and 10 periods
    tc = verify.sign_changes(traj.t, traj.v_com[:, 0, 2])
    T_exact = verify.pendulum_period(1.0, G_PEND, math.pi / 2)
    assert len(tc) >= 41
    # second order: the error is ~3e-7 relative at h = 1e-3
    assert abs(tc[3] - T_exact) <= 1e-6 * T_exact, tc[3]
    assert abs((tc[39] - 0.0) / 10 - T_exact) <= 1e-6 * T_exact
    # energy: bounded, O(h^2) (no drift): pi^2 at the start
    assert traj.energy[0] == pytest.approx(G_PEND, rel=1e-15)
    assert np.max(np.abs(traj.energy - G_PEND)) <= 1e-5 * G_PEND
    # the motion stays in the x-z plane
    assert np.max(np.abs(traj.x_com[:, 0, 1])) == 0.0


def test_pendulum_energy_and_period_converge_at_order_two():
    errs = []
    T_exact = verify.pendulum_period(1.0, G_PEND, math.pi / 2)
    for h in (4e-3, 2e-3, 1e-3):
        traj = rbdyn.simulate(pendulum(), "rig_neg", h, 2.5)
        tc = verify.sign_changes(traj.t, traj.v_com[:, 0, 2])
        errs.append((abs(tc[3] - T_exact), np.max(np.abs(traj.energy - G_PEND))))
    order = verify.literature()["rig_neg"].order  # the rod acts at the mass centre: the free order
    for column in np.array(errs).T:  # period error, then energy error
        fit = verify.fit_order((4e-3, 2e-3, 1e-3), column)
        assert np.all(np.abs(fit.local - order) < 0.1), fit.local


@pytest.mark.parametrize("scheme", RIG)
def test_double_pendulum_against_minimal_coordinates(scheme):
    system = rbdyn.load_scenario("double-pendulum").system
    errors = []
    for h in (2e-3, 1e-3):
        traj = rbdyn.simulate(system, scheme, h, 2.0, every=int(round(0.01 / h)))
        ref = verify.double_pendulum_reference(traj.t, (math.pi / 2, math.pi / 2))
        upper, lower = ref.upper, ref.lower
        err = max(np.max(np.abs(traj.x_com[:, 0] - upper)), np.max(np.abs(traj.x_com[:, 1] - lower)))
        errors.append(err)
        assert traj.constraint.max() <= 1e-13
        # energy is conserved up to the scheme's O(h^2) oscillation
        assert np.max(np.abs(traj.energy - traj.energy[0])) <= 1e-3 * 9.81 * 3
    assert errors[1] <= 1e-3, errors
    order = verify.literature()[scheme].order  # rods at the mass centres: the free order
    assert abs(verify.fit_order((2e-3, 1e-3), errors).order - order) < 0.3, errors


def free_top(rotvec=(0.3, 0.0, 0.0), omega_body=(0.0, 0.0, 50.0)):
    """Solfec's heavy top (J = diag(5,5,1) about the pivot, M g l = 20) as a free body on a joint."""
    m, l = 20.0, 0.25
    J_c = np.diag([5.0 - m * l * l, 5.0 - m * l * l, 1.0])
    R0 = rbdyn.so3.exp(np.array(rotvec))
    c = R0 @ np.array([0.0, 0.0, l])
    v = np.cross(R0 @ np.array(omega_body), c)
    body = rbdyn.RigidBody("top", m, J_c, position=c, velocity=v, rotvec=rotvec, omega_body=omega_body)
    joint = rbdyn.SphericalJoint("top", point_body=(0.0, 0.0, -l), other_point=(0.0, 0.0, 0.0))
    pivoted = rbdyn.RigidBody("top", m, np.diag([5.0, 5.0, 1.0]), pivot=(0.0, 0.0, 0.0), com_body=(0.0, 0.0, l),
                              rotvec=rotvec, omega_body=omega_body)
    g = (0.0, 0.0, -4.0)
    return rbdyn.System([body], constraints=[joint], gravity=g), rbdyn.System([pivoted], gravity=g)


@pytest.mark.parametrize("scheme", RIG)
def test_spherical_joint_top_matches_the_pivoted_top(scheme):
    joint_sys, pivot_sys = free_top()
    diffs = []
    for h in (2e-3, 1e-3):
        a = rbdyn.simulate(joint_sys, scheme, h, 0.5, every=50)
        b = rbdyn.simulate(pivot_sys, scheme, h, 0.5, every=50)
        assert a.constraint.max() <= 1e-13
        # both are O(h^2) approximations of one motion: they differ by O(h^2)
        diffs.append(np.max(np.abs(a.R_world_body - b.R_world_body)))
        # about one Newton iteration a step: warm start and an exact derivative (RIG_IMP's count
        # adds its rate equation's iterations, about 2 per constraint pass)
        assert a.mean_iterations <= (6.0 if verify.literature()[scheme].implicit else 1.1)
    # the declared order with constraints (RIG_POS: 1, see its docstring)
    order = verify.literature()[scheme].constrained_order
    assert abs(verify.fit_order((2e-3, 1e-3), diffs).order - order) < 0.2, diffs
    assert diffs[1] <= (2e-3 if order == 1 else 1e-5), diffs


def test_internal_joint_conserves_linear_momentum_exactly():
    # two free boxes joined at a corner, tumbling in zero gravity
    J = rbdyn.box_inertia(1.0, (0.2, 0.3, 0.4))
    a = rbdyn.RigidBody("a", 1.0, J, position=(0.0, 0.0, 0.0), velocity=(0.1, 0.2, 0.3), omega_body=(1.0, 2.0, 3.0))
    b = rbdyn.RigidBody("b", 2.0, 2 * J, position=(0.2, 0.3, 0.4), velocity=(-0.1, 0.0, 0.1), omega_body=(-2.0, 1.0, 0.5))
    joint = rbdyn.SphericalJoint("a", point_body=(0.1, 0.15, 0.2), other="b")
    for scheme in RIG:
        traj = rbdyn.simulate(rbdyn.System([a, b], constraints=[joint]), scheme, 1e-3, 1.0, every=100)
        p = traj.linear_momentum
        assert np.max(np.abs(p - p[0])) <= 1e-13, scheme
        assert traj.constraint.max() <= 1e-13


def test_chain_of_rods_keeps_every_length():
    # five unit masses hanging on five rods, started along a horizontal line
    n = 5
    bodies = [rbdyn.RigidBody(f"m{k}", 1.0, 1e-3 * np.eye(3), position=(k + 1.0, 0.0, 0.0)) for k in range(n)]
    rods = [rbdyn.Rod("m0", other_point=(0.0, 0.0, 0.0))]
    rods += [rbdyn.Rod(f"m{k}", other=f"m{k - 1}") for k in range(1, n)]
    system = rbdyn.System(bodies, constraints=rods, gravity=(0.0, 0.0, -9.81))
    for scheme in RIG:
        traj = rbdyn.simulate(system, scheme, 1e-3, 2.0, every=10)
        assert traj.constraint_residuals.shape == (traj.t.size, n)
        assert traj.constraint.max() <= 1e-13
        assert np.max(np.abs(traj.energy - traj.energy[0])) <= 1e-2 * 9.81


def test_pivoted_body_with_a_rod():
    # a pivoted bar whose free end is held by a rod to a fixed point: it can only turn about the rod-pivot axis
    bar = rbdyn.RigidBody("bar", 1.0, np.diag([1.0 / 3.0, 1.0 / 3.0, 0.01]), pivot=(0.0, 0.0, 0.0),
                          com_body=(0.0, 0.0, 0.5), R_world_body=np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]]),
                          omega_body=(0.0, 0.0, 0.0))
    # the bar lies along -y; its end (0,-1,0) hangs on a rod to (0,-1,1)
    rod = rbdyn.Rod("bar", point_body=(0.0, 0.0, 1.0), other_point=(0.0, -1.0, 1.0))
    system = rbdyn.System([bar], constraints=[rod], gravity=(0.0, 0.0, -9.81))
    for scheme in RIG:
        traj = rbdyn.simulate(system, scheme, 1e-3, 2.0, every=10)
        assert traj.constraint.max() <= 1e-13
        assert np.max(np.abs(traj.energy - traj.energy[0])) <= 1e-4


def test_unsatisfiable_step_is_a_numerical_error():
    # a pendulum so fast that no reaction can keep the mass on the rod within one step
    body = rbdyn.RigidBody("mass", 1.0, np.eye(3), position=(1.0, 0.0, 1.0), velocity=(0.0, 0.0, 50.0))
    rod = rbdyn.Rod("mass", other_point=(0.0, 0.0, 1.0), length=1.0)
    system = rbdyn.System([body], constraints=[rod], gravity=(0.0, 0.0, -G_PEND))
    for scheme in RIG:
        with pytest.raises(rbdyn.NumericalError) as info:
            rbdyn.simulate(system, scheme, 0.1, 1.0)
        err = info.value
        assert err.t == pytest.approx((err.step - 1) * 0.1)
        assert "constraint" in str(err) and f"(step {err.step})" in str(err)
        # the trajectory up to the failure is kept, finite
        assert np.all(np.isfinite(err.trajectory.x_com))


def _ball_between(offset):
    """A ball held by two rods of length 1 - offset to world points 2 m apart."""
    ball = rbdyn.RigidBody("ball", 1.0, (1e-3, 1e-3, 1e-3))
    return rbdyn.System([ball], constraints=[rbdyn.Rod("ball", other_point=(-1.0, 0.0, 0.0), length=1.0 - offset),
                                             rbdyn.Rod("ball", other_point=(1.0, 0.0, 0.0), length=1.0 - offset)])


@pytest.mark.parametrize("offset", [1e-6, 1e-8, 1e-12])
@pytest.mark.parametrize("scheme", ["rig_pos", "rig_neg", "rig_imp", "gen_alpha"])
def test_contradicting_constraints_are_a_numerical_error(scheme, offset):
    # accepted at t = 0 (within the initial check), but no position meets both rods
    with pytest.raises(rbdyn.NumericalError, match="cannot be met") as info:
        rbdyn.simulate(_ball_between(offset), scheme, 0.01, 0.1)
    assert (info.value.t, info.value.step) == (0.0, 1)


@pytest.mark.parametrize("scheme", ["rig_pos", "rig_neg", "rig_imp", "gen_alpha"])
def test_repeated_constraints_are_met(scheme):
    # the same rod twice: rows that repeat each other, met by the minimum-norm increments
    ball = rbdyn.RigidBody("ball", 1.0, (1e-3, 1e-3, 1e-3), position=(1.0, 0.0, 0.0), velocity=(0.0, 1.0, 0.0))
    rods = [rbdyn.Rod("ball", other_point=(0.0, 0.0, 0.0)) for _ in range(2)]
    twice = rbdyn.simulate(rbdyn.System([ball], constraints=rods, gravity=(0.0, -9.81, 0.0)), scheme, 1e-3, 1.0)
    once = rbdyn.simulate(rbdyn.System([ball], constraints=rods[:1], gravity=(0.0, -9.81, 0.0)), scheme, 1e-3, 1.0)
    assert twice.constraint.max() <= 1e-13
    np.testing.assert_allclose(twice.x_com, once.x_com, rtol=0, atol=1e-9)


@pytest.mark.parametrize("scheme", RIG)
def test_singular_constraint_system_is_a_numerical_error(scheme):
    """A system no increment can move: a ball on a rod to the origin, thrown at it so fast that
    the rod's ends meet at the mid-step configuration, where its gradient row is zero (the case
    of book/methods/constraints.md, "When the solve fails"). The RIG constraint solve, whose
    matrix is then zero, reports STATUS_SINGULAR as a NumericalError naming the time and step.

    gen_alpha cannot reach this failure: its Newton matrix holds the mass terms besides the
    constraint rows, so it is never zero, and the same throw does not fail (the ball jumps to
    the antipodal point of the rod's circle each step); its singular status is left for a zero
    or non-finite matrix, and it reports other bad systems as "cannot be met" or Newton failures.
    """
    from rbdyn.driver.status import STATUS_SINGULAR, STATUS_TEXT

    ball = rbdyn.RigidBody("ball", 1.0, (1e-3, 1e-3, 1e-3), position=(1.0, 0.0, 0.0), velocity=(-200.0, 0.0, 0.0))
    system = rbdyn.System([ball], constraints=[rbdyn.Rod("ball", other_point=(0.0, 0.0, 0.0))],
                          gravity=(0.0, -10.0, 0.0))
    with pytest.raises(rbdyn.NumericalError) as info:
        rbdyn.simulate(system, scheme, 0.01, 0.1)  # x + h/2 v = 0 in the first step
    err = info.value
    assert (err.t, err.step) == (0.0, 1)
    assert err.reason == STATUS_TEXT[STATUS_SINGULAR] and "cannot be solved" in err.reason
    assert str(err).startswith("numerical failure at t = 0.0 (step 1): the constraint system cannot be solved")
    assert err.trajectory is not None and np.all(np.isfinite(err.trajectory.x_com))


def _welded_pair_and_composite():
    """Two tumbling bodies welded together, and the single rigid body they make (the combined
    mass, mass centre and inertia about it), started in the same rigid motion under gravity."""
    J = rbdyn.box_inertia(1.0, (0.3, 0.2, 0.1))
    m = (1.0, 2.0)
    R0 = (so3.exp(np.array([0.3, -0.2, 0.5])), so3.exp(np.array([-0.4, 0.7, 0.1])))
    x0 = (np.array([0.0, 0.0, 0.0]), np.array([0.3, 0.1, -0.2]))
    Jb = (J, 2.0 * J)
    w, V = np.array([1.0, 2.0, 3.0]), np.array([0.1, 0.0, 0.5])  # world angular velocity, mass-centre velocity
    M = sum(m)
    X = (m[0] * x0[0] + m[1] * x0[1]) / M
    arms = tuple(x - X for x in x0)
    I = sum(R @ Ji @ R.T + mi * (r @ r * np.eye(3) - np.outer(r, r)) for mi, R, Ji, r in zip(m, R0, Jb, arms))
    bodies = [rbdyn.RigidBody(name, mi, Ji, position=x, R_world_body=R, velocity=V + np.cross(w, r), omega_body=R.T @ w)
              for name, mi, Ji, x, R, r in zip("ab", m, Jb, x0, R0, arms)]
    gravity = (0.0, 0.0, -9.81)
    pair = rbdyn.System(bodies, constraints=[rbdyn.FixedJoint("b", point_body=(-0.15, -0.05, 0.1), other="a")],
                        gravity=gravity)
    one = rbdyn.System([rbdyn.RigidBody("ab", M, I, position=X, velocity=V, omega_body=w)], gravity=gravity)
    return pair, one, np.array(m), R0, arms


@pytest.mark.parametrize("scheme", ["rig_neg", "gen_alpha"])
def test_weld_moves_like_the_single_rigid_body(scheme):
    """The weld's internal reactions cancel: the pair's mass centre follows the composite body's
    to round-off, and each body's pose is the composite's carried along, to the step's error
    (second order: the mismatch drops about 4x when the step halves)."""
    pair, one, m, R0, arms = _welded_pair_and_composite()
    mismatch = []
    for h in (2e-3, 1e-3):
        p = rbdyn.simulate(pair, scheme, h, 0.5, every=10)
        o = rbdyn.simulate(one, scheme, h, 0.5, every=10)
        com = np.einsum("i,tij->tj", m, p.x_com) / m.sum()
        assert np.abs(com - o.x_com[:, 0]).max() <= 1e-10
        np.testing.assert_allclose(p.linear_momentum, o.linear_momentum, rtol=0, atol=1e-10)
        Rc = o.R_world_body[:, 0]
        rot = max(np.abs(p.R_world_body[:, i] - Rc @ R0[i]).max() for i in range(2))
        pos = max(np.abs(p.x_com[:, i] - (o.x_com[:, 0] + Rc @ arms[i])).max() for i in range(2))
        assert p.constraint.max() <= 1e-12
        assert rot <= 1e-5 and pos <= 2e-6, (rot, pos)
        mismatch.append(rot)
    assert 3.5 <= mismatch[0] / mismatch[1] <= 4.5, mismatch


def test_iteration_limit_is_a_setting():
    # the first step starts from zero reactions and needs more than one iteration
    system = pendulum()
    with pytest.raises(rbdyn.NumericalError, match="constraint") as info:
        rbdyn.simulate(system, rbdyn.RigNeg(constraint_max_iter=1), 0.1, 1.0)
    assert info.value.step == 1
    traj = rbdyn.simulate(system, rbdyn.RigNeg(constraint_max_iter=3), 0.1, 1.0)
    assert traj.constraint.max() <= 1e-13
    for bad in (0, -1, 1.5, float("nan")):
        with pytest.raises(rbdyn.InputError, match="constraint_max_iter"):
            rbdyn.RigImp(constraint_max_iter=bad)
    with pytest.raises(rbdyn.InputError, match="constraint_tol"):
        rbdyn.RigPos(constraint_tol=-1.0)


def test_lu_solve_detects_singular_systems():
    K = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert not lu_solve_inplace(K.copy(), np.array([1.0, 2.0]), 1e-12)
    assert not lu_solve_inplace(np.zeros((2, 2)), np.array([1.0, 2.0]), 1e-12)
    rng = np.random.default_rng(3)
    A = rng.normal(size=(6, 6))
    b = rng.normal(size=6)
    y = b.copy()
    assert lu_solve_inplace(A.copy(), y, 1e-12)
    np.testing.assert_allclose(A @ y, b, atol=1e-12)


def test_min_norm_solve_is_the_pseudo_inverse_solution():
    # a square system without full rank (rows that repeat each other, as a closed loop's):
    # among its least-squares solutions, the one of least norm, which is pinv(K) b
    rng = np.random.default_rng(5)
    G = rng.normal(size=(7, 4))
    K = G @ rng.normal(size=(4, 7))
    for b in (K @ rng.normal(size=7), rng.normal(size=7)):  # consistent, then contradicting
        y, K_before = b.copy(), K.copy()
        assert solve_min_norm(K, y, 1e-10)
        np.testing.assert_allclose(y, np.linalg.pinv(K, rcond=1e-10) @ b, rtol=1e-11, atol=1e-12)
        assert np.array_equal(K, K_before)
    assert not solve_min_norm(np.zeros((3, 3)), np.ones(3), 1e-10)
    K[2, 3] = np.nan
    assert not solve_min_norm(K, np.ones(7), 1e-10)


def test_closed_loop_kernels_same_without_jit():
    # Bricard's redundant loop takes the minimum-norm solve at every Newton step; each run is a
    # fresh interpreter, so the compiled one also shows that numba's helper finds LAPACK's dgelsd
    # by itself (rbdyn does not load scipy.linalg for it, see test_startup.py)
    for scheme in ("rig_pos", "gen_alpha"):
        plain, compiled = with_and_without_jit(
            f"sc = rbdyn.load_scenario('bricard'); t = rbdyn.simulate(sc.system, '{scheme}', sc.dt, 3 * sc.dt)",
            "t.x_com[-1]",
        )
        assert np.abs(plain - compiled).max() < 1e-13


def test_constrained_kernel_same_without_jit():
    plain, compiled = with_and_without_jit(
        "t = rbdyn.simulate(rbdyn.load_scenario('double-pendulum').system, 'rig_imp', 0.01, 0.05)",
        "t.x_com[-1]",
    )
    assert np.abs(plain - compiled).max() < 1e-13


# ---------------------------------------------------------------------------
# the prismatic and universal joints against closed forms
# ---------------------------------------------------------------------------
CONSTRAINED = [n for n, c in rbdyn.schemes().items() if c.supports_constraints]


@pytest.mark.parametrize("scheme", CONSTRAINED)
def test_prismatic_slide_under_gravity_is_the_closed_form(scheme):
    """A box on a prismatic joint to the world along an inclined axis: it slides with the constant
    acceleration (g . a) a, which every scheme integrates exactly here, and it does not turn."""
    a = np.array([1.0, 2.0, -2.0]) / 3.0
    x0, v0, g = np.array([0.1, -0.2, 0.3]), 0.7 * a, np.array([0.0, 0.0, -9.81])
    R0 = so3.exp(np.array([0.3, -0.2, 0.5]))
    box = rbdyn.RigidBody("box", 2.0, rbdyn.box_inertia(2.0, (0.3, 0.2, 0.1)), position=x0, velocity=v0,
                          R_world_body=R0)
    joint = rbdyn.PrismaticJoint("box", point_body=(0.05, 0.0, -0.02), axis_body=R0.T @ a)
    traj = rbdyn.simulate(rbdyn.System([box], constraints=[joint], gravity=g), scheme, 1e-3, 0.5, every=50)
    t = traj.t[:, None]
    exact = x0 + v0 * t + 0.5 * (g @ a) * a * t**2
    # (RIG_POS too: its first order with joints comes from reactions that turn the body, none here)
    assert np.abs(traj.x_com[:, 0] - exact).max() <= 1e-12, scheme
    assert np.abs(traj.R_world_body[:, 0] - R0).max() <= 1e-12
    assert traj.constraint.max() <= 1e-12


def _hooke_joint(beta, w_in):
    """Hooke's joint: an input shaft turning about z and an output shaft about (sin b, 0, cos b),
    both held at the origin by hinges, joined by a universal joint whose arms are the input's x
    axis and the output's y axis (perpendicular at t = 0). The output's rate is consistent."""
    a2 = np.array([np.sin(beta), 0.0, np.cos(beta)])
    R_out = np.column_stack([np.cross(np.array([0.0, 1.0, 0.0]), a2), [0.0, 1.0, 0.0], a2])  # axes: b1, y, a2
    w_out = w_in * np.cos(beta) / (1.0 - np.sin(beta) ** 2)      # phi_1 = 0
    shaft_in = rbdyn.RigidBody("in", 1.0, (0.02, 0.02, 0.01), omega_body=(0.0, 0.0, w_in))
    shaft_out = rbdyn.RigidBody("out", 1.0, (0.03, 0.03, 0.015), R_world_body=R_out, omega_body=(0.0, 0.0, w_out))
    joints = [rbdyn.RevoluteJoint("in", axis_body=(0.0, 0.0, 1.0)),
              rbdyn.RevoluteJoint("out", axis_body=(0.0, 0.0, 1.0)),
              rbdyn.UniversalJoint("in", axis_body=(1.0, 0.0, 0.0), other="out", other_axis=(0.0, 1.0, 0.0))]
    return rbdyn.System([shaft_in, shaft_out], constraints=joints), a2, R_out


@pytest.mark.parametrize("scheme", CONSTRAINED)
def test_universal_joint_is_hookes_joint(scheme):
    """The shafts' angles obey Hooke's law tan(phi_2) = tan(phi_1) / cos(beta) at every step, the
    output makes the input's turns, and the energy stays within the step's error."""
    beta = 0.5
    system, a2, R_out = _hooke_joint(beta, 4.0)
    traj = rbdyn.simulate(system, scheme, 1e-3, 2.0, every=10)
    R_in, R_o = traj.R_world_body[:, 0], traj.R_world_body[:, 1]
    phi1 = np.unwrap(np.arctan2(R_in[:, 1, 0], R_in[:, 0, 0]))          # the input's x axis about z
    y_out = R_o[:, :, 1]                                                  # the output's arm, about a2
    b1 = R_out[:, 0]
    phi2 = np.unwrap(np.arctan2(-y_out @ b1, y_out @ np.array([0.0, 1.0, 0.0])))
    # Hooke's law, in the form without poles: sin(phi_2) cos(phi_1) cos(b) = cos(phi_2) sin(phi_1)
    law = np.sin(phi2) * np.cos(phi1) * np.cos(beta) - np.cos(phi2) * np.sin(phi1)
    assert np.abs(law).max() <= 1e-12
    assert phi1[-1] > 2 * np.pi and np.abs(phi2 - phi1).max() < beta    # the same turns, out of phase by < beta
    assert np.abs(traj.R_world_body[:, 1] @ np.array([0.0, 0.0, 1.0]) - a2).max() <= 1e-12  # the output's hinge
    assert np.abs(traj.energy - traj.energy[0]).max() <= 1e-6 * traj.energy[0]   # measured 1e-8 to 1e-7


def test_universal_and_prismatic_axes_are_checked_at_t0():
    a = rbdyn.RigidBody("a", 1.0, (0.1, 0.1, 0.1))
    b = rbdyn.RigidBody("b", 1.0, (0.1, 0.1, 0.1), position=(1.0, 0.0, 0.0))
    with pytest.raises(rbdyn.InputError, match="perpendicular"):
        rbdyn.System([a, b], constraints=[rbdyn.UniversalJoint("a", axis_body=(1.0, 0.0, 0.0), other="b",
                                                               other_point=(-1.0, 0.0, 0.0), other_axis=(1.0, 1.0, 0.0))])
    with pytest.raises(rbdyn.InputError, match="parallel"):
        rbdyn.System([a], constraints=[rbdyn.PrismaticJoint("a", axis_body=(1.0, 0.0, 0.0), other_axis=(0.0, 1.0, 0.0))])
    # the defaults: the universal joint's arms perpendicular, the slide axis where axis_body points
    system = rbdyn.System([a, b], constraints=[rbdyn.UniversalJoint("a", axis_body=(1.0, 2.0, 2.0), other="b"),
                                               rbdyn.PrismaticJoint("b", axis_body=(0.0, 1.0, 0.0))])
    u, p = system.constraints
    assert abs(u.axis_body @ u.other_axis) <= 1e-15 and np.allclose(p.other_axis, (0.0, 1.0, 0.0))
    x, R, _, _ = system.initial_state()
    assert np.abs(u.residual(x, R)).max() == 0.0 and np.abs(p.residual(x, R)).max() == 0.0


def test_slider_crank_scenario_has_one_degree_of_freedom_and_consistent_velocities():
    system = rbdyn.load_scenario("slider-crank-iftomm").system
    assert [c.kind for c in system.constraints] == ["revolute", "spherical", "universal", "prismatic"]
    x, R, v, W = system.initial_state()
    G = system.constraint_jacobian(x, R)
    sv = np.linalg.svd(G, compute_uv=False)
    assert G.shape == (17, 18) and sv[-1] > 1e-2 * sv[0]          # 17 independent equations on 18 velocities
    nu = np.concatenate([np.concatenate([v[i], W[i]]) for i in range(len(v))])
    assert np.abs(G @ nu).max() <= 1e-15
    assert max(np.abs(c.residual(x, R)).max() for c in system.constraints) <= 1e-16
