"""Rigid bodies: their inertia, initial pose and velocity, validated on construction.

Frames and names follow the book's notation page:

* the *body origin* is the mass centre of a free body, and the fixed pivot
  of a body that turns about a fixed point;
* ``inertia`` is the body-frame inertia tensor about the body origin;
* ``com_body`` is the mass centre relative to the body origin, in the body
  frame (zero for a free body);
* ``R_world_body`` maps body components to world components, ``omega_body``
  is the angular velocity in the body frame (``omega_world = R omega_body``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .. import so3
from .._errors import InputError
from .._errors import short_repr as _short  # errors are one line
from .._validate import finite_array, numbers, positive, store

__all__ = ["RigidBody", "box_inertia"]


def _inertia(value, fld: str, what: str = "") -> np.ndarray:
    arr = numbers(value, fld, "3 principal moments or a 3x3 matrix of numbers")
    if arr.shape == (3,):
        arr = np.diag(arr)
    J = finite_array(arr, (3, 3), fld)
    scale = np.max(np.abs(J))
    if np.max(np.abs(J - J.T)) > 1e-12 * max(scale, 1e-300):
        raise InputError(fld, "must be a symmetric 3x3 matrix (or 3 principal moments)")
    overflow = InputError(fld, f"{what}must be of moderate size: its principal moments or its inverse overflow")
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            eig = np.linalg.eigvalsh(0.5 * (J + J.T))
    except np.linalg.LinAlgError:
        raise overflow from None
    if not np.all(np.isfinite(eig)):
        raise overflow
    if eig[0] <= 0.0:
        raise InputError(fld, f"{what}must be positive definite, got principal moments {eig.tolist()}")
    # A real mass distribution has I1 <= I2 + I3 (any point of reference).
    if eig[2] > (eig[0] + eig[1]) * (1.0 + 1e-12):
        raise InputError(
            fld,
            f"{what}principal moments must satisfy the triangle inequality "
            f"(largest <= sum of the other two), got {eig.tolist()}",
        )
    if not math.isfinite(1.0 / eig[0]):  # the kernels use the inverse
        raise overflow
    return 0.5 * (J + J.T)


def _rotation(quat_wxyz, R_world_body, rotvec, fld: str) -> np.ndarray:
    given = [n for n, v in (("quat_wxyz", quat_wxyz), ("R_world_body", R_world_body), ("rotvec", rotvec)) if v is not None]
    if len(given) > 1:
        raise InputError(fld, f"give one orientation, not {' and '.join(given)}")
    if quat_wxyz is not None:
        q = finite_array(quat_wxyz, (4,), f"{fld}.quat_wxyz")
        big = np.max(np.abs(q))
        if not big > 0.0:
            raise InputError(f"{fld}.quat_wxyz", "must be a non-zero quaternion (w, x, y, z)")
        q = q / big  # scaled first: the norm of a quaternion of huge components would overflow
        n = np.linalg.norm(q)
        if n * big < 1e-12:
            raise InputError(f"{fld}.quat_wxyz", "must be a non-zero quaternion (w, x, y, z)")
        return so3.quat_wxyz_to_matrix(q / n)
    if R_world_body is not None:
        R = finite_array(R_world_body, (3, 3), f"{fld}.R_world_body")
        if so3.orthonormality_error(R) > 1e-9:
            raise InputError(
                f"{fld}.R_world_body",
                "must be a rotation matrix (orthonormal to 1e-9 with determinant +1)",
            )
        return R
    if rotvec is not None:
        R = so3.exp(finite_array(rotvec, (3,), f"{fld}.rotvec"))
        if not np.all(np.isfinite(R)):  # |rotvec|^2 overflowed
            raise InputError(f"{fld}.rotvec", "its length (an angle in radians) must be of moderate size, e.g. below 1e6")
        return R
    return np.eye(3)


def box_inertia(mass: float, size: Sequence[float]) -> np.ndarray:
    """Inertia about the mass centre of a uniform box with edge lengths ``size``.

    Raises :class:`~rbdyn.InputError` (field ``mass`` or ``size``) unless ``mass`` is a finite
    number > 0 and ``size`` three finite numbers > 0. The result may overflow to inf for edges
    beyond about 1e154; :class:`RigidBody` refuses such an inertia.
    """
    m = positive(mass, "mass")
    size = finite_array(size, (3,), "size")
    if np.any(size <= 0):
        raise InputError("size", f"edge lengths must be > 0, got {size.tolist()}")
    a, b, c = (float(s) for s in size)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.diag([b * b + c * c, c * c + a * a, a * a + b * b]) * (m / 12.0)


@dataclass(frozen=True, eq=False)
class RigidBody:
    """A rigid body and its initial state.

    Parameters
    ----------
    name : str
        Unique name, used for output columns (``NAME.x`` ...).
    mass : float
        Mass, > 0.
    inertia : array_like, (3, 3) or (3,)
        Body-frame inertia tensor about the mass centre or, when ``pivot`` is
        given, about the pivot. Three numbers mean a diagonal tensor.
    position : array_like, (3,)
        Initial mass-centre position (world). Not used with ``pivot``.
    velocity : array_like, (3,)
        Initial mass-centre velocity (world). Not used with ``pivot``.
    quat_wxyz, R_world_body, rotvec : array_like, optional
        Initial orientation (at most one; identity by default).
    omega_body : array_like, (3,)
        Initial angular velocity in the body frame.
    pivot : array_like, (3,), optional
        A fixed world point about which the body turns. Its translation is
        then not a degree of freedom.
    com_body : array_like, (3,), optional
        Mass centre relative to the pivot, body frame (pivoted bodies only).
    """

    name: str
    mass: float
    inertia: np.ndarray
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    quat_wxyz: np.ndarray | None = None
    R_world_body: np.ndarray | None = None
    rotvec: np.ndarray | None = None
    omega_body: np.ndarray = field(default_factory=lambda: np.zeros(3))
    pivot: np.ndarray | None = None
    com_body: np.ndarray | None = None

    def __post_init__(self):
        if (not isinstance(self.name, str) or not self.name or not self.name.isprintable()
                or any(c in self.name for c in " ,.\"'") or len(self.name) > 200):
            raise InputError("body.name", "must be a CSV column name: 1 to 200 printable characters other than "
                                          f"space, comma, dot and quotes, got {_short(self.name)}")
        where = f"body.{self.name}"
        store(self, mass=positive(self.mass, f"{where}.mass"))
        store(self, inertia=_inertia(self.inertia, f"{where}.inertia"))
        store(self, omega_body=finite_array(self.omega_body, (3,), f"{where}.omega_body"))
        R = _rotation(self.quat_wxyz, self.R_world_body, self.rotvec, where)
        store(self, R_world_body=R)
        store(self, quat_wxyz=so3.matrix_to_quat_wxyz(R))
        store(self, rotvec=None)
        if self.pivot is None:
            if self.com_body is not None:
                raise InputError(f"{where}.com_body", "is only allowed with a pivot (a free body's origin is its mass centre)")
            store(self, com_body=np.zeros(3))
            store(self, position=finite_array(self.position, (3,), f"{where}.position"))
            store(self, velocity=finite_array(self.velocity, (3,), f"{where}.velocity"))
        else:
            store(self, pivot=finite_array(self.pivot, (3,), f"{where}.pivot"))
            store(self, com_body=finite_array(self.com_body if self.com_body is not None else np.zeros(3), (3,), f"{where}.com_body"))
            # A real body's inertia about its mass centre is a valid inertia
            # tensor too; J about the pivot alone does not guarantee it.
            with np.errstate(over="ignore", invalid="ignore"):
                J_com = self.inertia_com
                position = self.pivot + R @ self.com_body
            # derived quantities are named by the input that makes them overflow
            if not np.all(np.isfinite(J_com)):
                raise InputError(f"{where}.com_body", "with this mass the inertia about the mass centre "
                                                      "(inertia - m(|c|²I - ccᵀ)) overflows: give a com_body of moderate size")
            if not np.all(np.isfinite(position)):
                key = "com_body" if np.max(np.abs(self.com_body)) >= np.max(np.abs(self.pivot)) else "pivot"
                raise InputError(f"{where}.{key}", "the mass centre (pivot + R com_body) overflows: give a pivot and "
                                                   "a com_body of moderate size")
            _inertia(J_com, f"{where}.inertia", "about the mass centre (inertia - m(|c|²I - ccᵀ)) ")
            store(self, position=position)
            store(self, velocity=R @ np.cross(self.omega_body, self.com_body))
        # Derived quantities must be finite too: inputs of finite but huge size can overflow them.
        with np.errstate(over="ignore", invalid="ignore"):
            translation = 0.5 * self.mass * float(self.velocity @ self.velocity)
            derived = {
                "kinetic energy": translation + 0.5 * float(self.omega_body @ self.inertia @ self.omega_body),
                "linear momentum": self.mass * np.linalg.norm(self.velocity),
                "angular momentum": np.linalg.norm(self.inertia @ self.omega_body),
                "inertia about the mass centre": float(np.max(np.abs(self.inertia_com))),
            }
        for what, value in derived.items():
            if not math.isfinite(value):
                # the entry, and the key that drives it where one does: a velocity, or an angular velocity
                key = ".velocity" if self.pivot is None and not math.isfinite(translation) else \
                    ".omega_body" if what in ("kinetic energy", "angular momentum") else ""
                raise InputError(where + key, f"its initial {what} overflows: give masses, inertias and "
                                              "velocities of moderate size")
        # Frozen: a change to an array after System() must not change the next run.
        for key in ("inertia", "omega_body", "R_world_body", "quat_wxyz", "com_body", "position", "velocity", "pivot"):
            arr = getattr(self, key)
            if isinstance(arr, np.ndarray):
                arr = arr.copy()
                arr.setflags(write=False)
                store(self, **{key: arr})

    @property
    def pivoted(self) -> bool:
        """Whether the body turns about a fixed pivot."""
        return self.pivot is not None

    @property
    def inertia_com(self) -> np.ndarray:
        """Body-frame inertia about the mass centre (parallel-axis theorem)."""
        c = self.com_body
        return self.inertia - self.mass * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
