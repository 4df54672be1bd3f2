"""Compilation policy, in one place.

Every kernel of rbdyn is a plain function over float64 arrays compiled with
``numba.njit(cache=True)``: the compiled code is stored next to the module so
that a new process (a book page, a test run) does not pay the compile time
again. ``NUMBA_DISABLE_JIT=1`` runs the same source as ordinary Python, which
must give the same results.
"""

from __future__ import annotations

import types

import numba

__all__ = ["njit", "python_variant"]


def njit(fn):
    """Compile ``fn`` in nopython mode with an on-disk cache."""
    return numba.njit(cache=True, fastmath=False, error_model="numpy")(fn)


def _is_function(obj) -> bool:
    """A compiled kernel or, under NUMBA_DISABLE_JIT=1, the plain function."""
    return isinstance(getattr(obj, "py_func", obj), types.FunctionType)


def _references(fn, name, seen=None) -> bool:
    """Whether ``fn`` (or a compiled helper it calls) uses the global ``name``."""
    seen = set() if seen is None else seen
    py = getattr(fn, "py_func", fn)
    if py in seen or not isinstance(py, types.FunctionType):
        return False
    seen.add(py)
    for nm in py.__code__.co_names:
        if nm == name:
            return True
        obj = py.__globals__.get(nm)
        if _is_function(obj) and _references(obj, name, seen):
            return True
    return False


def python_variant(kernel, name, replacement):
    """The pure-Python source of ``kernel`` with the global ``name`` rebound.

    A kernel evaluates the loads through the module-level ``_eval_loads``,
    compiled for the built-in loads. When a system also has Python callbacks
    (which compiled code cannot call) the very same source runs as Python
    with ``_eval_loads`` rebound to a function that adds the callbacks. Every
    compiled helper on the way that uses ``name`` is converted the same way;
    all other helpers (maps, small solves) stay compiled.
    """
    fn = getattr(kernel, "py_func", kernel)
    glb = dict(fn.__globals__)
    for nm in fn.__code__.co_names:
        obj = glb.get(nm)
        if nm == name:
            glb[nm] = replacement
        elif _is_function(obj) and _references(obj, name):
            glb[nm] = python_variant(obj, name, replacement)
    return types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, fn.__closure__)
