r"""The Lie-group generalized-α method with index-3 constraints (Kynema's form): its settings.

The step, in the symbols of the book's generalized-α page, is :mod:`rbdyn.kernels.gen_alpha`.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._errors import InputError
from .._validate import finite_number
from .base import Scheme

__all__ = ["GenAlpha", "gen_alpha_coefficients"]


def gen_alpha_coefficients(rho_inf: float) -> tuple[float, float, float, float]:
    """``(alpha_m, alpha_f, gamma, beta)`` of the generalized-α method for ``rho_inf``.

    Chung & Hulbert's optimal choice for a spectral radius ``rho_inf`` at
    infinite frequency (second order, maximal high-frequency dissipation).
    """
    rho = float(rho_inf)
    alpha_m = (2.0 * rho - 1.0) / (rho + 1.0)
    alpha_f = rho / (rho + 1.0)
    gamma = 0.5 + alpha_f - alpha_m
    beta = 0.25 * (gamma + 0.5) ** 2
    return alpha_m, alpha_f, gamma, beta


# -- the scheme --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class GenAlpha(Scheme):
    r"""Lie-group generalized-α with index-3 constraints, as Kynema implements it.

    The method of Brüls, Cardona & Arnold (2012) in inertial coordinates:
    spatial angular velocities, rotations updated by left multiplication
    :math:`R_{n+1} = \exp(h\widetilde{\Delta q})R_n`, equilibrium enforced at
    :math:`t_{n+1}` with the true accelerations, algorithmic accelerations
    that carry the α-weighting, and every constraint of the system
    (every registered constraint kind, to the world or between bodies) enforced at
    position level with Lagrange multipliers (index 3). Each step solves the
    equations with Newton's method and the tangent operator of
    Géradin & Cardona, the equilibrium rows scaled by :math:`\beta h^2`
    (Bottasso, Dopico & Trainelli 2008), and stops with the test of Arnold &
    Hante (2017). Initial accelerations and multipliers are made consistent
    with the equations of motion in ``init``.

    The iteration matrix has the exact derivatives of the inertial and
    gyroscopic terms and of the constraint forces (:math:`K^\Phi`). The loads
    enter the residual only: the moment of a force applied away from the
    body origin (gravity on a pivoted body, a point force) depends on the
    rotation, and leaving that stiffness out costs Newton's method its
    quadratic rate only when that moment matters next to the inertia
    (:math:`\beta h^2 \|\partial\tau/\partial\theta\| \not\ll \|J\|`);
    in exchange a built-in load and the same load given as a Python
    callback take identical iterations.

    Second order for free, pivoted and constrained bodies. Nothing is
    conserved exactly except what every step keeps to round-off: the linear
    momentum of a system without external forces (translation is a linear
    Newmark scheme and internal reactions cancel) and the orthonormality of
    :math:`R`. For :math:`\rho_\infty < 1` the high frequencies are damped;
    :math:`\rho_\infty = 1` is the non-dissipative (trapezoidal) member.

    Parameters
    ----------
    rho_inf : float
        Spectral radius at infinite frequency, in [0, 1] (Kynema's tests: 0.9).
    newton_atol, newton_rtol : float
        Absolute (> 0) and relative (>= 0) tolerances of the convergence test
        (Kynema: 1e-5 and 1e-3). The absolute one has the units of the
        position increments (metres, radians) and of the multipliers.
    newton_max_iter : int
        Newton iterations allowed per step; more is a
        :class:`~rbdyn.NumericalError`.

    Notes
    -----
    The carry is ``(x, R, v, W, a, vd, lam)``: the state, the algorithmic
    and the true accelerations (N, 6) in world components (origin
    acceleration, spatial angular acceleration) and the multipliers of the
    last step (reaction on a constraint's first body: ``-B^T lam``).

    References
    ----------
    * O. Brüls, A. Cardona, M. Arnold, "Lie group generalized-α time
      integration of constrained flexible multibody systems", Mechanism and
      Machine Theory 48:121–137, 2012.
    * M. Arnold, O. Brüls, "Convergence of the generalized-α scheme for
      constrained mechanical systems", Multibody System Dynamics
      18(2):185–202, 2007.
    * C. L. Bottasso, D. Dopico, L. Trainelli, "On the optimal scaling of
      index three DAEs in multibody dynamics", Multibody System Dynamics
      19:3–20, 2008.
    * M. Arnold, S. Hante, "Implementation details of a generalized-α
      differential-algebraic equation Lie group method", Journal of
      Computational and Nonlinear Dynamics 12(2):021002, 2017.
    * M. Géradin, A. Cardona, *Flexible Multibody Dynamics: A Finite
      Element Approach*, Wiley, 2001 (the tangent operator).
    * Kynema (formerly OpenTurbine), https://github.com/kynema/kynema: the
      heavy-top regression test this implementation reproduces.
    """

    rho_inf: float = 0.9
    newton_atol: float = 1e-5
    newton_rtol: float = 1e-3
    newton_max_iter: int = 10

    name = "gen_alpha"
    description = "Lie-group generalized-alpha (Bruls, Cardona & Arnold 2012; Kynema): implicit, index-3 constraints, order 2"
    reference = (
        "O. Brüls, A. Cardona and M. Arnold, Lie group generalized-α time integration of constrained "
        "flexible multibody systems, Mechanism and Machine Theory 48:121-137, 2012"
    )
    label = "Lie group generalized-α"
    order = 2
    implicit = True
    conserves = frozenset({"linear momentum", "orthonormality"})
    energy = "not conserved"
    symmetric = False
    supports_constraints = True
    constrained_order = 2
    constrained_energy = "bounded"

    @staticmethod
    def compiled():
        from ..kernels import gen_alpha

        return gen_alpha

    @classmethod
    def kernel(cls):
        return cls.compiled().advance

    def __post_init__(self):
        value = self.rho_inf
        bad = isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating))
        if bad or not finite_number(value) or not 0.0 <= value <= 1.0:
            raise InputError(f"scheme.{self.name}.rho_inf", f"must be a number in [0, 1], got {value!r}")
        self._check_positive("newton_atol")
        rtol = self.newton_rtol
        bad = isinstance(rtol, bool) or not isinstance(rtol, (int, float, np.integer, np.floating))
        if bad or not finite_number(rtol) or rtol < 0:
            raise InputError(f"scheme.{self.name}.newton_rtol", f"must be a finite number >= 0, got {rtol!r}")
        self._check_positive("newton_max_iter", integer=True)

    @property
    def coefficients(self) -> tuple[float, float, float, float]:
        """``(alpha_m, alpha_f, gamma, beta)`` for :attr:`rho_inf`."""
        return gen_alpha_coefficients(self.rho_inf)

    def params(self):
        alpha_m, alpha_f, gamma, beta = self.coefficients
        return self.compiled().GenAlphaParams(alpha_m=alpha_m, alpha_f=alpha_f, gamma=gamma, beta=beta,
                              newton_atol=float(self.newton_atol), newton_rtol=float(self.newton_rtol),
                              newton_max_iter=int(self.newton_max_iter))

    def init(self, system, state):
        """The state plus consistent accelerations: ``(x, R, v, W, acc, vd, lam)``
        with ``acc = vd`` (see :func:`consistent_accelerations`)."""
        x, R, v, W = (np.array(a, dtype=float, copy=True) for a in state)
        vd, lam = self.compiled().consistent_accelerations(system, (x, R, v, W))
        return self.compiled().GenAlphaState(x=x, R=R, v=v, W=W, acc=vd.copy(), vd=vd, lam=lam)
