"""Compilation policy, in one place.

Every kernel of rbdyn is a plain function over float64 arrays compiled with
``numba.njit(cache=True)``: the compiled code is stored next to the module so
that a new process (a book page, a test run) does not pay the compile time
again. ``NUMBA_DISABLE_JIT=1`` runs the same source as ordinary Python, which
must give the same results.

Functions that are passed to other compiled functions as values (a scheme's
step, a compiled load, a metric) are compiled for one explicit signature with
:func:`njit_signature`: numba then types them by their signature, not by the
object, so that the function that receives them compiles once for every
function of that signature and is cached on disk like the rest.

numba checks a cached function against its own source file only, not against the
files of the functions it calls (a kernel in ``_rig.py`` links the constraint kinds
of ``constraints/``). On import, :func:`_drop_stale_cache` therefore empties rbdyn's
on-disk cache whenever any of rbdyn's sources changed (but the few that no compiled code
can depend on, :data:`OUTSIDE_KERNELS`), so that no process runs code compiled from an
older rbdyn.

While numba compiles one of rbdyn's functions, Python's garbage collector runs less often
(:class:`_CompileGC`): compiling every kernel then takes about a tenth less time.
"""

from __future__ import annotations

import contextlib
import dis
import functools
import gc
import hashlib
import os
import types
import warnings
from pathlib import Path

import numba
import numba.core.event
import numpy as np
from numba.core import cgutils
from numba.core import ir as numba_ir
from numba.core.errors import NumbaExperimentalFeatureWarning
from numba.extending import intrinsic

__all__ = ["njit", "njit_inline", "njit_signature", "function_list", "python_variant", "jit_enabled", "quiet",
           "borrow", "fast_call", "fast_dispatch"]


_PACKAGE = Path(__file__).resolve().parent
_STAMP = _PACKAGE / "__pycache__" / "rbdyn-sources.sha256"


#: rbdyn's modules that no compiled code can depend on: they use no numba and no module of rbdyn
#: imports them (``tests/test_jit_cache.py`` checks both), so changing them keeps the compiled
#: kernels (an edit to the command line does not cost a recompile of every kernel).
OUTSIDE_KERNELS = ("__main__.py", "cli.py", "plotting.py")


def _sources_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        if path.relative_to(_PACKAGE).as_posix() in OUTSIDE_KERNELS:
            continue
        digest.update(str(path.relative_to(_PACKAGE)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _drop_stale_cache() -> None:
    """Delete rbdyn's cached compiled code (``__pycache__/*.nbi, *.nbc``) if a source changed.

    The digest of every ``.py`` file of the package is kept next to the cache; a different
    digest deletes every cached kernel before anything is compiled. An installation that
    cannot be written (numba then caches elsewhere) is left alone.
    """
    digest = _sources_digest()
    try:
        if _STAMP.read_text().strip() == digest:
            return
    except OSError:
        pass
    try:
        for path in _PACKAGE.rglob("__pycache__/*.nb[ic]"):
            path.unlink(missing_ok=True)
        _STAMP.parent.mkdir(exist_ok=True)
        tmp = _STAMP.with_name(f"{_STAMP.name}.{os.getpid()}.tmp")
        tmp.write_text(digest + "\n")
        os.replace(tmp, _STAMP)
    except OSError:
        pass


_drop_stale_cache()


class _BlockCopier:
    """Stand-in for the ``copy`` module in numba's IR inliner (``numba.core.inline_closurecall``).

    To inline a function, numba copies the callee's IR with one ``copy.deepcopy`` per basic
    block. Every variable refers to the function's scope, which lists every variable of the
    function, so each block's copy copies the whole scope again: the copy grows as blocks times
    variables, and it was a quarter of rbdyn's compile time. Here the blocks of one copy share
    one memo, so the scope is copied once per copy, as a deep copy of the whole IR would do.
    The copies hold the same statements; only the number of scope objects differs, and the
    inliner merges those into the caller's scope. Every other use goes to :mod:`copy` itself.

    One copy of an IR is a run of calls on blocks of one scope, none of them twice: a block of
    another scope, or a block already copied, starts a new memo.
    """

    def __init__(self, module):
        self._module = module
        self._scope = None  # the scope of the blocks being copied (held, so its id stays unique)
        self._memo = {}

    def __getattr__(self, name):
        return getattr(self._module, name)

    def deepcopy(self, x, memo=None):
        if memo is not None or not isinstance(x, numba_ir.Block):
            return self._module.deepcopy(x, memo)
        if x.scope is not self._scope or id(x) in self._memo:
            self._scope, self._memo = x.scope, {}
        return self._module.deepcopy(x, self._memo)


def _share_block_copies() -> None:
    """Install :class:`_BlockCopier` where numba's inliner looks up ``copy`` (numba's own
    module attribute), if it is the :mod:`copy` module as in the numba versions known here.

    This holds for the whole process once rbdyn is imported, so it also serves any other
    function that numba inlines there (``inline="always"``); those get the same IR as before,
    with one scope object per copy instead of one per block."""
    import copy

    from numba.core import inline_closurecall

    if inline_closurecall.copy is copy and hasattr(inline_closurecall.InlineWorker, "inline_ir"):
        inline_closurecall.copy = _BlockCopier(copy)


_share_block_copies()


#: The garbage collector's thresholds while numba compiles one of rbdyn's functions (see
#: :class:`_CompileGC`); ``gc.get_threshold()`` is (700, 10, 10) by default.
COMPILE_GC_THRESHOLD = (100_000, 50, 50)


class _CompileGC(numba.core.event.Listener):
    """Collect garbage less often while numba compiles a function of rbdyn.

    numba builds and drops millions of small objects (its IR, typing and LLVM text) while it
    compiles a kernel, and the collector, run every 700 new objects by default, then walks the
    ever larger set of objects that survived, most of them for nothing. With
    :data:`COMPILE_GC_THRESHOLD` compiling every kernel takes about a tenth less time (53.5 s
    against 48.5 s for the RIG and symplectic-Euler kernels, medians of three runs) for a
    peak memory about a tenth higher. The compiled code is the same: only when Python frees
    unreachable cycles changes.

    numba reports a compile (``"numba:compile"``, not a load from its cache) when it starts and
    ends, nested for the functions the first one calls. The thresholds change at the start of
    an outermost compile of a function of rbdyn (and of what it calls: a user's compiled load,
    say) and are restored when it ends, also when it fails. numba compiles under one lock, so
    compiles do not overlap.
    """

    def __init__(self):
        self._depth = 0
        self._saved = None

    def on_start(self, event):
        if self._depth == 0:
            fn = getattr(event.data.get("dispatcher"), "py_func", None)
            if getattr(fn, "__module__", "").partition(".")[0] == "rbdyn":
                self._saved = gc.get_threshold()
                gc.set_threshold(*COMPILE_GC_THRESHOLD)
        self._depth += 1

    def on_end(self, event):
        self._depth -= 1
        if self._depth == 0 and self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None


numba.core.event.register("numba:compile", _CompileGC())


@contextlib.contextmanager
def quiet():
    """Compile without numba's notice that functions as values are "experimental".

    Functions as values are what makes one compiled run driver serve every scheme; the notice
    is no news for a user, and a warning would be a second line on a command line's stderr.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=NumbaExperimentalFeatureWarning)
        yield


def njit(fn):
    """Compile ``fn`` in nopython mode with an on-disk cache."""
    return numba.njit(cache=True, fastmath=False, error_model="numpy")(fn)


def njit_inline(fn):
    """Compile ``fn`` like :func:`njit`, and inline it into its callers in numba's IR.

    For the per-body helpers of a step and the constraint kinds' functions: a helper called
    with views of a body's rows (``x[i]``, ``R[i]``) would make numba count references to those
    views at every call, and a call that is not inlined passes each array as some ten machine
    words (a constraint's residual takes eight arrays); either costs a small body more than
    its arithmetic. Every place a function is inlined compiles it again, so code off the hot
    loops calls a plain :func:`njit` wrapper instead (``rbdyn._constraints.residuals_call``).
    """
    return numba.njit(cache=True, fastmath=False, error_model="numpy", inline="always")(fn)


def _borrowed(context, builder, typ, value):
    """``value`` of numba type ``typ`` with every array in it given a null meminfo."""
    if isinstance(typ, numba.types.Array):
        src = context.make_array(typ)(context, builder, value=value)
        out = context.make_array(typ)(context, builder)
        out.meminfo = cgutils.get_null_value(src.meminfo.type)
        out.parent = cgutils.get_null_value(src.parent.type)
        out.nitems = src.nitems
        out.itemsize = src.itemsize
        out.data = src.data
        out.shape = src.shape
        out.strides = src.strides
        return out._getvalue()
    if isinstance(typ, numba.types.BaseTuple):
        items = [_borrowed(context, builder, t, builder.extract_value(value, k)) for k, t in enumerate(typ.types)]
        out = cgutils.get_null_value(value.type)
        for k, item in enumerate(items):
            out = builder.insert_value(out, item, k)
        return out
    if context.enable_nrt:  # anything else keeps its own count (the caller's reference is returned)
        context.nrt.incref(builder, typ, value)
    return value


@intrinsic
def _borrow(typingctx, obj):
    def codegen(context, builder, signature, args):
        return _borrowed(context, builder, obj, args[0])

    return obj(obj), codegen


def _borrow_python(arr):
    return arr


#: ``borrow(a)`` in compiled code: the same array, or named tuple of arrays (nested), without
#: reference counts (null meminfos), for a kernel's hot loop. numba counts references to every
#: array a function binds, views and passes on, with an atomic operation each (10-20 ns on this
#: machine), which cost a small body's step or a constraint solve more than its arithmetic; a
#: borrowed array and its views are counted for free. Only for arrays that live longer than the
#: kernel call, the caller's, never one made inside it; a kernel borrows its arguments once, on
#: entry. Under ``NUMBA_DISABLE_JIT=1`` it returns its argument.
borrow = _borrow if not numba.config.DISABLE_JIT else _borrow_python


_ENTRIES: dict = {}  # (dispatcher, key of the argument types) -> the compiled entry point


def _type_key(obj):
    """What numba's type of ``obj`` depends on, for the arguments rbdyn's kernels and helpers
    take (named tuples of arrays, numbers, numpy scalars and typed lists); None for anything else."""
    if isinstance(obj, np.ndarray):
        f = obj.flags
        return (obj.dtype.str, obj.ndim, f.c_contiguous, f.f_contiguous, f.writeable, f.aligned)
    if isinstance(obj, tuple):
        keys = tuple(_type_key(item) for item in obj)
        return None if None in keys else (type(obj), keys)
    if isinstance(obj, bool):
        return (bool,)
    if isinstance(obj, int):
        return (int,) if -2**63 <= obj < 2**63 else None
    if isinstance(obj, float):
        return (float,)
    if isinstance(obj, np.generic):  # a numpy scalar (an element of an array): typed by its dtype
        return (np.generic, obj.dtype.str)
    return getattr(obj, "_numba_type_", None)  # a typed list: its numba type


def fast_call(dispatcher, *args):
    """``dispatcher(*args)``, without numba's typing of the arguments when arguments of the same
    types were seen before.

    numba's dispatcher types every argument on every call, and for named tuples of arrays it does
    so in Python: about 0.3 ms for a kernel's arguments, more than a short run's steps (a page's
    sweep, ``Scheme.advance`` one step at a time). The types depend only on what
    :func:`_type_key` reads, so the compiled entry point found for one key serves every later call
    with that key. Anything else (a kernel run as Python, an argument of another kind) goes
    through the dispatcher.
    """
    if not isinstance(dispatcher, numba.core.dispatcher.Dispatcher):
        return dispatcher(*args)
    key = _type_key(args)
    entry = _ENTRIES.get((dispatcher, key)) if key is not None else None
    if entry is not None:
        return entry(*args)
    result = dispatcher(*args)  # compiles, or finds the compiled code, for these types
    if key is not None:
        cres = dispatcher.overloads.get(tuple(dispatcher.typeof_pyval(a) for a in args))
        if cres is not None:
            _ENTRIES[dispatcher, key] = cres.entry_point
    return result


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
    """An empty typed list of ``item_type`` (a numba type), by code numba caches on disk.

    ``numba.typed.List.empty_list`` compiles the list's constructor afresh in every process,
    about 0.1 s per item type: a quarter of a second of every ``rbdyn run``, which builds the
    (mostly empty) lists of compiled loads, potentials and metrics.
    """
    return numba.typed.List.empty_list(item_type)


def _is_function(obj) -> bool:
    """A compiled kernel or, under NUMBA_DISABLE_JIT=1, the plain function."""
    return isinstance(getattr(obj, "py_func", obj), types.FunctionType)


def _globals_used(code) -> set:
    """The global names a code object loads (attribute names, also in ``co_names``, are not)."""
    out = {ins.argval for ins in dis.get_instructions(code) if ins.opname == "LOAD_GLOBAL"}
    for const in code.co_consts:  # nested functions and comprehensions
        if isinstance(const, types.CodeType):
            out |= _globals_used(const)
    return out


def _references(fn, names, seen) -> bool:
    """Whether ``fn`` (or a compiled helper it calls) uses one of the globals ``names``."""
    py = getattr(fn, "py_func", fn)
    if py in seen or not isinstance(py, types.FunctionType):
        return False
    seen.add(py)
    for nm in _globals_used(py.__code__):
        if nm in names:
            return True
        obj = py.__globals__.get(nm)
        if _is_function(obj) and _references(obj, names, seen):
            return True
    return False


def python_variant(kernel, replacements, _done=None):
    """The pure-Python source of ``kernel`` with globals rebound (``{name: replacement}``).

    A kernel evaluates the built-in loads of a body through the module-level
    ``body_loads_into`` and the potentials of the compiled loads through
    ``eval_potentials``. When a system also has Python callbacks (which
    compiled code cannot call) the very same source runs as Python with those
    names rebound to functions that add the callbacks. Every compiled helper
    on the way that uses one of the names is converted the same way (once);
    all other helpers (maps, small solves) stay compiled.
    """
    done = {} if _done is None else _done
    fn = getattr(kernel, "py_func", kernel)
    if fn in done:
        return done[fn]
    glb = dict(fn.__globals__)
    variant = types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, fn.__closure__)
    done[fn] = variant
    for nm in _globals_used(fn.__code__):
        obj = glb.get(nm)
        if nm in replacements:
            glb[nm] = replacements[nm]
        elif _is_function(obj) and _references(obj, replacements, set()):
            glb[nm] = python_variant(obj, replacements, done)
        elif isinstance(obj, numba.core.dispatcher.Dispatcher):
            glb[nm] = fast_dispatch(obj)
    return variant


def fast_dispatch(dispatcher):
    """``dispatcher`` called through :func:`fast_call`: for a compiled helper that Python calls
    at every step (a kernel run as Python), where numba's typing of the arguments (a model of some
    thirty arrays) costs more than the helper. Calls that name or omit parameters go to the
    dispatcher itself (:func:`fast_call` passes positional arguments only)."""
    if not isinstance(dispatcher, numba.core.dispatcher.Dispatcher):  # NUMBA_DISABLE_JIT=1
        return dispatcher
    n_params = dispatcher.py_func.__code__.co_argcount

    def call(*args, **kwargs):
        if kwargs or len(args) != n_params:
            return dispatcher(*args, **kwargs)
        return fast_call(dispatcher, *args)

    call.__wrapped__ = dispatcher
    return call
