"""The two kinds of failure a user can meet, and nothing else.

``InputError`` is raised before any step is taken when a model, a scheme
setting or a scenario file is invalid; its message names where (file or
argument), the field, and what is allowed. ``NumericalError`` is raised when
a run fails (a non-finite state, a Newton iteration that does not converge, a
singular constraint system); it names the time and the step.
"""

from __future__ import annotations

__all__ = ["InputError", "NumericalError"]


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
