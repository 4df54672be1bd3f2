"""Two baseline schemes that users compare against: their settings.

``symplectic_euler`` is what robotics engines (ODE, Bullet, DART, MuJoCo's
Euler) do; ``rk4`` is the classical Runge–Kutta method on the quaternion
form of the equations of motion. The compiled steps are :mod:`rbdyn.kernels.baselines`.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

from .base import Scheme

__all__ = ["SymplecticEuler", "RK4"]


@dataclasses.dataclass(frozen=True)
class _Baseline(Scheme):
    """What the two baselines share: no settings, the carried state ``(x, R, v, W)`` alone, and a
    kernel in :mod:`rbdyn.kernels.baselines` named by ``kernel_name``."""

    kernel_name: ClassVar[str]

    @staticmethod
    def compiled():
        from ..kernels import baselines

        return baselines

    @classmethod
    def kernel(cls):
        return getattr(cls.compiled(), cls.kernel_name)

    def params(self):
        return self.compiled().BaselineParams(none=0)

    def init(self, system, state):
        return self.compiled().initial_state(state)


@dataclasses.dataclass(frozen=True)
class SymplecticEuler(_Baseline):
    """Semi-implicit (symplectic) Euler as robotics engines implement it.

    One step of size ``h``, loads at the start of the step:
    ``v += h f/m``; ``omega_w += h I_w^{-1}(t - omega_w × I_w omega_w)`` with the
    world inertia ``I_w = R J R^T``; ``x += h v``;
    ``q = normalise(q + h/2 [0, omega_w] ⊗ q)``.

    With this update rbdyn reproduces the Open Dynamics Engine's errors on
    the Boxes benchmark.

    References
    ----------
    * S. Peters, J. Hsu, "Comparison of Rigid Body Dynamic Simulators for
      Robotic Simulation in Gazebo", ROSCon 2014.
    * E. Hairer, C. Lubich, G. Wanner, *Geometric Numerical Integration*,
      2nd ed., Springer, 2006 (symplectic Euler, Sect. VI.3).
    """

    name = "symplectic_euler"
    description = "semi-implicit Euler with explicit gyroscopic term, as robotics engines do (order 1)"
    reference = "Peters & Hsu, ROSCon 2014 (ODE/Bullet/DART/MuJoCo Euler step)"
    label = "semi-implicit Euler"
    order = 1
    implicit = False
    conserves = frozenset({"linear momentum", "quaternion norm", "orthonormality"})
    energy = "not conserved"
    symmetric = False
    kernel_name = "symplectic_euler_advance"


@dataclasses.dataclass(frozen=True)
class RK4(_Baseline):
    """Classical fourth-order Runge–Kutta on (x, q, v, omega_body).

    The rates are ``x' = v``, ``q' = q ⊗ [0, W]/2``, ``v' = f/m``,
    ``W' = J^{-1}(T_body - W × J W)``; the quaternion is renormalised at the
    end of each step. Loads are evaluated at the four stages.

    References
    ----------
    * E. Hairer, S. P. Nørsett, G. Wanner, *Solving Ordinary Differential
      Equations I*, 2nd ed., Springer, 1993 (Sect. II.1, the "classical"
      method).
    """

    name = "rk4"
    description = "classical Runge-Kutta on position, quaternion, velocity, body rate (order 4)"
    reference = "Kutta 1901; Hairer, Nørsett & Wanner 1993, Sect. II.1"
    label = "classical RK4"
    order = 4
    implicit = False
    conserves = frozenset({"linear momentum", "quaternion norm", "orthonormality"})
    energy = "not conserved"
    symmetric = False
    kernel_name = "rk4_advance"
