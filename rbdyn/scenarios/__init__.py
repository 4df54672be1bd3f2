"""The built-in scenarios: the TOML files of this folder, by name (``rbdyn list``, ``rbdyn show``)."""

from __future__ import annotations

import tomllib
from importlib import resources

from .._errors import InputError
from .._errors import short_repr as _short

__all__ = ["builtin_scenarios", "builtin_scenario_text"]


def _folder():
    return resources.files(__package__)


def builtin_scenarios() -> dict[str, str]:
    """Names and one-line descriptions of the scenarios shipped with rbdyn."""
    out = {}
    for entry in sorted(_folder().iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".toml"):
            data = tomllib.loads(entry.read_text(encoding="utf-8"))
            out[entry.name[:-5]] = data.get("scenario", {}).get("description", "")
    return out


def builtin_scenario_text(name: str) -> str:
    """The TOML text of a built-in scenario (to copy and edit); only built-in names are accepted."""
    known = builtin_scenarios()
    if not isinstance(name, str) or name not in known:
        raise InputError("scenario", f"no built-in scenario {_short(name)}; built-in: {', '.join(known)}")
    return (_folder() / f"{name}.toml").read_text(encoding="utf-8")
