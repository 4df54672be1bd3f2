"""The ``rbdyn`` command line.

``rbdyn list`` prints the built-in scenarios, the schemes and the constraint kinds;
``rbdyn show NAME`` prints a built-in scenario file (to copy and edit);
``rbdyn run SCENARIO [options]`` runs a scenario and writes CSV, and with
``--plot FILE.png`` a figure of energy, momentum and constraint residual over
time in the book's style (:func:`rbdyn.plotting.plot_run`);
``rbdyn study SCENARIO --schemes A,B --dt H1,H2,... [options]`` runs a grid of
schemes and steps (:func:`rbdyn.study`) on every core or on a Dask scheduler
(``--scheduler ADDRESS``) and writes one CSV row per run, a JSON of the
settings and the stamp of the code, and with ``--plot`` a work–precision figure.

Exit status (the contract, see :mod:`rbdyn._errors`):

* 0: the run finished and every number written is finite (a study: every run
  finished, and every number of a row not marked failed is finite; a run that
  fails numerically is a row with ``status`` "failed: ..." and error nan);
* 2: invalid input (file, option, value): one line on stderr,
  ``rbdyn: error: FIELD: what is wrong, what is allowed``;
* 1: a numerical failure of a valid input: one line naming the time, the
  step and the cause; ``--out`` is left as it was, and the rows computed
  before the failure are written to ``NAME.partial.csv`` beside it (a study:
  every run failed; the outputs are left as they were, the rows stay in the
  journal ``OUT.journal``);
* 3: anything else, "internal error, please report" (the traceback with
  ``--debug`` or the environment variable ``RBDYN_DEBUG=1``);
* 130: interrupted (Ctrl-C): one line, and no output file written or changed
  (a study keeps its finished runs in its journal: the same command resumes it).

Outputs (``--out``, ``--plot``) are written to temporary files in the same
directory and renamed into place only when both are complete: a figure that
cannot be drawn or written leaves a previous ``--out`` as it was. After a
failure the figure is not written; after a finished run, the partial file of
an earlier failed one (``NAME.partial.csv``) is removed. ``--out -`` is
standard output; an ``--out`` that is a character device or a named pipe
(``/dev/null``, a FIFO) is written in place, after the other outputs are
complete (no temporary file, no rename, no partial file); a FIFO must have a
reader. An ``--out`` ending in a slash names a directory and is refused.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import os
import sys
import tomllib
from pathlib import Path

import numpy as np

from ._errors import (EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_NUMERICAL, EXIT_OK, InputError,
                      NumericalError, one_line)
from ._files import check_output, check_regular, is_stream, write_all
from .constraints import KINDS
from .run_length import MAX_STEPS, RunLength
from .scenarios import builtin_scenario_text, builtin_scenarios
from .integrators import schemes

__all__ = ["main"]

PLOT_FORMATS = ("png", "pdf", "svg")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2."""

    def error(self, message):
        raise InputError("", message, "arguments")


def _scheme_settings():
    """Every scheme setting as (option, field, type, {scheme names})."""
    found = {}
    for name, cls in schemes().items():
        for f in dataclasses.fields(cls):
            opt = "--" + f.name.replace("_", "-")
            typ = int if f.type in (int, "int") else float
            found.setdefault(f.name, [opt, typ, set()])[2].add(name)
    return found


def version_text() -> str:
    """What ``rbdyn --version`` prints: the version, the digest of rbdyn's sources (the one the
    book's pages show and its caches are keyed by) and the versions of Python and the libraries."""
    from . import __version__
    from ._stamp import short_digest, versions

    libs = ", ".join(f"{name} {v}" for name, v in versions().items())
    return f"rbdyn {__version__} (sources {short_digest()})\n{libs}"


class _Version(argparse.Action):
    """``--version``: print :func:`version_text` as it is (argparse's own action rewraps it)."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_text())
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="rbdyn",
        description="Rigid-body time integration: run benchmark or user scenarios.",
        epilog="Exit status: 0 finished (every number written finite); 2 invalid input (one line naming the field); "
               "1 numerical failure (one line naming the time and the step; --out is kept, the rows before the "
               "failure go to NAME.partial.csv, which a finished run removes); 3 internal error; 130 interrupted "
               "(Ctrl-C). Outputs are written to temporary files and renamed into place when all are complete; "
               "--out - is standard output, an --out that is a device or named pipe is written in place; "
               "otherwise --out, its partial file and --plot must "
               "be regular files other than the scenario. A run may take at most "
               f"{MAX_STEPS:.0e} steps (t_end/dt), whatever --every is.",
    )
    p.add_argument("--debug", action="store_true", help="show the traceback of an internal error (or RBDYN_DEBUG=1)")
    p.add_argument("--version", action=_Version, nargs=0,
                   help="print rbdyn's version, the digest of its sources and the versions it runs with")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("list", help="list the built-in scenarios and the schemes")
    show = sub.add_parser("show", help="print a built-in scenario file")
    show.add_argument("name", help="built-in scenario name")
    run_cmd = sub.add_parser("run", help="run a scenario and write CSV")
    run_cmd.add_argument("scenario", help="built-in scenario name or path to a TOML file")
    run_cmd.add_argument("--scheme", help="scheme name (see `rbdyn list`)")
    run_cmd.add_argument("--dt", type=float, help="step size h > 0")
    run_cmd.add_argument("--t-end", type=float, help="duration >= 0")
    run_cmd.add_argument("--every", type=int, help="output every N steps (N >= 1)")
    run_cmd.add_argument("--out", help="CSV file; '-' or none: standard output; a device or named pipe is written "
                                       "in place")
    run_cmd.add_argument("--plot", metavar="FILE", help="also write a figure of energy, momentum and constraint residual "
                                                    f"over time ({', '.join('.' + e for e in PLOT_FORMATS)})")
    run_cmd.add_argument("--no-progress", action="store_true", help="no progress bar on a terminal")
    for fld, (opt, typ, names) in sorted(_scheme_settings().items()):
        metavar = "N" if typ is int else ("RHO" if fld.startswith("rho") else "TOL")
        run_cmd.add_argument(opt, dest=f"setting_{fld}", type=typ, metavar=metavar,
                         help=f"setting of {', '.join(sorted(names))}")
    _study_parser(sub)
    return p


def _study_parser(sub) -> None:
    st = sub.add_parser(
        "study", help="run a grid of schemes and steps of a scenario: errors, orders, cost (here or on Dask)",
        description="Run every scheme (and setting, and variant) at every step, measure each run's error against "
                    "a reference (a closed form or DOP853 reference where the scenario has one, else a reference run), "
                    "its cost and drifts, and fit each scheme's order of convergence.",
        epilog="Exit status: 0 every run finished (a run that fails numerically is a row with status 'failed: ...' "
               "and error nan; every other number is finite); 2 invalid input, one line naming the field and its "
               "index (--dt[2]: must be > 0), nothing written; 1 every run failed (outputs unchanged, rows kept in "
               "OUT.journal); 3 internal error; 130 interrupted (the finished runs stay in OUT.journal: the same "
               "command resumes the study and runs only the rest). Outputs: --out (CSV, one row per run, columns "
               "scheme, settings, label, variant, dt, t_end, error, status, wall_s, cpu_s, steps, iterations, "
               "energy_drift and constraint_drift (not with --no-drift), worker, reference), OUT's name with .json "
               "(settings, references, fitted orders, the stamp of the code), --plot; written together when the study "
               "is complete.")
    st.add_argument("scenario", help="built-in scenario name or path to a TOML file")
    st.add_argument("--schemes", help="comma-separated scheme names (default: the file's run.scheme)")
    st.add_argument("--dt", help="comma-separated steps > 0 (default: the file's run.dt)")
    st.add_argument("--t-end", type=float, help="duration > 0 (default: the file's run.t_end)")
    st.add_argument("--setting", action="append", default=[], metavar="SCHEME.FIELD=V1,V2",
                    help="a scheme's setting, one value or several (each a run), e.g. gen_alpha.rho_inf=0.5,0.9; "
                         "repeat for more")
    st.add_argument("--override", action="append", default=[], metavar="NAME:KEY=VALUE",
                    help="a named variant of the scenario: a key of its file (dotted, arrays of tables indexed) and a "
                         "TOML value, e.g. fast:body[0].omega_body=[0.1,6.0,0.1]; repeat (one NAME, several keys; "
                         "several NAMEs, several variants)")
    st.add_argument("--reference", default="auto", metavar="auto|run|SCHEME@DT",
                    help="what errors are measured against: auto (a closed form or DOP853 reference where the "
                         "scenario has one, else a reference run), run (the most accurate scheme at a quarter of the "
                         "smallest step), or SCHEME@DT (that reference run)")
    st.add_argument("--out", help="CSV file (its .json beside it; the journal OUT.journal while it runs); "
                                  "'-' or none: standard output, no JSON, no resuming")
    st.add_argument("--plot", metavar="FILE", help="also write a figure of error against wall time and against the "
                                                   f"step ({', '.join('.' + e for e in PLOT_FORMATS)})")
    st.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler (tcp://host:8786): the runs go to "
                                                          "its workers")
    st.add_argument("--workers", type=int, help="local processes (default: one per core; 1: this process)")
    st.add_argument("--no-drift", action="store_true", help="do not measure the energy and constraint drift over "
                                                            "every step (no such columns; each run costs what rbdyn run costs)")
    st.add_argument("--no-progress", action="store_true", help="no progress bar on a terminal")


def _list(out):
    scen = builtin_scenarios()
    sch = schemes()
    kinds = {kind.kind: kind for kind in KINDS}
    width = max(map(len, list(scen) + list(sch) + list(kinds)))
    out.write("Scenarios:\n")
    for name, desc in scen.items():
        out.write(f"  {name:<{width}}  {desc}\n")
    out.write("Schemes:\n")
    for name, cls in sch.items():
        out.write(f"  {name:<{width}}  {cls.description}\n")
    out.write("Constraint kinds ([[constraint]] type = ...):\n")
    for name, cls in kinds.items():
        summary = (cls.__doc__ or "").strip().splitlines()[0].replace("``", "") if cls.__doc__ else ""
        out.write(f"  {name:<{width}}  {summary} Keys: {', '.join(sorted(cls.keys))}.\n")


def _run_arg_error(err, args, scenario):
    """simulate() names its own argument (dt, t_end, every): say whether it came
    from the command line (--dt ...) or from the file (run.dt ...)."""
    given = {"dt": args.dt, "t_end": args.t_end, "every": args.every}
    if err.field not in given:
        return err if err.source else err.with_source(scenario.source)
    if err.field == "dt" and args.dt is None and args.t_end is not None and "steps are allowed" in err.message:
        return InputError("--t-end", err.message, "arguments")  # too many steps: the --t-end given is the cause
    if given[err.field] is not None:
        return InputError("--" + err.field.replace("_", "-"), err.message, "arguments")
    return InputError(f"run.{err.field}", err.message, scenario.source)


def _run(args):
    from .scenario_files import load_scenario  # the model and the compiled code: only to run
    from .simulation import run

    scenario = load_scenario(args.scenario)
    settings = {k[len("setting_"):]: v for k, v in vars(args).items() if k.startswith("setting_") and v is not None}
    if args.scheme is not None and not args.scheme:
        raise InputError("--scheme", f"must name a scheme; allowed: {', '.join(schemes())}", "arguments")
    name = args.scheme if args.scheme is not None else scenario.scheme.name
    if args.scheme is None and not settings:
        scheme = scenario.scheme_named()  # errors name the file's run.scheme
    elif name not in schemes():
        raise InputError("--scheme", f"unknown scheme {name!r}; allowed: {', '.join(schemes())}", "arguments")
    else:
        own = {f.name for f in dataclasses.fields(schemes()[name])}
        for fld in settings:
            if fld not in own:
                allowed = ", ".join("--" + f.replace("_", "-") for f in sorted(own)) or "none"
                raise InputError("--" + fld.replace("_", "-"), f"is not a setting of {name} (its settings: {allowed})", "arguments")
        try:
            scheme = scenario.scheme_named(name, **settings)
        except InputError as err:
            if err.source:  # the file's own run.scheme
                raise
            opt = "--scheme" if err.field == "scheme" else "--" + err.field.rsplit(".", 1)[-1].replace("_", "-")
            raise InputError(opt, err.message, "arguments") from None
    dt, t_end, every = (
        scenario.dt if args.dt is None else args.dt,
        scenario.t_end if args.t_end is None else args.t_end,
        scenario.every if args.every is None else args.every,
    )
    try:  # checked here, once: before --out, and before a long run
        length = RunLength(dt, t_end, every)
    except InputError as err:
        raise _run_arg_error(err, args, scenario) from None
    target = _out_target(args, scenario) if args.out not in (None, "-") else None  # before a long run, not after it
    partial = _partial_target(target, scenario) if target is not None and not is_stream(target) else None
    figure = _plot_target(args, target, scenario) if args.plot is not None else None
    failure = None
    try:
        traj = run(scenario.system, scheme, length, progress=False if args.no_progress else None)
    except NumericalError as err:  # the rows before it go to a file that says they are partial
        failure, traj = err, err.trajectory
    except InputError as err:
        raise _run_arg_error(err, args, scenario) from None
    if failure is None:
        _write_outputs(traj, target, partial, figure, scenario.name)
        return
    if partial is None:
        raise NumericalError(failure.t, failure.step, failure.reason + "; no rows written (give --out FILE to keep the "
                                                                         "rows before the failure)", traj)
    _write_files([(partial, "--out", False, traj.to_csv)])
    raise NumericalError(failure.t, failure.step, f"{failure.reason}; {target.name} left unchanged, the rows before "
                                                  f"the failure are in {partial.name}", traj)


def _out_target(args, scenario) -> Path:
    """The resolved --out path, refused unless it is a new or existing file in a writable directory."""
    if not args.out:
        raise InputError("--out", "must name a file (or - for standard output)", "arguments")
    if args.out.endswith(("/", os.sep)):
        raise InputError("--out", f"{args.out!r} ends in a slash, which names a directory; name a file", "arguments")
    if is_stream(args.out):  # a device or named pipe, by the name given: /dev/stdout resolves to no path
        return Path(os.path.abspath(args.out))
    try:
        target = Path(args.out).resolve()
        ok = not target.is_dir() and target.parent.is_dir() and os.access(target.parent, os.W_OK)
    except (OSError, ValueError) as exc:
        raise InputError("--out", f"not a usable file name ({getattr(exc, 'strerror', None) or exc})", "arguments") from None
    if not ok:
        raise InputError("--out", f"cannot write {args.out!r}: not a file in an existing, writable directory", "arguments")
    if _is_scenario(target, scenario):
        raise InputError("--out", "is the scenario file itself; choose another file", "arguments")
    try:  # a device or a named pipe is written in place; a directory or socket is refused
        check_output(target)
    except OSError as exc:
        raise InputError("--out", f"{args.out!r} {exc.strerror}", "arguments") from None
    return target


def _is_scenario(path: Path, scenario) -> bool:
    """Whether ``path`` is the scenario file (by name, link or hard link)."""
    try:
        return bool(scenario.source) and Path(scenario.source).exists() and path.exists() \
            and os.path.samefile(path, scenario.source)
    except (OSError, ValueError):
        return False


def _check_regular(target: Path, option: str, what: str, advice: str = "") -> None:
    """Refuse (on ``option``) an existing ``target`` that is not a regular file: "WHAT exists and ...ADVICE"."""
    try:
        check_regular(target)
    except OSError as exc:
        raise InputError(option, f"{what} {exc.strerror}{advice}", "arguments") from None


def _partial_target(target: Path, scenario) -> Path:
    """Where the rows before a numerical failure go: NAME.partial.csv beside --out; refused before
    the run if that is the scenario file or not a regular file."""
    partial = target.with_name(f"{target.stem}.partial{target.suffix or '.csv'}")
    if _is_scenario(partial, scenario):
        raise InputError("--out", f"the rows of a failed run would go to {partial.name}, which is the scenario "
                                  "file; choose another --out", "arguments")
    _check_regular(partial, "--out", f"the rows of a failed run would go to {partial.name}, which",
                   "; choose another --out")
    return partial


def _plot_target(args, csv_target, scenario) -> Path:
    """The resolved --plot path: a new or existing .png/.pdf/.svg file in a writable directory."""
    suffix = Path(args.plot).suffix.lower().lstrip(".")
    if suffix not in PLOT_FORMATS:
        raise InputError("--plot", f"must end in one of {', '.join('.' + e for e in PLOT_FORMATS)} "
                                   f"(got {args.plot!r})", "arguments")
    try:
        target = Path(args.plot).resolve()
        ok = not target.is_dir() and target.parent.is_dir() and os.access(target.parent, os.W_OK)
    except (OSError, ValueError) as exc:
        raise InputError("--plot", f"not a usable file name ({getattr(exc, 'strerror', None) or exc})",
                         "arguments") from None
    if not ok:
        raise InputError("--plot", f"cannot write {args.plot!r}: not a file in an existing, writable directory",
                         "arguments")
    if csv_target is not None and target == csv_target:
        raise InputError("--plot", "is the --out file; choose another file", "arguments")
    if _is_scenario(target, scenario):
        raise InputError("--plot", "is the scenario file itself; choose another file", "arguments")
    _check_regular(target, "--plot", repr(args.plot))
    try:
        import matplotlib  # noqa: F401  (an optional dependency, needed only here)
    except ImportError:
        raise InputError("--plot", "needs matplotlib, which is not installed (pip install matplotlib)",
                         "arguments") from None
    return target


def _write_outputs(traj, target, partial, figure, title) -> None:
    """The outputs of a finished run: the CSV (``target``, or standard output when None) and the
    figure, both complete before either is renamed into place (:func:`_write_files`). The rows
    of an earlier failed run (``partial``) are removed: they no longer describe ``--out``."""
    files = []
    if target is not None:
        files.append((target, "--out", False, traj.to_csv))
    if figure is not None:
        from .plotting import plot_run  # matplotlib: an optional dependency, needed only here

        fmt = figure.suffix.lower().lstrip(".")
        files.append((figure, "--plot", True, lambda fh: plot_run(traj, fh, format=fmt, title=title)))
    _write_files(files)
    if target is None:
        traj.to_csv(sys.stdout)
    if partial is not None:
        try:
            if partial.is_file():
                partial.unlink()
        except OSError:  # a stale partial file that cannot be removed does not fail a finished run
            pass


def _write_files(files) -> None:
    """Write each ``(target, option, binary, write)``: ``write(file)`` into a temporary file beside
    ``target``, and rename them all into place only once every one is complete
    (:func:`rbdyn._files.write_all`; a device or named pipe is written in place, after the others
    are complete), so that one that fails (a figure that cannot be drawn, a full disk) leaves
    every previous target as it was. An error names the option; no temporary file is left."""
    options = {str(target): (target, option) for target, option, _, _ in files}
    try:
        write_all([(target, write, binary) for target, _, binary, write in files])
    except OSError as exc:
        target, option = options.get(exc.filename, (Path(exc.filename or "output"), "output"))
        raise _unwritten(target, option, exc) from None


def _unwritten(target: Path, option: str, exc: OSError) -> InputError:
    if is_stream(target):
        why = "the named pipe has no reader; start the reader first" if exc.errno == errno.ENXIO else \
            (exc.strerror or str(exc))
        return InputError(option, f"cannot write {target}: {why}", "output")
    return InputError(option, f"cannot write {target.name}: {exc.strerror or exc}; any previous {target.name} "
                              "is unchanged", "output")


# -- rbdyn study -----------------------------------------------------------------------------------
#: The API's field names (rbdyn.study) and the options that set them.
_STUDY_OPTIONS = {"schemes": "--schemes", "dt": "--dt", "t_end": "--t-end", "settings": "--setting",
                  "overrides": "--override", "reference": "--reference", "scheduler": "--scheduler",
                  "workers": "--workers", "out": "--out", "plot": "--plot"}


def _study_option(err: InputError) -> InputError:
    """An error of rbdyn.study named by the option it came from (``dt[2]`` is ``--dt[2]``); one
    of the scenario file (a variant's key, a setting) keeps its source."""
    if err.source and err.source != "arguments":
        return err
    head = err.field.split(".", 1)[0].split("[", 1)[0]
    if head not in _STUDY_OPTIONS:
        return err
    rest = err.field[len(head):]
    if head == "settings":
        rest = " " + rest.lstrip(".")
    elif head == "overrides":
        rest = " " + rest
    return InputError(_STUDY_OPTIONS[head] + rest, err.message, "arguments")


def _split(text: str, option: str) -> list[str]:
    items = [item.strip() for item in text.split(",")]
    for i, item in enumerate(items):
        if not item:
            raise InputError(f"{option}[{i}]", f"is empty; give a comma-separated list such as {option} A,B",
                             "arguments")
    return items


def _toml_value(text: str, option: str):
    """A value as a scenario file writes it (``0.5``, ``[0.1, 5.0, 0.1]``, ``"name"``)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        raise InputError(option, f"{text!r} is not a TOML value (a number, a string in quotes, an array such as "
                                 "[0.1, 5.0, 0.1])", "arguments") from None


def _study_args(args) -> dict:
    kw = {"t_end": args.t_end}
    if args.schemes is not None:
        kw["schemes"] = _split(args.schemes, "--schemes")
    if args.dt is not None:
        dts = []
        for i, item in enumerate(_split(args.dt, "--dt")):
            try:
                dts.append(float(item))
            except ValueError:
                raise InputError(f"--dt[{i}]", f"not a number: {item!r}; give steps > 0 such as 4e-3,2e-3,1e-3",
                                 "arguments") from None
        kw["dt"] = dts
    settings = {}
    for item in args.setting:
        name, dot, rest = item.partition(".")
        fld, eq, values = rest.partition("=")
        if not (dot and eq and name and fld and values):
            raise InputError("--setting", f"{item!r} is not SCHEME.FIELD=V1,V2 (e.g. gen_alpha.rho_inf=0.5,0.9)",
                             "arguments")
        parsed = [_toml_value(v, f"--setting {name}.{fld}[{j}]") for j, v in enumerate(_split(values, "--setting"))]
        settings.setdefault(name, {})[fld] = parsed
    kw["settings"] = settings or None
    variants = {}
    for item in args.override:
        name, colon, rest = item.partition(":")
        key, eq, value = rest.partition("=")
        if not (colon and eq and name and key.strip()):
            raise InputError("--override", f"{item!r} is not NAME:KEY=VALUE (e.g. fast:body[0].omega_body=[0.1,6.0,0.1])",
                             "arguments")
        variants.setdefault(name, {})[key.strip()] = _toml_value(value.strip(), f"--override [{name}].{key.strip()}")
    kw["overrides"] = variants or None
    ref = args.reference
    if ref not in ("auto", "run"):
        scheme, at, dt = ref.partition("@")
        try:
            kw["reference"] = (scheme, float(dt)) if at else ref
        except ValueError:
            raise InputError("--reference", f"{ref!r}: the step after @ is not a number; give auto, run or SCHEME@DT "
                                            "(e.g. rig_imp@1e-4)", "arguments") from None
    else:
        kw["reference"] = ref
    kw["scheduler"], kw["workers"] = args.scheduler, args.workers
    kw["progress"] = False if args.no_progress else None
    kw["drift"] = not args.no_drift
    return kw


def _study(args) -> None:
    from .studies import study  # numpy, the model, the references: only to run a study

    kw = _study_args(args)
    out = args.out
    if out is not None and out != "-":
        kw["out"] = out
    if args.plot is not None:
        kw["plot"] = args.plot
        suffix = Path(args.plot).suffix.lower().lstrip(".")
        if suffix not in PLOT_FORMATS:
            raise InputError("--plot", f"must end in one of {', '.join('.' + e for e in PLOT_FORMATS)} "
                                       f"(got {args.plot!r})", "arguments")
    try:
        result = study(args.scenario, **kw)
    except InputError as err:
        raise _study_option(err) from None
    if out is None or out == "-":
        result.to_csv(sys.stdout)
    # the summary goes where the CSV does not: stderr when the rows go to a stream (stdout, a pipe)
    print(result.summary(), file=sys.stderr if out is None or out == "-" or is_stream(out) else sys.stdout)


def _main(argv):
    args = _parser().parse_args(argv)
    if args.command == "list":
        _list(sys.stdout)
    elif args.command == "show":
        sys.stdout.write(builtin_scenario_text(args.name))
    elif args.command == "study":
        _study(args)
    else:
        _run(args)
    sys.stdout.flush()


def main(argv=None) -> int:
    """Run the command line; return the exit status (see the module docs)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv or os.environ.get("RBDYN_DEBUG", "") not in ("", "0")
    try:
        with np.errstate(all="ignore"):  # floating-point trouble is reported by the checks, in one line
            _main(argv)
    except InputError as err:
        print(f"rbdyn: error: {one_line(str(err))}", file=sys.stderr)
        return EXIT_INPUT
    except NumericalError as err:
        print(f"rbdyn: error: {one_line(str(err))}", file=sys.stderr)
        return EXIT_NUMERICAL
    except BrokenPipeError:  # e.g. `rbdyn run ... | head`
        return EXIT_OK
    except KeyboardInterrupt as exc:  # Ctrl-C: outputs are renamed into place only when complete, so none is touched
        if hasattr(exc, "rbdyn_study"):  # a study keeps its finished runs in its journal
            done, total, journal = exc.rbdyn_study
            kept = (f"they are kept in {journal}, and the same command runs only the rest" if journal is not None
                    else "they are lost (give --out FILE to keep finished runs and resume)")
            print(f"rbdyn: interrupted after {done} of {total} runs; {kept}; --out and --plot files were not written "
                  "or changed", file=sys.stderr)
            return EXIT_INTERRUPTED
        where = f" at t = {exc.rbdyn_t!r} (step {exc.rbdyn_step})" if hasattr(exc, "rbdyn_step") else ""
        print(f"rbdyn: interrupted{where}; --out and --plot files were not written or changed", file=sys.stderr)
        return EXIT_INTERRUPTED
    except MemoryError:  # simulate() turns its own allocation's into an InputError; this is any other's
        print("rbdyn: error: memory: the run needs more memory than is available; increase --every or --dt, "
              "or shorten --t-end", file=sys.stderr)
        return EXIT_INPUT
    except OSError as exc:  # standard output on a full disk, for example
        print(f"rbdyn: error: output: cannot write: {one_line(exc.strerror or str(exc))}", file=sys.stderr)
        return EXIT_INPUT
    except Exception as exc:  # a bug: say so in one line, unless asked for the traceback
        if debug:
            raise
        print(f"rbdyn: error: internal error, please report: {one_line(type(exc).__name__ + ': ' + str(exc))}",
              file=sys.stderr)
        return EXIT_INTERNAL
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
