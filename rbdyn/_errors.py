"""The two kinds of failure a user can meet, and nothing else; and the command line's contract.

``InputError`` is raised before any step is taken when a model, a scheme
setting or a scenario file is invalid (including inputs whose derived
quantities, such as the initial energy, overflow); its message names where
(file or argument), the field, and what is allowed. ``NumericalError`` is
raised when a run of a valid input fails (a non-finite state or reported
quantity, a Newton iteration that does not converge, a singular constraint
system); it names the time and the step. The Python API raises nothing else
for anything a user can pass.

The command line ``rbdyn`` maps them to its exit status:

* ``0``: the run finished, and every number written is finite;
* ``2`` (``InputError``): invalid input (file, option, value); one printable
  line on stderr, ``rbdyn: error: FIELD: what is wrong, what is allowed``;
* ``1`` (``NumericalError``): a numerical failure of a valid input; one line
  naming the time, the step and the cause. ``--out`` is left unchanged and the
  rows before the failure are written to ``NAME.partial.csv``;
* ``3``: anything else, ``internal error, please report``; the traceback only
  with ``--debug`` or ``RBDYN_DEBUG=1``;
* ``130``: interrupted (Ctrl-C); one line, no output file written or changed.

A run that needs more memory than is available is an ``InputError`` (field
``every``), never a ``MemoryError``; a run of more than 1e9 steps is refused
(field ``dt``). ``Trajectory.to_csv`` reports a path it cannot write as an
``InputError`` (field ``out``).
"""

from __future__ import annotations

__all__ = ["InputError", "NumericalError"]

EXIT_OK, EXIT_NUMERICAL, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports a process ended by SIGINT


def short_repr(value, limit: int = 60) -> str:
    """``repr`` of a user's value, cut to ``limit`` characters (error messages are one line)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def one_line(text: str, limit: int = 2000) -> str:
    """``text`` as one printable line: control characters escaped, cut to ``limit`` characters."""
    out = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    return out if len(out) <= limit else out[: limit - 3] + "..."


class InputError(ValueError):
    """Invalid input: ``"<where>: <field>: <what is allowed>"``.

    Parameters
    ----------
    field : str
        Dotted path of the offending field, e.g. ``"body.box.inertia"``.
    message : str
        What is wrong and what is allowed.
    source : str, optional
        The file or argument the field came from.
    """

    def __init__(self, field: str, message: str, source: str | None = None):
        self.field = field
        self.message = message
        self.source = source
        super().__init__(self._text())

    def _text(self) -> str:
        parts = [p for p in (self.source, self.field, self.message) if p]
        return ": ".join(parts)

    def with_source(self, source: str) -> "InputError":
        """The same error, attributed to ``source`` (a file path or an argument)."""
        return InputError(self.field, self.message, source)


class NumericalError(RuntimeError):
    """A run failed at time ``t`` in step ``step`` (1-based) for ``reason``.

    Attributes
    ----------
    t : float
        Time at the start of the failed step.
    step : int
        Number of the failed step, counting from 1.
    reason : str
        What failed.
    trajectory : Trajectory or None
        The output recorded before the failure.
    """

    def __init__(self, t: float, step: int, reason: str, trajectory=None):
        self.t = t
        self.step = step
        self.reason = reason
        self.trajectory = trajectory
        super().__init__(f"numerical failure at t = {t!r} (step {step}): {reason}")
