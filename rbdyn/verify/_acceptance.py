"""Acceptance checks that a page both asserts and publishes.

A page states its tolerances in its header box and ends in an acceptance
cell that calls :func:`check` once per check. Each call records the check
(page, name, scheme, measured error, tolerance, pass/fail) and raises
``AssertionError`` when it fails, so the page still fails under nbval and
in the book build. When the environment variable ``RBDYN_CHECKS_DIR`` names a
directory (the book build sets it), the page's records are also written to
``<dir>/<page>.json``; the validation matrix of the book is made from those
files, so that the matrix and the asserts cannot disagree.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path

__all__ = ["Check", "check", "check_true", "checks", "reset_checks"]

_RECORDS: dict[str, list] = {}


@dataclasses.dataclass(frozen=True)
class Check:
    """One acceptance check: ``measured <= tolerance``.

    Attributes
    ----------
    page : str
        The page's document name (e.g. ``"validation/pendulum"``), for the link.
    name : str
        What is checked, as the matrix's row label.
    measured : float
        The measured error (or other quantity that must not exceed ``tolerance``).
    tolerance : float
    scheme : str or None
        The scheme the check is about (a matrix column); None for checks of the
        page's reference solution or of the set-up.
    passed : bool
    """

    page: str
    name: str
    measured: float
    tolerance: float
    scheme: str | None
    passed: bool


def _publish(page: str) -> None:
    folder = os.environ.get("RBDYN_CHECKS_DIR")
    if not folder:
        return
    path = Path(folder) / (page.replace("/", "__") + ".json")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps([dataclasses.asdict(c) for c in _RECORDS[page]], indent=1), encoding="utf-8")
    os.replace(tmp, path)


def check(page: str, name: str, measured, tolerance, scheme: str | None = None) -> Check:
    """Record the check ``measured <= tolerance`` and assert it.

    Parameters
    ----------
    page : str
        Document name of the page, e.g. ``"validation/pendulum"``.
    name : str
        Short description (unique within the page together with ``scheme``).
    measured, tolerance : float
        A non-finite ``measured`` fails.
    scheme : str, optional

    Returns
    -------
    Check

    Raises
    ------
    AssertionError
        If the check fails.
    """
    measured, tolerance = float(measured), float(tolerance)
    ok = math.isfinite(measured) and measured <= tolerance
    rec = Check(page, name, measured, tolerance, scheme, ok)
    records = _RECORDS.setdefault(page, [])
    records[:] = [r for r in records if (r.name, r.scheme) != (name, scheme)]  # a re-run cell replaces
    records.append(rec)
    _publish(page)
    if not ok:
        who = f" [{scheme}]" if scheme else ""
        raise AssertionError(f"{page}: {name}{who}: measured {measured:.3e} > tolerance {tolerance:.3e}")
    return rec


def check_true(page: str, name: str, condition: bool, scheme: str | None = None) -> Check:
    """A yes/no check, recorded as measured 0 (holds) or 1 (fails) against tolerance 0."""
    return check(page, name, 0.0 if condition else 1.0, 0.0, scheme)


def checks(page: str | None = None) -> list:
    """The checks recorded in this process (of one page, or of all)."""
    if page is not None:
        return list(_RECORDS.get(page, []))
    return [c for recs in _RECORDS.values() for c in recs]


def reset_checks() -> None:
    """Forget the checks recorded in this process."""
    _RECORDS.clear()
