"""What a kernel reports when it stops: its status codes, and what the user is told for each."""

from __future__ import annotations

__all__ = ["STATUS_OK", "STATUS_NONFINITE", "STATUS_NEWTON", "STATUS_SINGULAR", "STATUS_CONSTRAINT", "STATUS_REPORT",
           "STATUS_TEXT"]

STATUS_OK = 0
STATUS_NONFINITE = 1
STATUS_NEWTON = 2
STATUS_SINGULAR = 3
STATUS_CONSTRAINT = 4
STATUS_REPORT = 5  # a recorded quantity (energy, momentum, residual) is not finite: see rbdyn.driver.report

STATUS_TEXT = {
    STATUS_NONFINITE: "the state became non-finite (nan or inf); reduce the step size",
    STATUS_NEWTON: "the Newton iteration did not converge; reduce the step size or relax the tolerance",
    STATUS_SINGULAR: (
        "the constraint system cannot be solved: no motion changes one of its rows (a rod whose ends meet, "
        "for example); check the constraints or reduce the step size"
    ),
    STATUS_CONSTRAINT: (
        "the constraints cannot be met at the end of this step (they contradict each other, or the step is too "
        "large for the motion); check the constraints, reduce the step size, or (RIG schemes) raise "
        "constraint_max_iter"
    ),
    STATUS_REPORT: (
        "the energy, momentum or constraint residual to be recorded is not finite (it overflowed although the "
        "state did not); reduce the step size, or give loads and inputs of moderate size"
    ),
}
