r"""The compiled run driver: recording rows and streaming reductions inside the stepping loop.

A scheme's kernel loops over a range of steps (see :mod:`rbdyn.integrators.base`). It binds the
run's schedule once (:func:`schedule`), calls :func:`start` before the run's first step and,
after every step, :func:`count_iterations` and, when a row is due or the monitor is active,
:func:`report`, which writes one output row into the preallocated :class:`Output` and folds the
step into the :class:`Monitor`'s reductions. Nothing goes back to Python between steps, and
nothing is allocated.

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

__all__ = ["schedule", "start", "count_iterations", "record_due", "report", "record", "mass_centre_into",
           "energy_momentum_into"]


@njit_inline
def mass_centre_into(model, x, R, v, W, x_com, v_com):
    """Mass-centre positions and velocities (world) from the body origins' ones.

    A body whose origin is its mass centre (``com_body`` zero) copies its origin's: the same
    numbers, but for the sign of a component that is exactly zero.
    """
    com = model[0][4]  # Bodies.com_body
    for i in range(x.shape[0]):
        c_0, c_1, c_2 = com[i, 0], com[i, 1], com[i, 2]
        if c_0 == 0.0 and c_1 == 0.0 and c_2 == 0.0:
            for a in range(3):
                x_com[i, a] = x[i, a]
                v_com[i, a] = v[i, a]
            continue
        c0 = R[i, 0, 0] * c_0 + R[i, 0, 1] * c_1 + R[i, 0, 2] * c_2
        c1 = R[i, 1, 0] * c_0 + R[i, 1, 1] * c_1 + R[i, 1, 2] * c_2
        c2 = R[i, 2, 0] * c_0 + R[i, 2, 1] * c_1 + R[i, 2, 2] * c_2
        w0 = R[i, 0, 0] * W[i, 0] + R[i, 0, 1] * W[i, 1] + R[i, 0, 2] * W[i, 2]
        w1 = R[i, 1, 0] * W[i, 0] + R[i, 1, 1] * W[i, 1] + R[i, 1, 2] * W[i, 2]
        w2 = R[i, 2, 0] * W[i, 0] + R[i, 2, 1] * W[i, 1] + R[i, 2, 2] * W[i, 2]
        x_com[i, 0] = x[i, 0] + c0
        x_com[i, 1] = x[i, 1] + c1
        x_com[i, 2] = x[i, 2] + c2
        v_com[i, 0] = v[i, 0] + (w1 * c2 - w2 * c1)
        v_com[i, 1] = v[i, 1] + (w2 * c0 - w0 * c2)
        v_com[i, 2] = v[i, 2] + (w0 * c1 - w1 * c0)


@njit_inline
def energy_momentum_into(model, t, x, R, v, W, x_com, v_com, pm):
    """Kinetic and potential energy; linear momentum and angular momentum about the
    world origin (world components) into ``pm[0:3]`` and ``pm[3:6]``.

    ``x``, ``v`` are the body origins' positions and velocities, ``x_com``, ``v_com`` the mass
    centres' (:func:`mass_centre_into`). The kinetic energy is taken about the body origin,
    ``m|v|²/2 + m v·(ω × c) + Wᵀ J W/2`` (for a pivoted body Solfec's ``WᵀJW/2``). The potential
    covers gravity, the constant and point forces (all conservative), the springs, and the
    compiled loads that declare one; a constant torque has none.

    A body whose origin is its mass centre (``com_body`` zero) skips the terms in ``c``, which
    are zeros there: the same numbers, but for the sign of a component that is exactly zero.
    """
    mass, J, _, _, com = model[0]  # Bodies
    (g, force, _, point_start, point_body, point_force, _, _, _, _,
     spring_start, spring_point, spring_anchor, spring_stiffness, spring_rest) = model[1]  # Loads
    kinetic = 0.0
    potential = 0.0
    for a in range(6):
        pm[a] = 0.0
    # one test instead of two empty loops per body: most systems have no point force or spring
    pointed = point_start[-1] > 0 or spring_start[-1] > 0
    for i in range(x.shape[0]):
        m = mass[i]
        W0, W1, W2 = W[i, 0], W[i, 1], W[i, 2]
        vo0, vo1, vo2 = v[i, 0], v[i, 1], v[i, 2]
        c_0, c_1, c_2 = com[i, 0], com[i, 1], com[i, 2]
        JW0 = J[i, 0, 0] * W0 + J[i, 0, 1] * W1 + J[i, 0, 2] * W2
        JW1 = J[i, 1, 0] * W0 + J[i, 1, 1] * W1 + J[i, 1, 2] * W2
        JW2 = J[i, 2, 0] * W0 + J[i, 2, 1] * W1 + J[i, 2, 2] * W2
        if c_0 == 0.0 and c_1 == 0.0 and c_2 == 0.0:
            kinetic += 0.5 * m * (vo0 * vo0 + vo1 * vo1 + vo2 * vo2) + 0.5 * (W0 * JW0 + W1 * JW1 + W2 * JW2)
            Jc0, Jc1, Jc2 = JW0, JW1, JW2
        else:
            w0 = R[i, 0, 0] * W0 + R[i, 0, 1] * W1 + R[i, 0, 2] * W2
            w1 = R[i, 1, 0] * W0 + R[i, 1, 1] * W1 + R[i, 1, 2] * W2
            w2 = R[i, 2, 0] * W0 + R[i, 2, 1] * W1 + R[i, 2, 2] * W2
            c0, c1, c2 = x_com[i, 0] - x[i, 0], x_com[i, 1] - x[i, 1], x_com[i, 2] - x[i, 2]
            kinetic += 0.5 * m * (vo0 * vo0 + vo1 * vo1 + vo2 * vo2) \
                + m * (vo0 * (w1 * c2 - w2 * c1) + vo1 * (w2 * c0 - w0 * c2) + vo2 * (w0 * c1 - w1 * c0)) \
                + 0.5 * (W0 * JW0 + W1 * JW1 + W2 * JW2)
            # angular momentum about the mass centre: R J_c W with J_c = J - m(|c|² I - c cᵀ) (body axes)
            cc = c_0 * c_0 + c_1 * c_1 + c_2 * c_2
            Jc0 = JW0 - m * (cc * W0 - c_0 * (c_0 * W0 + c_1 * W1 + c_2 * W2))
            Jc1 = JW1 - m * (cc * W1 - c_1 * (c_0 * W0 + c_1 * W1 + c_2 * W2))
            Jc2 = JW2 - m * (cc * W2 - c_2 * (c_0 * W0 + c_1 * W1 + c_2 * W2))
        xi0, xi1, xi2 = x_com[i, 0], x_com[i, 1], x_com[i, 2]
        vi0, vi1, vi2 = v_com[i, 0], v_com[i, 1], v_com[i, 2]
        potential -= (m * g[0] + force[i, 0]) * xi0 + (m * g[1] + force[i, 1]) * xi1 + (m * g[2] + force[i, 2]) * xi2
        pm[0] += m * vi0
        pm[1] += m * vi1
        pm[2] += m * vi2
        pm[3] += m * (xi1 * vi2 - xi2 * vi1) + (R[i, 0, 0] * Jc0 + R[i, 0, 1] * Jc1 + R[i, 0, 2] * Jc2)
        pm[4] += m * (xi2 * vi0 - xi0 * vi2) + (R[i, 1, 0] * Jc0 + R[i, 1, 1] * Jc1 + R[i, 1, 2] * Jc2)
        pm[5] += m * (xi0 * vi1 - xi1 * vi0) + (R[i, 2, 0] * Jc0 + R[i, 2, 1] * Jc1 + R[i, 2, 2] * Jc2)
        if not pointed:
            continue
        # point forces at their points x + R p
        for k in range(point_start[i], point_start[i + 1]):
            for a in range(3):
                potential -= point_force[k, a] * (x[i, a] + (R[i, a, 0] * point_body[k, 0] + R[i, a, 1] * point_body[k, 1]
                                                             + R[i, a, 2] * point_body[k, 2]))
        # springs: k (L - L0)^2 / 2
        for k in range(spring_start[i], spring_start[i + 1]):
            L2 = 0.0
            for a in range(3):
                da = x[i, a] + (R[i, a, 0] * spring_point[k, 0] + R[i, a, 1] * spring_point[k, 1]
                                + R[i, a, 2] * spring_point[k, 2]) - spring_anchor[k, a]
                L2 += da * da
            stretch = np.sqrt(L2) - spring_rest[k]
            potential += 0.5 * spring_stiffness[k] * stretch * stretch
    potential += eval_potentials(model, t, x_com, R)
    return kinetic, potential


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
    residuals of every kind make a large body, which :func:`record`, copied into each kernel,
    would otherwise carry into all of them (compile time, and a slower loop for systems that
    have no constraint)."""
    ckind, cbody, cdata, crow, _, _ = model[2]  # Constraints
    residuals_into(ckind, cbody, cdata, crow, x, R, g, floor, s)


@njit_inline
def record(model, x, R, v, W, out, mon, row, t, first):
    """Record output row ``row`` (none if ``row < 0``) and fold the state into the reductions
    (when the monitor is active; ``first``: start them) from one evaluation of the state ``x``,
    ``R``, ``v``, ``W``'s energy, momenta and constraint residuals; False if a reported quantity
    is not finite. ``out`` and ``mon`` are the plain tuples of an :class:`Output` and a
    :class:`Monitor`."""
    (_, _, t_out, x_out, v_out, R_out, W_out, kin_out, pot_out, p_out, L_out, g_out, _, _, out_scr) = out
    active, start_values, builtin, metric_fn, metric_params, metric_size, metric, mon_scr = mon
    recording = row >= 0
    scr = out_scr if recording else mon_scr
    xc, vc, pm = (x_out[row], v_out[row], scr[2]) if recording else (scr[0], scr[1], scr[2])
    mass_centre_into(model, x, R, v, W, xc, vc)
    kin, pot = energy_momentum_into(model, t, x, R, v, W, xc, vc, pm)
    ok = True
    if recording:
        t_out[row] = t
        for i in range(x.shape[0]):  # element by element: an array assignment takes numba's general copy
            for a in range(3):
                W_out[row, i, a] = W[i, a]
                for b in range(3):
                    R_out[row, i, a, b] = R[i, a, b]
        kin_out[row] = kin
        pot_out[row] = pot
        ok = np.isfinite(kin) and np.isfinite(pot)
        for a in range(3):
            p_out[row, a] = pm[a]
            L_out[row, a] = pm[3 + a]
            ok = ok and np.isfinite(pm[a]) and np.isfinite(pm[3 + a])
        if g_out.shape[1] > 0:
            g = g_out[row]
            _residuals(model, x, R, g, scr[4], scr[5][0])
            for r in range(g.shape[0]):
                ok = ok and np.isfinite(g[r])
    if active == 0:
        return ok
    E = kin + pot
    s = start_values
    if first:  # the errors are measured from the energy and momenta at t = 0
        s[0] = E
        for a in range(6):
            s[1 + a] = pm[a]
    dp = np.sqrt((pm[0] - s[1]) ** 2 + (pm[1] - s[2]) ** 2 + (pm[2] - s[3]) ** 2)
    dL = np.sqrt((pm[3] - s[4]) ** 2 + (pm[4] - s[5]) ** 2 + (pm[5] - s[6]) ** 2)
    g_max = 0.0
    residuals = mon_scr[3]
    if residuals.shape[0] > 0:
        if recording:  # the row's
            g = g_out[row]
        else:
            g = residuals
            _residuals(model, x, R, g, mon_scr[4], mon_scr[5][0])
        for r in range(g.shape[0]):
            g_max = max(g_max, abs(g[r]))
            if not np.isfinite(g[r]):
                return False
    ok = ok and np.isfinite(E) and np.isfinite(dp) and np.isfinite(dL)
    _fold(E, 0, builtin)
    _fold(abs(E - s[0]), 1, builtin)
    _fold(dp, 2, builtin)
    _fold(dL, 3, builtin)
    _fold(g_max, 4, builtin)
    for j in range(len(metric_fn)):
        m = metric[j]
        values = m[VALUE]
        metric_fn[j](t, xc, R, vc, W, metric_params[j], values)
        for c in range(metric_size[j]):
            ok = ok and np.isfinite(values[c])
            _fold(values[c], c, m)
    return ok


@njit_inline
def schedule(out, mon):
    """``(every, n_steps, active, iteration_counts, iterations)`` of a run: what a kernel binds
    once, before its loop, so that the loop reads no record."""
    every, n_steps, iterations, counts = out[0], out[1], out[12], out[13]
    return every, n_steps, mon[0], counts, iterations


@njit
def start(model, x, R, v, W, out, mon):
    """Before a run's first step: record row 0 (t = 0) and start the reductions from it.
    Returns 0, or :data:`STATUS_REPORT` if a reported quantity is not finite. Called once per
    run, so a called function (compiled once for every kernel), where :func:`report`, called
    after every step, is copied into the kernel with :func:`record`: as a call with the run's
    records for arguments, recording a row cost about twice as much (numba counts the references
    of every array that crosses a call)."""
    return 0 if record(model, x, R, v, W, out, mon, 0, 0.0, True) else STATUS_REPORT


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
    return (k + 1) % every == 0 or k + 1 == n_steps


@njit_inline
def report(model, x, R, v, W, out, mon, k, t):
    """After step ``k`` (0-based), which ends at ``t``: record its row when :func:`record_due`
    and fold it into the reductions when the monitor is active; False if a reported quantity is
    not finite. A kernel calls it only when one of the two is the case."""
    every, n_steps = out[0], out[1]
    row = (k + every) // every if record_due(every, n_steps, k) else -1
    return record(model, x, R, v, W, out, mon, row, t, False)
