"""Compile rbdyn's kernels into numba's on-disk cache before parallel runs.

``python -m rbdyn._precompile [SCHEME ...]`` takes a few steps with each scheme named (all by
default) on a free body and on constrained systems (the revolute, spherical and rod kinds, a
spring and a motor torque), with and without recording every step and with the streaming
reductions, so that the kernel signatures the book and the tests use are compiled and cached.
``dev.py`` runs it, the schemes split between as many processes as it has workers, before it
starts pytest's workers: each of those would otherwise compile the same kernels at the same time
(numba does not share a compilation in progress), which after any change to rbdyn costs minutes.
"""

from __future__ import annotations

import sys
import time


def main(names=()) -> float:
    """Compile the kernels of the schemes ``names`` (all if empty); returns the seconds taken."""
    import rbdyn

    start = time.perf_counter()
    registry = rbdyn.schemes()
    free = rbdyn.load_scenario("boxes-complex")
    constrained = [rbdyn.load_scenario(name) for name in ("pendulum-solfec", "andrews", "heavy-top-kynema")]
    for name in names or registry:
        cls = registry[name]
        for sc in [free] + (constrained if cls.supports_constraints else []):
            n = 4
            for every, reduce in ((n, False), (1, False), (n, True)):
                rbdyn.simulate(sc.system, name, sc.dt, n * sc.dt, every=every, reduce=reduce)
    return time.perf_counter() - start


if __name__ == "__main__":
    names = sys.argv[1:]
    print(f"rbdyn: kernels of {', '.join(names) or 'every scheme'} compiled in {main(names):.0f} s", flush=True)
