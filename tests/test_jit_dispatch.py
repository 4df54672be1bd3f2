"""Calling compiled code from Python without numba's argument typing (rbdyn._jit.fast_call).

numba types every argument of every call, in Python; for a model of some thirty arrays that costs
more than a small helper. ``fast_call`` keys the compiled entry point on ``_type_key`` of the
arguments, so the key must determine numba's type: equal keys, equal types. (Two keys may give
one type, a Python int and a numpy int64: that only costs a second entry.) ``fast_dispatch`` wraps a helper that a kernel run as Python (a system with a
Python load) calls at every step.
"""

from __future__ import annotations

import collections

import numba
import numpy as np
import pytest

from rbdyn import _jit

Pair = collections.namedtuple("Pair", "a b")


def _samples():
    base = np.arange(12.0).reshape(3, 4)
    readonly = base.copy()
    readonly.flags.writeable = False
    values = [
        base, base.T, base[:, ::2], base[0], base[:, 0], readonly, np.arange(4), np.zeros(3, dtype=np.float32),
        np.zeros((2, 2, 2)), 3, -(2**63), 2.5, True, False,
        np.float64(1.5), np.float32(1.5), np.int64(2), np.int32(2), np.bool_(True), np.uint8(1),
        Pair(base, 1.0), Pair(base.T, 1.0), Pair(Pair(base[0], 2), np.int64(3)),
        _jit.function_list(numba.types.void(numba.types.float64), []),
    ]
    return [(v, _jit._type_key(v)) for v in values]


def test_type_key_determines_numbas_type():
    samples = _samples()
    assert all(key is not None for _, key in samples)
    for v, key in samples:
        for w, other in samples:
            if key == other:
                assert numba.typeof(v) == numba.typeof(w), (v, w)



def test_type_key_refuses_what_it_does_not_know():
    assert _jit._type_key(object()) is None
    assert _jit._type_key(2**70) is None
    assert _jit._type_key(Pair(np.zeros(2), object())) is None


@numba.njit
def _axpy(a, x, y, scale=1.0):
    return scale * (a * x + y)


def test_fast_call_is_the_dispatchers_call():
    x, y = np.arange(3.0), np.ones(3)
    for a in (2.0, np.float64(2.0), np.int64(2), 3):
        expected = _axpy(a, x, y)
        assert np.array_equal(_jit.fast_call(_axpy, a, x, y, 1.0), expected)
        assert np.array_equal(_jit.fast_call(_axpy, a, x, y, 1.0), expected)  # the cached entry point
    assert (_axpy, _jit._type_key((np.float64(2.0), x, y, 1.0))) in _jit._ENTRIES


def test_fast_dispatch_leaves_keywords_and_defaults_to_the_dispatcher():
    fast = _jit.fast_dispatch(_axpy)
    x, y = np.arange(3.0), np.ones(3)
    assert fast.__wrapped__ is _axpy
    assert np.array_equal(fast(2.0, x, y), _axpy(2.0, x, y))  # the default scale
    assert np.array_equal(fast(2.0, x, y, scale=3.0), _axpy(2.0, x, y, 3.0))
    assert np.array_equal(fast(2.0, x, y, 3.0), _axpy(2.0, x, y, 3.0))
    assert _jit.fast_dispatch(_axpy.py_func) is _axpy.py_func  # nothing to wrap without the JIT
