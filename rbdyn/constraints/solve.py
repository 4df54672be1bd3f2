"""The small dense solves of the constraint systems: an LU with partial pivoting that reports a
singular matrix, and the minimum-norm solution for the singular ones (redundant constraints)."""

from __future__ import annotations

import numpy as np

from .._compile import njit

__all__ = ["lu_solve_inplace", "solve_min_norm"]


@njit
def lu_solve_inplace(K, b, pivot_tol):
    """Solve ``K y = b`` by Gaussian elimination with partial pivoting.

    ``K`` and ``b`` are overwritten (``b`` by the solution). Returns False,
    leaving them garbage, when a pivot is below ``pivot_tol`` times the
    largest entry of ``K`` (a singular or numerically rank-deficient system).
    """
    n = b.shape[0]
    big = 0.0
    for i in range(n):
        for j in range(n):
            big = max(big, abs(K[i, j]))
    if not big > 0.0:
        return False
    for col in range(n):
        p = col
        for i in range(col + 1, n):
            if abs(K[i, col]) > abs(K[p, col]):
                p = i
        if not abs(K[p, col]) > pivot_tol * big:
            return False
        if p != col:
            for j in range(n):
                K[col, j], K[p, j] = K[p, j], K[col, j]
            b[col], b[p] = b[p], b[col]
        for i in range(col + 1, n):
            f = K[i, col] / K[col, col]
            if f != 0.0:
                for j in range(col, n):
                    K[i, j] -= f * K[col, j]
                b[i] -= f * b[col]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for j in range(i + 1, n):
            s -= K[i, j] * b[j]
        b[i] = s / K[i, i]
    return True


@njit
def solve_min_norm(K, b, rcond):
    """The minimum-norm least-squares solution of ``K y = b`` into ``b`` (``K``, square, is kept).

    For the systems of redundant constraints (a closed loop whose Jacobian has no full rank):
    among the increments that make the linearised constraints hold, the one of least norm
    (``np.linalg.lstsq``: LAPACK's ``gelsd``, singular values below ``rcond`` times the largest taken as zero), so
    that the components of the reactions no motion can tell apart stay unexcited. Constraints
    that contradict each other give no exact solution: the Newton iteration around this then
    does not converge, which the schemes report. Returns False for a matrix without any rank
    (nothing can move the residuals) or a solution that is not finite.
    """
    n = b.shape[0]
    big = 0.0
    for i in range(n):
        for j in range(n):
            big = max(big, abs(K[i, j]))
    if not big > 0.0 or not np.isfinite(big):
        return False
    try:
        y = np.linalg.lstsq(K, b, rcond=rcond)[0]
    except Exception:  # the SVD did not converge
        return False
    for i in range(n):
        b[i] = y[i]
    return np.all(np.isfinite(y))
