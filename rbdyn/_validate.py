"""What the API accepts: numbers, arrays, names and sequences, each refused with an InputError
naming its field; shared by the model, the constraint kinds, the schemes and the run."""

from __future__ import annotations

import math

import numpy as np

from ._errors import InputError
from ._errors import short_repr as _short

__all__ = ["float_array", "numbers", "finite_array", "finite_number", "finite_scalar", "positive", "body_name",
           "sequence", "store"]


def store(obj, **values) -> None:
    """Store validated (normalised, copied) values on a frozen dataclass from its ``__post_init__``.

    A frozen dataclass refuses attribute assignment, including its own; Python's documentation
    gives ``object.__setattr__`` as the way for ``__post_init__`` to set fields. This is that one
    place: the user's object is only ever changed here, while it is being constructed.
    """
    for name, value in values.items():
        object.__setattr__(obj, name, value)


def float_array(value) -> np.ndarray:
    """``value`` as a float array, refusing text, booleans and complex numbers.

    ``np.array(["1"], dtype=float)`` would convert numeric strings, ``np.asarray([True, 0, 0])``
    turns a boolean into an integer, and a complex number would lose its imaginary part (with a
    ``ComplexWarning``), so these are looked for before the conversion. Raises TypeError,
    ValueError or OverflowError (an integer beyond the float range) for what is not real
    numbers; the callers turn these into an :class:`~rbdyn.InputError` naming their field.
    """
    if isinstance(value, (str, bytes)):
        raise TypeError("text")
    arr = np.asarray(value)
    if arr.dtype.kind in "USVbMmc":
        raise TypeError("not real numbers")
    if arr.dtype.kind in "iuO" and any(isinstance(e, (str, bytes, bool, np.bool_, complex, np.complexfloating))
                                       for e in np.asarray(value, dtype=object).ravel()):
        raise TypeError("not real numbers")
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


def finite_number(value) -> bool:
    """``math.isfinite`` that answers False, not OverflowError, for an integer beyond the float range."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def finite_scalar(value, fld: str) -> float:
    """A real, finite number (not a boolean), as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(fld, f"must be a number, got {_short(value)}")
    try:
        v = float(value)
    except OverflowError:  # an integer beyond the float range
        raise InputError(fld, "must be a finite number (at most about 1.8e308 in size)") from None
    if not math.isfinite(v):
        raise InputError(fld, "must be a finite number")
    return v


def positive(value, fld: str) -> float:
    """A finite number > 0 whose inverse is finite too (it enters every step)."""
    v = finite_scalar(value, fld)
    if v <= 0.0:
        raise InputError(fld, f"must be > 0, got {v!r}")
    if not math.isfinite(1.0 / v):
        raise InputError(fld, f"must be > 0 with a finite inverse, got {v!r}")
    return v


def body_name(value, fld: str) -> str:
    """The name of a body, as a load or a constraint gives it: a non-empty string."""
    if not isinstance(value, str) or not value:
        raise InputError(fld, f"must name a body (a non-empty string), got {_short(value)}")
    return value


def sequence(value, fld: str, what: str) -> tuple:
    """``value`` (a list, tuple or other iterable, but not text or a mapping) as a tuple."""
    if isinstance(value, (str, bytes, dict)) or value is None:
        raise InputError(fld, f"must be a sequence of {what}, got {_short(value)}")
    try:
        return tuple(value)
    except TypeError:
        raise InputError(fld, f"must be a sequence of {what}, got {_short(value)}") from None
