"""What the API accepts as numbers: shared by the model, the constraint kinds and the run."""

from __future__ import annotations

import numpy as np

from ._errors import InputError
from ._errors import short_repr as _short


def float_array(value) -> np.ndarray:
    """``value`` as a float array, refusing text and booleans.

    ``np.array(["1"], dtype=float)`` would convert numeric strings and ``np.asarray([True, 0, 0])``
    turns a boolean into an integer, so both are looked for before the conversion. Raises
    TypeError, ValueError or OverflowError (an integer beyond the float range) for what is not
    numbers; the callers turn these into an :class:`~rbdyn.InputError` naming their field.
    """
    if isinstance(value, (str, bytes)):
        raise TypeError("text")
    arr = np.asarray(value)
    if arr.dtype.kind in "USVbMm":
        raise TypeError("not numbers")
    if arr.dtype.kind in "iuO" and any(isinstance(e, (str, bytes, bool, np.bool_))
                                       for e in np.asarray(value, dtype=object).ravel()):
        raise TypeError("not numbers")
    return np.array(arr, dtype=float)


def numbers(value, fld: str, expected: str) -> np.ndarray:
    """:func:`float_array`, or an InputError on ``fld`` saying what was ``expected``."""
    try:
        return float_array(value)
    except OverflowError:  # an integer beyond the float range
        raise InputError(fld, "must be finite numbers (at most about 1.8e308 in size)") from None
    except (TypeError, ValueError):
        raise InputError(fld, f"must be {expected}, got {_short(value)}") from None


def finite_array(value, shape, fld: str) -> np.ndarray:
    """``value`` as a float array of ``shape`` with finite entries, or an InputError on ``fld``."""
    arr = numbers(value, fld, f"an array of numbers of shape {shape}")
    if arr.shape != shape:
        raise InputError(fld, f"must have shape {shape}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InputError(fld, "must be finite numbers (no nan or inf)")
    return arr
