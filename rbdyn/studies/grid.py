"""The declaration of a study: one scenario, its variants, the schemes with their settings, the
steps; built field by field from :func:`declare` and checked where it enters.

A :class:`StudySpec` holds everything a run depends on, and nothing about where it runs: the
scenario's own text (so that a worker on another machine needs no file), the named variants
(``overrides``), the scheme configurations, the steps, the duration, the reference each variant's
errors are measured against, and the digest of rbdyn's sources. :meth:`StudySpec.runs` lists
the grid, variant by variant, scheme by scheme, step by step; a :class:`Run` is one point of it
and its :attr:`Run.key` names it in the journal of an interrupted study.

Errors name the field the user wrote, with its index: ``dt[2]: must be > 0``,
``schemes[1]: unknown scheme 'foo'; allowed: ...``, ``overrides[3].body[0].omega_body: ...``.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import json
import math
import numbers
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from .._errors import InputError, short_repr
from .._stamp import sources_digest
from ..integrators import schemes as registered_schemes
from ..run_length import RunLength, n_steps_for
from ..scenario_files import MAX_FILE_BYTES, Scenario, load_scenario
# The scenario files' own builder, from their parsed TOML: a variant is the file's data with
# some keys replaced, checked and built exactly as the file itself is.
from ..scenario_files import _build as _build_scenario
from ..scenarios import builtin_scenario_text
from . import references

__all__ = ["SchemeConfig", "Variant", "Run", "StudySpec", "declare", "MAX_ROWS", "every_for"]

#: The most rows a run records: every step up to this many steps, then every k-th step with the
#: smallest k that keeps to it (the errors are maxima over the recorded rows).
MAX_ROWS = 100_000
#: The version of the run keys and of the journal's lines (changes when their meaning does).
KEY_FORMAT = 1
#: Top-level tables of a scenario file that a variant may not override: the study sets the run
#: (scheme, step, duration) itself, and the scenario's name and description are not physics.
_FIXED_TABLES = {"run": "is set by the study (schemes, dt, t_end)", "scenario": "names the scenario; it is not a "
                 "setting of the physics"}


def every_for(n_steps: int) -> int:
    """The output interval of a run of ``n_steps`` steps: 1 up to :data:`MAX_ROWS` steps, else the
    smallest interval that records at most that many rows."""
    return max(1, math.ceil(n_steps / MAX_ROWS))


def canonical(value) -> str:
    """A value as canonical JSON (sorted keys, floats written exactly): the text run keys hash."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=True)


@dataclasses.dataclass(frozen=True)
class SchemeConfig:
    """One scheme with one combination of its settings (those the study varies or fixes; the
    scenario file's ``[settings.NAME]`` apply beneath them)."""

    scheme: str
    settings: tuple = ()  # ((field, value), ...), sorted by field

    @property
    def label(self) -> str:
        """``"gen_alpha"``, or ``"gen_alpha(rho_inf=0.5)"`` with settings: a line of the figure and
        a fitted order."""
        if not self.settings:
            return self.scheme
        return f"{self.scheme}({self.settings_text})"

    @property
    def settings_text(self) -> str:
        """``"rho_inf=0.5;newton_tol=1e-08"``: the CSV's ``settings`` column."""
        return ";".join(f"{k}={v!r}" for k, v in self.settings)


@dataclasses.dataclass(frozen=True)
class Variant:
    """A named variant of the scenario: keys of its file replaced by values (``"body[0].omega_body"``
    by ``[0.1, 5.0, 0.1]``); the scenario itself is the variant ``""`` with no overrides."""

    name: str
    overrides: tuple = ()  # ((key, value), ...), in the order given


@dataclasses.dataclass(frozen=True)
class Run:
    """One point of the grid: a scheme configuration, a variant and a step."""

    index: int
    config: SchemeConfig
    variant: Variant
    dt: float
    t_end: float
    key: str

    @property
    def every(self) -> int:
        return every_for(n_steps_for(self.dt, self.t_end))


@dataclasses.dataclass(frozen=True)
class StudySpec:
    """Everything a study's runs depend on (and nothing about where they run).

    Attributes
    ----------
    scenario : str
        The scenario as given (a built-in name or a path).
    source : str
        ``builtin:NAME`` or the path.
    text : str
        The scenario file's text: workers build the system from it, not from the file.
    t_end : float
    configs : tuple of SchemeConfig
    dts : tuple of float
    variants : tuple of Variant
    plans : tuple of references.Plan
        The reference of each variant, in the order of ``variants``.
    measure : callable or None
        ``measure(trajectory, system)``: the user's error (see :func:`rbdyn.study`).
    digest : str
        SHA-256 of rbdyn's sources (:func:`rbdyn._stamp.sources_digest`).
    drift : bool
        Whether every step's energy and constraint drift are measured (see :func:`rbdyn.study`).
    """

    scenario: str
    source: str
    text: str
    t_end: float
    configs: tuple
    dts: tuple
    variants: tuple
    plans: tuple
    measure: Callable | None
    digest: str
    drift: bool = True

    @functools.cached_property
    def _runs(self) -> tuple:
        out = []
        measure = _measure_id(self.measure)
        text_digest = hashlib.sha256(self.text.encode()).hexdigest()
        for (v, variant), config, dt in itertools.product(enumerate(self.variants), self.configs, self.dts):
            key = hashlib.sha256(canonical([
                KEY_FORMAT, self.digest, text_digest, [list(kv) for kv in variant.overrides], config.scheme,
                [list(kv) for kv in config.settings], dt, self.t_end, dataclasses.asdict(self.plans[v]), measure,
                self.drift,
            ]).encode()).hexdigest()
            out.append(Run(len(out), config, variant, dt, self.t_end, key))
        return tuple(out)

    def runs(self) -> tuple:
        """Every run of the grid: variant by variant, scheme configuration by configuration, step
        by step (the order of the CSV's rows)."""
        return self._runs

    def plan(self, variant: Variant):
        """The reference of ``variant``."""
        return self.plans[self.variants.index(variant)]

    def scenario_of(self, variant: Variant) -> Scenario:
        """The scenario of ``variant``, built from the text (cached in each process)."""
        return build_variant(self.text, self.source, variant.overrides)

    def settings_record(self) -> dict:
        """The declaration as plain data, for the study's JSON."""
        return {
            "scenario": self.scenario, "source": self.source,
            "scenario_sha256": hashlib.sha256(self.text.encode()).hexdigest(),
            "t_end": self.t_end, "dt": list(self.dts),
            "schemes": [{"label": c.label, "scheme": c.scheme, "settings": dict(c.settings)} for c in self.configs],
            "variants": [{"name": v.name, "overrides": dict(v.overrides)} for v in self.variants],
            "measure": _measure_id(self.measure),
            "drift": self.drift,
            "max_rows": MAX_ROWS,
        }


def _measure_id(fn) -> list | None:
    """A user's measure by its name and compiled code: a journal's rows measured by another
    function are not kept."""
    if fn is None:
        return None
    code = getattr(fn, "__code__", None)
    text = _code_text(code) if code is not None else type(fn).__qualname__
    name = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', type(fn).__name__)}"
    return [name, hashlib.sha256(text.encode()).hexdigest()]


def _code_text(code) -> str:
    """A code object as text that is the same in every process (a nested function's code by its
    own text, not by its address)."""
    consts = [_code_text(c) if hasattr(c, "co_code") else repr(c) for c in code.co_consts]
    return repr((code.co_code, consts, code.co_names))


# -- the scenario and its variants ---------------------------------------------------------------
def scenario_text(scenario) -> tuple[str, str]:
    """The text and the source of a scenario given by built-in name or path (checked by
    :func:`rbdyn.load_scenario` first, so that its errors are the ones the user meets)."""
    loaded = load_scenario(scenario)
    if loaded.source.startswith("builtin:"):
        return builtin_scenario_text(loaded.source[len("builtin:"):]), loaded.source
    with open(loaded.source, "rb") as fh:
        raw = fh.read(MAX_FILE_BYTES + 1)
    return raw.decode("utf-8"), loaded.source


_KEY_PART = re.compile(r"^([A-Za-z0-9_-]+)(?:\[(\d+)\])?$")


def _parse_key(key: str, fld: str) -> list:
    """``"body[0].omega_body"`` as ``["body", 0, "omega_body"]``."""
    if not isinstance(key, str) or not key:
        raise InputError(fld, f"keys must be dotted keys of the scenario file such as 'body[0].omega_body' or "
                              f"'world.gravity', got {short_repr(key)}")
    path = []
    for part in key.split("."):
        m = _KEY_PART.match(part)
        if not m:
            raise InputError(f"{fld}.{key}", "not a key of a scenario file: dotted names, arrays of tables indexed "
                                             "as body[0] (e.g. 'body[0].omega_body', 'world.gravity')")
        path.append(m.group(1))
        if m.group(2) is not None:
            path.append(int(m.group(2)))
    if path[0] in _FIXED_TABLES:
        raise InputError(f"{fld}.{key}", f"cannot be overridden: [{path[0]}] {_FIXED_TABLES[path[0]]}")
    return path


def _toml_value(value, fld: str):
    """A Python value as the TOML data a scenario file holds (numpy arrays and scalars included), with
    arrays as tuples."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, (bool, str)) or (isinstance(value, numbers.Real) and isinstance(value, (int, float))):
        return value
    if isinstance(value, (list, tuple)):
        return tuple(_toml_value(v, fld) for v in value)  # a tuple: a study's declaration is hashable
    raise InputError(fld, f"must be a value a scenario file can hold (a number, a string, a list of them; a "
                          f"table key by key), got {type(value).__name__}")


def _apply(data: dict, path: list, value, fld: str) -> None:
    node = data
    for depth, part in enumerate(path[:-1]):
        nxt = path[depth + 1]
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                size = len(node) if isinstance(node, list) else 0
                raise InputError(fld, f"no entry [{part}]: the scenario has {size}")
            node = node[part]
            continue
        if not isinstance(node, dict):
            raise InputError(fld, "goes into a value that is not a table")
        if part not in node:
            node[part] = [] if isinstance(nxt, int) else {}
        node = node[part]
    last = path[-1]
    if isinstance(last, int):
        if not isinstance(node, list) or last >= len(node):
            raise InputError(fld, f"no entry [{last}]: the scenario has {len(node) if isinstance(node, list) else 0}")
        node[last] = value
    elif isinstance(node, dict):
        node[last] = value
    else:
        raise InputError(fld, "goes into a value that is not a table")


@functools.lru_cache(maxsize=64)
def _build_cached(text: str, source: str, overrides_json: str) -> Scenario:
    data = tomllib.loads(text.removeprefix("\ufeff"))
    for key, value in json.loads(overrides_json):
        _apply(data, _parse_key(key, "overrides"), value, key)
    return _build_scenario(data, source)


def build_variant(text: str, source: str, overrides: tuple) -> Scenario:
    """The scenario of ``text`` with ``overrides`` applied (keys already checked)."""
    return _build_cached(text, source, canonical([list(kv) for kv in overrides]))


# -- the declaration -----------------------------------------------------------------------------
def _number(value, fld: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.integer, np.floating)):
        raise InputError(fld, f"must be a number, got {short_repr(value)}")
    return float(value)


def _listed(value, fld: str, what: str) -> list:
    """A scalar as a list of one, a sequence (not a string) as a list."""
    if value is None:
        return []
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        return [value]
    return list(value)


def _schemes(names, scenario: Scenario) -> list[str]:
    if names is None:
        return [scenario.scheme.name]
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, (Sequence, np.ndarray)) or isinstance(names, bytes):
        raise InputError("schemes", f"must be a scheme name or a list of them, got {short_repr(names)}")
    names = list(names)
    if not names:
        raise InputError("schemes", f"must name at least one scheme; allowed: {', '.join(registered_schemes())}")
    out = []
    for i, name in enumerate(names):
        if not isinstance(name, str) or name not in registered_schemes():
            raise InputError(f"schemes[{i}]", f"unknown scheme {short_repr(name)}; allowed: "
                                              f"{', '.join(registered_schemes())}")
        if name in out:
            raise InputError(f"schemes[{i}]", f"{name} is listed twice (schemes[{out.index(name)}])")
        if scenario.system.constraints and not registered_schemes()[name].supports_constraints:
            able = ", ".join(n for n, c in registered_schemes().items() if c.supports_constraints)
            raise InputError(f"schemes[{i}]", f"{name} does not handle constraints, which this scenario has; "
                                              f"use one of: {able}")
        out.append(name)
    return out


def _dts(values, scenario: Scenario, t_end: float) -> list[float]:
    if values is None:
        return [scenario.dt]
    values = _listed(values, "dt", "steps")
    if not values:
        raise InputError("dt", "must give at least one step size > 0")
    out = []
    for i, v in enumerate(values):
        fld = f"dt[{i}]"
        dt = _number(v, fld)
        if not math.isfinite(dt):
            raise InputError(fld, f"must be a finite number > 0, got {dt!r}")
        if dt <= 0:
            raise InputError(fld, f"must be > 0, got {dt!r}")
        try:
            RunLength(dt, t_end)
        except InputError as err:
            raise InputError(fld if err.field == "dt" else "t_end", err.message) from None
        if dt in out:
            raise InputError(fld, f"{dt!r} is listed twice (dt[{out.index(dt)}])")
        out.append(dt)
    return out


def _t_end(value, scenario: Scenario) -> float:
    if value is None:
        return scenario.t_end
    t_end = _number(value, "t_end")
    try:
        RunLength(1.0, t_end)
    except InputError as err:
        raise InputError("t_end", err.message) from None
    if t_end <= 0:
        raise InputError("t_end", f"must be > 0 (a study measures errors over a run), got {t_end!r}")
    return t_end


def _configs(names: list[str], settings, scenario: Scenario) -> list[SchemeConfig]:
    if settings is None:
        settings = {}
    if not isinstance(settings, Mapping):
        raise InputError("settings", "must map scheme names to their settings, e.g. {'gen_alpha': {'rho_inf': "
                                     f"[0.5, 0.9]}}, got {short_repr(settings)}")
    for name in settings:
        if name not in names:
            raise InputError(f"settings.{name}", f"is not a scheme of the study; its schemes: {', '.join(names)}")
    out = []
    for name in names:
        table = settings.get(name, {})
        if not isinstance(table, Mapping):
            raise InputError(f"settings.{name}", f"must map settings to values, got {short_repr(table)}")
        own = [f.name for f in dataclasses.fields(registered_schemes()[name])]
        fields, choices = [], []
        for fld in sorted(table):
            if fld not in own:
                raise InputError(f"settings.{name}.{fld}", f"is not a setting of {name}; its settings: "
                                                           f"{', '.join(own) or 'none'}")
            values = _listed(table[fld], f"settings.{name}.{fld}", "values")
            if not values:
                raise InputError(f"settings.{name}.{fld}", "must give at least one value")
            for j, v in enumerate(values):
                if isinstance(v, np.generic):
                    values[j] = v.item()
            fields.append(fld)
            choices.append(values)
        for combo in itertools.product(*choices):
            chosen = tuple(zip(fields, combo))
            try:
                scenario.scheme_named(name, **dict(chosen))
            except InputError as err:
                bad = err.field.rsplit(".", 1)[-1]
                index = ""
                if bad in fields:
                    k = fields.index(bad)
                    if len(choices[k]) > 1:
                        index = f"[{choices[k].index(combo[k])}]"
                raise InputError(f"settings.{name}.{bad}{index}" if bad in fields else f"settings.{name}",
                                 err.message) from None
            out.append(SchemeConfig(name, chosen))
    return out


def _variants(overrides, text: str, source: str) -> list[Variant]:
    if overrides is None:
        return [Variant("")]
    if isinstance(overrides, Mapping):
        items = [(str(k) if not isinstance(k, str) else k, v) for k, v in overrides.items()]
    elif isinstance(overrides, Sequence) and not isinstance(overrides, (str, bytes)):
        items = [(str(i), v) for i, v in enumerate(overrides)]
    else:
        raise InputError("overrides", "must be a list of {key: value} tables or a mapping of names to them, e.g. "
                                      f"[{{'body[0].omega_body': [0.1, 5.0, 0.1]}}], got {short_repr(overrides)}")
    if not items:
        raise InputError("overrides", "must hold at least one variant (or leave overrides out)")
    out = []
    for name, table in items:
        fld = f"overrides[{name}]"
        if not name or not name.isprintable() or len(name) > 200:
            raise InputError(fld, "a variant's name must be 1 to 200 printable characters")
        if not isinstance(table, Mapping):
            raise InputError(fld, f"must be a table of scenario keys and values, got {short_repr(table)}")
        pairs = []
        for key, value in table.items():
            _parse_key(key, fld)
            pairs.append((key, _toml_value(value, f"{fld}.{key}")))
        variant = Variant(name, tuple(pairs))
        try:
            build_variant(text, source, variant.overrides)
        except InputError as err:
            raise InputError(f"{fld}.{err.field}" if not err.field.startswith(fld) else err.field,
                             err.message) from None
        out.append(variant)
    return out


def declare(scenario, schemes=None, dt=None, *, t_end=None, settings=None, overrides=None, measure=None,
            reference=None, drift=True) -> StudySpec:
    """Check a study's declaration field by field and build its :class:`StudySpec` (the
    parameters are those of :func:`rbdyn.study`). Raises :class:`rbdyn.InputError` naming the
    field, with its index in a list (``dt[2]``, ``schemes[1]``, ``overrides[name].KEY``)."""
    if not isinstance(scenario, (str, Path)):
        raise InputError("scenario", f"must be a built-in scenario name or a path, got {type(scenario).__name__}")
    text, source = scenario_text(scenario)
    base = build_variant(text, source, ())
    names = _schemes(schemes, base)
    t_end = _t_end(t_end, base)
    dts = _dts(dt, base, t_end)
    configs = _configs(names, settings, base)
    variants = _variants(overrides, text, source)
    if not isinstance(drift, (bool, np.bool_)):
        raise InputError("drift", f"must be True or False, got {short_repr(drift)}")
    if measure is not None and not callable(measure):
        raise InputError("measure", f"must be a function measure(trajectory, system), got {short_repr(measure)}")
    request = references.request(reference, names, measure)
    plans = tuple(references.plan(build_variant(text, source, v.overrides).system, t_end, names, dts, request, measure)
                  for v in variants)
    return StudySpec(str(scenario), source, text, t_end, tuple(configs), tuple(dts), tuple(variants), plans,
                     measure, sources_digest(), bool(drift))
