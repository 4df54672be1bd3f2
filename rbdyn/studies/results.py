"""A study's rows: the journal that lets an interrupted study resume, the CSV, the fitted orders.

The journal (``OUT.journal`` beside the CSV ``OUT``) holds one JSON line per finished run, keyed by
the run's :attr:`~rbdyn.studies.grid.Run.key` (the digest of its scenario text, variant, scheme,
settings, step, duration, reference and of rbdyn's sources). A study reads it first and runs only
what it does not hold; a line of another study, or of other sources, matches no run and is
ignored, and a line cut short by a killed process is skipped. Each line is flushed and synced to
disk before the next run is counted as done. The journal is removed once the CSV and the JSON
are in place.
"""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path

import numpy as np

from ..verify import OrderFit, fit_order
from .grid import KEY_FORMAT

__all__ = ["Journal", "columns_of", "write_csv", "fit_orders"]


class Journal:
    """The finished runs of a study, one JSON line each, appended as they finish."""

    def __init__(self, path):
        self.path = Path(path)
        self._fh = None

    def load(self, keys: dict) -> dict:
        """The rows of the runs whose keys are in ``keys`` (key → index): index → row."""
        found = {}
        try:
            with open(self.path, encoding="utf-8") as fh:
                lines = fh.read().splitlines()
        except FileNotFoundError:
            return found
        except (OSError, UnicodeDecodeError):
            return found  # unreadable: the study runs everything again, and rewrites it
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:  # a line cut short when the study was killed
                continue
            if isinstance(entry, dict) and entry.get("run") in keys and isinstance(entry.get("row"), dict):
                found[keys[entry["run"]]] = entry["row"]
        return found

    def open(self, header: dict) -> None:
        """Open for appending (a new journal starts with ``header``, which a reader ignores)."""
        new = not self.path.exists() or self.path.stat().st_size == 0
        self._fh = open(self.path, "a", encoding="utf-8")
        if new:
            self._write({"rbdyn_study_journal": KEY_FORMAT, **header})

    def append(self, key: str, row: dict) -> None:
        """Record a finished run; it is on disk when this returns."""
        self._write({"run": key, "row": row})

    def _write(self, entry: dict) -> None:
        self._fh.write(json.dumps(entry, allow_nan=True) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def remove(self) -> None:
        self.close()
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass


def columns_of(rows, fixed) -> list:
    """The fixed columns, with a measure's own values (sorted by name) after ``error``."""
    extra = sorted({k for row in rows for k in row} - set(fixed))
    at = list(fixed).index("error") + 1
    return [*fixed[:at], *extra, *fixed[at:]]


def _cell(value) -> str:
    if isinstance(value, float):
        return repr(value)  # exact: the CSV holds the numbers to the bit
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    return str(value)


def write_csv(rows, columns, fh) -> None:
    """One header line and one line per row (floats written exactly, ``nan`` for none)."""
    writer = csv.writer(fh, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(c, math.nan)) for c in columns])


def fit_orders(rows, labels, variants) -> dict:
    """:func:`rbdyn.verify.fit_order` of every scheme configuration and variant over the steps of
    its finished runs whose error is finite and above zero: ``{(label, variant): OrderFit}``, with
    ``None`` where fewer than two steps remain."""
    out = {}
    for variant in variants:
        for label in labels:
            pts = sorted((r["dt"], r["error"]) for r in rows if r["label"] == label and r["variant"] == variant
                         and r["status"] == "ok" and math.isfinite(r["error"]) and r["error"] > 0)
            fit: OrderFit | None = None
            if len({h for h, _ in pts}) >= 2:
                fit = fit_order([h for h, _ in reversed(pts)], [e for _, e in reversed(pts)])
            out[label, variant] = fit
    return out
