"""The ``rbdyn`` command line.

``rbdyn list`` prints the built-in scenarios and the schemes;
``rbdyn show NAME`` prints a built-in scenario file (to copy and edit);
``rbdyn run SCENARIO [options]`` runs a scenario and writes CSV.

Exit status: 0 on success, 2 for invalid input (one line on stderr naming
the file or argument, the field and what is allowed), 1 for a numerical
failure (naming the time and the step; the rows computed before it are
still written).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path

from ._errors import InputError, NumericalError
from ._scenario import builtin_scenario_text, builtin_scenarios, load_scenario
from ._scheme import schemes
from ._simulate import _check_run_args

__all__ = ["main"]


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


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="rbdyn", description="Rigid-body time integration: run benchmark or user scenarios.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("list", help="list the built-in scenarios and the schemes")
    show = sub.add_parser("show", help="print a built-in scenario file")
    show.add_argument("name", help="built-in scenario name")
    run = sub.add_parser("run", help="run a scenario and write CSV")
    run.add_argument("scenario", help="built-in scenario name or path to a TOML file")
    run.add_argument("--scheme", help="scheme name (see `rbdyn list`)")
    run.add_argument("--dt", type=float, help="step size h > 0")
    run.add_argument("--t-end", type=float, help="duration >= 0")
    run.add_argument("--every", type=int, help="output every N steps (N >= 1)")
    run.add_argument("--out", help="CSV file (default: stdout)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar on a terminal")
    for fld, (opt, typ, names) in sorted(_scheme_settings().items()):
        run.add_argument(opt, dest=f"setting_{fld}", type=typ, help=f"setting of {', '.join(sorted(names))}")
    return p


def _list(out):
    scen = builtin_scenarios()
    sch = schemes()
    width = max(map(len, list(scen) + list(sch)))
    out.write("Scenarios:\n")
    for name, desc in scen.items():
        out.write(f"  {name:<{width}}  {desc}\n")
    out.write("Schemes:\n")
    for name, cls in sch.items():
        out.write(f"  {name:<{width}}  {cls.description}\n")


def _run_arg_error(err, args, scenario):
    """simulate() names its own argument (dt, t_end, every): say whether it came
    from the command line (--dt ...) or from the file (run.dt ...)."""
    given = {"dt": args.dt, "t_end": args.t_end, "every": args.every}
    if err.field not in given:
        return err
    if given[err.field] is not None:
        return InputError("--" + err.field.replace("_", "-"), err.message, "arguments")
    return InputError(f"run.{err.field}", err.message, scenario.source)


def _run(args):
    scenario = load_scenario(args.scenario)
    settings = {k[len("setting_"):]: v for k, v in vars(args).items() if k.startswith("setting_") and v is not None}
    name = args.scheme or scenario.scheme.name
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
    try:  # the checks simulate() makes, before --out and before a long run
        _check_run_args(dt, t_end, every)
    except InputError as err:
        raise _run_arg_error(err, args, scenario) from None
    if args.out:  # fail before a long run, not after it
        target = Path(args.out)
        if target.is_dir() or not target.resolve().parent.is_dir() or not os.access(target.resolve().parent, os.W_OK):
            raise InputError("--out", f"cannot write {args.out!r}: not a file in an existing, writable directory", "arguments")
    failure = None
    try:
        traj = scenario.run(scheme, dt, t_end, every, progress=False if args.no_progress else None)
    except NumericalError as err:  # still write the rows computed before it
        failure, traj = err, err.trajectory
    except InputError as err:
        raise _run_arg_error(err, args, scenario) from None
    if args.out:
        try:
            with open(args.out, "w", encoding="utf-8") as out:
                traj.to_csv(out)
        except OSError as exc:
            raise InputError("--out", f"cannot write {args.out!r}: {exc.strerror}", "arguments") from None
    else:
        traj.to_csv(sys.stdout)
    if failure is not None:
        raise failure


def main(argv=None) -> int:
    """Run the command line; return the exit status."""
    try:
        args = _parser().parse_args(argv)
        if args.command == "list":
            _list(sys.stdout)
        elif args.command == "show":
            sys.stdout.write(builtin_scenario_text(args.name))
        else:
            _run(args)
    except InputError as err:
        print(f"rbdyn: error: {err}", file=sys.stderr)
        return 2
    except NumericalError as err:
        print(f"rbdyn: error: {err}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `rbdyn run ... | head`
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
