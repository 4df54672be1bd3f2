"""The verification toolkit: what the tests, the pages and the benchmarks check against.

Nothing here is computed by an rbdyn integrator.

* :func:`literature`: the book's cited table of scheme properties (orders,
  conservation, energy behaviour, symmetry);
* :func:`fit_order`: the one rule for an observed order of convergence;
* :func:`sign_changes`: crossing detection (interpolated, Hermite, or Solfec's reading);
* :func:`rigid_body_reference`, :func:`heavy_top_reference` (their equations,
  :func:`rigid_body_rates` and :func:`heavy_top_torque`),
  :func:`pendulum_period`, :func:`double_pendulum_reference` (and its
  equations, :func:`double_pendulum_acceleration`): independent
  high-accuracy references (closed forms of the free body are in
  :mod:`rbdyn.exact`);
* :func:`check`, :func:`check_true`: a page's acceptance checks, asserted and
  published for the book's validation matrix;
* :class:`Tolerances`, :class:`Table`, :func:`comparison`, :func:`convergence`, :func:`put`,
  :func:`put_text`, :func:`put_markdown`: what a page shows (its tolerances with their
  reasons, its tables, its glued numbers), written once for every page;
* :func:`skew`, :func:`rodrigues`, :func:`hat`, :func:`axis_rotation`, :func:`rotation_x` (``_y``,
  ``_z``), :func:`time_derivative`, :func:`pythagoras`, :func:`relative_difference`: textbook
  forms of rotations and derivatives in numpy and sympy, independent of :mod:`rbdyn.so3`.
"""

from ._acceptance import Check, check, check_true, checks, reset_checks
from ._crossings import sign_changes
from ._forms import (
    axis_rotation,
    hat,
    pythagoras,
    relative_difference,
    rodrigues,
    rotation_x,
    rotation_y,
    rotation_z,
    skew,
    time_derivative,
)
from ._literature import (
    CONSTRAINED_ENERGY_BEHAVIOURS,
    ENERGY_BEHAVIOURS,
    PROPERTIES,
    PROVENANCE,
    Cited,
    Derived,
    Provenances,
    SchemeProperties,
    literature,
    literature_row,
)
from ._orders import OrderFit, fit_order
from ._page import Table, Tolerance, Tolerances, comparison, convergence, number, put, put_markdown, put_text
from ._references import (
    DoublePendulumSolution,
    RigidBodySolution,
    double_pendulum_acceleration,
    double_pendulum_reference,
    heavy_top_reference,
    heavy_top_torque,
    pendulum_period,
    rigid_body_rates,
    rigid_body_reference,
)

__all__ = [
    "literature",
    "literature_row",
    "SchemeProperties",
    "PROPERTIES",
    "Cited",
    "Derived",
    "Provenances",
    "PROVENANCE",
    "ENERGY_BEHAVIOURS",
    "CONSTRAINED_ENERGY_BEHAVIOURS",
    "fit_order",
    "OrderFit",
    "sign_changes",
    "rigid_body_reference",
    "rigid_body_rates",
    "heavy_top_reference",
    "heavy_top_torque",
    "RigidBodySolution",
    "pendulum_period",
    "double_pendulum_acceleration",
    "double_pendulum_reference",
    "DoublePendulumSolution",
    "check",
    "check_true",
    "checks",
    "reset_checks",
    "Check",
    "Tolerance",
    "Tolerances",
    "Table",
    "comparison",
    "convergence",
    "number",
    "put",
    "put_text",
    "put_markdown",
    "skew",
    "rodrigues",
    "relative_difference",
    "hat",
    "axis_rotation",
    "rotation_x",
    "rotation_y",
    "rotation_z",
    "time_derivative",
    "pythagoras",
]
