"""Solfec-1.0's rigid-rotation schemes RIG_POS, RIG_NEG and RIG_IMP: their settings.

The step itself, in the symbols of the book's notation and RIG methods pages, is
:mod:`rbdyn.kernels.rig`, imported when a run first needs it.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .base import Scheme

__all__ = ["RigPos", "RigNeg", "RigImp"]


_REF = (
    "T. Koziara and N. Bićanić, Simple and efficient integration of rigid rotations "
    "suitable for constraint solvers, IJNME 81(9):1073-1092, 2010"
)


@dataclasses.dataclass(frozen=True)
class _Rig(Scheme):
    """Settings shared by the three RIG schemes: the constraint solve."""

    constraint_tol: float = 1e-14
    constraint_max_iter: int = 25

    supports_constraints = True

    @staticmethod
    def compiled():
        from ..kernels import rig

        return rig

    @classmethod
    def kernel(cls):
        return cls.compiled().advance

    def __post_init__(self):
        self._check_positive("constraint_tol")
        self._check_positive("constraint_max_iter", integer=True)

    def _variant(self):
        return (0, 0.0, 0)

    def params(self):
        variant, newton_tol, newton_max_iter = self._variant()
        return self.compiled().RigParams(variant=variant, newton_tol=newton_tol, newton_max_iter=newton_max_iter,
                         constraint_tol=float(self.constraint_tol), constraint_max_iter=int(self.constraint_max_iter))

    def init(self, system, state):
        # The state adds the last step's reaction impulses (one per residual row).
        x, R, v, W = (np.array(a, dtype=float, copy=True) for a in state)
        return self.compiled().RigState(x=x, R=R, v=v, W=W, P=np.zeros(system.n_constraint_rows))


@dataclasses.dataclass(frozen=True)
class RigPos(_Rig):
    """Solfec-1.0's RIG_POS: explicit, the free velocity is the new velocity.

    Second order. Its energy increases over long times and angular momentum
    is not conserved exactly (the book's literature table, which cites
    Solfec-1.0's documentation). With joints its energy drifts at first
    order, up or down depending on the motion (measured in the book).

    With constraints whose reactions turn a body (a joint away from its mass
    centre) it is first order: the mid-step rate in the gyroscopic term
    leaves out the reaction impulse, as in Solfec, where the solver needs the
    velocity linear in the reactions. RIG_NEG and RIG_IMP take the complete
    impulse into their final rate and stay second order.

    Parameters
    ----------
    constraint_tol, constraint_max_iter
        The constraint solve; see :class:`RigNeg`.

    References
    ----------
    * T. Koziara, N. Bićanić, "Simple and efficient integration of rigid
      rotations suitable for constraint solvers", IJNME 81(9):1073–1092,
      2010 (scheme NEW1).
    """

    name = "rig_pos"
    description = "Solfec RIG_POS (Koziara & Bicanic 2010, NEW1): explicit, order 2"
    reference = _REF
    label = "NEW1"
    order = 2
    constrained_order = 1
    implicit = False
    conserves = frozenset({"linear momentum", "orthonormality"})
    energy = "increases"
    constrained_energy = "either sign"
    symmetric = False

    def _variant(self):
        return (self.compiled().POS, 0.0, 0)


@dataclasses.dataclass(frozen=True)
class RigNeg(_Rig):
    """Solfec-1.0's RIG_NEG (its default): explicit with a momentum correction.

    The new body rate is ``J^{-1} exp(-h/2 W_free) a`` (the free rate
    ``W_free`` and the angular impulse ``a`` of the methods page, ``W1`` and
    ``A`` in the code), so the spatial angular momentum obeys an exact
    midpoint balance (exact conservation with zero torque). Second order,
    with constraints too; its energy decreases over long times (the book's
    literature table, which cites Solfec-1.0's documentation); with joints
    it drifts up or down depending on the motion (measured in the book).

    Constraints are enforced at position level: the reaction impulses,
    applied at the mid-step configuration, are those for which the
    end-of-step configuration satisfies every constraint (Newton's method
    on the residuals, with the exact derivative of the update).

    Parameters
    ----------
    constraint_tol : float
        Largest residual (metres) accepted at the end of a step; never
        taken below 16 ulp of the coordinates, which float64 cannot resolve.
    constraint_max_iter : int
        Newton iterations allowed for the reactions of one step.

    References
    ----------
    * T. Koziara, N. Bićanić, "Simple and efficient integration of rigid
      rotations suitable for constraint solvers", IJNME 81(9):1073–1092,
      2010 (scheme NEW2).
    """

    name = "rig_neg"
    description = "Solfec RIG_NEG (Koziara & Bicanic 2010, NEW2): explicit, momentum-exact, order 2"
    reference = _REF
    label = "NEW2"
    order = 2
    constrained_order = 2
    implicit = False
    conserves = frozenset({"linear momentum", "angular momentum", "orthonormality"})
    energy = "decreases"
    constrained_energy = "either sign"
    symmetric = False

    def _variant(self):
        return (self.compiled().NEG, 0.0, 0)


@dataclasses.dataclass(frozen=True)
class RigImp(_Rig):
    """Solfec-1.0's RIG_IMP: the new rate solves ``exp(h/2 W) J W = a``.

    A 3×3 Newton iteration per body, started from the free velocity, with
    the analytic derivative of the exponential map; it stops when
    ``max|g| <= newton_tol * h / 2`` (Solfec's test; never below 8 ulp of
    ``max|a|``, which float64 cannot resolve) and fails (a
    :class:`~rbdyn.NumericalError`) after ``newton_max_iter`` iterations.
    Second order, with constraints too; exact momentum balance; its energy
    stays bounded (the book's literature table). ``a`` is the step's angular
    impulse of the RIG methods page (``A`` in the code).

    Parameters
    ----------
    constraint_tol, constraint_max_iter
        The constraint solve; see :class:`RigNeg`.
    newton_tol : float
        Tolerance factor (Solfec: 1e-12); the residual has the units of
        angular momentum.
    newton_max_iter : int
        Iteration limit (Solfec: 50).

    References
    ----------
    * T. Koziara, N. Bićanić, "Simple and efficient integration of rigid
      rotations suitable for constraint solvers", IJNME 81(9):1073–1092,
      2010 (scheme NEW3).
    """

    newton_tol: float = 1e-12
    newton_max_iter: int = 50

    name = "rig_imp"
    description = "Solfec RIG_IMP (Koziara & Bicanic 2010, NEW3): implicit 3x3 Newton, momentum-exact, order 2"
    reference = _REF
    label = "NEW3"
    order = 2
    constrained_order = 2
    implicit = True
    conserves = frozenset({"linear momentum", "angular momentum", "orthonormality"})
    energy = "bounded"
    constrained_energy = "bounded"
    symmetric = True

    def __post_init__(self):
        super().__post_init__()
        self._check_positive("newton_tol")
        self._check_positive("newton_max_iter", integer=True)

    def _variant(self):
        return (self.compiled().IMP, float(self.newton_tol), int(self.newton_max_iter))
