"""The pages' shared helpers: tolerances with reasons, tables, and the textbook forms."""

import numpy as np
import pytest
import sympy as sp
from scipy.spatial.transform import Rotation

from rbdyn import verify


def test_a_table_is_markdown_with_every_failure_visible():
    t = verify.Table(["case", "error", "passed"], spec=".1e")
    t.add("a", 1.234e-5, True)
    t.add("b|c", float("nan"), False)
    t.add("d", None, 0.0)
    assert t.markdown().splitlines() == [
        "| case | error | passed |", "|---|---|---|",
        "| a | 1.2e-05 | yes |", r"| b\|c | nan | no |", "| d | – | 0 |"]
    assert t._repr_markdown_() == t.markdown() and len(t) == 3
    with pytest.raises(ValueError):
        t.add("too", "few")


def test_comparison_computes_the_ratio_from_target_and_value():
    t = verify.comparison([("period (s)", 2.0, 2.5), ("energy", "π²", 9.87), ("zero", 0.0, 1.0)], spec="g")
    assert t.columns == ["", "Target", "rbdyn", "Ratio"]
    assert t.rows == [["period (s)", "2", "2.5", "1.25"], ["energy", "π²", "9.87", "–"], ["zero", "0", "1", "–"]]


def test_convergence_rows_and_orders():
    steps = [0.1, 0.05, 0.025]
    errors = {"a": [4e-2, 1e-2, 2.5e-3]}
    fits = {"a": verify.fit_order(steps, errors["a"])}
    t = verify.convergence(steps, errors, fits)
    assert t.rows[-2] == ["fitted order", "2.00 ± 0.00"]
    assert t.rows[-1] == ["local orders", "2.00 … 2.00"]


def test_tolerances_need_a_reason_and_a_bound():
    with pytest.raises(ValueError, match="no reason"):
        verify.Tolerances("p", a=(1.0, "m", " "))
    with pytest.raises(ValueError, match="non-negative"):
        verify.Tolerances("p", a=(-1.0, "m", "why"))
    with pytest.raises(ValueError, match="non-negative"):
        verify.Tolerances("p", a=(float("nan"), "m", "why"))


def test_tolerances_check_reads_the_declared_bound():
    verify.reset_checks()
    tol = verify.Tolerances("test/page", length=(1e-13, "m", "round-off"),
                            order=({"rig_pos": 0.1, "gen_alpha": 0.2}, "", "asymptotic range", ".2f"))
    assert tol["length"] == 1e-13 and tol.value("order", "gen_alpha") == 0.2
    rec = tol.check("order", 0.15, "order", scheme="gen_alpha")
    assert rec.passed and rec.tolerance == 0.2 and rec.scheme == "gen_alpha"
    with pytest.raises(AssertionError):
        tol.check("order", 0.15, "order", scheme="rig_pos")
    with pytest.raises(KeyError):
        tol.value("order")
    assert [r.passed for r in verify.checks("test/page")] == [True, False]
    assert tol.table().rows[1] == ["`order`", "rig_pos: 0.10; gen_alpha: 0.20", "", "asymptotic range"]
    verify.reset_checks()


def test_put_takes_numbers_only():
    with pytest.raises(TypeError):
        verify.put("x", "1.0")
    with pytest.raises(TypeError):
        verify.put("x", True)


@pytest.mark.parametrize("seed", range(5))
def test_rodrigues_is_scipys_rotation_vector(seed):
    psi = np.random.default_rng(seed).normal(size=3) * (10.0 ** -seed)
    np.testing.assert_allclose(verify.rodrigues(psi), Rotation.from_rotvec(psi).as_matrix(), atol=1e-15, rtol=0)
    np.testing.assert_allclose(verify.skew(psi) @ [1.0, 2.0, 3.0], np.cross(psi, [1.0, 2.0, 3.0]), atol=1e-15)


def test_symbolic_rotations():
    a = sp.Symbol("a", real=True)
    for R, axis in ((verify.rotation_x(a), (1, 0, 0)), (verify.rotation_y(a), (0, 1, 0)),
                    (verify.rotation_z(a), (0, 0, 1))):
        assert sp.simplify(R.T * R - sp.eye(3)) == sp.zeros(3)
        assert sp.simplify(R - verify.axis_rotation(sp.Matrix(axis), a)) == sp.zeros(3)
    x, y = sp.symbols("x y")
    assert verify.hat([x, y, 0]) * sp.Matrix([0, 0, 1]) == sp.Matrix([y, -x, 0])


def test_time_derivative_and_pythagoras():
    q, w = sp.symbols("q w")
    assert verify.time_derivative(sp.sin(q) ** 2, [q], [w]) == 2 * sp.sin(q) * sp.cos(q) * w
    assert verify.pythagoras(sp.sin(q) ** 2 + sp.cos(q) ** 2, [q]) == 1


def test_relative_difference():
    assert verify.relative_difference([np.array([1.0, 2.0])], [np.array([1.0, 4.0])]) == pytest.approx(0.5)
    assert verify.relative_difference([np.array([0.1])], [np.array([0.2])]) == pytest.approx(0.1)


def test_an_order_is_quoted_with_the_spread_of_its_local_orders():
    fit = verify.fit_order([0.4, 0.2, 0.1, 0.05], [1.6e-1, 4.4e-2, 1.0e-2, 2.6e-3])
    assert fit.uncertainty == pytest.approx(np.max(np.abs(fit.local - fit.order)))
    assert f"{fit:.2f}" == f"{fit.order:.2f} ± {fit.uncertainty:.2f}"
    two = verify.fit_order([0.2, 0.1], [4e-2, 1e-2])
    assert np.isnan(two.uncertainty) and f"{two:.1f}" == "2.0"
