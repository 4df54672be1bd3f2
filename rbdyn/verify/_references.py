r"""High-accuracy reference solutions, independent of rbdyn's schemes.

Each reference integrates the classical equations of motion with scipy's
DOP853 (an explicit Runge–Kutta method of order 8 with error control) at a
tight tolerance, or evaluates a closed form. Nothing here calls an rbdyn
integrator or rbdyn's rotation module: the quaternion algebra is written out
below, so that a defect in :mod:`rbdyn.so3` cannot hide in a reference.

* :func:`rigid_body_reference`: one rigid body turning about its mass centre
  or a fixed point, Euler's equations in the body frame with any body torque
  (free top, heavy top, Euler–Poinsot);
* :func:`heavy_top_reference`: the same for a body under gravity turning
  about a fixed pivot;
* :func:`pendulum_period`: the exact period of the simple pendulum;
* :func:`double_pendulum_reference`: two point masses on two massless rods,
  Lagrange's equations in the two angles.

References
----------
* E. Hairer, S. P. Nørsett, G. Wanner, *Solving Ordinary Differential
  Equations I*, 2nd ed., Springer, 1993, Sect. II.10 (DOP853).
* L. D. Landau, E. M. Lifshitz, *Mechanics*, 3rd ed., Pergamon, 1976,
  §5 (double pendulum), §11 (pendulum period), §35–37 (rigid body).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

import numpy as np

# scipy is imported where a reference is computed, not with rbdyn (rbdyn imports this toolkit):
# every `rbdyn` command would otherwise pay for loading scipy.integrate.

__all__ = [
    "RigidBodySolution",
    "rigid_body_rates",
    "heavy_top_torque",
    "rigid_body_reference",
    "heavy_top_reference",
    "pendulum_period",
    "DoublePendulumSolution",
    "double_pendulum_acceleration",
    "double_pendulum_reference",
]


def _quat_mul(p, q):
    pw, px, py, pz = p
    qw, qx, qy, qz = q
    return (
        pw * qw - px * qx - py * qy - pz * qz,
        pw * qx + px * qw + py * qz - pz * qy,
        pw * qy - px * qz + py * qw + pz * qx,
        pw * qz + px * qy - py * qx + pz * qw,
    )


def _cross(a, b):
    """``a × b`` for two 3-vectors, as a tuple of floats.

    The products and differences of :func:`numpy.cross`, in its order, hence its bits; at
    some 0.3 µs instead of 17, which matters in a right-hand side DOP853 calls 10⁵ times.
    """
    a0, a1, a2 = a
    b0, b1, b2 = b
    return (a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0)


def _quat_to_matrix(q):
    w, x, y, z = (q / np.linalg.norm(q)).tolist()
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


def _matrix_to_quat(R):
    # Shepperd's method: the largest of the four squared components first.
    R = np.asarray(R, dtype=float)
    tr = np.trace(R)
    d = np.array([tr, R[0, 0], R[1, 1], R[2, 2]])
    k = int(np.argmax(d))
    if k == 0:
        w = 0.5 * math.sqrt(1.0 + tr)
        q = [w, (R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w), (R[1, 0] - R[0, 1]) / (4 * w)]
    elif k == 1:
        x = 0.5 * math.sqrt(1.0 + 2 * R[0, 0] - tr)
        q = [(R[2, 1] - R[1, 2]) / (4 * x), x, (R[0, 1] + R[1, 0]) / (4 * x), (R[0, 2] + R[2, 0]) / (4 * x)]
    elif k == 2:
        y = 0.5 * math.sqrt(1.0 + 2 * R[1, 1] - tr)
        q = [(R[0, 2] - R[2, 0]) / (4 * y), (R[0, 1] + R[1, 0]) / (4 * y), y, (R[1, 2] + R[2, 1]) / (4 * y)]
    else:
        z = 0.5 * math.sqrt(1.0 + 2 * R[2, 2] - tr)
        q = [(R[1, 0] - R[0, 1]) / (4 * z), (R[0, 2] + R[2, 0]) / (4 * z), (R[1, 2] + R[2, 1]) / (4 * z), z]
    return np.array(q)


@dataclasses.dataclass(frozen=True)
class RigidBodySolution:
    """A reference motion of one rigid body, sampled at ``t``.

    Attributes
    ----------
    t : ndarray, (n,)
    R_world_body : ndarray, (n, 3, 3)
    omega_body : ndarray, (n, 3)
        Body-frame angular velocity.
    inertia : ndarray, (3, 3)
        The body-frame inertia the equations used (about the fixed point).
    nfev : int
        Right-hand-side evaluations DOP853 needed.
    """

    t: np.ndarray
    R_world_body: np.ndarray
    omega_body: np.ndarray
    inertia: np.ndarray
    nfev: int

    @property
    def angular_momentum_world(self) -> np.ndarray:
        """``R J Ω`` at every sample, (n, 3)."""
        return np.einsum("nij,jk,nk->ni", self.R_world_body, self.inertia, self.omega_body)

    @property
    def kinetic_energy(self) -> np.ndarray:
        """``½ Ωᵀ J Ω`` at every sample, (n,)."""
        return 0.5 * np.einsum("ni,ij,nj->n", self.omega_body, self.inertia, self.omega_body)


def rigid_body_rates(inertia, torque_body: Callable | None = None) -> Callable:
    r"""The right-hand side ``rates(t, y)`` of a rigid body's equations in ``y = (q, \Omega)``:
    :math:`\dot q = \tfrac12 q \otimes (0, \Omega)`, :math:`J\dot\Omega = T(t, \Lambda, \Omega)
    - \Omega \times J\Omega` (``q`` a unit quaternion, w first; :math:`\Omega` the body-frame
    angular velocity).

    Parameters
    ----------
    inertia : array_like, (3, 3) or (3,)
        Body-frame inertia about the point the body turns about (a diagonal as 3 numbers).
    torque_body : callable, optional
        ``torque_body(t, R_world_body, omega_body) -> (3,)``, the body-frame torque.
    """
    J = _inertia_matrix(inertia)
    J_inv = np.linalg.inv(J)

    # In Python floats where numpy would work on 3- and 4-vectors one call at a time (the same
    # operations in the same order as the numpy form, so the same bits); the products with J by
    # numpy, as ever.
    def rates(t, y):
        W = y[4:]
        w0, w1, w2 = W.tolist()
        T = (0.0, 0.0, 0.0) if torque_body is None else \
            np.asarray(torque_body(t, _quat_to_matrix(y[:4]), W), dtype=float).tolist()
        gyro = _cross((w0, w1, w2), (J @ W).tolist())
        rate = J_inv @ np.array([T[0] - gyro[0], T[1] - gyro[1], T[2] - gyro[2]])
        dq = _quat_mul(y[:4].tolist(), (0.0, w0, w1, w2))
        return np.array([0.5 * dq[0], 0.5 * dq[1], 0.5 * dq[2], 0.5 * dq[3], *rate.tolist()])

    return rates


def heavy_top_torque(com_body, mass, gravity) -> Callable:
    r"""``torque_body(t, R_world_body, omega_body)`` of gravity on a top about its pivot:
    :math:`c \times \Lambda^T m g`, with :math:`c` the mass centre from the pivot, body frame."""
    c = np.asarray(com_body, dtype=float).tolist()
    mg = float(mass) * np.asarray(gravity, dtype=float)
    return lambda t, R, W: _cross(c, (R.T @ mg).tolist())


def _inertia_matrix(inertia) -> np.ndarray:
    J = np.asarray(inertia, dtype=float)
    return np.diag(J) if J.shape == (3,) else J


def rigid_body_reference(
    inertia,
    R0,
    omega0_body,
    t_eval,
    torque_body: Callable | None = None,
    rtol: float = 1e-12,
) -> RigidBodySolution:
    r"""One rigid body turning about a fixed point (or its mass centre).

    Integrates :func:`rigid_body_rates` with DOP853 at ``rtol = atol``.

    Parameters
    ----------
    inertia : array_like, (3, 3) or (3,)
        Body-frame inertia about the point the body turns about (a diagonal
        given as 3 numbers).
    R0 : array_like, (3, 3)
        Initial rotation, body to world.
    omega0_body : array_like, (3,)
        Initial body-frame angular velocity.
    t_eval : array_like
        Increasing output times, starting at 0 or later.
    torque_body : callable, optional
        ``torque_body(t, R_world_body, omega_body) -> (3,)``, the body-frame
        torque; none by default (Euler–Poinsot motion).
    rtol : float
        Relative and absolute tolerance of DOP853.

    Returns
    -------
    RigidBodySolution
    """
    J = _inertia_matrix(inertia)
    t_eval = np.asarray(t_eval, dtype=float)
    y0 = np.concatenate([_matrix_to_quat(R0), np.asarray(omega0_body, dtype=float)])
    from scipy.integrate import solve_ivp

    sol = solve_ivp(rigid_body_rates(J, torque_body), (0.0, float(t_eval[-1])), y0, method="DOP853", rtol=rtol,
                    atol=rtol, t_eval=t_eval)
    if not sol.success:
        raise RuntimeError(f"DOP853 failed: {sol.message}")
    R = np.array([_quat_to_matrix(q) for q in sol.y[:4].T])
    return RigidBodySolution(sol.t, R, sol.y[4:].T.copy(), J, int(sol.nfev))


def heavy_top_reference(inertia_pivot, com_body, mass, gravity, R0, omega0_body, t_eval, rtol: float = 1e-12):
    r"""A heavy top: a body under gravity turning about a fixed pivot (torque
    :func:`heavy_top_torque`).

    Parameters
    ----------
    inertia_pivot : array_like, (3, 3) or (3,)
        Body-frame inertia about the pivot.
    com_body : array_like, (3,)
        Mass centre relative to the pivot, body frame.
    mass : float
    gravity : array_like, (3,)
        World gravity.
    R0, omega0_body, t_eval, rtol
        As for :func:`rigid_body_reference`.

    Returns
    -------
    RigidBodySolution
    """
    return rigid_body_reference(inertia_pivot, R0, omega0_body, t_eval,
                                torque_body=heavy_top_torque(com_body, mass, gravity), rtol=rtol)


def pendulum_period(length: float, g: float, theta_max: float) -> float:
    r"""Exact period of the simple pendulum released from rest at ``theta_max``.

    :math:`T = 4\sqrt{l/g}\,K(k)`, :math:`k = \sin(\theta_{max}/2)`, with
    :math:`K` the complete elliptic integral of the first kind (scipy's
    ``ellipk`` takes the parameter :math:`m = k^2`).
    """
    from scipy.special import ellipk

    return 4.0 * math.sqrt(length / g) * float(ellipk(math.sin(0.5 * theta_max) ** 2))


@dataclasses.dataclass(frozen=True)
class DoublePendulumSolution:
    """Angles from the downward vertical and the two mass positions (x–z plane).

    Attributes
    ----------
    t, theta1, theta2 : ndarray, (n,)
    upper, lower : ndarray, (n, 3)
        World positions of the two masses (pivot at the origin).
    nfev : int
    """

    t: np.ndarray
    theta1: np.ndarray
    theta2: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    nfev: int


def double_pendulum_acceleration(theta, omega, m1=1.0, m2=1.0, l1=1.0, l2=1.0, g=9.81) -> np.ndarray:
    r"""The angular accelerations of the planar double pendulum (the equations of
    :func:`double_pendulum_reference`) at angles ``theta`` and rates ``omega``.

    Returns
    -------
    ndarray, (2,)
        :math:`(\ddot\theta_1, \ddot\theta_2)` in rad/s².
    """
    a, b = float(theta[0]), float(theta[1])
    wa, wb = float(omega[0]), float(omega[1])
    c, s = math.cos(a - b), math.sin(a - b)
    M = np.array([[(m1 + m2) * l1 * l1, m2 * l1 * l2 * c], [m2 * l1 * l2 * c, m2 * l2 * l2]])
    f = np.array([-m2 * l1 * l2 * wb * wb * s - (m1 + m2) * g * l1 * math.sin(a),
                  m2 * l1 * l2 * wa * wa * s - m2 * g * l2 * math.sin(b)])
    return np.linalg.solve(M, f)


def double_pendulum_reference(
    t_eval, theta0, omega0=(0.0, 0.0), m1=1.0, m2=1.0, l1=1.0, l2=1.0, g=9.81, rtol: float = 1e-13
) -> DoublePendulumSolution:
    r"""Planar double pendulum of point masses on massless rods (Lagrange).

    With :math:`\delta = \theta_1 - \theta_2`:

    .. math::

        \begin{bmatrix}(m_1+m_2)l_1^2 & m_2 l_1 l_2\cos\delta\\
        m_2 l_1 l_2\cos\delta & m_2 l_2^2\end{bmatrix}
        \begin{bmatrix}\ddot\theta_1\\ \ddot\theta_2\end{bmatrix} =
        \begin{bmatrix}-m_2 l_1 l_2\dot\theta_2^2\sin\delta - (m_1+m_2) g l_1\sin\theta_1\\
        m_2 l_1 l_2\dot\theta_1^2\sin\delta - m_2 g l_2\sin\theta_2\end{bmatrix}.

    Angles are measured from the downward vertical towards +x; the masses
    sit at :math:`l_1(\sin\theta_1, 0, -\cos\theta_1)` and that plus
    :math:`l_2(\sin\theta_2, 0, -\cos\theta_2)`.
    """
    t_eval = np.asarray(t_eval, dtype=float)

    def rhs(_, y):
        acc = double_pendulum_acceleration(y[:2], y[2:], m1, m2, l1, l2, g)
        return [y[2], y[3], acc[0], acc[1]]

    y0 = [float(theta0[0]), float(theta0[1]), float(omega0[0]), float(omega0[1])]
    from scipy.integrate import solve_ivp

    sol = solve_ivp(rhs, (0.0, float(t_eval[-1])), y0, method="DOP853", rtol=rtol, atol=rtol, t_eval=t_eval)
    if not sol.success:
        raise RuntimeError(f"DOP853 failed: {sol.message}")
    a, b = sol.y[0], sol.y[1]
    upper = l1 * np.stack([np.sin(a), np.zeros_like(a), -np.cos(a)], axis=1)
    lower = upper + l2 * np.stack([np.sin(b), np.zeros_like(b), -np.cos(b)], axis=1)
    return DoublePendulumSolution(sol.t, a, b, upper, lower, int(sol.nfev))
