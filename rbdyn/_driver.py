r"""The compiled run driver: recording and streaming reductions inside the stepping loop.

A scheme's compiled *advance* function loops over a range of steps (see
:mod:`rbdyn._scheme`); it calls :func:`start` before its first step and, after
every step, :func:`count_iterations` and :func:`report`, which every ``every``
steps (and after the last) writes one output row into the preallocated
:class:`Output` and, when a :class:`Monitor` is active, folds the step into the
reductions. Nothing goes back to Python between steps, and nothing is
allocated: the output costs what writing a row costs.

Every reported number must be finite: a row or a reduction whose energy,
momentum or constraint residual is not finite ends the run with
:data:`STATUS_REPORT` (the state can stay finite while its energy overflows).

Streaming reductions (the idea of diffrax's ``SaveAt(fn=...)``): with a
monitor the driver keeps, over every step, the smallest, largest and final
value of the built-in quantities :data:`BUILTIN` and of user metrics, compiled
functions of :data:`METRIC_SIGNATURE`, so that a benchmark defined on
every-step maxima does not need the trajectory.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import types

from ._constraints import residuals_call
from ._data import eval_potentials
from ._jit import njit, njit_inline
from ._scheme import STATUS_REPORT  # returned when a reported quantity is not finite

__all__ = ["Output", "Monitor", "start", "count_iterations", "report", "METRIC_SIGNATURE", "BUILTIN", "STATUS_REPORT"]


#: The built-in reductions, in the order of ``Monitor.b_*``.
BUILTIN = ("energy", "energy_error", "linear_momentum_error", "angular_momentum_error", "constraint")

#: Signature of a metric: ``fn(t, x_com, R_world_body, v_com, omega_body, params, out)`` writes its
#: values into ``out`` from the mass-centre state of every body (arrays with a leading body axis).
METRIC_SIGNATURE = types.void(
    types.float64,
    types.float64[:, ::1],
    types.float64[:, :, ::1],
    types.float64[:, ::1],
    types.float64[:, ::1],
    types.float64[::1],
    types.float64[::1],
)


class Output(NamedTuple):
    """The rows a run records, preallocated.

    Row ``r`` holds the state after step ``min(r * every, n_steps)``.
    ``iterations`` has one entry per step when ``every == 1`` and otherwise
    the total of each output interval; ``iteration_counts[k]`` counts the
    steps that took ``k`` solver iterations (the last entry: that many or more).
    """

    every: int
    n_steps: int
    t: np.ndarray
    x_com: np.ndarray
    v_com: np.ndarray
    R_world_body: np.ndarray
    omega_body: np.ndarray
    kinetic_energy: np.ndarray
    potential_energy: np.ndarray
    linear_momentum: np.ndarray
    angular_momentum: np.ndarray
    constraint_residuals: np.ndarray
    iterations: np.ndarray
    iteration_counts: np.ndarray
    floor: np.ndarray
    scratch: np.ndarray
    xa: np.ndarray
    Ra: np.ndarray
    xb: np.ndarray
    Rb: np.ndarray
    s: np.ndarray


class Monitor(NamedTuple):
    """Streaming reductions over every step (inactive: ``active == 0``).

    ``start`` holds the energy, linear and angular momentum at t = 0 (7
    numbers) that the ``*_error`` quantities are measured from.
    """

    active: int
    start: np.ndarray
    b_min: np.ndarray
    b_max: np.ndarray
    b_final: np.ndarray
    metric_fn: object
    metric_params: np.ndarray
    metric_size: np.ndarray
    m_value: np.ndarray
    m_min: np.ndarray
    m_max: np.ndarray
    m_final: np.ndarray
    x_com: np.ndarray
    v_com: np.ndarray
    residuals: np.ndarray
    floor: np.ndarray
    scratch: np.ndarray
    xa: np.ndarray
    Ra: np.ndarray
    xb: np.ndarray
    Rb: np.ndarray
    s: np.ndarray


@njit_inline
def at_mass_centre(c):
    """Whether a body's mass centre ``c`` (body axes, ``com_body``) is its origin: then the
    terms in ``c`` of the mass centre, the kinetic energy and the angular momentum are zeros,
    and :func:`mass_centre_into` and :func:`energy_momentum_into` skip them."""
    return c[0] == 0.0 and c[1] == 0.0 and c[2] == 0.0


@njit_inline
def mass_centre_into(model, x, R, v, W, x_com, v_com):
    """Mass-centre positions and velocities (world) from the body origins' ones."""
    com = model.bodies.com_body
    for i in range(x.shape[0]):
        Ri, ci, Wi = R[i], com[i], W[i]
        if at_mass_centre(ci):
            for a in range(3):
                x_com[i, a] = x[i, a]
                v_com[i, a] = v[i, a]
            continue
        c0 = Ri[0, 0] * ci[0] + Ri[0, 1] * ci[1] + Ri[0, 2] * ci[2]
        c1 = Ri[1, 0] * ci[0] + Ri[1, 1] * ci[1] + Ri[1, 2] * ci[2]
        c2 = Ri[2, 0] * ci[0] + Ri[2, 1] * ci[1] + Ri[2, 2] * ci[2]
        w0 = Ri[0, 0] * Wi[0] + Ri[0, 1] * Wi[1] + Ri[0, 2] * Wi[2]
        w1 = Ri[1, 0] * Wi[0] + Ri[1, 1] * Wi[1] + Ri[1, 2] * Wi[2]
        w2 = Ri[2, 0] * Wi[0] + Ri[2, 1] * Wi[1] + Ri[2, 2] * Wi[2]
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

    ``x``, ``v`` are the body origins' positions and velocities, ``x_com``,
    ``v_com`` the mass centres' (:func:`mass_centre_into`). The kinetic energy
    is taken about the body origin, ``m|v|²/2 + m v·(ω × c) + Wᵀ J W/2`` (for a
    pivoted body Solfec's ``WᵀJW/2``). The potential covers gravity, the
    constant and point forces (all conservative) and the compiled loads that
    declare one; a constant torque has none.

    A body whose origin is its mass centre (``com_body`` zero) skips the terms in ``c``, which
    are zeros there: the same numbers, but for the sign of a component that is exactly zero.
    """
    bodies, loads = model.bodies, model.loads
    mass, J, com, g = bodies.mass, bodies.inertia, bodies.com_body, loads.gravity
    kinetic = 0.0
    potential = 0.0
    for a in range(6):
        pm[a] = 0.0
    # one test instead of two empty loops per body: most systems have no point force or spring
    pointed = loads.point_start[-1] > 0 or loads.spring_start[-1] > 0
    for i in range(x.shape[0]):
        m = mass[i]
        Ri, Wi, ci, xi, vi, Ji = R[i], W[i], com[i], x_com[i], v_com[i], J[i]
        vo = v[i]
        JW0 = Ji[0, 0] * Wi[0] + Ji[0, 1] * Wi[1] + Ji[0, 2] * Wi[2]
        JW1 = Ji[1, 0] * Wi[0] + Ji[1, 1] * Wi[1] + Ji[1, 2] * Wi[2]
        JW2 = Ji[2, 0] * Wi[0] + Ji[2, 1] * Wi[1] + Ji[2, 2] * Wi[2]
        if at_mass_centre(ci):
            kinetic += 0.5 * m * (vo[0] * vo[0] + vo[1] * vo[1] + vo[2] * vo[2]) \
                + 0.5 * (Wi[0] * JW0 + Wi[1] * JW1 + Wi[2] * JW2)
            Jc0, Jc1, Jc2 = JW0, JW1, JW2
        else:
            w0 = Ri[0, 0] * Wi[0] + Ri[0, 1] * Wi[1] + Ri[0, 2] * Wi[2]
            w1 = Ri[1, 0] * Wi[0] + Ri[1, 1] * Wi[1] + Ri[1, 2] * Wi[2]
            w2 = Ri[2, 0] * Wi[0] + Ri[2, 1] * Wi[1] + Ri[2, 2] * Wi[2]
            c0, c1, c2 = xi[0] - x[i, 0], xi[1] - x[i, 1], xi[2] - x[i, 2]
            kinetic += 0.5 * m * (vo[0] * vo[0] + vo[1] * vo[1] + vo[2] * vo[2]) \
                + m * (vo[0] * (w1 * c2 - w2 * c1) + vo[1] * (w2 * c0 - w0 * c2) + vo[2] * (w0 * c1 - w1 * c0)) \
                + 0.5 * (Wi[0] * JW0 + Wi[1] * JW1 + Wi[2] * JW2)
            # angular momentum about the mass centre: R J_c W with J_c = J - m(|c|² I - c cᵀ) (body axes)
            cc = ci[0] * ci[0] + ci[1] * ci[1] + ci[2] * ci[2]
            Jc0 = JW0 - m * (cc * Wi[0] - ci[0] * (ci[0] * Wi[0] + ci[1] * Wi[1] + ci[2] * Wi[2]))
            Jc1 = JW1 - m * (cc * Wi[1] - ci[1] * (ci[0] * Wi[0] + ci[1] * Wi[1] + ci[2] * Wi[2]))
            Jc2 = JW2 - m * (cc * Wi[2] - ci[2] * (ci[0] * Wi[0] + ci[1] * Wi[1] + ci[2] * Wi[2]))
        potential -= (m * g[0] + loads.force[i, 0]) * xi[0] + (m * g[1] + loads.force[i, 1]) * xi[1] \
            + (m * g[2] + loads.force[i, 2]) * xi[2]
        for a in range(3):
            pm[a] += m * vi[a]
        pm[3] += m * (xi[1] * vi[2] - xi[2] * vi[1]) + (Ri[0, 0] * Jc0 + Ri[0, 1] * Jc1 + Ri[0, 2] * Jc2)
        pm[4] += m * (xi[2] * vi[0] - xi[0] * vi[2]) + (Ri[1, 0] * Jc0 + Ri[1, 1] * Jc1 + Ri[1, 2] * Jc2)
        pm[5] += m * (xi[0] * vi[1] - xi[1] * vi[0]) + (Ri[2, 0] * Jc0 + Ri[2, 1] * Jc1 + Ri[2, 2] * Jc2)
        if not pointed:
            continue
        # point forces at their points x + R p
        for k in range(loads.point_start[i], loads.point_start[i + 1]):
            p, f = loads.point_body[k], loads.point_force[k]
            for a in range(3):
                potential -= f[a] * (x[i, a] + (Ri[a, 0] * p[0] + Ri[a, 1] * p[1] + Ri[a, 2] * p[2]))
        # springs: k (L - L0)^2 / 2
        for k in range(loads.spring_start[i], loads.spring_start[i + 1]):
            p, anc = loads.spring_point[k], loads.spring_anchor[k]
            L2 = 0.0
            for a in range(3):
                da = x[i, a] + (Ri[a, 0] * p[0] + Ri[a, 1] * p[1] + Ri[a, 2] * p[2]) - anc[a]
                L2 += da * da
            stretch = np.sqrt(L2) - loads.spring_rest[k]
            potential += 0.5 * loads.spring_stiffness[k] * stretch * stretch
    potential += eval_potentials(model, t, x_com, R)
    return kinetic, potential


@njit_inline
def _fold(value, k, b_min, b_max, b_final):
    if value < b_min[k]:
        b_min[k] = value
    if value > b_max[k]:
        b_max[k] = value
    b_final[k] = value


@njit_inline
def _report(model, x, R, v, W, out, row, mon, t, first):
    """Record output row ``row`` (none if ``row < 0``) and fold the reductions (when the monitor
    is active; ``first``: start them) from one evaluation of the state ``x``, ``R``, ``v``,
    ``W``'s energy, momenta and constraint residuals; False if a reported quantity is not
    finite. One evaluation, so that a kernel compiles the energy and momenta once."""
    recording = row >= 0
    if recording:  # the mass centres straight into the row
        xc, vc, pm = out.x_com[row], out.v_com[row], out.scratch
    else:
        xc, vc, pm = mon.x_com, mon.v_com, mon.scratch
    mass_centre_into(model, x, R, v, W, xc, vc)
    kin, pot = energy_momentum_into(model, t, x, R, v, W, xc, vc, pm)
    cons = model.constraints
    ok = True
    if recording:
        out.t[row] = t
        Ro, Wo = out.R_world_body, out.omega_body
        for i in range(x.shape[0]):  # element by element: an array assignment takes numba's general copy
            for a in range(3):
                Wo[row, i, a] = W[i, a]
                for b in range(3):
                    Ro[row, i, a, b] = R[i, a, b]
        out.kinetic_energy[row] = kin
        out.potential_energy[row] = pot
        ok = np.isfinite(kin) and np.isfinite(pot)
        for a in range(3):
            out.linear_momentum[row, a] = pm[a]
            out.angular_momentum[row, a] = pm[3 + a]
            ok = ok and np.isfinite(pm[a]) and np.isfinite(pm[3 + a])
        if out.constraint_residuals.shape[1] > 0:
            g = out.constraint_residuals[row]
            residuals_call(cons.kind, cons.body, cons.data, cons.row, x, R, g, out.floor, out.xa, out.Ra, out.xb,
                           out.Rb, out.s)
            for r in range(g.shape[0]):
                ok = ok and np.isfinite(g[r])
    if mon.active == 0:
        return ok
    E = kin + pot
    s = mon.start
    if first:  # the errors are measured from the energy and momenta at t = 0
        s[0] = E
        for a in range(6):
            s[1 + a] = pm[a]
    dp = np.sqrt((pm[0] - s[1]) ** 2 + (pm[1] - s[2]) ** 2 + (pm[2] - s[3]) ** 2)
    dL = np.sqrt((pm[3] - s[4]) ** 2 + (pm[4] - s[5]) ** 2 + (pm[5] - s[6]) ** 2)
    g_max = 0.0
    if mon.residuals.shape[0] > 0:
        if recording:  # the row's
            g = out.constraint_residuals[row]
        else:
            g = mon.residuals
            residuals_call(cons.kind, cons.body, cons.data, cons.row, x, R, g, mon.floor, mon.xa, mon.Ra, mon.xb,
                           mon.Rb, mon.s)
        for r in range(g.shape[0]):
            g_max = max(g_max, abs(g[r]))
            if not np.isfinite(g[r]):
                return False
    ok = ok and np.isfinite(E) and np.isfinite(dp) and np.isfinite(dL)
    _fold(E, 0, mon.b_min, mon.b_max, mon.b_final)
    _fold(abs(E - s[0]), 1, mon.b_min, mon.b_max, mon.b_final)
    _fold(dp, 2, mon.b_min, mon.b_max, mon.b_final)
    _fold(dL, 3, mon.b_min, mon.b_max, mon.b_final)
    _fold(g_max, 4, mon.b_min, mon.b_max, mon.b_final)
    for j in range(len(mon.metric_fn)):
        values = mon.m_value[j]
        mon.metric_fn[j](t, xc, R, vc, W, mon.metric_params[j], values)
        for c in range(mon.metric_size[j]):
            ok = ok and np.isfinite(values[c])
            _fold(values[c], c, mon.m_min[j], mon.m_max[j], mon.m_final[j])
    return ok


@njit_inline
def start(model, state, out, mon):
    """Before a run's first step: record row 0 (t = 0) and start the reductions from it.

    Returns 0, or :data:`STATUS_REPORT` if a reported quantity is not finite. The work is done
    by :func:`_start`, which takes the state's four arrays: it is compiled once for every
    scheme, whatever the type of the scheme's state (a scheme kernel inlines only this call).
    """
    return _start(model, state.x, state.R, state.v, state.W, out, mon)


@njit
def _start(model, x, R, v, W, out, mon):
    return 0 if _report(model, x, R, v, W, out, 0, mon, 0.0, True) else STATUS_REPORT


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
def report(model, state, out, mon, k, t):
    """After step ``k`` (0-based), which ends at ``t``: record its row when
    :func:`record_due` and fold it into the reductions when the monitor is active; False if a
    reported quantity is not finite. Inlined into the kernel: called as a function, with the
    kernel's structs, it cost ten times the recording itself."""
    due = record_due(out.every, out.n_steps, k)
    if not due and mon.active == 0:
        return True
    return _report(model, state.x, state.R, state.v, state.W, out, (k + out.every) // out.every if due else -1, mon,
                   t, False)
