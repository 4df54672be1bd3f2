"""Sign changes of a sampled signal: the one crossing detector of the book.

Two readings are offered because the benchmarks use both:

* ``"interpolate"``: the time where the straight line between two samples of
  opposite sign crosses zero (strict sign change) -- accurate to O(h²) for a
  smooth signal;
* ``"before"``: Solfec-1.0's reading in its pendulum script, the time of the
  sample ``i`` with ``y[i] * y[i+1] <= 0`` (the last sample before the change,
  quantised to the output step; a zero sample counts, so a start from rest
  counts at t = 0).
"""

from __future__ import annotations

import numpy as np

__all__ = ["sign_changes"]


def sign_changes(t, y, rule: str = "interpolate") -> np.ndarray:
    """Times at which ``y(t)`` changes sign.

    Parameters
    ----------
    t, y : array_like
        Sample times (increasing) and values, same length.
    rule : {"interpolate", "before"}
        How a crossing is read (see the module docs).

    Returns
    -------
    ndarray
        The crossing times, increasing.
    """
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    if t.shape != y.shape or t.ndim != 1:
        raise ValueError("t and y must be 1-D arrays of one length")
    prod = y[:-1] * y[1:]
    if rule == "before":
        return t[np.flatnonzero(prod <= 0.0)]
    if rule == "interpolate":
        k = np.flatnonzero(prod < 0.0)
        return t[k] - y[k] * (t[k + 1] - t[k]) / (y[k + 1] - y[k])
    raise ValueError(f"rule must be 'interpolate' or 'before', got {rule!r}")
