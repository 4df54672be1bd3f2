"""Allocation-free 3-vector and 3x3 helpers for the inner loops of the kernels.

Each writes into a caller-owned ``out`` (or returns scalars), so that a step
creates no arrays: a fresh small array costs more than the arithmetic on it.
The 3-vector helpers read all their inputs before writing, so their ``out``
may be one of the inputs; for the 3x3 ones it must not, unless said otherwise.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit, njit_inline
from .so3 import _sinc_coeffs


@njit
def cross_into(a, b, out):
    """``out = a × b`` for 3-vectors."""
    a0, a1, a2 = a[0], a[1], a[2]
    b0, b1, b2 = b[0], b[1], b[2]
    out[0] = a1 * b2 - a2 * b1
    out[1] = a2 * b0 - a0 * b2
    out[2] = a0 * b1 - a1 * b0


@njit
def matvec_into(A, b, out):
    """``out = A @ b`` for a 3x3 matrix and a 3-vector."""
    b0, b1, b2 = b[0], b[1], b[2]
    out[0] = A[0, 0] * b0 + A[0, 1] * b1 + A[0, 2] * b2
    out[1] = A[1, 0] * b0 + A[1, 1] * b1 + A[1, 2] * b2
    out[2] = A[2, 0] * b0 + A[2, 1] * b1 + A[2, 2] * b2


@njit
def rmatvec_into(A, b, out):
    """``out = A.T @ b`` for a 3x3 matrix and a 3-vector."""
    b0, b1, b2 = b[0], b[1], b[2]
    out[0] = A[0, 0] * b0 + A[1, 0] * b1 + A[2, 0] * b2
    out[1] = A[0, 1] * b0 + A[1, 1] * b1 + A[2, 1] * b2
    out[2] = A[0, 2] * b0 + A[1, 2] * b1 + A[2, 2] * b2


@njit
def body_finite(x, R, v, W):
    """True when no entry of one body's state is nan or inf."""
    s = x[0] + x[1] + x[2] + v[0] + v[1] + v[2] + W[0] + W[1] + W[2]
    for a in range(3):
        s += R[a, 0] + R[a, 1] + R[a, 2]
    return np.isfinite(s)


@njit
def all_finite(x, R, v, W):
    """True when no entry of the state of any body is nan or inf."""
    s = 0.0
    for i in range(x.shape[0]):
        for a in range(3):
            s += x[i, a] + v[i, a] + W[i, a] + R[i, a, 0] + R[i, a, 1] + R[i, a, 2]
    return np.isfinite(s)


@njit
def rodrigues_into(a, b, p0, p1, p2, out):
    r"""``out = I + a\hat p + b\hat p^2`` (``hat(p) @ u == p × u``), entry by entry."""
    out[0, 0] = 1.0 - b * (p1 * p1 + p2 * p2)
    out[1, 1] = 1.0 - b * (p0 * p0 + p2 * p2)
    out[2, 2] = 1.0 - b * (p0 * p0 + p1 * p1)
    q01 = b * (p0 * p1)
    q02 = b * (p0 * p2)
    q12 = b * (p1 * p2)
    out[0, 1] = q01 - a * p2
    out[1, 0] = q01 + a * p2
    out[0, 2] = q02 + a * p1
    out[2, 0] = q02 - a * p1
    out[1, 2] = q12 - a * p0
    out[2, 1] = q12 + a * p0


@njit
def exp_scaled_into(s, w, out):
    """``out = so3.exp(s * w)`` (Rodrigues' formula, same coefficients), no hat matrices."""
    p0 = s * w[0]
    p1 = s * w[1]
    p2 = s * w[2]
    a, b, _ = _sinc_coeffs(p0 * p0 + p1 * p1 + p2 * p2)
    rodrigues_into(a, b, p0, p1, p2, out)


@njit
def sub_hat(M, p):
    """``M -= hat(p)``, the cross-product matrix of ``p``, in place (no temporary)."""
    M[0, 1] += p[2]
    M[0, 2] -= p[1]
    M[1, 0] -= p[2]
    M[1, 2] += p[0]
    M[2, 0] += p[1]
    M[2, 1] -= p[0]


@njit
def matmul_into(A, B, out):
    """``out = A @ B`` for 3x3 matrices."""
    for r in range(3):
        a0, a1, a2 = A[r, 0], A[r, 1], A[r, 2]
        for c in range(3):
            out[r, c] = a0 * B[0, c] + a1 * B[1, c] + a2 * B[2, c]


@njit
def solve3(M, g0, g1, g2):
    """The solution of ``M x = g`` (3x3, by the adjugate), as three scalars."""
    c00 = M[1, 1] * M[2, 2] - M[1, 2] * M[2, 1]
    c01 = M[1, 2] * M[2, 0] - M[1, 0] * M[2, 2]
    c02 = M[1, 0] * M[2, 1] - M[1, 1] * M[2, 0]
    det = M[0, 0] * c00 + M[0, 1] * c01 + M[0, 2] * c02
    # x = adj(M) g / det; adj(M)[i, j] is the cofactor of M[j, i].
    c10 = M[0, 2] * M[2, 1] - M[0, 1] * M[2, 2]
    c11 = M[0, 0] * M[2, 2] - M[0, 2] * M[2, 0]
    c12 = M[0, 1] * M[2, 0] - M[0, 0] * M[2, 1]
    c20 = M[0, 1] * M[1, 2] - M[0, 2] * M[1, 1]
    c21 = M[0, 2] * M[1, 0] - M[0, 0] * M[1, 2]
    c22 = M[0, 0] * M[1, 1] - M[0, 1] * M[1, 0]
    return (
        (c00 * g0 + c10 * g1 + c20 * g2) / det,
        (c01 * g0 + c11 * g1 + c21 * g2) / det,
        (c02 * g0 + c12 * g1 + c22 * g2) / det,
    )


# Error-free transformations (Dekker 1971, Knuth): with them ``dot3_add``
# evaluates r . v + c as if in twice the working precision, then rounds.
_SPLIT = 134217729.0  # 2**27 + 1


@njit
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


@njit
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


@njit
def reorthonormalize(R):
    """One Newton–Schulz step ``R <- R (3I - R^T R)/2`` in place.

    The products of exact rotations that the schemes form drift from SO(3)
    by a few ulp per step; this step removes that drift to first order
    (quadratically convergent toward the polar factor) and changes a rotation
    that is orthonormal to round-off by round-off only.
    """
    # S = 3I - R^T R (symmetric), then each row r of R becomes r S / 2.
    s00 = 3.0 - (R[0, 0] * R[0, 0] + R[1, 0] * R[1, 0] + R[2, 0] * R[2, 0])
    s11 = 3.0 - (R[0, 1] * R[0, 1] + R[1, 1] * R[1, 1] + R[2, 1] * R[2, 1])
    s22 = 3.0 - (R[0, 2] * R[0, 2] + R[1, 2] * R[1, 2] + R[2, 2] * R[2, 2])
    s01 = -(R[0, 0] * R[0, 1] + R[1, 0] * R[1, 1] + R[2, 0] * R[2, 1])
    s02 = -(R[0, 0] * R[0, 2] + R[1, 0] * R[1, 2] + R[2, 0] * R[2, 2])
    s12 = -(R[0, 1] * R[0, 2] + R[1, 1] * R[1, 2] + R[2, 1] * R[2, 2])
    for i in range(3):
        r0, r1, r2 = R[i, 0], R[i, 1], R[i, 2]
        R[i, 0] = 0.5 * (r0 * s00 + r1 * s01 + r2 * s02)
        R[i, 1] = 0.5 * (r0 * s01 + r1 * s11 + r2 * s12)
        R[i, 2] = 0.5 * (r0 * s02 + r1 * s12 + r2 * s22)
