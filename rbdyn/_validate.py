"""What the API accepts as numbers: shared by the model, the constraint kinds and the run."""

from __future__ import annotations

import numpy as np


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
