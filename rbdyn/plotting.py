"""The book's figure style, and the quick figure of ``rbdyn run --plot``.

``STYLE`` is one matplotlib style file for the whole manual (colour-blind-safe colours, sizes for
the theme's text column). ``dev.py`` points ``MATPLOTLIBRC`` at it for the book, the tests and
``dev.py lab``, so every page draws with it without a line of its own; elsewhere
``matplotlib.pyplot.style.use(rbdyn.plotting.STYLE)`` applies it.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["STYLE", "plot_run"]

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
