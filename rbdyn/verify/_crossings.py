"""Sign changes of a sampled signal: the one crossing detector of the book.

Two readings are offered because the benchmarks use both:

* ``"interpolate"``: the time where the straight line between two samples of
  opposite sign crosses zero (strict sign change) -- accurate to O(h²) for a
  smooth signal;
* ``"hermite"``: given the derivative ``dydt`` at the samples too, the root of
  the cubic Hermite interpolant of ``(y, dydt)`` on the interval of each strict
  sign change, by Newton's method from the straight line's root -- accurate to
  O(h⁴) for a smooth signal, for crossings read off coarse output;
* ``"before"``: Solfec-1.0's reading in its pendulum script, the time of the
  sample ``i`` with ``y[i] * y[i+1] <= 0`` (the last sample before the change,
  quantised to the output step; a zero sample counts, so a start from rest
  counts at t = 0).
"""

from __future__ import annotations

import numpy as np

__all__ = ["sign_changes"]


def sign_changes(t, y, rule: str = "interpolate", dydt=None) -> np.ndarray:
    """Times at which ``y(t)`` changes sign.

    Parameters
    ----------
    t, y : array_like
        Sample times (increasing) and values, same length.
    rule : {"interpolate", "hermite", "before"}
        How a crossing is read (see the module docs).
    dydt : array_like, optional
        The derivative of ``y`` at the samples; required by ``rule="hermite"`` (only).

    Returns
    -------
    ndarray
        The crossing times, increasing.

    References
    ----------
    .. [1] Hairer, E., Nørsett, S. P. & Wanner, G. (1993). *Solving Ordinary Differential
       Equations I*, 2nd ed., Sect. II.6 (dense output by Hermite interpolation).
    """
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    if t.shape != y.shape or t.ndim != 1:
        raise ValueError("t and y must be 1-D arrays of one length")
    if rule not in ("interpolate", "hermite", "before"):
        raise ValueError(f"rule must be 'interpolate', 'hermite' or 'before', got {rule!r}")
    if (dydt is not None) != (rule == "hermite"):
        raise ValueError("dydt is required by rule='hermite' and used by no other rule")
    prod = y[:-1] * y[1:]
    if rule == "before":
        return t[np.flatnonzero(prod <= 0.0)]
    k = np.flatnonzero(prod < 0.0)
    line = t[k] - y[k] * (t[k + 1] - t[k]) / (y[k + 1] - y[k])
    if rule == "interpolate":
        return line
    d = np.asarray(dydt, dtype=float)
    if d.shape != t.shape:
        raise ValueError("dydt must have the shape of t")
    h = t[k + 1] - t[k]
    y0, y1, d0, d1 = y[k], y[k + 1], d[k] * h, d[k + 1] * h
    s = (line - t[k]) / h
    for _ in range(50):  # Newton on the cubic, kept inside the interval (where the root is)
        p = (2 * s**3 - 3 * s**2 + 1) * y0 + (s**3 - 2 * s**2 + s) * d0 + (3 * s**2 - 2 * s**3) * y1 + (s**3 - s**2) * d1
        dp = (6 * s**2 - 6 * s) * (y0 - y1) + (3 * s**2 - 4 * s + 1) * d0 + (3 * s**2 - 2 * s) * d1
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(dp != 0.0, p / dp, 0.0)
        s_new = np.clip(s - step, 0.0, 1.0)
        if np.all(np.abs(s_new - s) <= 4 * np.finfo(float).eps):
            s = s_new
            break
        s = s_new
    return t[k] + s * h
