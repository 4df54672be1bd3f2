r"""The one dispatch from the schemes to the constraint kinds, and the small solves they share.

Every constraint kind supplies four compiled functions (:mod:`rbdyn.constraints`); this module
calls them for every constraint of a system, from the packed :class:`rbdyn.constraints.Constraints`,
and assembles what the schemes need: all residuals, and the dense gradient over the constrained
bodies. Nothing here knows a kind. The functions take arrays (bound once by the caller), never
views made in a loop: numba would count references to those at every call.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.np import linalg as _numba_linalg

from ._jit import jit_enabled, njit, njit_inline
from .constraints import KINDS

__all__ = ["pose_into", "residuals_into", "residuals_call", "blocks_call", "gradient_into", "kind_residual", "kind_gradient", "kind_stiffness",
           "kind_velocity_product", "lu_solve_inplace", "solve_min_norm"]

# The dispatch to the kinds' functions is a chain of ``kind == n`` tests over fixed slots: a
# call through a slot is a direct call that numba inlines into the schemes' loops (a call that
# is not inlined passes every array as some ten machine words, which cost a constrained step
# more than its arithmetic; a loop over the registry's tuple, numba's literal_unroll, cannot be
# inlined). The slots beyond the registry hold a compiled function that does nothing.
MAX_KINDS = 8
if len(KINDS) > MAX_KINDS:  # pragma: no cover - a registry of more kinds raises MAX_KINDS
    raise RuntimeError(f"{len(KINDS)} constraint kinds: raise MAX_KINDS ({MAX_KINDS}) in rbdyn/_constraints.py")


@njit
def _none(*args):  # never called: the slots beyond the registry
    pass


def _slots(function):
    fns = [getattr(k, function) for k in KINDS]
    return tuple(fns) + (_none,) * (MAX_KINDS - len(fns))


_R0, _R1, _R2, _R3, _R4, _R5, _R6, _R7 = _slots("residual")
_G0, _G1, _G2, _G3, _G4, _G5, _G6, _G7 = _slots("gradient")
_S0, _S1, _S2, _S3, _S4, _S5, _S6, _S7 = _slots("stiffness")
_V0, _V1, _V2, _V3, _V4, _V5, _V6, _V7 = _slots("velocity_product")


@njit_inline
def kind_residual(kind, data, k, xa, Ra, xb, Rb, g, floor, r0, s):
    """The residual function of kind number ``kind`` (see :mod:`rbdyn.constraints._base`)."""
    if kind == 0:
        _R0(data, k, xa, Ra, xb, Rb, g, floor, r0, s)
    elif kind == 1:
        _R1(data, k, xa, Ra, xb, Rb, g, floor, r0, s)
    elif kind == 2:
        _R2(data, k, xa, Ra, xb, Rb, g, floor, r0, s)
    elif kind == 3:
        _R3(data, k, xa, Ra, xb, Rb, g, floor, r0, s)
    elif kind == 4:
        _R4(data, k, xa, Ra, xb, Rb, g, floor, r0, s)
    elif kind == 5:
        _R5(data, k, xa, Ra, xb, Rb, g, floor, r0, s)
    elif kind == 6:
        _R6(data, k, xa, Ra, xb, Rb, g, floor, r0, s)
    elif kind == 7:
        _R7(data, k, xa, Ra, xb, Rb, g, floor, r0, s)


@njit_inline
def kind_gradient(kind, data, k, xa, Ra, xb, Rb, Ba, Bb, s):
    """The gradient function of kind number ``kind``."""
    if kind == 0:
        _G0(data, k, xa, Ra, xb, Rb, Ba, Bb, s)
    elif kind == 1:
        _G1(data, k, xa, Ra, xb, Rb, Ba, Bb, s)
    elif kind == 2:
        _G2(data, k, xa, Ra, xb, Rb, Ba, Bb, s)
    elif kind == 3:
        _G3(data, k, xa, Ra, xb, Rb, Ba, Bb, s)
    elif kind == 4:
        _G4(data, k, xa, Ra, xb, Rb, Ba, Bb, s)
    elif kind == 5:
        _G5(data, k, xa, Ra, xb, Rb, Ba, Bb, s)
    elif kind == 6:
        _G6(data, k, xa, Ra, xb, Rb, Ba, Bb, s)
    elif kind == 7:
        _G7(data, k, xa, Ra, xb, Rb, Ba, Bb, s)


@njit_inline
def kind_stiffness(kind, data, k, xa, Ra, xb, Rb, lam, r0, K, s):
    """The stiffness function of kind number ``kind``."""
    if kind == 0:
        _S0(data, k, xa, Ra, xb, Rb, lam, r0, K, s)
    elif kind == 1:
        _S1(data, k, xa, Ra, xb, Rb, lam, r0, K, s)
    elif kind == 2:
        _S2(data, k, xa, Ra, xb, Rb, lam, r0, K, s)
    elif kind == 3:
        _S3(data, k, xa, Ra, xb, Rb, lam, r0, K, s)
    elif kind == 4:
        _S4(data, k, xa, Ra, xb, Rb, lam, r0, K, s)
    elif kind == 5:
        _S5(data, k, xa, Ra, xb, Rb, lam, r0, K, s)
    elif kind == 6:
        _S6(data, k, xa, Ra, xb, Rb, lam, r0, K, s)
    elif kind == 7:
        _S7(data, k, xa, Ra, xb, Rb, lam, r0, K, s)


@njit_inline
def kind_velocity_product(kind, data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s):
    """The velocity-product function of kind number ``kind``."""
    if kind == 0:
        _V0(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s)
    elif kind == 1:
        _V1(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s)
    elif kind == 2:
        _V2(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s)
    elif kind == 3:
        _V3(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s)
    elif kind == 4:
        _V4(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s)
    elif kind == 5:
        _V5(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s)
    elif kind == 6:
        _V6(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s)
    elif kind == 7:
        _V7(data, k, xa, Ra, va, wa, xb, Rb, vb, wb, gam, r0, s)


@njit_inline
def pose_into(x, R, i, xo, Ro):
    """Body ``i``'s origin and rotation into ``xo``, ``Ro`` (the world, ``i = -1``: zero and I)."""
    for a in range(3):
        xo[a] = x[i, a] if i >= 0 else 0.0
        for b in range(3):
            Ro[a, b] = R[i, a, b] if i >= 0 else (1.0 if a == b else 0.0)


@njit_inline
def residuals_into(kind, body, data, row, x, R, g, floor, xa, Ra, xb, Rb, s):
    """Every residual into ``g`` and, into ``floor``, the smallest error float64 can resolve for it.

    ``kind``, ``body``, ``data``, ``row`` are the fields of :class:`rbdyn.constraints.Constraints`
    (passed one by one: a kernel passes them borrowed, see :func:`rbdyn._jit.borrow`); ``xa``,
    ``xb`` (3,), ``Ra``, ``Rb`` (3, 3) and ``s`` (SCRATCH_VECTORS, 3) are scratch.
    """
    for k in range(kind.shape[0]):
        pose_into(x, R, body[k, 0], xa, Ra)
        pose_into(x, R, body[k, 1], xb, Rb)
        kind_residual(kind[k], data, k, xa, Ra, xb, Rb, g, floor, row[k], s)


@njit
def residuals_call(kind, body, data, row, x, R, g, floor, xa, Ra, xb, Rb, s):
    """:func:`residuals_into` as a called function, for code off a scheme's hot loop (the run
    driver's rows and reductions): each place that inlines the kinds costs compile time."""
    residuals_into(kind, body, data, row, x, R, g, floor, xa, Ra, xb, Rb, s)


@njit
def blocks_call(kind, data, k, xa, Ra, xb, Rb, g, floor, gr, Ba, Bb, lam, r0, K, s):
    """Constraint ``k``'s residual (into ``g`` and ``floor`` from row ``gr``), gradient (``Ba``,
    ``Bb``) and stiffness (added to ``K``, multipliers ``lam`` from row ``r0``), as a called
    function: generalized-α's assembly, where a call per constraint costs little next to the
    iteration's linear solve and inlining the kinds would cost compile time."""
    kind_residual(kind, data, k, xa, Ra, xb, Rb, g, floor, gr, s)
    kind_gradient(kind, data, k, xa, Ra, xb, Rb, Ba, Bb, s)
    kind_stiffness(kind, data, k, xa, Ra, xb, Rb, lam, r0, K, s)


@njit_inline
def gradient_into(kind, body, data, row, x, R, pivoted, local, B, Ba, Bb, xa, Ra, xb, Rb, s):
    """The gradient of every residual over the constrained bodies, dense: ``B`` (m, 6 nc), the
    columns ``6 local[i] .. 6 local[i] + 5`` those of body ``i``'s world increments
    ``(dx, dtheta)`` (the translation columns of a pivoted body zero). ``Ba``, ``Bb``
    (MAX_ROWS, 6) are scratch, like the rest."""
    for r in range(B.shape[0]):
        for c in range(B.shape[1]):
            B[r, c] = 0.0
    for k in range(kind.shape[0]):
        pose_into(x, R, body[k, 0], xa, Ra)
        pose_into(x, R, body[k, 1], xb, Rb)
        kind_gradient(kind[k], data, k, xa, Ra, xb, Rb, Ba, Bb, s)
        r0, n = row[k], row[k + 1] - row[k]
        for side in range(2):
            i = body[k, side]
            if i < 0:
                continue
            c0 = 6 * local[i]
            first = 3 if pivoted[i] != 0 else 0
            for r in range(n):
                for c in range(first, 6):
                    B[r0 + r, c0 + c] += Ba[r, c] if side == 0 else Bb[r, c]


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
    (LAPACK's ``gelsd``, singular values below ``rcond`` times the largest taken as zero), so
    that the components of the reactions no motion can tell apart stay unexcited. Constraints
    that contradict each other give no exact solution: the Newton iteration around this then
    does not converge, which the schemes report. Returns False for a matrix without any rank
    (nothing can move the residuals) or a solution that is not finite.
    """
    n = b.shape[0]
    # LAPACK's column-major K (the C-ordered transpose), overwritten, as is the right-hand side
    K_cols = np.empty((n, n))
    big = 0.0
    for i in range(n):
        for j in range(n):
            K_cols[j, i] = K[i, j]
            big = max(big, abs(K[i, j]))
    if not big > 0.0 or not np.isfinite(big):
        return False
    y = b.copy()
    if not _gelsd(K_cols, y, rcond):
        return False  # the SVD did not converge
    for i in range(n):
        b[i] = y[i]
    return np.all(np.isfinite(y))


# LAPACK's dgelsd as numba's np.linalg.lstsq calls it (numba's helper ``numba_ez_gelsd``, which
# also sizes the workspace): the same results, without compiling lstsq's checks and error
# messages (some seconds per kernel) and without its copies. numba is pinned (requirements.txt).
# The signature is taken from the class, not an instance: an instance imports scipy.linalg (a
# seventh of a second on every import of rbdyn), which numba's helper does itself when first called.
_ez_gelsd = _numba_linalg._LAPACK.numba_ez_gelsd(types.float64)
_RANK_DTYPE = _numba_linalg.F_INT_nptype
_DOUBLE = ord("d")


@njit_inline
def _gelsd_compiled(K_cols, y, rcond):
    n = y.shape[0]
    singular_values = np.empty(n)
    rank = np.empty(1, dtype=_RANK_DTYPE)
    return _ez_gelsd(_DOUBLE, n, n, 1, K_cols.ctypes, n, y.ctypes, n, singular_values.ctypes, rcond,
                     rank.ctypes) == 0


def _gelsd_python(K_cols, y, rcond):
    """Under ``NUMBA_DISABLE_JIT=1``: scipy's dgelsd, the LAPACK that numba calls."""
    import scipy.linalg

    try:
        y[:] = scipy.linalg.lstsq(K_cols.T, y, cond=rcond, lapack_driver="gelsd", check_finite=False)[0]
    except scipy.linalg.LinAlgError:
        return False
    return True


#: ``_gelsd(K_cols, y, rcond)``: the minimum-norm solution of the square system whose
#: column-major matrix is ``K_cols`` (overwritten) into ``y``; False if the SVD did not converge.
_gelsd = _gelsd_compiled if jit_enabled() else _gelsd_python
