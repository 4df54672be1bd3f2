r"""The compiled run driver: recording rows and streaming reductions inside the stepping loop.

A scheme's kernel loops over a range of steps (see :mod:`rbdyn.integrators.base`). It binds the
run's schedule once (:func:`schedule`) and calls :func:`start` before the run's first step. After
every step it calls :func:`count_iterations`, then :func:`store_step` when the monitor is active
(the state into the :class:`Monitor`'s block) and :func:`store` when a row is due (the state into
its row of the preallocated :class:`Output`). When a block is full
(:func:`rbdyn.driver.records.block_rows`: a cache's worth), the kernel calls :func:`fold_stored`
or :func:`derive_stored`, which derive the stored states' mass centres, energies, momenta and
constraint residuals (:func:`derive`) and fold the monitor's into its reductions. A kernel is its
steps followed by :func:`finish`, which settles the rest, in one compiled call (a second call
from Python would cost the typing of the records again). Nothing goes back to Python between
steps, and nothing is allocated.

Why a kernel stores and derives apart: numba counts the references of the arrays a compiled
function receives (two atomic updates per array and call) unless the function takes a single
path and calls nothing else, and the derivation reads a dozen of the model's arrays.
:func:`store` and :func:`store_step` take the records and the state, call nothing but the copy
numba folds into them, and cost a few nanoseconds; when one function stored, derived and folded
every step, recording each step of one box cost ten times the step, and folding it fifteen.
The derivation runs once per block, over states still in the cache; a failure found there is
reported at its own step.

Every reported number must be finite: a row or a reduction whose energy, momentum or constraint
residual is not finite ends the run with :data:`STATUS_REPORT` (the state can stay finite while
its energy overflows).

Streaming reductions (the idea of diffrax's ``SaveAt(fn=...)``): with a monitor the driver
keeps, over every step, the smallest, largest and final value of the built-in quantities
:data:`BUILTIN` and of the user's metrics, so that a benchmark defined on every-step maxima does
not need the trajectory.
"""

from __future__ import annotations

import numpy as np

from .._compile import njit, njit_inline
from ..constraints.assembly import residuals_into
from ..model.arrays import eval_potentials
from .records import BUILTIN, FINAL, MAX, MIN, VALUE, Monitor, Output  # noqa: F401 (named in the docs)
from .status import STATUS_REPORT

__all__ = ["schedule", "start", "count_iterations", "record_due", "store", "derive_stored", "store_step", "fold_stored",
           "finish", "derive"]


@njit
def derive(model, functions, out, r0, r1):
    """Derive rows ``r0 .. r1 - 1`` of ``out`` (an :class:`Output` as a plain tuple) from the state
    :func:`store` stored in them: mass-centre positions and velocities (world) in place of the
    body origins', kinetic and potential energy, linear momentum and angular momentum about the
    world origin (world components), and the constraint residuals. Returns the first row whose
    energy, momentum or residual is not finite, or -1.

    The kinetic energy is taken about the body origin, ``m|v|²/2 + m v·(ω × c) + Wᵀ J W/2`` (for
    a pivoted body Solfec's ``WᵀJW/2``). The potential covers gravity, the constant and point
    forces (all conservative), the springs, and the compiled loads that declare one
    (:func:`rbdyn.model.arrays.eval_potentials`); a constant torque has none. A body whose origin
    is its mass centre (``com_body`` zero) copies its origin's state and skips the terms in
    ``c``, which are zeros there: the same numbers, but for the sign of a component that is
    exactly zero.
    """
    (_, _, t_out, x_out, v_out, R_out, W_out, kin_out, pot_out, p_out, L_out, g_out, _, _, _, _, scr) = out
    x_org, R_row, g_row, floor, assembly = scr
    mass, J, _, _, com = model[0]  # Bodies
    (g, force, _, point_start, point_body, point_force, _, _,
     spring_start, spring_point, spring_anchor, spring_stiffness, spring_rest) = model[1]  # Loads
    n_bodies, n_res = x_out.shape[1], g_out.shape[1]
    for r in range(r0, r1):
        if n_res > 0:  # the residuals, from the body origins
            for i in range(n_bodies):
                for a in range(3):
                    x_org[i, a] = x_out[r, i, a]
                    for b in range(3):
                        R_row[i, a, b] = R_out[r, i, a, b]
            _residuals(model, x_org, R_row, g_row, floor, assembly[0])
            for c in range(n_res):
                g_out[r, c] = g_row[c]
    # body after body, each over the rows: a body's mass, inertia and loads stay in registers, and
    # each row's sums take the bodies in the same order as row after row would (from 0.0, which
    # the first body's terms are added to: the same numbers, a zero's sign included)
    for i in range(n_bodies):
        first = i == 0
        m = mass[i]
        J00, J01, J02 = J[i, 0, 0], J[i, 0, 1], J[i, 0, 2]
        J10, J11, J12 = J[i, 1, 0], J[i, 1, 1], J[i, 1, 2]
        J20, J21, J22 = J[i, 2, 0], J[i, 2, 1], J[i, 2, 2]
        c_0, c_1, c_2 = com[i, 0], com[i, 1], com[i, 2]
        cc = c_0 * c_0 + c_1 * c_1 + c_2 * c_2
        F0, F1, F2 = m * g[0] + force[i, 0], m * g[1] + force[i, 1], m * g[2] + force[i, 2]
        centred = c_0 == 0.0 and c_1 == 0.0 and c_2 == 0.0
        pointed = point_start[i + 1] > point_start[i] or spring_start[i + 1] > spring_start[i]
        for r in range(r0, r1):
            x0, x1, x2 = x_out[r, i, 0], x_out[r, i, 1], x_out[r, i, 2]
            vo0, vo1, vo2 = v_out[r, i, 0], v_out[r, i, 1], v_out[r, i, 2]
            W0, W1, W2 = W_out[r, i, 0], W_out[r, i, 1], W_out[r, i, 2]
            R00, R01, R02 = R_out[r, i, 0, 0], R_out[r, i, 0, 1], R_out[r, i, 0, 2]
            R10, R11, R12 = R_out[r, i, 1, 0], R_out[r, i, 1, 1], R_out[r, i, 1, 2]
            R20, R21, R22 = R_out[r, i, 2, 0], R_out[r, i, 2, 1], R_out[r, i, 2, 2]
            JW0 = J00 * W0 + J01 * W1 + J02 * W2
            JW1 = J10 * W0 + J11 * W1 + J12 * W2
            JW2 = J20 * W0 + J21 * W1 + J22 * W2
            if centred:
                xi0, xi1, xi2 = x0, x1, x2
                vi0, vi1, vi2 = vo0, vo1, vo2
                kinetic = 0.5 * m * (vo0 * vo0 + vo1 * vo1 + vo2 * vo2) + 0.5 * (W0 * JW0 + W1 * JW1 + W2 * JW2)
                Jc0, Jc1, Jc2 = JW0, JW1, JW2
            else:
                w0 = R00 * W0 + R01 * W1 + R02 * W2
                w1 = R10 * W0 + R11 * W1 + R12 * W2
                w2 = R20 * W0 + R21 * W1 + R22 * W2
                Rc0 = R00 * c_0 + R01 * c_1 + R02 * c_2
                Rc1 = R10 * c_0 + R11 * c_1 + R12 * c_2
                Rc2 = R20 * c_0 + R21 * c_1 + R22 * c_2
                xi0, xi1, xi2 = x0 + Rc0, x1 + Rc1, x2 + Rc2
                vi0 = vo0 + (w1 * Rc2 - w2 * Rc1)
                vi1 = vo1 + (w2 * Rc0 - w0 * Rc2)
                vi2 = vo2 + (w0 * Rc1 - w1 * Rc0)
                c0, c1, c2 = xi0 - x0, xi1 - x1, xi2 - x2  # R c as the recorded mass centre rounds it
                kinetic = 0.5 * m * (vo0 * vo0 + vo1 * vo1 + vo2 * vo2) \
                    + m * (vo0 * (w1 * c2 - w2 * c1) + vo1 * (w2 * c0 - w0 * c2) + vo2 * (w0 * c1 - w1 * c0)) \
                    + 0.5 * (W0 * JW0 + W1 * JW1 + W2 * JW2)
                # angular momentum about the mass centre: R J_c W with J_c = J - m(|c|² I - c cᵀ) (body axes)
                Jc0 = JW0 - m * (cc * W0 - c_0 * (c_0 * W0 + c_1 * W1 + c_2 * W2))
                Jc1 = JW1 - m * (cc * W1 - c_1 * (c_0 * W0 + c_1 * W1 + c_2 * W2))
                Jc2 = JW2 - m * (cc * W2 - c_2 * (c_0 * W0 + c_1 * W1 + c_2 * W2))
            potential = (0.0 if first else pot_out[r]) - (F0 * xi0 + F1 * xi1 + F2 * xi2)
            if pointed:
                # point forces at their points x + R p
                for k in range(point_start[i], point_start[i + 1]):
                    for a in range(3):
                        potential -= point_force[k, a] * (x_out[r, i, a] + (
                            R_out[r, i, a, 0] * point_body[k, 0] + R_out[r, i, a, 1] * point_body[k, 1]
                            + R_out[r, i, a, 2] * point_body[k, 2]))
                # springs: k (L - L0)^2 / 2
                for k in range(spring_start[i], spring_start[i + 1]):
                    L2s = 0.0
                    for a in range(3):
                        da = x_out[r, i, a] + (R_out[r, i, a, 0] * spring_point[k, 0] + R_out[r, i, a, 1]
                                               * spring_point[k, 1] + R_out[r, i, a, 2] * spring_point[k, 2]) \
                            - spring_anchor[k, a]
                        L2s += da * da
                    stretch = np.sqrt(L2s) - spring_rest[k]
                    potential += 0.5 * spring_stiffness[k] * stretch * stretch
            pot_out[r] = potential
            kin_out[r] = (0.0 if first else kin_out[r]) + kinetic
            p_out[r, 0] = (0.0 if first else p_out[r, 0]) + m * vi0
            p_out[r, 1] = (0.0 if first else p_out[r, 1]) + m * vi1
            p_out[r, 2] = (0.0 if first else p_out[r, 2]) + m * vi2
            L_out[r, 0] = (0.0 if first else L_out[r, 0]) + (m * (xi1 * vi2 - xi2 * vi1)
                                                              + (R00 * Jc0 + R01 * Jc1 + R02 * Jc2))
            L_out[r, 1] = (0.0 if first else L_out[r, 1]) + (m * (xi2 * vi0 - xi0 * vi2)
                                                              + (R10 * Jc0 + R11 * Jc1 + R12 * Jc2))
            L_out[r, 2] = (0.0 if first else L_out[r, 2]) + (m * (xi0 * vi1 - xi1 * vi0)
                                                              + (R20 * Jc0 + R21 * Jc1 + R22 * Jc2))
            if not centred:  # a centred body's origin is its mass centre: its row holds them already
                x_out[r, i, 0], x_out[r, i, 1], x_out[r, i, 2] = xi0, xi1, xi2
                v_out[r, i, 0], v_out[r, i, 1], v_out[r, i, 2] = vi0, vi1, vi2
    eval_potentials(model, functions, t_out, x_out, R_out, pot_out, r0, r1)
    for r in range(r0, r1):
        # one test of a sum, which a value that is not finite makes not finite (a sum of finite
        # values may overflow too: then each value is tested)
        total = kin_out[r] + pot_out[r] + p_out[r, 0] + p_out[r, 1] + p_out[r, 2] + L_out[r, 0] + L_out[r, 1] \
            + L_out[r, 2]
        for c in range(n_res):
            total += g_out[r, c]
        if not np.isfinite(total) and not _finite_row(kin_out, pot_out, p_out, L_out, g_out, r):
            return r
    return -1


@njit
def _finite_row(kin_out, pot_out, p_out, L_out, g_out, r):
    """Whether every derived quantity of row ``r`` is finite."""
    ok = np.isfinite(kin_out[r]) and np.isfinite(pot_out[r])
    for a in range(3):
        ok = ok and np.isfinite(p_out[r, a]) and np.isfinite(L_out[r, a])
    for c in range(g_out.shape[1]):
        ok = ok and np.isfinite(g_out[r, c])
    return ok


@njit_inline
def _fold(value, k, reduced):
    """Fold ``value`` into column ``k`` of ``reduced`` (rows: smallest, largest, final)."""
    if value < reduced[MIN, k]:
        reduced[MIN, k] = value
    if value > reduced[MAX, k]:
        reduced[MAX, k] = value
    reduced[FINAL, k] = value


@njit
def _residuals(model, x, R, g, floor, s):
    """Every constraint residual into ``g`` (``residuals_into``), as a called function: the
    residuals of every kind make a large body, which would otherwise be copied into
    :func:`derive` (compile time, and a slower loop for systems that have no constraint)."""
    ckind, cbody, cdata, crow, _, _ = model[2]  # Constraints
    residuals_into(ckind, cbody, cdata, crow, x, R, g, floor, s)


@njit
def _store(out, row, t, x, R, v, W):
    """Store the time and the state (body origins) in output row ``row``, for :func:`derive`."""
    t_out, x_out, v_out, R_out, W_out = out[2], out[3], out[4], out[5], out[6]
    t_out[row] = t
    for i in range(x.shape[0]):  # element by element: an array assignment takes numba's general copy
        for a in range(3):
            x_out[row, i, a] = x[i, a]
            v_out[row, i, a] = v[i, a]
            W_out[row, i, a] = W[i, a]
            for b in range(3):
                R_out[row, i, a, b] = R[i, a, b]


@njit
def _fold_rows(functions, mon, n, first_step):
    """Fold the first ``n`` rows of the monitor's block, derived, into its reductions: steps
    ``first_step .. first_step + n - 1``. Returns -1, or the first of those steps whose energy,
    momentum, residual or metric is not finite (a residual's ends the folding before that step;
    the others are folded all the same)."""
    _, s, builtin, metric_params, metric_size, metric, block, _ = mon
    metric_fn = functions[2]
    _, _, t_b, xc, vc, R_b, W_b, kin, pot, p, L, g, _, _, _, _, _ = block
    for j in range(n):
        E = kin[j] + pot[j]
        dp = np.sqrt((p[j, 0] - s[1]) ** 2 + (p[j, 1] - s[2]) ** 2 + (p[j, 2] - s[3]) ** 2)
        dL = np.sqrt((L[j, 0] - s[4]) ** 2 + (L[j, 1] - s[5]) ** 2 + (L[j, 2] - s[6]) ** 2)
        g_max = 0.0
        for r in range(g.shape[1]):
            g_max = max(g_max, abs(g[j, r]))
            if not np.isfinite(g[j, r]):
                return first_step + j
        # a non-finite energy or momentum makes E, dp or dL non-finite
        ok = np.isfinite(E) and np.isfinite(dp) and np.isfinite(dL)
        _fold(E, 0, builtin)
        _fold(abs(E - s[0]), 1, builtin)
        _fold(dp, 2, builtin)
        _fold(dL, 3, builtin)
        _fold(g_max, 4, builtin)
        for q in range(len(metric_fn)):
            m = metric[q]
            values = m[VALUE]
            metric_fn[q](t_b[j], xc[j], R_b[j], vc[j], W_b[j], metric_params[q], values)
            for c in range(metric_size[q]):
                ok = ok and np.isfinite(values[c])
                _fold(values[c], c, m)
        if not ok:
            return first_step + j
    return -1


@njit_inline
def schedule(out, mon):
    """``(every, n_steps, active, iteration_counts, iterations, steps, pending)`` of a run: what a
    kernel binds once, before its loop, so that the loop reads no record (``steps`` and
    ``pending``: the monitor's block, see :func:`store_step`)."""
    every, n_steps, iterations, counts = out[0], out[1], out[12], out[13]
    return every, n_steps, mon[0], counts, iterations, mon[6], mon[7]


@njit
def start(model, functions, x, R, v, W, out, mon):
    """Before a run's first step: store row 0 (t = 0) and, when the monitor is active, start the
    reductions from it (the errors are measured from its energy and momenta). Returns 0, or
    :data:`STATUS_REPORT` if a reduced quantity is not finite."""
    _store(out, 0, 0.0, x, R, v, W)
    if mon[0] == 0:
        return 0
    s, block = mon[1], mon[6]
    _store(block, 0, 0.0, x, R, v, W)
    derive(model, functions, block, 0, 1)
    kin, pot, p, L = block[7], block[8], block[9], block[10]
    s[0] = kin[0] + pot[0]
    for a in range(3):
        s[1 + a] = p[0, a]
        s[4 + a] = L[0, a]
    return 0 if _fold_rows(functions, mon, 1, 0) < 0 else STATUS_REPORT


@njit_inline
def count_iterations(counts, iterations, every, k, iters):
    """Count step ``k``'s ``iters`` solver iterations: in the histogram ``counts``, and in
    ``iterations`` per step (``every == 1``) or per output interval."""
    counts[min(iters, counts.shape[0] - 1)] += 1
    if every == 1:
        iterations[k] = iters
    else:
        iterations[k // every] += iters


@njit_inline
def record_due(every, n_steps, k):
    """Whether step ``k`` (0-based) ends on an output row."""
    # every step without a division: with the one in store(), two 64-bit divisions a step cost
    # recording every step of one box about 5 % of the whole call
    return every == 1 or (k + 1) % every == 0 or k + 1 == n_steps


@njit
def store(out, k, t, x, R, v, W):
    """After step ``k`` (0-based), which ends at ``t`` and :func:`record_due`: store the state in its
    output row. True when a block of stored rows (:func:`rbdyn.driver.records.block_rows`) waits
    for :func:`derive_stored`.

    It takes only the output and the state and calls nothing but the copy, which numba folds
    into it, so that the arrays it receives cost no reference counting."""
    every = out[0]
    row = k + 1 if every == 1 else (k + every) // every
    _store(out, row, t, x, R, v, W)
    return row + 1 - out[14][0] >= out[15]


@njit
def derive_stored(model, functions, out, k):
    """After :func:`store` of step ``k`` asked for it: derive the stored rows not yet derived.
    Returns -1, or the step whose row has a derived quantity that is not finite."""
    return _derive_stored(model, functions, out, (k + out[0]) // out[0] + 1)


@njit
def store_step(steps, pending, k, t, x, R, v, W):
    """After step ``k`` (0-based), which ends at ``t``, with the monitor active: store the state in
    the monitor's block ``steps`` (an :class:`Output`), after the ``pending[0]`` steps stored since
    the last folding (the first of them is step ``pending[1]``). True when the block is full and
    waits for :func:`fold_stored`. A single path that calls nothing, like :func:`store`."""
    n = pending[0]
    pending[1] = k if n == 0 else pending[1]
    _store(steps, n, t, x, R, v, W)
    pending[0] = n + 1
    return n + 1 == steps[2].shape[0]


@njit
def fold_stored(model, functions, mon):
    """Derive the steps stored in the monitor's block (:func:`store_step`) and fold them into its
    reductions. Returns -1, or the first step whose reported quantity is not finite."""
    block, pending = mon[6], mon[7]
    n = pending[0]
    if n == 0:
        return -1
    pending[0] = 0
    derive(model, functions, block, 0, n)
    return _fold_rows(functions, mon, n, pending[1])


@njit
def _derive_stored(model, functions, out, r1):
    """Derive the stored rows not yet derived, up to row ``r1`` (excluded); -1, or the step whose
    row has a derived quantity that is not finite (0: the initial state)."""
    every, n_steps, derived = out[0], out[1], out[14]
    bad = derive(model, functions, out, derived[0], r1)
    derived[0] = max(derived[0], r1)
    if bad < 0:
        return -1
    return 0 if bad == 0 else min(bad * every, n_steps) - 1


@njit_inline
def stored_rows(k, every, n_steps):
    """The number of output rows that hold a state once steps ``0 .. k - 1`` are done: row 0,
    one every ``every`` steps, and the last step's."""
    return 1 + k // every + (1 if k == n_steps and n_steps % every != 0 else 0)


@njit
def finish(model, functions, out, mon, code, k):
    """What a kernel call that ended with ``(code, k)`` returns once the rows and monitor steps it
    stored are derived and folded (:func:`derive`): ``(code, k)``, or ``(STATUS_REPORT, step)``
    with the first step whose reported quantity is not finite (0 for the initial state), when
    that is before the kernel's own failure."""
    bad = _derive_stored(model, functions, out, stored_rows(k, out[0], out[1]))
    if mon[0] != 0:
        bad_mon = fold_stored(model, functions, mon)
        if bad_mon >= 0 and (bad < 0 or bad_mon < bad):
            bad = bad_mon
    if bad < 0 or (code != 0 and k <= bad):
        return code, k
    return STATUS_REPORT, bad
