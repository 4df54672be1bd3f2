"""The loads of a system with Python callbacks, for its kernel run as Python
(:func:`rbdyn._compile.python_variant`): the compiled built-in loads plus the callbacks'."""

from __future__ import annotations

import numpy as np

from .._errors import InputError
from .._compile import python_variant
from ..model import arrays

__all__ = ["callback_loads", "callback_potentials", "python_kernel"]


def python_kernel(kernel, system):
    """``kernel``'s source run as Python, with loads (and reported potentials) that include the
    system's Python callbacks."""
    return python_variant(kernel, {"body_loads_into": callback_loads(system),
                                   "eval_potentials": callback_potentials(system)})


def callback_loads(system):
    """The built-in loads of a body plus its Python callbacks; the signature of
    :func:`rbdyn.model.arrays.body_loads_into` (its state and loads as values: tuples)."""
    compiled = arrays.body_loads_into
    by_body = {}
    for cb in system.callbacks:
        by_body.setdefault(system.index[cb.body], []).append(cb.fn)
    com = system.model.bodies.com_body

    def body_loads_into(model, i, t, x, R, v, W):
        f, tau = compiled(model, i, t, x, R, v, W)
        fns = by_body.get(i, ())
        if not fns:
            return f, tau
        f, tau = np.array(f, dtype=float), np.array(tau, dtype=float)
        R = np.array(R, dtype=float).reshape(3, 3)
        W = np.array(W, dtype=float)
        c = R @ com[i]
        x_c = np.array(x, dtype=float) + c
        v_c = np.array(v, dtype=float) + np.cross(R @ W, c)
        for fn in fns:
            try:
                fc, tq = fn(float(t), x_c.copy(), R.copy(), v_c.copy(), W.copy())
                fc = np.asarray(fc, dtype=float).reshape(3)
                tq = np.asarray(tq, dtype=float).reshape(3)
            except Exception as exc:  # a user's bug: say whose and where
                raise InputError(
                    f"load.{system.body_names[i]}.fn",
                    f"the callback failed at t = {t!r}: {type(exc).__name__}: {exc} "
                    "(it must return (force_world, torque_world), two 3-vectors)",
                ) from exc
            f += fc
            tau += tq + np.cross(c, fc)
        return tuple(f.tolist()), tuple(tau.tolist())

    return body_loads_into


def callback_potentials(system):
    """The compiled loads' potentials plus those the Python callbacks declare; the
    signature of :func:`rbdyn.model.arrays.eval_potentials`."""
    compiled = arrays.eval_potentials
    entries = [(system.index[cb.body], cb.potential) for cb in system.callbacks if cb.potential]

    def eval_potentials(model, functions, t, x_com, R, potential, r0, r1):
        # the compiled loads' share of the rows r0 .. r1 - 1, added with the callbacks' in one sum
        user = np.zeros(r1 - r0)
        compiled(model, functions, t[r0:r1], x_com[r0:r1], R[r0:r1], user, 0, r1 - r0)
        for r in range(r0, r1):
            total = user[r - r0]
            for i, pot in entries:
                total += float(pot(float(t[r]), x_com[r, i].copy(), R[r, i].copy()))
            potential[r] += total

    return eval_potentials
