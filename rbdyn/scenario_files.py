"""Scenario files: a whole run (system, scheme, step, duration) in TOML.

The format is documented, with a complete example, in the book's
"Scenario files" page. Every key is checked: unknown keys, wrong types and
invalid values raise :class:`~rbdyn.InputError` naming the file and the
field (``"my.toml: body[0].inertia: must be positive definite ..."``).
"""

from __future__ import annotations

import dataclasses
import tomllib
from importlib import resources
from pathlib import Path

import numpy as np

from ._errors import InputError
from ._errors import short_repr as _short  # errors are one line
from ._validate import finite_scalar as _number  # a real, finite number (not a boolean)
from .constraints import KINDS
from .model import ConstantForce, ConstantTorque, PointForce, RigidBody, Spring, System, box_inertia
from .run_length import RunLength
from .scenarios import builtin_scenario_text, builtin_scenarios
from .integrators import Scheme, get_scheme, schemes
from .simulation import Trajectory, simulate

__all__ = ["Scenario", "load_scenario"]

_TOP_KEYS = {"scenario", "run", "world", "settings", "body", "load", "constraint"}
_SCENARIO_KEYS = {"name", "description", "reference"}
_RUN_KEYS = {"scheme", "dt", "t_end", "every"}
_WORLD_KEYS = {"gravity"}
_BODY_KEYS = {
    "name", "mass", "inertia", "box", "position", "velocity", "quat_wxyz",
    "R_world_body", "rotvec", "omega_body", "pivot", "com_body",
}
_LOAD_KEYS = {
    "force": {"type", "body", "force"},
    "torque": {"type", "body", "torque"},
    "point_force": {"type", "body", "point_body", "force"},
    "spring": {"type", "body", "point_body", "anchor", "stiffness", "rest_length"},
}
# the scenario keys of every constraint kind come from the kind itself (rbdyn.constraints)
_CONSTRAINT_KEYS = {k.kind: {"type"} | set(k.keys) for k in KINDS}
_CONSTRAINT_CLASS = {k.kind: k for k in KINDS}


@dataclasses.dataclass(frozen=True)
class Scenario:
    """A loaded scenario: the system and the run settings.

    Attributes
    ----------
    name, description, reference : str
    system : System
    scheme : Scheme
    dt, t_end : float
    every : int
    source : str
        The file it came from (or ``builtin:NAME``).
    settings : dict
        Per-scheme settings from the file's ``[settings.NAME]`` tables.
    """

    name: str
    description: str
    reference: str
    system: System
    scheme: Scheme
    dt: float
    t_end: float
    every: int
    source: str
    settings: dict

    def run(self, scheme: str | Scheme | None = None, dt=None, t_end=None, every=None, **kw) -> Trajectory:
        """Simulate with the file's settings, any of them overridden."""
        sch = self.scheme_named(scheme)
        return simulate(
            self.system,
            sch,
            self.dt if dt is None else dt,
            self.t_end if t_end is None else t_end,
            self.every if every is None else every,
            **kw,
        )

    def scheme_named(self, scheme=None, **overrides) -> Scheme:
        """The scheme ``scheme`` (default: the file's ``run.scheme``) with this
        file's settings for it, then ``overrides``.

        Raises :class:`~rbdyn.InputError` if the scheme cannot handle the
        system's constraints: on ``run.scheme`` of the file when the file's
        scheme is used, on ``scheme`` otherwise.
        """
        from_file = scheme is None
        if from_file:
            scheme = self.scheme.name
        if not isinstance(scheme, Scheme):
            settings = dict(self.settings.get(scheme, {}))
            settings.update(overrides)
            scheme = get_scheme(scheme, **settings)
        if self.system.constraints and not scheme.supports_constraints:
            msg = f"{scheme.name} does not handle constraints; use one of: {_constraint_schemes()}"
            raise InputError("run.scheme", msg, self.source) if from_file else InputError("scheme", msg)
        return scheme


MAX_FILE_BYTES = 2**24  # 16 MiB: far more than any scenario file


def load_scenario(scenario: str | Path) -> Scenario:
    """Load a scenario by built-in name or from a TOML file path.

    Raises
    ------
    InputError
        If the file cannot be read or parsed, or any field is invalid; the
        message names the file and the field.
    """
    text = None
    name = str(scenario)
    path = Path(name)
    try:
        exists = path.exists()
    except (OSError, ValueError) as exc:  # a name too long, or with a NUL byte
        raise InputError("scenario", f"not a usable file name ({getattr(exc, 'strerror', None) or exc})", _short(name)) from None
    if name in builtin_scenarios() and not exists:
        text, source = builtin_scenario_text(name), f"builtin:{name}"
    else:
        source = name
        if not exists:
            raise InputError(
                "scenario",
                f"no such file, and not a built-in scenario; built-in: {', '.join(builtin_scenarios())}",
                name,
            )
        try:
            with open(path, "rb") as fh:  # bounded: /dev/zero or a huge file must not be read whole
                raw = fh.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise InputError("file", f"cannot be read: {exc.strerror or exc}", source) from None
        if len(raw) > MAX_FILE_BYTES:
            raise InputError("file", f"is larger than {MAX_FILE_BYTES // 2**20} MiB; a scenario file is a few kB", source)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError("file", f"is not UTF-8 text (byte {exc.start})", source) from None
    text = text.removeprefix("\ufeff")  # a UTF-8 byte-order mark, as some editors write one
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError("toml", f"malformed TOML: {exc}", source) from None
    except RecursionError:
        raise InputError("toml", "arrays or tables nested too deeply", source) from None
    try:
        return _build(data, source)
    except InputError as err:
        raise err.with_source(source) from None


# ----------------------------------------------------------------------------
def _table(data, key, allowed, fld, required=False):
    value = data.get(key)
    if value is None:
        if required:
            raise InputError(fld, "is required")
        return {}
    if not isinstance(value, dict):
        raise InputError(fld, f"must be a table, got {type(value).__name__}")
    _known(value, allowed, fld)
    return value


def _known(table, allowed, fld):
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise InputError(f"{fld}.{unknown[0]}" if fld else unknown[0], f"unknown key; allowed: {', '.join(sorted(allowed))}")


def _numbers(value, shape, fld):
    """A (nested) list of finite numbers of the given shape."""
    def walk(v, depth):
        if depth == len(shape):
            return _number(v, fld)
        if not isinstance(v, list) or len(v) != shape[depth]:
            raise InputError(fld, f"must be an array of numbers of shape {shape}, got {_short(v)}")
        return [walk(e, depth + 1) for e in v]

    return np.array(walk(value, 0), dtype=float)


def _string(value, fld, empty=False):
    if not isinstance(value, str) or (not value and not empty):
        raise InputError(fld, f"must be a {'' if empty else 'non-empty '}string, got {_short(value)}")
    return value


def _array_of_tables(data, key):
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
        raise InputError(key, f"must be an array of tables ([[{key}]])")
    return value


def _body(entry, k):
    fld = f"body[{k}]"
    _known(entry, _BODY_KEYS, fld)
    for req in ("name", "mass"):
        if req not in entry:
            raise InputError(f"{fld}.{req}", "is required")
    name = _string(entry["name"], f"{fld}.name")
    mass = _number(entry["mass"], f"{fld}.mass")
    if ("inertia" in entry) == ("box" in entry):
        raise InputError(f"{fld}.inertia", "give exactly one of 'inertia' (3 principal moments or a 3x3 matrix) or 'box' (edge lengths of a uniform box)")
    if "box" in entry:
        size = _numbers(entry["box"], (3,), f"{fld}.box")
        if np.any(size <= 0):
            raise InputError(f"{fld}.box", f"edge lengths must be > 0, got {size.tolist()}")
        if mass <= 0:
            raise InputError(f"{fld}.mass", f"must be > 0, got {mass!r}")
        try:
            inertia = box_inertia(mass, size)
        except InputError as err:
            raise InputError(f"{fld}.{'box' if err.field == 'size' else 'mass'}", err.message) from None
        if "pivot" in entry and "com_body" in entry:
            # 'box' gives the inertia about the box's centre; a pivoted body
            # needs it about the pivot (parallel-axis theorem).
            c = _numbers(entry["com_body"], (3,), f"{fld}.com_body")
            about_centre_finite = np.all(np.isfinite(inertia))
            with np.errstate(over="ignore", invalid="ignore"):
                inertia = inertia + mass * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
            if about_centre_finite and not np.all(np.isfinite(inertia)):
                raise InputError(f"{fld}.com_body", "with this mass the box's inertia about the pivot "
                                                    "(parallel-axis theorem) overflows: give a com_body of moderate size")
    else:
        raw = entry["inertia"]
        shape = (3, 3) if isinstance(raw, list) and raw and isinstance(raw[0], list) else (3,)
        inertia = _numbers(raw, shape, f"{fld}.inertia")
    kw = {}
    for key, shape in (
        ("position", (3,)), ("velocity", (3,)), ("quat_wxyz", (4,)), ("R_world_body", (3, 3)),
        ("rotvec", (3,)), ("omega_body", (3,)), ("pivot", (3,)), ("com_body", (3,)),
    ):
        if key in entry:
            kw[key] = _numbers(entry[key], shape, f"{fld}.{key}")
    if "pivot" in kw:
        for key in ("position", "velocity"):
            if key in kw:
                raise InputError(f"{fld}.{key}", "is not allowed with a pivot (the mass centre follows from pivot, com_body and the rotation)")
    try:
        return RigidBody(name, mass, inertia, **kw)
    except InputError as err:
        # RigidBody names its fields body.NAME.KEY; the file's entry is body[k], with the key the user wrote
        prefix = f"body.{name}"
        if err.field == "body.name":  # a name RigidBody refuses
            raise InputError(f"{fld}.name", err.message) from None
        if err.field == prefix or err.field.startswith(prefix + "."):
            rest = err.field[len(prefix):]
            if rest == ".inertia" and "box" in entry:
                rest = ".box"
            raise InputError(fld + rest, err.message) from None
        raise


def _load(entry, k):
    fld = f"load[{k}]"
    kind = entry.get("type")
    if not isinstance(kind, str) or kind not in _LOAD_KEYS:
        raise InputError(f"{fld}.type", f"must be one of {', '.join(_LOAD_KEYS)}, got {_short(kind)}")
    _known(entry, _LOAD_KEYS[kind], fld)
    for req in _LOAD_KEYS[kind] - {"type", "rest_length"}:
        if req not in entry:
            raise InputError(f"{fld}.{req}", "is required")
    body = _string(entry["body"], f"{fld}.body")
    if kind == "force":
        return ConstantForce(body, _numbers(entry["force"], (3,), f"{fld}.force"))
    if kind == "torque":
        return ConstantTorque(body, _numbers(entry["torque"], (3,), f"{fld}.torque"))
    if kind == "spring":
        rest = _number(entry["rest_length"], f"{fld}.rest_length") if "rest_length" in entry else None
        try:
            return Spring(body, _numbers(entry["point_body"], (3,), f"{fld}.point_body"),
                          _numbers(entry["anchor"], (3,), f"{fld}.anchor"), _number(entry["stiffness"], f"{fld}.stiffness"),
                          rest)
        except InputError as err:
            prefix = f"load.{body}"
            raise InputError(fld + err.field[len(prefix):] if err.field.startswith(prefix) else err.field,
                             err.message) from None
    return PointForce(body, _numbers(entry["point_body"], (3,), f"{fld}.point_body"), _numbers(entry["force"], (3,), f"{fld}.force"))


def _constraint(entry, k):
    fld = f"constraint[{k}]"
    kind = entry.get("type")
    if not isinstance(kind, str) or kind not in _CONSTRAINT_KEYS:
        raise InputError(f"{fld}.type", f"must be one of {', '.join(_CONSTRAINT_KEYS)}, got {_short(kind)}")
    _known(entry, _CONSTRAINT_KEYS[kind], fld)
    try:
        return _CONSTRAINT_CLASS[kind].from_entry(entry, fld, _number, _numbers, _string)
    except InputError as err:
        # the classes name their fields constraint.KIND.KEY; the file's entry is constraint[k]
        prefix = f"constraint.{kind}"
        if err.field.startswith(prefix):
            raise InputError(fld + err.field[len(prefix):], err.message) from None
        raise


def _constraint_schemes() -> str:
    return ", ".join(n for n, c in schemes().items() if c.supports_constraints) or "none yet"


def _build(data, source) -> Scenario:
    _known(data, _TOP_KEYS, "")
    meta = _table(data, "scenario", _SCENARIO_KEYS, "scenario")
    run = _table(data, "run", _RUN_KEYS, "run", required=True)
    world = _table(data, "world", _WORLD_KEYS, "world")
    for req in ("scheme", "dt", "t_end"):
        if req not in run:
            raise InputError(f"run.{req}", "is required")
    dt = _number(run["dt"], "run.dt")
    t_end = _number(run["t_end"], "run.t_end")
    every = run.get("every", 1)
    if isinstance(every, bool) or not isinstance(every, int):
        raise InputError("run.every", f"must be an integer >= 1, got {every!r}")
    try:
        RunLength(dt, t_end, every)
    except InputError as err:
        raise InputError(f"run.{err.field}", err.message) from None
    settings = data.get("settings", {})
    if not isinstance(settings, dict) or not all(isinstance(v, dict) for v in settings.values()):
        raise InputError("settings", "must hold one table per scheme, e.g. [settings.rig_imp]")
    bodies = [_body(e, k) for k, e in enumerate(_array_of_tables(data, "body"))]
    loads = [_load(e, k) for k, e in enumerate(_array_of_tables(data, "load"))]
    constraints = [_constraint(e, k) for k, e in enumerate(_array_of_tables(data, "constraint"))]
    gravity = _numbers(world["gravity"], (3,), "world.gravity") if "gravity" in world else np.zeros(3)
    try:
        system = System(bodies, loads, constraints, gravity)
    except InputError as err:  # System names the argument gravity; the file's key is world.gravity
        if err.field == "gravity" or err.field.startswith("gravity."):
            raise InputError("world." + err.field, err.message) from None
        raise
    scheme_name = _string(run["scheme"], "run.scheme")
    for name, table in settings.items():
        try:
            get_scheme(name, **table)
        except InputError as err:
            # scheme errors say "scheme.NAME.field"; the file's key is "settings.NAME.field"
            fld = f"settings.{name}" if err.field == "scheme" else "settings." + err.field.partition(".")[2]
            raise InputError(fld, err.message) from None
    try:
        scheme = get_scheme(scheme_name, **settings.get(scheme_name, {}))
    except InputError as err:
        raise InputError("run.scheme", err.message) from None
    return Scenario(
        name=_string(meta.get("name", Path(source).stem), "scenario.name"),
        description=_string(meta.get("description", ""), "scenario.description", empty=True),
        reference=_string(meta.get("reference", ""), "scenario.reference", empty=True),
        system=system,
        scheme=scheme,
        dt=dt,
        t_end=t_end,
        every=every,
        source=source,
        settings=settings,
    )
