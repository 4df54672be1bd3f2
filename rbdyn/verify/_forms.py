r"""Textbook forms of rotations and derivatives, written independently of :mod:`rbdyn.so3`.

The pages and tests that check rbdyn's rotation maps, constraint gradients and schemes need
the same few formulas as plain numpy (numbers) and sympy (symbols). They are written here
once, in their most direct textbook form, without a call into rbdyn, so that a check never
compares rbdyn with itself.

References
----------
* J. Stuelpnagel, On the parametrization of the three-dimensional rotation group, *SIAM
  Review* 6(4), 1964, 422–430 (Rodrigues' formula).
* H. Goldstein, C. Poole, J. Safko, *Classical Mechanics*, 3rd ed., 2002, sec. 4.4 (Euler
  angles as products of rotations about the coordinate axes).
"""

from __future__ import annotations

import numpy as np

__all__ = ["skew", "rodrigues", "relative_difference", "hat", "axis_rotation", "rotation_x", "rotation_y",
           "rotation_z", "time_derivative", "pythagoras"]


# -- numbers (numpy) ---------------------------------------------------------------------------
def skew(a) -> np.ndarray:
    """The matrix :math:`\\hat a` with :math:`\\hat a b = a \\times b`."""
    a = np.asarray(a, dtype=float)
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def rodrigues(psi) -> np.ndarray:
    r"""The rotation :math:`\exp\hat\psi = I + \frac{\sin\theta}{\theta}\hat\psi +
    \frac{1-\cos\theta}{\theta^2}\hat\psi^2`, :math:`\theta = |\psi|` (the series to second
    order below :math:`10^{-8}`, where the two coefficients round to 1 and 1/2)."""
    psi = np.asarray(psi, dtype=float)
    theta = float(np.linalg.norm(psi))
    K = skew(psi)
    if theta < 1e-8:
        return np.eye(3) + K + 0.5 * K @ K
    return np.eye(3) + np.sin(theta) / theta * K + (1.0 - np.cos(theta)) / theta**2 * K @ K


def relative_difference(mine, theirs) -> float:
    """Largest entry-wise difference of paired arrays, each relative to the larger of 1 and the
    largest magnitude of the second array of its pair."""
    return max(float(np.max(np.abs(np.asarray(p) - np.asarray(q)))) / max(1.0, float(np.max(np.abs(q))))
               for p, q in zip(mine, theirs))


# -- symbols (sympy) ---------------------------------------------------------------------------
def hat(a):
    """The sympy matrix :math:`\\hat a` of a 3-vector of expressions."""
    import sympy as sp

    return sp.Matrix([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])


def axis_rotation(axis, angle):
    """The sympy rotation by ``angle`` about the unit ``axis`` (Rodrigues' formula)."""
    import sympy as sp

    K = hat(axis)
    return sp.eye(3) + sp.sin(angle) * K + (1 - sp.cos(angle)) * K * K


def rotation_x(angle):
    """The sympy rotation by ``angle`` about the x axis."""
    import sympy as sp

    c, s = sp.cos(angle), sp.sin(angle)
    return sp.Matrix([[1, 0, 0], [0, c, -s], [0, s, c]])


def rotation_y(angle):
    """The sympy rotation by ``angle`` about the y axis."""
    import sympy as sp

    c, s = sp.cos(angle), sp.sin(angle)
    return sp.Matrix([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rotation_z(angle):
    """The sympy rotation by ``angle`` about the z axis."""
    import sympy as sp

    c, s = sp.cos(angle), sp.sin(angle)
    return sp.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def time_derivative(expr, variables, rates):
    """The derivative of ``expr`` along a motion: :math:`\\sum_i \\partial e/\\partial q_i\\,
    \\dot q_i`, with ``variables`` the :math:`q_i` and ``rates`` their time derivatives (an
    equation of motion's right-hand sides, or further symbols)."""
    import sympy as sp

    return sum((sp.diff(expr, q) * rate for q, rate in zip(variables, rates)), sp.Integer(0))


def pythagoras(expr, angles):
    """``expr`` expanded, with :math:`\\cos^2 a` replaced by :math:`1 - \\sin^2 a` for each of
    ``angles``: a canonical form in which trigonometric identities cancel (much faster than
    ``trigsimp`` on the long expressions of a top's equations)."""
    import sympy as sp

    expr = sp.expand(expr)
    for a in angles:
        expr = sp.expand(expr.subs(sp.cos(a) ** 2, 1 - sp.sin(a) ** 2))
    return expr
