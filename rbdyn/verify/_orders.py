r"""One rule for the observed order of convergence.

Every order printed or asserted in the book, the tests and the benchmarks is
computed by :func:`fit_order`, so that "second order" means the same thing on
every page.

The rule
--------
Given step sizes :math:`h_i` and errors :math:`e_i` (against a reference that
is far more accurate than the smallest error), the observed order is the
least-squares slope :math:`p` of

.. math::  \log e_i = \log C + p \log h_i

over the points that are *resolved*: finite, and above ``floor``, the level
below which the error is round-off or the reference's own error (stated by
the caller; 0 by default). At least two resolved points are needed. The
local orders between neighbouring resolved points,
:math:`\log(e_i/e_{i+1}) / \log(h_i/h_{i+1})`, are returned too: a fit is in
the asymptotic range when they agree with the slope.

References
----------
* P. J. Roache, *Verification and Validation in Computational Science and
  Engineering*, Hermosa, 1998, ch. 5 (observed order of accuracy).
"""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = ["OrderFit", "fit_order"]


@dataclasses.dataclass(frozen=True)
class OrderFit:
    """Result of :func:`fit_order`.

    Attributes
    ----------
    order : float
        Least-squares slope of log(error) against log(step) over the
        resolved points.
    constant : float
        ``C`` in ``error ≈ C h**order``.
    local : ndarray
        Local orders between neighbouring resolved points (length
        ``n_resolved - 1``), in the order the steps were given.
    steps, errors : ndarray
        The resolved points the fit used.
    dropped : int
        How many points were left out (non-finite or at or below ``floor``).
    """

    order: float
    constant: float
    local: np.ndarray
    steps: np.ndarray
    errors: np.ndarray
    dropped: int

    @property
    def uncertainty(self) -> float:
        """How far the local orders stray from the fitted one over the fit window (the largest
        difference); ``nan`` with only two resolved points, where the one local order is the
        fit. An order is quoted as ``order ± uncertainty``."""
        if self.local.size < 2:
            return float("nan")
        return float(np.max(np.abs(self.local - self.order)))

    def __format__(self, spec: str) -> str:
        """``f"{fit:.2f}"`` gives ``"2.00 ± 0.03"`` (the order alone when there is no spread)."""
        spec = spec or ".2f"
        u = self.uncertainty
        return f"{self.order:{spec}}" + ("" if not np.isfinite(u) else f" ± {u:{spec}}")

    def predict(self, h):
        """The fitted error at step(s) ``h``."""
        return self.constant * np.asarray(h, dtype=float) ** self.order


def fit_order(steps, errors, floor: float = 0.0) -> OrderFit:
    """Observed order of convergence by the book's rule (see the module docs).

    Parameters
    ----------
    steps, errors : array_like
        Step sizes and the errors they gave, same length.
    floor : float, optional
        Errors at or below this level are round-off (or the reference's own
        error) and are left out of the fit.

    Returns
    -------
    OrderFit

    Raises
    ------
    ValueError
        If the arrays differ in length, a step is not positive, or fewer
        than two points are resolved.
    """
    h = np.asarray(steps, dtype=float).ravel()
    e = np.asarray(errors, dtype=float).ravel()
    if h.shape != e.shape:
        raise ValueError(f"steps and errors differ in length ({h.size} and {e.size})")
    if not np.all(np.isfinite(h) & (h > 0)):
        raise ValueError("every step must be positive and finite")
    keep = np.isfinite(e) & (e > floor)
    if keep.sum() < 2:
        raise ValueError(f"fewer than two errors above the floor {floor:g}: {e.tolist()}")
    lh, le = np.log(h[keep]), np.log(e[keep])
    slope, intercept = np.polyfit(lh, le, 1)
    local = np.diff(le) / np.diff(lh)
    return OrderFit(float(slope), float(np.exp(intercept)), local, h[keep], e[keep], int((~keep).sum()))
