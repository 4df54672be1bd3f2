"""Studies: convergence and work–precision of a scenario, as one grid of runs.

:func:`study` runs every combination of schemes (and their settings), step sizes and named
variants of one scenario (``overrides``: an ensemble of perturbed initial conditions is a grid
of variants), measures each run's error against a reference, its cost and its drifts, fits the
order of every scheme (:func:`rbdyn.verify.fit_order`) and returns a :class:`StudyResult`; with
``out`` it writes a CSV of one row per run and a JSON of the settings and the stamp of the code,
and with ``plot`` a work–precision figure. ``rbdyn study`` is its command line.

The modules, in the order a study goes through them:

* ``grid``: the declaration (:class:`StudySpec`, one :class:`Run` per point of the grid), checked
  field by field where it enters;
* ``references``: what a run's error is measured against (a closed form or a DOP853 reference of
  :mod:`rbdyn.verify` where the system has one, otherwise a reference run);
* ``execute``: one run as a pure function of its declaration (:func:`execute_run`), and where the
  runs go: this process, a pool of local processes, or a Dask scheduler;
* ``results``: the rows, the journal that lets an interrupted study resume, the CSV and the JSON;
* ``api``: :func:`study` itself.
"""

from .api import StudyResult, study

__all__ = ["study", "StudyResult"]
