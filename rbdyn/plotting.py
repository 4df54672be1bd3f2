"""The book's figure style, the quick figure of ``rbdyn run --plot`` and that of ``rbdyn study --plot``.

``STYLE`` is one matplotlib style file for the whole manual (colour-blind-safe colours, sizes for
the theme's text column). ``dev.py`` points ``MATPLOTLIBRC`` at it for the book, the tests and
``dev.py lab``, so every page draws with it without a line of its own; elsewhere
``matplotlib.pyplot.style.use(rbdyn.plotting.STYLE)`` applies it.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["STYLE", "plot_run", "plot_study"]

STYLE = str(Path(str(resources.files("rbdyn") / "book.mplstyle")))


def plot_run(traj, path, format=None, title=None) -> None:
    """Energy, momentum and constraint residual of ``traj`` over time, in the book's style.

    Three panels: the energy's change from its initial value (relative when the initial energy
    is not zero), the changes of the linear and angular momentum, and the largest constraint
    residual (when the system has constraints). Drawn with the non-interactive Agg backend.

    Parameters
    ----------
    traj : rbdyn.Trajectory
    path : str, path-like or binary file object
        Where the figure is written.
    format : str, optional
        ``"png"``, ``"pdf"`` or ``"svg"``; by default from the file name's extension.
    title : str, optional
        Put before the scheme, step size and number of steps in the figure's title.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    import numpy as np

    t = traj.t
    with plt.style.context(STYLE):
        n = 3 if traj.constraint_residuals.shape[1] else 2
        fig, axes = plt.subplots(n, 1, figsize=(7.2, 2.2 * n), sharex=True)
        E = traj.energy
        scale = abs(E[0]) if E[0] != 0 else 1.0
        axes[0].plot(t, (E - E[0]) / scale)
        axes[0].set_ylabel(r"$(E - E_0)/|E_0|$" if E[0] != 0 else r"$E - E_0$ (J)")
        run = f"{traj.scheme.name}, h = {traj.dt:g} s, {traj.steps} steps"
        axes[0].set_title(f"{title}: {run}" if title else run)
        p, L = traj.linear_momentum, traj.angular_momentum
        axes[1].plot(t, np.linalg.norm(p - p[0], axis=1), label=r"$|p - p_0|$ (N s)")
        axes[1].plot(t, np.linalg.norm(L - L[0], axis=1), label=r"$|L - L_0|$ (N m s)")
        axes[1].set_ylabel("momentum change")
        axes[1].legend()
        if n == 3:
            axes[2].semilogy(t, np.maximum(traj.constraint, 1e-18))
            axes[2].set_ylabel("largest residual (m)")
            axes[2].set_title("(residuals below 1e-18 m drawn at 1e-18)", fontsize="small", loc="right")
        axes[-1].set_xlabel("t (s)")
        fig.tight_layout()
        fig.savefig(path, format=format)
        plt.close(fig)


def plot_study(result, path, format=None, title=None) -> None:
    """Work–precision and convergence of a study (:func:`rbdyn.study`), in the book's style.

    Two panels, one line per scheme configuration (and per variant, for up to six variants; with
    more, every run is a point): the error against the wall time of the run (work–precision: down
    and to the left is better) and against the step, with each fitted order in the legend
    (:func:`rbdyn.verify.fit_order`). Failed runs and errors of zero are left out. Drawn on a
    figure of its own, without pyplot: no backend is chosen or changed (a notebook's inline
    figures go on as before).

    Parameters
    ----------
    result : rbdyn.StudyResult
    path : str, path-like or binary file object
        Where the figure is written.
    format : str, optional
        ``"png"``, ``"pdf"`` or ``"svg"``; by default from the file name's extension.
    title : str, optional
        Put before the duration in the figure's title.
    """
    import matplotlib.style
    import matplotlib.ticker
    import numpy as np
    from matplotlib.figure import Figure

    many = len(result.variants) > 6
    with matplotlib.style.context(STYLE):
        fig = Figure(figsize=(9.6, 3.8))
        work, steps = fig.subplots(1, 2)
        for k, label in enumerate(result.labels):
            colour = f"C{k % 10}"
            for variant in result.variants:
                rows = [r for r in result.select(label, variant) if r["status"] == "ok" and r["error"] > 0]
                if not rows:
                    continue
                dt = np.array([r["dt"] for r in rows])
                err = np.array([r["error"] for r in rows])
                cost = np.array([r["wall_s"] for r in rows])
                order = np.argsort(dt)
                style = {"ls": "none"} if many else {"ls": "-"}
                fit = result.orders.get((label, variant))
                name = label + (f" [{variant}]" if variant and not many else "")
                first = variant == result.variants[0]
                legend = (f"{name}: order {fit:.2f}" if fit is not None else name) if (first or not many) else None
                by_cost = np.argsort(cost)
                work.loglog(cost[by_cost], err[by_cost], marker="o", ms=3, color=colour, label=legend, **style)
                steps.loglog(dt[order], err[order], marker="o", ms=3, color=colour, label=legend, **style)
        work.set_xlabel("wall time of the run (s)")
        steps.set_xlabel("step h (s)")
        unit = {r["unit"] for r in result.references.values()}
        ylabel = "error" + (f" ({unit.pop()})" if len(unit) == 1 and "" not in unit else "")
        for ax in (work, steps):
            ax.set_ylabel(ylabel)
            ax.grid(alpha=0.3, which="both")
        work.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # decades only: no crowded labels
        steps.legend(fontsize="small")
        head = f"{title}, " if title else ""
        fig.suptitle(f"{head}t_end = {result.t_end:g} s: error against cost (left) and step (right)")
        fig.tight_layout()
        fig.savefig(path, format=format)
