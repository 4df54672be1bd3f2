"""rbdyn.verify.sign_changes, the book's one crossing detector, on signals with known roots."""

from __future__ import annotations

import numpy as np
import pytest

from rbdyn import verify

# the zeros of cos(t) - 1/2 on [0, 19] (not inflection points: a straight line is O(h^2) there)
ROOTS = np.array([1, 5, 7, 11, 13, 17]) * np.pi / 3


def _max_error(h, rule):
    t = np.arange(0.0, 19.0, h)
    found = verify.sign_changes(t, np.cos(t) - 0.5, rule, dydt=-np.sin(t) if rule == "hermite" else None)
    assert len(found) == len(ROOTS)
    return float(np.max(np.abs(found - ROOTS)))


@pytest.mark.parametrize("rule, order", [("interpolate", 2), ("hermite", 4)])
def test_order_of_each_rule(rule, order):
    steps = [0.2, 0.1, 0.05, 0.025]
    fit = verify.fit_order(steps, [_max_error(h, rule) for h in steps])
    assert abs(fit.order - order) < 0.15


def test_hermite_is_exact_for_a_cubic():
    t = np.linspace(-1.0, 2.0, 7)  # the root 0.3 lies strictly inside an interval
    y = (t - 0.3) * (t**2 + 1.0)
    dy = 3 * t**2 - 0.6 * t + 1.0
    np.testing.assert_allclose(verify.sign_changes(t, y, "hermite", dydt=dy), [0.3], rtol=0, atol=1e-15)


def test_before_reads_the_sample_before_the_change():
    t = np.arange(5.0)
    assert verify.sign_changes(t, np.array([0.0, 1.0, -1.0, -2.0, 3.0]), "before").tolist() == [0.0, 1.0, 3.0]


@pytest.mark.parametrize("rule, dydt", [("hermite", None), ("interpolate", np.zeros(3)), ("cubic", None)])
def test_bad_arguments(rule, dydt):
    with pytest.raises(ValueError):
        verify.sign_changes(np.arange(3.0), np.array([1.0, -1.0, 1.0]), rule, dydt=dydt)
