r"""The rotation group SO(3): maps, Jacobians and conversions.

Conventions (the same names are used in the book's notation page):

* ``R_world_body`` (also written :math:`\Lambda`) maps body-frame components
  to world-frame components: :math:`a_{world} = \Lambda\, a_{body}`.
* ``quat_wxyz`` is a unit quaternion stored scalar first, ``(w, x, y, z)``,
  representing the same rotation as ``R_world_body``.
* A rotation vector ``phi`` (axis times angle) is an element of the Lie
  algebra; ``exp(phi)`` is the rotation by ``|phi|`` about ``phi``.
* ``hat(a) @ b == cross(a, b)`` and ``vee(hat(a)) == a``.
* The *right* Jacobian satisfies
  :math:`\exp(\phi + \delta) \approx \exp(\phi)\exp(J_r(\phi)\delta)`; the *left*
  Jacobian satisfies :math:`\exp(\phi + \delta) \approx \exp(J_l(\phi)\delta)\exp(\phi)`,
  and :math:`J_l(\phi) = J_r(-\phi) = J_r(\phi)^T`.
* The tangent operator of the generalized-α literature
  :math:`T(\psi) = I + \frac{\cos\varphi - 1}{\varphi^2}\tilde\psi + \frac{1 - \sin\varphi/\varphi}{\varphi^2}\tilde\psi^2`
  equals :math:`J_r(\psi)`.

Every function is compiled with numba (and behaves identically with
``NUMBA_DISABLE_JIT=1``), takes float64 arrays and switches to Taylor series
below a small angle so that nothing divides by zero near the identity.

Two forms of the same algebra:

* the maps above take and return arrays (``exp(phi)`` is a new 3x3 array): for Python code,
  the book and the tests;
* the *value forms* below (``exp_scaled``, ``mat_mul``, ...) take and return tuples of floats
  (a 3-vector of 3, a 3x3 matrix of 9, row by row), for the schemes' inner loops: numba keeps
  them in registers, so a step allocates nothing, and no array crosses a call there, so nothing
  is reference-counted. They are short and straight-line, and numba copies them into their
  callers (``rbdyn._compile.njit_inline``).

References
----------
* J. Solà, J. Deray, D. Atchuthan, "A micro Lie theory for state
  estimation in robotics", arXiv:1812.01537, 2018.
* M. Géradin, A. Cardona, *Flexible Multibody Dynamics: A Finite Element
  Approach*, Wiley, 2001 (the tangent operator).
* S. W. Shepperd, "Quaternion from rotation matrix", Journal of Guidance
  and Control 1(3):223-224, 1978.
"""

from __future__ import annotations

import numpy as np

from ._compile import njit, njit_inline

__all__ = [
    "hat",
    "vee",
    "exp",
    "log",
    "right_jacobian",
    "left_jacobian",
    "right_jacobian_inv",
    "left_jacobian_inv",
    "tangent_operator",
    "dexp_apply",
    "quat_wxyz_to_matrix",
    "matrix_to_quat_wxyz",
    "quat_wxyz_multiply",
    "quat_wxyz_exp",
    "rotvec_to_matrix",
    "matrix_to_rotvec",
    "rotation_distance",
    "orthonormality_error",
    # value forms
    "exp_coefficients",
    "vec3",
    "mat3",
    "put_vec3",
    "put_mat3",
    "cross",
    "mat_vec",
    "mat_T_vec",
    "mat_mul",
    "rodrigues",
    "exp_scaled",
    "minus_hat",
    "unit_quat_to_mat",
    "solve3",
    "two_product",
    "dot3_add",
    "reorthonormalized",
]

# Below these angles the closed forms lose digits to cancellation; the
# truncated series used instead are accurate to round-off there.
_SMALL = 1e-4  # for sin/cos ratios: next series term is O(theta^6) < 1e-24
_SMALL_INV = 1e-3  # for the inverse Jacobian coefficient: O(theta^6) < 1e-18


@njit
def hat(a):
    """Skew-symmetric matrix with ``hat(a) @ b == cross(a, b)``."""
    out = np.empty((3, 3))
    out[0, 0] = 0.0
    out[0, 1] = -a[2]
    out[0, 2] = a[1]
    out[1, 0] = a[2]
    out[1, 1] = 0.0
    out[1, 2] = -a[0]
    out[2, 0] = -a[1]
    out[2, 1] = a[0]
    out[2, 2] = 0.0
    return out


@njit
def vee(A):
    """Inverse of :func:`hat`, using the skew part of ``A``."""
    out = np.empty(3)
    out[0] = 0.5 * (A[2, 1] - A[1, 2])
    out[1] = 0.5 * (A[0, 2] - A[2, 0])
    out[2] = 0.5 * (A[1, 0] - A[0, 1])
    return out


@njit_inline
def exp_coefficients(theta2):
    """``a = sin t / t``, ``b = (1 - cos t) / t^2``, ``c = (t - sin t) / t^3`` for ``t^2 = theta2``:
    ``exp(phi) = I + a hat(phi) + b hat(phi)^2`` and ``J_r(phi) = I - b hat(phi) + c hat(phi)^2``."""
    if theta2 < _SMALL * _SMALL:
        a = 1.0 - theta2 / 6.0 + theta2 * theta2 / 120.0
        b = 0.5 - theta2 / 24.0 + theta2 * theta2 / 720.0
        c = 1.0 / 6.0 - theta2 / 120.0 + theta2 * theta2 / 5040.0
    else:
        theta = np.sqrt(theta2)
        s = np.sin(theta)
        half = np.sin(0.5 * theta)
        a = s / theta
        # 1 - cos t = 2 sin^2(t/2) avoids cancellation at moderate angles.
        b = 2.0 * half * half / theta2
        c = (theta - s) / (theta2 * theta)
    return a, b, c


@njit
def exp(phi):
    """Rotation matrix ``R_world_body = exp(hat(phi))`` (Rodrigues' formula)."""
    theta2 = phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]
    a, b, _ = exp_coefficients(theta2)
    K = hat(phi)
    return np.eye(3) + a * K + b * (K @ K)


@njit
def matrix_to_quat_wxyz(R):
    """Unit quaternion ``(w, x, y, z)`` of a rotation matrix, with ``w >= 0``.

    Shepperd's method: the largest of the four squared components is
    computed from the diagonal, the others from off-diagonal sums, so the
    result is accurate for every rotation (also near a half turn).
    """
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    q = np.empty(4)
    if tr >= R[0, 0] and tr >= R[1, 1] and tr >= R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + tr)
        q[0] = 0.25 * s
        q[1] = (R[2, 1] - R[1, 2]) / s
        q[2] = (R[0, 2] - R[2, 0]) / s
        q[3] = (R[1, 0] - R[0, 1]) / s
    elif R[0, 0] >= R[1, 1] and R[0, 0] >= R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q[0] = (R[2, 1] - R[1, 2]) / s
        q[1] = 0.25 * s
        q[2] = (R[0, 1] + R[1, 0]) / s
        q[3] = (R[0, 2] + R[2, 0]) / s
    elif R[1, 1] >= R[2, 2]:
        s = 2.0 * np.sqrt(1.0 - R[0, 0] + R[1, 1] - R[2, 2])
        q[0] = (R[0, 2] - R[2, 0]) / s
        q[1] = (R[0, 1] + R[1, 0]) / s
        q[2] = 0.25 * s
        q[3] = (R[1, 2] + R[2, 1]) / s
    else:
        s = 2.0 * np.sqrt(1.0 - R[0, 0] - R[1, 1] + R[2, 2])
        q[0] = (R[1, 0] - R[0, 1]) / s
        q[1] = (R[0, 2] + R[2, 0]) / s
        q[2] = (R[1, 2] + R[2, 1]) / s
        q[3] = 0.25 * s
    if q[0] < 0.0:
        q = -q
    return q / np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])


@njit
def quat_wxyz_to_matrix(q):
    """Rotation matrix of a quaternion ``(w, x, y, z)``; ``q`` is normalised first."""
    n = np.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    w = q[0] / n
    x = q[1] / n
    y = q[2] / n
    z = q[3] / n
    return np.array(unit_quat_to_mat(w, x, y, z)).reshape((3, 3))


@njit
def quat_wxyz_multiply(p, q):
    """Hamilton product ``p ⊗ q``; the matrix of the product is ``R(p) @ R(q)``."""
    out = np.empty(4)
    out[0] = p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3]
    out[1] = p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2]
    out[2] = p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1]
    out[3] = p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0]
    return out


@njit
def quat_wxyz_exp(phi):
    """Unit quaternion of the rotation vector ``phi``."""
    theta2 = phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]
    if theta2 < _SMALL * _SMALL:
        w = 1.0 - theta2 / 8.0 + theta2 * theta2 / 384.0
        s = 0.5 - theta2 / 48.0 + theta2 * theta2 / 3840.0  # sin(t/2)/t
    else:
        theta = np.sqrt(theta2)
        w = np.cos(0.5 * theta)
        s = np.sin(0.5 * theta) / theta
    out = np.empty(4)
    out[0] = w
    out[1] = s * phi[0]
    out[2] = s * phi[1]
    out[3] = s * phi[2]
    return out


@njit
def log(R):
    """Rotation vector ``phi`` with ``exp(phi) == R`` and ``|phi| <= pi``.

    Goes through the quaternion (Shepperd), so it stays accurate near the
    identity, where ``(R - R^T)/2`` is tiny, and near a half turn, where the
    skew part vanishes and the axis must come from the symmetric part.
    """
    q = matrix_to_quat_wxyz(R)  # w >= 0 so the angle is in [0, pi]
    s = np.sqrt(q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    w = q[0]
    if s < _SMALL:
        # 2 atan2(s, w)/s expanded in s, with w = sqrt(1 - s^2) near 1.
        k = 2.0 / w - 2.0 * s * s / (3.0 * w * w * w)
    else:
        k = 2.0 * np.arctan2(s, w) / s
    out = np.empty(3)
    out[0] = k * q[1]
    out[1] = k * q[2]
    out[2] = k * q[3]
    return out


@njit
def right_jacobian(phi):
    r"""Right Jacobian :math:`J_r(\phi) = I - b\hat\phi + c\hat\phi^2` of ``exp``."""
    theta2 = phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]
    _, b, c = exp_coefficients(theta2)
    K = hat(phi)
    return np.eye(3) - b * K + c * (K @ K)


@njit
def left_jacobian(phi):
    r"""Left Jacobian :math:`J_l(\phi) = J_r(-\phi) = I + b\hat\phi + c\hat\phi^2`."""
    theta2 = phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]
    _, b, c = exp_coefficients(theta2)
    K = hat(phi)
    return np.eye(3) + b * K + c * (K @ K)


@njit
def _inv_coeff(theta2):
    """``d = 1/t^2 - (1 + cos t) / (2 t sin t)`` of the inverse Jacobians."""
    if theta2 < _SMALL_INV * _SMALL_INV:
        return 1.0 / 12.0 + theta2 / 720.0 + theta2 * theta2 / 30240.0
    theta = np.sqrt(theta2)
    # (1 + cos t)/sin t = cot(t/2) keeps the formula finite up to t -> 2 pi.
    return 1.0 / theta2 - 0.5 / (theta * np.tan(0.5 * theta))


@njit
def right_jacobian_inv(phi):
    r""":math:`J_r(\phi)^{-1} = I + \tfrac12\hat\phi + d\,\hat\phi^2` (singular at 2π)."""
    theta2 = phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]
    K = hat(phi)
    return np.eye(3) + 0.5 * K + _inv_coeff(theta2) * (K @ K)


@njit
def left_jacobian_inv(phi):
    r""":math:`J_l(\phi)^{-1} = I - \tfrac12\hat\phi + d\,\hat\phi^2`."""
    theta2 = phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2]
    K = hat(phi)
    return np.eye(3) - 0.5 * K + _inv_coeff(theta2) * (K @ K)


@njit
def tangent_operator(psi):
    r"""Tangent operator :math:`T(\psi)` of Géradin & Cardona; equal to :math:`J_r(\psi)`.

    Used by the Lie-group generalized-α iteration matrix: an increment
    :math:`\delta\psi` of the rotation vector changes the rotation by
    :math:`\exp(\psi+\delta\psi) \approx \exp(\psi)\exp(T(\psi)\delta\psi)`.
    """
    return right_jacobian(psi)


@njit
def dexp_apply(phi, a):
    r"""Derivative of :math:`\exp(\hat\phi)\,a` with respect to :math:`\phi`.

    :math:`\partial_\phi[\exp(\hat\phi)a] = -\exp(\hat\phi)\,\hat a\,J_r(\phi)`, the
    3×3 matrix needed by the Newton solve of RIG_IMP.
    """
    return -(exp(phi) @ hat(a)) @ right_jacobian(phi)


@njit
def rotvec_to_matrix(phi):
    """Alias of :func:`exp` under the name used for input conversion."""
    return exp(phi)


@njit
def matrix_to_rotvec(R):
    """Alias of :func:`log` under the name used for output conversion."""
    return log(R)


@njit
def rotation_distance(R_a, R_b):
    """Angle in ``[0, pi]`` of the relative rotation ``R_a^T R_b`` (radians)."""
    phi = log(R_a.T @ R_b)
    return np.sqrt(phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2])


@njit
def orthonormality_error(R):
    """Largest absolute entry of ``R^T R - I``, plus ``|det R - 1|``."""
    E = R.T @ R - np.eye(3)
    return np.max(np.abs(E)) + abs(np.linalg.det(R) - 1.0)


# -- value forms, for the schemes' inner loops ---------------------------------------------------
#
# A 3-vector is a tuple of 3 floats, a 3x3 matrix a tuple of 9 floats row by row
# (``M[3 * r + c]``): values that numba keeps in registers, so a step allocates nothing and
# counts no references. Each form computes its entries with the same operations, in the same
# order, as the matching array expression (the book's hand-written steps compare to the bit).


@njit_inline
def vec3(a, i):
    """Row ``i`` of an (n, 3) array as a 3-vector."""
    return (a[i, 0], a[i, 1], a[i, 2])


@njit_inline
def mat3(a, i):
    """Entry ``i`` of an (n, 3, 3) array as a 3x3 matrix (row by row)."""
    return (a[i, 0, 0], a[i, 0, 1], a[i, 0, 2], a[i, 1, 0], a[i, 1, 1], a[i, 1, 2], a[i, 2, 0], a[i, 2, 1], a[i, 2, 2])


@njit_inline
def put_vec3(a, i, v):
    """``a[i] = v`` for an (n, 3) array and a 3-vector."""
    a[i, 0] = v[0]
    a[i, 1] = v[1]
    a[i, 2] = v[2]


@njit_inline
def put_mat3(a, i, M):
    """``a[i] = M`` for an (n, 3, 3) array and a 3x3 matrix."""
    a[i, 0, 0], a[i, 0, 1], a[i, 0, 2] = M[0], M[1], M[2]
    a[i, 1, 0], a[i, 1, 1], a[i, 1, 2] = M[3], M[4], M[5]
    a[i, 2, 0], a[i, 2, 1], a[i, 2, 2] = M[6], M[7], M[8]


@njit_inline
def cross(a, b):
    """``a × b``."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit_inline
def mat_vec(A, b):
    """``A @ b``."""
    b0, b1, b2 = b[0], b[1], b[2]
    return (A[0] * b0 + A[1] * b1 + A[2] * b2, A[3] * b0 + A[4] * b1 + A[5] * b2, A[6] * b0 + A[7] * b1 + A[8] * b2)


@njit_inline
def mat_T_vec(A, b):
    """``A.T @ b``."""
    b0, b1, b2 = b[0], b[1], b[2]
    return (A[0] * b0 + A[3] * b1 + A[6] * b2, A[1] * b0 + A[4] * b1 + A[7] * b2, A[2] * b0 + A[5] * b1 + A[8] * b2)


@njit_inline
def mat_mul(A, B):
    """``A @ B``."""
    return (A[0] * B[0] + A[1] * B[3] + A[2] * B[6], A[0] * B[1] + A[1] * B[4] + A[2] * B[7],
            A[0] * B[2] + A[1] * B[5] + A[2] * B[8],
            A[3] * B[0] + A[4] * B[3] + A[5] * B[6], A[3] * B[1] + A[4] * B[4] + A[5] * B[7],
            A[3] * B[2] + A[4] * B[5] + A[5] * B[8],
            A[6] * B[0] + A[7] * B[3] + A[8] * B[6], A[6] * B[1] + A[7] * B[4] + A[8] * B[7],
            A[6] * B[2] + A[7] * B[5] + A[8] * B[8])


@njit_inline
def rodrigues(a, b, p0, p1, p2):
    r"""``I + a\hat p + b\hat p^2`` (``hat(p) @ u == p × u``)."""
    q01 = b * (p0 * p1)
    q02 = b * (p0 * p2)
    q12 = b * (p1 * p2)
    return (1.0 - b * (p1 * p1 + p2 * p2), q01 - a * p2, q02 + a * p1,
            q01 + a * p2, 1.0 - b * (p0 * p0 + p2 * p2), q12 - a * p0,
            q02 - a * p1, q12 + a * p0, 1.0 - b * (p0 * p0 + p1 * p1))


@njit_inline
def exp_scaled(s, w):
    """``exp(s * w)`` (Rodrigues' formula, the coefficients of :func:`exp`), no hat matrices."""
    p0 = s * w[0]
    p1 = s * w[1]
    p2 = s * w[2]
    a, b, _ = exp_coefficients(p0 * p0 + p1 * p1 + p2 * p2)
    return rodrigues(a, b, p0, p1, p2)


@njit_inline
def minus_hat(M, p):
    """``M - hat(p)``."""
    return (M[0], M[1] + p[2], M[2] - p[1], M[3] - p[2], M[4], M[5] + p[0], M[6] + p[1], M[7] - p[0], M[8])


@njit_inline
def unit_quat_to_mat(w, x, y, z):
    """The rotation matrix of the unit quaternion ``(w, x, y, z)`` (no normalisation)."""
    return (1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y),
            2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x),
            2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y))


@njit_inline
def solve3(M, g0, g1, g2):
    """The solution of ``M x = g`` (3x3, by the adjugate), as three scalars."""
    c00 = M[4] * M[8] - M[5] * M[7]
    c01 = M[5] * M[6] - M[3] * M[8]
    c02 = M[3] * M[7] - M[4] * M[6]
    det = M[0] * c00 + M[1] * c01 + M[2] * c02
    # x = adj(M) g / det; adj(M)[i, j] is the cofactor of M[j, i].
    c10 = M[2] * M[7] - M[1] * M[8]
    c11 = M[0] * M[8] - M[2] * M[6]
    c12 = M[1] * M[6] - M[0] * M[7]
    c20 = M[1] * M[5] - M[2] * M[4]
    c21 = M[2] * M[3] - M[0] * M[5]
    c22 = M[0] * M[4] - M[1] * M[3]
    return (
        (c00 * g0 + c10 * g1 + c20 * g2) / det,
        (c01 * g0 + c11 * g1 + c21 * g2) / det,
        (c02 * g0 + c12 * g1 + c22 * g2) / det,
    )


# Error-free transformations (Dekker 1971, Knuth): with them ``dot3_add``
# evaluates r . v + c as if in twice the working precision, then rounds.
_SPLIT = 134217729.0  # 2**27 + 1


@njit_inline
def two_product(a, b):
    """``p, e`` with ``p = fl(a*b)`` and ``a*b = p + e`` exactly (Dekker's splitting)."""
    p = a * b
    t = _SPLIT * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLIT * b
    bh = t - (t - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


@njit_inline
def dot3_add(r0, r1, r2, v, c):
    """``r . v + c`` for a 3-vector ``v``, as if computed in twice the working
    precision and then rounded (Ogita-Rump-Oishi Dot2)."""
    s = 0.0
    comp = c
    for p, e in (two_product(r0, v[0]), two_product(r1, v[1]), two_product(r2, v[2])):
        t = s + p  # two_sum(s, p): s + p = t + q exactly
        z = t - s
        q = (s - (t - z)) + (p - z)
        s = t
        comp += q + e
    return s + comp


@njit_inline
def reorthonormalized(R):
    """One Newton–Schulz step ``R (3I - R^T R)/2``.

    The products of exact rotations that the schemes form drift from SO(3)
    by a few ulp per step; this step removes that drift to first order
    (quadratically convergent toward the polar factor) and changes a rotation
    that is orthonormal to round-off by round-off only.
    """
    # S = 3I - R^T R (symmetric), then each row r of R becomes r S / 2.
    s00 = 3.0 - (R[0] * R[0] + R[3] * R[3] + R[6] * R[6])
    s11 = 3.0 - (R[1] * R[1] + R[4] * R[4] + R[7] * R[7])
    s22 = 3.0 - (R[2] * R[2] + R[5] * R[5] + R[8] * R[8])
    s01 = -(R[0] * R[1] + R[3] * R[4] + R[6] * R[7])
    s02 = -(R[0] * R[2] + R[3] * R[5] + R[6] * R[8])
    s12 = -(R[1] * R[2] + R[4] * R[5] + R[7] * R[8])
    return (0.5 * (R[0] * s00 + R[1] * s01 + R[2] * s02), 0.5 * (R[0] * s01 + R[1] * s11 + R[2] * s12),
            0.5 * (R[0] * s02 + R[1] * s12 + R[2] * s22),
            0.5 * (R[3] * s00 + R[4] * s01 + R[5] * s02), 0.5 * (R[3] * s01 + R[4] * s11 + R[5] * s12),
            0.5 * (R[3] * s02 + R[4] * s12 + R[5] * s22),
            0.5 * (R[6] * s00 + R[7] * s01 + R[8] * s02), 0.5 * (R[6] * s01 + R[7] * s11 + R[8] * s12),
            0.5 * (R[6] * s02 + R[7] * s12 + R[8] * s22))
