"""Compilation policy, in one place, on numba's public API.

Every kernel of rbdyn is a plain function over float64 arrays compiled with
``numba.njit(cache=True)``: numba stores the compiled code on disk (next to the module,
or under ``NUMBA_CACHE_DIR``), so that a new process does not pay the compile time again.
``NUMBA_DISABLE_JIT=1`` runs the same source as ordinary Python, which must give the same
results.

Two decorators, one rule for choosing between them:

* :func:`njit` for a function that is *called*: it suits anything with loops, branches and
  early exits (a Newton iteration, a linear solve, a body's whole step). numba counts the
  references of the arrays it receives (two atomic updates per array and call) and removes
  that counting only when the function takes a single path and calls nothing else; a function
  called at every step should be such a leaf (:func:`rbdyn.driver.report.store`), or receive
  few arrays, and a larger one be called once per many steps;
* :func:`njit_inline` for a short, straight-line helper (a 3x3 product, a quaternion to a
  matrix) that numba copies into its caller. Each array argument of an inlined function
  becomes a variable of the caller, whose reference count numba maintains; in straight-line
  code it pairs up and is optimised away, but an inlined helper with loops and early exits
  leaves atomic increments in the caller's hot loop. A compiled loop should also bind the
  arrays it uses once, before the loop, rather than read them from a record inside it.

Functions that are passed to other compiled functions as values (a compiled load, a
metric) are compiled for one explicit signature with :func:`njit_signature`: numba then
types them by their signature, so that the function receiving them compiles once for
every function of that signature.

A system with Python callbacks runs its scheme's kernel as Python: :func:`python_variant`
rebinds the kernel's load functions to ones that add the callbacks.
"""

from __future__ import annotations

import contextlib
import dis
import functools
import types
import warnings

import numba
import numba.extending

__all__ = ["njit", "njit_inline", "njit_signature", "function_list", "python_variant", "jit_enabled", "quiet", "plain"]

_OPTIONS = {"cache": True, "fastmath": False, "error_model": "numpy"}


@contextlib.contextmanager
def quiet():
    """Compile without numba's notice that functions as values are "experimental".

    Functions as values are what makes one compiled kernel serve every compiled load and
    metric; the notice is no news for a user, and a warning would be a second line on a
    command line's stderr.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="First-class function type feature is experimental")
        yield


def njit(fn):
    """Compile ``fn`` in nopython mode with an on-disk cache (a called function)."""
    return numba.njit(**_OPTIONS)(fn)


def njit_inline(fn):
    """Compile ``fn`` like :func:`njit`, copied into each caller (short straight-line helpers)."""
    return numba.njit(inline="always", **_OPTIONS)(fn)


def plain(record):
    """A named tuple (nested ones too) as plain tuples, for a call into compiled code.

    numba's dispatcher finds the type of a plain tuple of arrays in C, and that of a named
    tuple in Python (about 10 µs per array): a kernel's records cross the call as plain tuples,
    and the kernel binds their fields by position, in the order of the record's declaration.
    """
    return tuple(plain(f) if isinstance(f, tuple) else f for f in record)


def jit_enabled() -> bool:
    """False under ``NUMBA_DISABLE_JIT=1`` (every kernel then runs as Python)."""
    return not numba.config.DISABLE_JIT


@functools.cache
def njit_signature(fn, signature, cache: bool = True):
    """``fn`` compiled for exactly ``signature`` (a numba signature), memoised.

    The result can be passed to a compiled function as a value of type
    ``FunctionType(signature)``. Under ``NUMBA_DISABLE_JIT=1`` it is ``fn``.
    Functions defined in a notebook or an interactive session cannot be
    cached on disk; pass ``cache=False`` for them.
    """
    if not jit_enabled():
        return fn
    with quiet():
        return numba.njit(signature, cache=cache, fastmath=False, error_model="numpy")(fn)


def function_list(signature, functions):
    """A typed list of functions of one ``signature`` (a plain list without JIT).

    A typed list has one numba type whatever its length, so a compiled
    function that takes it is compiled once, for no function as for many.
    """
    if not jit_enabled():
        return list(functions)
    out = _empty_list(numba.types.FunctionType(signature))
    for fn in functions:
        out.append(fn)
    return out


@njit
def _empty_list(item_type):
    """An empty typed list of ``item_type``, made by code numba caches on disk
    (``numba.typed.List.empty_list`` compiles the list's constructor again in every process)."""
    return numba.typed.List.empty_list(item_type)


def _globals_used(code) -> set:
    """The global names a code object loads (attribute names, also in ``co_names``, are not)."""
    out = {ins.argval for ins in dis.get_instructions(code) if ins.opname == "LOAD_GLOBAL"}
    for const in code.co_consts:  # nested functions and comprehensions
        if isinstance(const, types.CodeType):
            out |= _globals_used(const)
    return out


def _python_function(obj):
    """The Python function of a compiled function (or the function itself without JIT); None
    for anything else."""
    fn = obj.py_func if numba.extending.is_jitted(obj) else obj
    return fn if isinstance(fn, types.FunctionType) else None


def python_variant(kernel, replacements, _done=None):
    """The pure-Python source of ``kernel``, and of every compiled function it calls, with the
    globals ``replacements`` (``{name: replacement}``) rebound.

    A kernel evaluates the loads of a body through module-level functions (see
    :mod:`rbdyn.model.arrays`). When a system also has Python callbacks, which compiled code
    cannot call, the very same source runs as Python with those names rebound to functions
    that add the callbacks; the functions it calls run as Python too (a compiled function
    called from Python would pay numba's typing of its arguments at every call).
    """
    done = {} if _done is None else _done
    fn = _python_function(kernel)
    if fn in done:
        return done[fn]
    glb = dict(fn.__globals__)
    variant = types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, fn.__closure__)
    done[fn] = variant
    for nm in _globals_used(fn.__code__):
        obj = glb.get(nm)
        if nm in replacements:
            glb[nm] = replacements[nm]
        elif numba.extending.is_jitted(obj) and _python_function(obj) is not None:
            glb[nm] = python_variant(obj, replacements, done)
    return variant
