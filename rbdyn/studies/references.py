r"""What a study's errors are measured against, and how.

For each variant of the scenario :func:`plan` chooses the reference from the system itself (so a
variant with other initial conditions gets its own), the first that applies:

.. list-table::
   :header-rows: 1

   * - system
     - reference
     - error of a run (``error`` column)
   * - one body on a rod from its mass centre to a fixed point, released from rest, uniform
       gravity, no other load (``pendulum-solfec``)
     - the exact period :math:`T` (:func:`rbdyn.verify.pendulum_period`)
     - the largest difference, in seconds, between the times at which the vertical velocity
       changes sign (read off every recorded row by :func:`rbdyn.verify.sign_changes`,
       interpolated) and the exact ones, :math:`jT/4`, over the sign changes before
       :math:`t_\mathrm{end} - T/8` (the validation page's period error, as a phase)
   * - free bodies: no constraint, no load but uniform gravity (``boxes-simple``,
       ``boxes-complex``)
     - Euler–Poinsot in closed form (:func:`rbdyn.exact.euler_poinsot_omega`) for a body whose
       inertia is diagonal in its body axes, DOP853 (:func:`rbdyn.verify.rigid_body_reference`)
       otherwise
     - the largest :math:`|W - W_\mathrm{ref}|` (rad/s) over the recorded rows and the bodies (the
       mass centre's parabola is exact for every scheme of order 2 or more)
   * - one body turning about a fixed point (a pivot, or a spherical joint to the world), no load
       but uniform gravity (``heavy-top-solfec``, ``heavy-top-kynema``)
     - DOP853 (:func:`rbdyn.verify.heavy_top_reference`, rtol = atol = 1e-12)
     - the largest rotation angle (rad) between :math:`\Lambda` and :math:`\Lambda_\mathrm{ref}`
       over the recorded rows
   * - two point-like bodies on two rods, the first to a fixed point, released from rest in a
       vertical plane :math:`y` = const under gravity along :math:`-z` (``double-pendulum``)
     - DOP853 (:func:`rbdyn.verify.double_pendulum_reference`, rtol = atol = 1e-13)
     - the largest distance (m) between a body's mass centre and the reference's over the
       recorded rows
   * - anything else
     - a *reference run*: by default the most accurate of the study's schemes (the highest order of
       the literature table, :func:`rbdyn.verify.literature`, with constraints the order with
       constraints; the first listed among equals) at a quarter of the smallest step, with the
       scenario file's settings for it
     - the largest distance (m) between a body's mass centre and the reference run's over the
       recorded rows (the reference interpolated by cubic Hermite interpolation of its positions
       and velocities)

A user's ``measure(trajectory, system)`` replaces all of these (see :func:`rbdyn.study`). Every
error is a pure function of the run and its reference, so it is the same number, to the bit,
wherever the run ran.

References
----------
* E. Hairer, S. P. Nørsett, G. Wanner, *Solving Ordinary Differential Equations I*, 2nd ed.,
  Springer, 1993, Sect. II.6 (dense output, Hermite interpolation) and II.10 (DOP853).
* L. D. Landau, E. M. Lifshitz, *Mechanics*, 3rd ed., Pergamon, 1976, §11 (pendulum) and §37
  (Euler–Poinsot).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .. import exact, verify
from .._errors import InputError, short_repr
from ..constraints import Rod, SphericalJoint
from ..integrators import schemes as registered_schemes

__all__ = ["Plan", "Unmeasurable", "request", "plan", "error", "run_error"]

#: What the study reports when the error comes from the user's measure.
MEASURE = "measure"


class Unmeasurable(Exception):
    """A finished run whose error cannot be measured (too few crossings, a non-finite value): its
    row is recorded as failed with this message."""


@dataclasses.dataclass(frozen=True)
class Plan:
    """The reference of one variant.

    Attributes
    ----------
    kind : str
        ``"pendulum"``, ``"free"``, ``"top"``, ``"double-pendulum"``, ``"run"`` or ``"measure"``.
    label : str
        What the CSV's ``reference`` column says.
    quantity : str
        What the error is.
    unit : str
    scheme, dt : str, float
        The reference run's scheme and step (kind ``"run"``).
    note : str
        Why a reference run and not a closed form or DOP853.
    """

    kind: str
    label: str
    quantity: str
    unit: str
    scheme: str | None = None
    dt: float | None = None
    note: str = ""


@dataclasses.dataclass(frozen=True)
class Request:
    """What the user asked for: ``"auto"``, or a reference run (scheme and step, or None for the
    default)."""

    mode: str
    scheme: str | None = None
    dt: float | None = None


def request(reference, names, measure) -> Request:
    """The ``reference`` argument of :func:`rbdyn.study`, checked: ``None``/``"auto"``, ``"run"``, or
    ``(scheme, dt)``."""
    if reference is None or reference == "auto":
        return Request("auto")
    if measure is not None:
        raise InputError("reference", "is not used with a measure (the measure gives the error); leave it out")
    if reference == "run":
        return Request("run")
    if isinstance(reference, (tuple, list)) and len(reference) == 2:
        scheme, dt = reference
        if not isinstance(scheme, str) or scheme not in registered_schemes():
            raise InputError("reference[0]", f"unknown scheme {short_repr(scheme)}; allowed: "
                                             f"{', '.join(registered_schemes())}")
        if isinstance(dt, bool) or not isinstance(dt, (int, float, np.integer, np.floating)) \
                or not math.isfinite(float(dt)) or float(dt) <= 0:
            raise InputError("reference[1]", f"the reference run's step must be a finite number > 0, got "
                                             f"{short_repr(dt)}")
        return Request("run", scheme, float(dt))
    raise InputError("reference", "must be 'auto', 'run' or a reference run (scheme, dt), got "
                                  f"{short_repr(reference)}")


def _rank(name: str, constrained: bool) -> int:
    row = verify.literature().get(name)
    if row is None:
        return 0
    return row.constrained_order if constrained and row.constrained_order is not None else row.order


def plan(system, t_end: float, names, dts, req: Request, measure) -> Plan:
    """The reference of ``system`` (a variant) for a study of ``names`` at steps ``dts``."""
    if measure is not None:
        label = f"measure {getattr(measure, '__qualname__', type(measure).__name__)}"
        return Plan(MEASURE, label, "the measure's error", "")
    note = "the reference run was asked for"
    if req.mode == "auto":
        found = _pendulum(system, t_end) or _free(system) or _top(system) or _double_pendulum(system)
        if isinstance(found, Plan):
            return found
        note = found or "no closed form or DOP853 reference of rbdyn.verify applies to this system"
    scheme = req.scheme
    if scheme is None:
        constrained = bool(system.constraints)
        scheme = max(names, key=lambda n: (_rank(n, constrained), -list(names).index(n)))
    elif system.constraints and not registered_schemes()[scheme].supports_constraints:
        raise InputError("reference[0]", f"{scheme} does not handle constraints, which this scenario has")
    dt = req.dt if req.dt is not None else min(dts) / 4
    return Plan("run", f"run {scheme} dt={dt!r}", "largest mass-centre distance to the reference run", "m",
                scheme, dt, note)


# -- the systems with a reference ----------------------------------------------------------------
def _unloaded(system) -> bool:
    return not system.loads


def _pendulum(system, t_end):
    if len(system.bodies) != 1 or not _unloaded(system) or len(system.constraints) != 1:
        return None
    (body,), (rod,) = system.bodies, system.constraints
    if not isinstance(rod, Rod) or rod.other is not None or body.pivoted or np.any(rod.point_body != 0.0):
        return None
    g = float(np.linalg.norm(system.gravity))
    if g == 0.0 or np.any(body.velocity != 0.0):
        return None
    d = body.position - rod.other_point
    length = float(np.linalg.norm(d))
    theta_max = math.acos(max(-1.0, min(1.0, float(d @ system.gravity) / (length * g))))
    if not 1e-6 < theta_max < math.pi - 1e-6:
        return None
    period = verify.pendulum_period(length, g, theta_max)
    if int((t_end - period / 8) // (period / 4)) < 1:
        return ("a pendulum, but the run is shorter than 3/8 of its period "
                f"({period:.6g} s): no sign change of the vertical velocity to time")
    return Plan("pendulum", f"rbdyn.verify.pendulum_period (T = {period!r} s)",
                "largest error of the times at which the vertical velocity changes sign", "s")


def _free(system):
    if system.constraints or not _unloaded(system) or any(b.pivoted for b in system.bodies):
        return None
    diagonal = all(np.count_nonzero(b.inertia - np.diag(np.diag(b.inertia))) == 0 for b in system.bodies)
    label = ("closed form (rbdyn.exact.euler_poinsot_omega)" if diagonal else
             "DOP853 (rbdyn.verify.rigid_body_reference, rtol 1e-12)")
    return Plan("free", label, "largest |W - W_ref| over the rows and the bodies", "rad/s")


def _fixed_point(system):
    """(inertia about the fixed point, mass centre from it, body frame) of a top, or None."""
    if len(system.bodies) != 1 or not _unloaded(system):
        return None
    (body,) = system.bodies
    if body.pivoted and not system.constraints:
        return body.inertia, body.com_body
    if not body.pivoted and len(system.constraints) == 1:
        (joint,) = system.constraints
        if isinstance(joint, SphericalJoint) and joint.other is None:
            c = -np.asarray(joint.point_body, dtype=float)  # the mass centre from the joint's point
            return body.inertia + body.mass * (np.dot(c, c) * np.eye(3) - np.outer(c, c)), c
    return None


def _top(system):
    if _fixed_point(system) is None:
        return None
    return Plan("top", "DOP853 (rbdyn.verify.heavy_top_reference, rtol 1e-12)",
                "largest rotation angle between the orientation and the reference's", "rad")


def _double_pendulum(system):
    if len(system.bodies) != 2 or not _unloaded(system) or len(system.constraints) != 2:
        return None
    upper, lower = system.bodies
    first, second = system.constraints
    if not (isinstance(first, Rod) and isinstance(second, Rod)) or upper.pivoted or lower.pivoted:
        return None
    if not (first.body == upper.name and first.other is None and second.body == lower.name
            and second.other == upper.name):
        return None
    if np.any(first.point_body != 0) or np.any(second.point_body != 0) or np.any(second.other_point != 0):
        return None
    g = system.gravity
    pivot = first.other_point
    planar = upper.position[1] == pivot[1] and lower.position[1] == pivot[1]
    if g[0] != 0 or g[1] != 0 or not g[2] < 0 or not planar or np.any(upper.velocity != 0) \
            or np.any(lower.velocity != 0):
        return None
    return Plan("double-pendulum", "DOP853 (rbdyn.verify.double_pendulum_reference, rtol 1e-13)",
                "largest mass-centre distance to the reference", "m")


# -- the errors ----------------------------------------------------------------------------------
def _angles(R, R_ref) -> np.ndarray:
    """Rotation angle of ``R_refᵀ R`` for every row: atan2 of the sine (from the skew part) and the
    cosine (from the trace), accurate for small angles too."""
    A = np.einsum("nji,njk->nik", R_ref, R)
    sin = 0.5 * np.linalg.norm(np.stack([A[:, 2, 1] - A[:, 1, 2], A[:, 0, 2] - A[:, 2, 0],
                                         A[:, 1, 0] - A[:, 0, 1]], 1), axis=1)
    cos = 0.5 * (np.trace(A, axis1=1, axis2=2) - 1.0)
    return np.arctan2(sin, cos)


def error(plan_: Plan, traj, system) -> float:
    """The error of a finished run against a closed form or DOP853 reference (kinds other than
    ``"run"`` and ``"measure"``); raises :class:`Unmeasurable` when it cannot be measured."""
    t = traj.t
    if plan_.kind == "pendulum":
        (body,), (rod,) = system.bodies, system.constraints
        g = float(np.linalg.norm(system.gravity))
        d = body.position - rod.other_point
        length = float(np.linalg.norm(d))
        theta_max = math.acos(max(-1.0, min(1.0, float(d @ system.gravity) / (length * g))))
        period = verify.pendulum_period(length, g, theta_max)
        up = -system.gravity / g
        crossings = verify.sign_changes(t, traj.v_com[:, 0] @ up)
        n = int((t[-1] - period / 8) // (period / 4))
        if n < 1:
            raise Unmeasurable("the run is shorter than 3/8 of the pendulum's period")
        if crossings.size < n:
            raise Unmeasurable(f"the vertical velocity changed sign {crossings.size} times before "
                               f"{t[-1] - period / 8:.6g} s; the exact motion changes it {n} times")
        return float(np.max(np.abs(crossings[:n] - np.arange(1, n + 1) * (period / 4))))
    if plan_.kind == "free":
        worst = 0.0
        for b, body in enumerate(system.bodies):
            J = body.inertia
            if np.count_nonzero(J - np.diag(np.diag(J))) == 0:
                W_ref = exact.euler_poinsot_omega(np.diag(J), body.omega_body, t)
            else:
                W_ref = verify.rigid_body_reference(J, body.R_world_body, body.omega_body, t).omega_body
            worst = max(worst, float(np.max(np.linalg.norm(traj.omega_body[:, b] - W_ref, axis=1))))
        return worst
    if plan_.kind == "top":
        (body,) = system.bodies
        J, c = _fixed_point(system)
        ref = verify.heavy_top_reference(J, c, body.mass, system.gravity, body.R_world_body, body.omega_body, t)
        return float(np.max(_angles(traj.R_world_body[:, 0], ref.R_world_body)))
    if plan_.kind == "double-pendulum":
        upper, lower = system.bodies
        pivot = system.constraints[0].other_point
        d1, d2 = upper.position - pivot, lower.position - upper.position
        theta0 = (math.atan2(d1[0], -d1[2]), math.atan2(d2[0], -d2[2]))
        ref = verify.double_pendulum_reference(t, theta0, (0.0, 0.0), upper.mass, lower.mass,
                                               float(np.linalg.norm(d1)), float(np.linalg.norm(d2)),
                                               -float(system.gravity[2]))
        return float(max(np.max(np.linalg.norm(traj.x_com[:, 0] - (pivot + ref.upper), axis=1)),
                         np.max(np.linalg.norm(traj.x_com[:, 1] - (pivot + ref.lower), axis=1))))
    raise ValueError(f"no closed-form error for a reference of kind {plan_.kind!r}")


def run_error(traj, ref_t, ref_x, ref_v) -> float:
    """The largest distance between the mass centres of ``traj`` and those of a reference run
    (times ``ref_t``, positions ``ref_x`` and velocities ``ref_v``, rows × bodies × 3), the reference
    interpolated at the run's times by the cubic Hermite interpolant of its positions and
    velocities (exact where the times coincide)."""
    t = traj.t
    if t[-1] > ref_t[-1] * (1 + 1e-12):
        raise Unmeasurable(f"the run ends at {t[-1]!r} s, after the reference run ({ref_t[-1]!r} s)")
    k = np.clip(np.searchsorted(ref_t, t, side="right") - 1, 0, ref_t.size - 2)
    h = ref_t[k + 1] - ref_t[k]
    s = np.clip((t - ref_t[k]) / h, 0.0, 1.0)[:, None, None]
    h = h[:, None, None]
    h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
    h01, h11 = 3 * s**2 - 2 * s**3, s**3 - s**2
    x_ref = h00 * ref_x[k] + h10 * h * ref_v[k] + h01 * ref_x[k + 1] + h11 * h * ref_v[k + 1]
    return float(np.max(np.linalg.norm(traj.x_com - x_ref, axis=2)))
