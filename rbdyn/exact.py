r"""Closed-form reference solutions used by the tests and the validation manual.

The torque-free motion of a rigid body (the Euler–Poinsot problem): with
principal moments :math:`I_1, I_2, I_3` and the body-frame angular velocity
:math:`\boldsymbol\omega`, Euler's equations

.. math::

    I_1\dot\omega_1 = (I_2 - I_3)\,\omega_2\omega_3, \quad
    I_2\dot\omega_2 = (I_3 - I_1)\,\omega_3\omega_1, \quad
    I_3\dot\omega_3 = (I_1 - I_2)\,\omega_1\omega_2

have the kinetic energy :math:`2T = \sum_i I_i\omega_i^2` and the squared
angular momentum :math:`L^2 = \sum_i I_i^2\omega_i^2` as first integrals, and
their solution is a Jacobi elliptic function of time. Name the principal axes
by their moments, :math:`I_a \le I_b \le I_c` (smallest, intermediate,
largest). The sign of :math:`D = L^2 - 2TI_b` selects the family of polhodes:

* :math:`D > 0`: :math:`\boldsymbol\omega` circulates about the axis of the
  largest moment, :math:`\omega_c \propto \mathrm{dn}`, :math:`\omega_b \propto
  \mathrm{sn}`, :math:`\omega_a \propto \mathrm{cn}`;
* :math:`D < 0`: it circulates about the axis of the smallest moment,
  :math:`\omega_a \propto \mathrm{dn}`, :math:`\omega_b \propto \mathrm{sn}`,
  :math:`\omega_c \propto \mathrm{cn}`;
* :math:`D = 0`: the separatrix (parameter :math:`m = 1`), reached only
  asymptotically; the period is infinite.

The component along the intermediate axis, :math:`\omega_b \propto
\mathrm{sn}`, reverses its sign every half period: the flip of the
Dzhanibekov effect (tennis-racket theorem). The full period of
:math:`\boldsymbol\omega(t)` is :math:`4K(m)/\lambda`.

Every quantity that could cancel (:math:`2TI_c - L^2`, :math:`L^2 - 2TI_a`,
:math:`D` and :math:`1 - m`) is formed as a sum of terms of one sign, so the
solution stays accurate next to the separatrix.

References
----------
* L. D. Landau, E. M. Lifshitz, *Mechanics*, 3rd ed., Pergamon, 1976, §37.
* H. Goldstein, C. Poole, J. Safko, *Classical Mechanics*, 3rd ed.,
  Addison Wesley, 2002, §5.6.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ._errors import InputError

# scipy.special is imported where an elliptic function is evaluated, not with rbdyn: it takes
# about a fifth of a second, which every `rbdyn` command would otherwise pay.

__all__ = ["EulerPoinsot", "euler_poinsot", "euler_poinsot_omega", "euler_poinsot_period"]


@dataclasses.dataclass(frozen=True)
class EulerPoinsot:
    r"""The elliptic-function form of a torque-free motion, from :func:`euler_poinsot`.

    With :math:`u = \lambda t + u_0` and :math:`(\mathrm{sn}, \mathrm{cn},
    \mathrm{dn})` the Jacobi elliptic functions of parameter ``m``,
    ``omega[cn_axis] = amplitude[cn_axis] * cn(u)``,
    ``omega[sn_axis] = amplitude[sn_axis] * sn(u)`` and
    ``omega[dn_axis] = amplitude[dn_axis] * dn(u)`` (signed amplitudes).

    Attributes
    ----------
    family : str
        ``"major"`` (circulation about the axis of the largest moment),
        ``"minor"`` (about the smallest), ``"separatrix"``, or ``"steady"``
        (a permanent rotation about a principal axis: ``omega`` is constant).
    cn_axis, sn_axis, dn_axis : int
        Body axes (0, 1, 2) carrying cn, sn and dn; ``sn_axis`` is the axis of
        the intermediate moment.
    amplitude : ndarray, (3,)
        Signed amplitudes per body axis (for ``"steady"``: the constant
        ``omega``).
    rate : float
        :math:`\lambda`, rad/s of the elliptic argument.
    m : float
        Parameter :math:`m = k^2` in ``[0, 1]``.
    u0 : float
        Elliptic argument at ``t = 0``.
    period : float
        Full period :math:`4K(m)/\lambda` of :math:`\boldsymbol\omega(t)`;
        ``inf`` on the separatrix and for a steady rotation about the
        intermediate axis. For a steady rotation about the axis of the
        largest or smallest moment it is the limit :math:`m \to 0`, the period
        :math:`2\pi/\lambda` of small wobbles about that rotation.
    energy2 : float
        :math:`2T = \sum_i I_i\omega_i^2`.
    momentum2 : float
        :math:`L^2 = \sum_i I_i^2\omega_i^2`.
    """

    family: str
    cn_axis: int
    sn_axis: int
    dn_axis: int
    amplitude: np.ndarray
    rate: float
    m: float
    u0: float
    period: float
    energy2: float
    momentum2: float


def _moments(inertia_diag) -> np.ndarray:
    try:
        I = np.array(inertia_diag, dtype=float)
    except (TypeError, ValueError):
        raise InputError("inertia_diag", f"must be 3 principal moments of inertia, got {inertia_diag!r}") from None
    if I.shape != (3,):
        raise InputError(
            "inertia_diag",
            f"must be the 3 principal moments (shape (3,)), got shape {I.shape}; "
            "express the angular velocity in the principal axes first",
        )
    if not np.all(np.isfinite(I)) or np.any(I <= 0.0):
        raise InputError("inertia_diag", f"must be 3 finite positive numbers, got {I.tolist()}")
    return I


def _vector(value, fld: str) -> np.ndarray:
    try:
        w = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(fld, f"must be 3 numbers (body-frame angular velocity), got {value!r}") from None
    if w.shape != (3,):
        raise InputError(fld, f"must have shape (3,), got shape {w.shape}")
    if not np.all(np.isfinite(w)):
        raise InputError(fld, "must be finite numbers (no nan or inf)")
    return w


def _parity(p) -> int:
    """+1 for an even permutation of (0, 1, 2), -1 for an odd one."""
    return 1 if (p[0], p[1], p[2]) in ((0, 1, 2), (1, 2, 0), (2, 0, 1)) else -1


def _phase(sn0: float, cn0: float, m: float, m1: float) -> float:
    r"""The argument ``u`` in ``(-2K, 2K]`` with ``sn(u|m) : cn(u|m) = sn0 : cn0``.

    Directly :math:`u = F(\varphi \mid m)`, :math:`\varphi = \operatorname{atan2}(\mathrm{sn}, \mathrm{cn})`;
    near :math:`\varphi = \pm\pi/2` with :math:`m \to 1` that integral is ill-conditioned in
    :math:`m`, and :math:`u = \pm(K - F(\theta \mid m))` with the complementary amplitude
    :math:`\theta = \operatorname{atan2}(\mathrm{cn}, \sqrt{1-m}\,|\mathrm{sn}|)` (from
    :math:`\mathrm{sn}(K - u) = \mathrm{cd}\,u`, :math:`\mathrm{cn}(K - u) = \sqrt{1-m}\,\mathrm{sd}\,u`)
    is used instead. The form whose :math:`\Delta^2 = 1 - m\sin^2` is larger is taken
    (the two :math:`\Delta` multiply to :math:`\sqrt{1-m}`).
    """
    from scipy.special import ellipkinc, ellipkm1

    r = math.hypot(sn0, cn0)
    s, c = sn0 / r, cn0 / r
    delta2 = c * c + m1 * s * s  # 1 - m sin^2(phi), without cancellation
    if m1 == 0.0 or delta2 * delta2 >= m1:
        return float(ellipkinc(math.atan2(s, c), m))
    theta = math.atan2(c, math.sqrt(m1) * abs(s))
    v = float(ellipkm1(m1)) - float(ellipkinc(theta, m))
    return v if s >= 0.0 else -v


def euler_poinsot(inertia_diag, omega0_body) -> EulerPoinsot:
    r"""Elliptic-function parameters of the torque-free motion from ``omega0_body``.

    Parameters
    ----------
    inertia_diag : array_like, (3,)
        Principal moments of inertia :math:`I_1, I_2, I_3` (any order, > 0).
    omega0_body : array_like, (3,)
        Angular velocity at ``t = 0`` in the principal axes.

    Returns
    -------
    EulerPoinsot

    Raises
    ------
    InputError
        If an argument is not 3 finite numbers, or a moment is not positive.

    Notes
    -----
    With :math:`P = 2TI_c - L^2 = \sum_i I_i(I_c - I_i)\omega_i^2`,
    :math:`Q = L^2 - 2TI_a = \sum_i I_i(I_i - I_a)\omega_i^2` and
    :math:`D = L^2 - 2TI_b`, the amplitudes are
    :math:`A_a^2 = P/(I_a(I_c - I_a))`, :math:`A_c^2 = Q/(I_c(I_c - I_a))` and,
    for :math:`D \ge 0`, :math:`A_b^2 = P/(I_b(I_c - I_b))`,
    :math:`\lambda^2 = (I_c - I_b)Q/(I_aI_bI_c)`,
    :math:`m = (I_b - I_a)P/((I_c - I_b)Q)`; for :math:`D < 0` exchange the
    roles of :math:`a` and :math:`c` (Landau & Lifshitz, §37):
    :math:`A_b^2 = Q/(I_b(I_b - I_a))`,
    :math:`\lambda^2 = (I_b - I_a)P/(I_aI_bI_c)`,
    :math:`m = (I_c - I_b)Q/((I_b - I_a)P)`. In both cases
    :math:`1 - m = (I_c - I_a)|D| / ((I_c - I_b)Q)` resp.
    :math:`/((I_b - I_a)P)`. The signs follow from Euler's equations:
    the product of the signs of the cn, sn and dn amplitudes is the parity of
    the permutation that sorts the moments; the dn component keeps the sign
    of its initial value, the sn amplitude is positive (off the separatrix),
    and :math:`u_0` is the incomplete elliptic integral
    :math:`F(\varphi_0 \mid m)` of the initial amplitude angle
    :math:`\varphi_0 = \operatorname{atan2}(\mathrm{sn}\,u_0, \mathrm{cn}\,u_0)`.

    References
    ----------
    * L. D. Landau, E. M. Lifshitz, *Mechanics*, 3rd ed., Pergamon, 1976, §37.
    * H. Goldstein, C. Poole, J. Safko, *Classical Mechanics*, 3rd ed.,
      Addison Wesley, 2002, §5.6.
    """
    from scipy.special import ellipkm1

    I = _moments(inertia_diag)
    w = _vector(omega0_body, "omega0_body")
    order = np.argsort(I, kind="stable")
    a, b, c = (int(k) for k in order)
    Ia, Ib, Ic = I[a], I[b], I[c]
    wa2, wb2, wc2 = w[a] ** 2, w[b] ** 2, w[c] ** 2
    energy2 = float(np.sum(I * w * w))
    momentum2 = float(np.sum((I * w) ** 2))
    P = Ia * (Ic - Ia) * wa2 + Ib * (Ic - Ib) * wb2  # 2T I_c - L^2 >= 0
    Q = Ib * (Ib - Ia) * wb2 + Ic * (Ic - Ia) * wc2  # L^2 - 2T I_a >= 0
    D = Ic * (Ic - Ib) * wc2 - Ia * (Ib - Ia) * wa2  # L^2 - 2T I_b
    amp_a = math.sqrt(P / (Ia * (Ic - Ia))) if P > 0.0 else 0.0
    amp_c = math.sqrt(Q / (Ic * (Ic - Ia))) if Q > 0.0 else 0.0

    if D >= 0.0 and Ic > Ib:
        cn_axis, dn_axis = a, c
        amp_b = math.sqrt(P / (Ib * (Ic - Ib)))
        rate = math.sqrt((Ic - Ib) * Q / (Ia * Ib * Ic))
        m1 = (Ic - Ia) * D / ((Ic - Ib) * Q) if Q > 0.0 else 1.0
        m = (Ib - Ia) * P / ((Ic - Ib) * Q) if Q > 0.0 else 0.0
    elif D <= 0.0 and Ib > Ia:
        cn_axis, dn_axis = c, a
        amp_b = math.sqrt(Q / (Ib * (Ib - Ia)))
        rate = math.sqrt((Ib - Ia) * P / (Ia * Ib * Ic))
        m1 = (Ic - Ia) * -D / ((Ib - Ia) * P) if P > 0.0 else 1.0
        m = (Ic - Ib) * Q / ((Ib - Ia) * P) if P > 0.0 else 0.0
    else:  # two equal moments and omega in their plane, or all three equal
        cn_axis, dn_axis, amp_b, rate, m1, m = a, c, 0.0, 0.0, 1.0, 0.0
    amp = np.zeros(3)
    amp[a], amp[b], amp[c] = amp_a, amp_b, amp_c

    steady = (P == 0.0) or (Q == 0.0) or (w[a] == 0.0 and w[c] == 0.0) or rate == 0.0
    if D == 0.0 or m1 <= 0.0:
        m, m1, family = 1.0, 0.0, "separatrix"
    else:
        m = min(max(m, 0.0), 1.0)
        family = "major" if dn_axis == c else "minor"
    period = 4.0 * float(ellipkm1(m1)) / rate if (rate > 0.0 and m1 > 0.0) else math.inf
    if steady:
        return EulerPoinsot("steady", cn_axis, b, dn_axis, w.copy(), float(rate), float(m), 0.0, float(period),
                            energy2, momentum2)

    # Signs: dn keeps the sign of its initial value, and sign(cn) * sign(sn) * sign(dn) is
    # the parity of the sorting permutation. Off the separatrix a shift of u by 2K flips cn
    # and sn together, so the sn amplitude is taken positive and u0 absorbs the rest. On the
    # separatrix cn > 0 for every u: cn takes the sign of its initial value instead.
    parity = _parity((a, b, c))
    s_dn = 1.0 if w[dn_axis] > 0.0 else -1.0
    if family == "separatrix":
        s_cn = 1.0 if w[cn_axis] > 0.0 else -1.0
        s_sn = parity * s_cn * s_dn
    else:
        s_sn = 1.0
        s_cn = parity * s_dn
    amp[cn_axis] *= s_cn
    amp[b] *= s_sn
    amp[dn_axis] *= s_dn
    u0 = _phase(w[b] / amp[b], w[cn_axis] / amp[cn_axis], m, m1)
    return EulerPoinsot(family, cn_axis, b, dn_axis, amp, float(rate), float(m), u0, float(period), energy2, momentum2)


def euler_poinsot_omega(inertia_diag, omega0_body, t) -> np.ndarray:
    r"""Exact body-frame angular velocity of a torque-free rigid body.

    Parameters
    ----------
    inertia_diag : array_like, (3,)
        Principal moments of inertia (any order, > 0).
    omega0_body : array_like, (3,)
        Angular velocity at ``t = 0`` in the principal axes (rad/s).
    t : float or array_like
        Times (s), finite.

    Returns
    -------
    ndarray, shape ``np.shape(t) + (3,)``
        :math:`\boldsymbol\omega(t)` in the principal axes.

    Raises
    ------
    InputError
        If ``inertia_diag`` or ``omega0_body`` is not 3 finite numbers (moments
        > 0) or ``t`` holds a non-finite value; the message names the argument.

    See Also
    --------
    euler_poinsot : the elliptic-function parameters used here.

    Notes
    -----
    :math:`\omega_{cn} = A_{cn}\,\mathrm{cn}(u \mid m)`,
    :math:`\omega_{sn} = A_{sn}\,\mathrm{sn}(u \mid m)`,
    :math:`\omega_{dn} = A_{dn}\,\mathrm{dn}(u \mid m)`,
    :math:`u = \lambda t + u_0`, evaluated with ``scipy.special.ellipj``.

    References
    ----------
    * L. D. Landau, E. M. Lifshitz, *Mechanics*, 3rd ed., Pergamon, 1976, §37.
    * H. Goldstein, C. Poole, J. Safko, *Classical Mechanics*, 3rd ed.,
      Addison Wesley, 2002, §5.6.

    Examples
    --------
    >>> import numpy as np
    >>> from rbdyn import exact
    >>> w = exact.euler_poinsot_omega([0.8, 0.7, 0.1], [0.1, 5.0, 0.1], [0.0, 1.0])
    >>> bool(np.allclose(w[0], [0.1, 5.0, 0.1]))
    True
    """
    from scipy.special import ellipj

    sol = euler_poinsot(inertia_diag, omega0_body)
    try:
        tt = np.asarray(t, dtype=float)
    except (TypeError, ValueError):
        raise InputError("t", f"must be a time or an array of times, got {t!r}") from None
    if not np.all(np.isfinite(tt)):
        raise InputError("t", "must be finite times (no nan or inf)")
    out = np.empty(tt.shape + (3,))
    if sol.family == "steady":
        out[...] = sol.amplitude
        return out
    sn, cn, dn, _ = ellipj(sol.rate * tt + sol.u0, sol.m)
    out[..., sol.cn_axis] = sol.amplitude[sol.cn_axis] * cn
    out[..., sol.sn_axis] = sol.amplitude[sol.sn_axis] * sn
    out[..., sol.dn_axis] = sol.amplitude[sol.dn_axis] * dn
    return out


def euler_poinsot_period(inertia_diag, omega0_body) -> float:
    r"""Full period :math:`4K(m)/\lambda` of the torque-free :math:`\boldsymbol\omega(t)`.

    For the tumbling near the intermediate axis this is the period of the
    Dzhanibekov flip: the intermediate component reverses every half period
    and is back to its initial value after a full one.

    Parameters
    ----------
    inertia_diag : array_like, (3,)
        Principal moments of inertia (any order, > 0).
    omega0_body : array_like, (3,)
        Angular velocity at ``t = 0`` in the principal axes (rad/s).

    Returns
    -------
    float
        The period (s); ``inf`` on the separatrix. For a steady rotation about
        the axis of the largest or smallest moment, the period of small
        wobbles about it (the limit :math:`m \to 0`, :math:`2\pi/\lambda`).

    Raises
    ------
    InputError
        If an argument is not 3 finite numbers or a moment is not positive.

    References
    ----------
    * L. D. Landau, E. M. Lifshitz, *Mechanics*, 3rd ed., Pergamon, 1976, §37.
    """
    return euler_poinsot(inertia_diag, omega0_body).period
