"""Measure the RK4 integrator's energy drift on a chaotic free swing.

With zero torque and zero friction the total energy is conserved; the drift of
:func:`twolink_gym.step` measures the integration error. The arm is released
from ``x = [0.3, -0.5, 0, 0]`` (docs/physics.md) and simulated for 10 s.

Usage::

    python benchmarks/energy_drift.py [--seconds 10] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from twolink_gym import ArmParams, step, total_energy

CASES = [(0.02, 1), (0.02, 2), (0.02, 4), (0.01, 1), (0.01, 2), (0.05, 5)]


def drift(dt: float, substeps: int, seconds: float) -> tuple[float, float]:
    """Return the largest and the final relative energy error over ``seconds``."""
    params = ArmParams(friction1=0.0, friction2=0.0)
    x = np.array([0.3, -0.5, 0.0, 0.0])
    e0 = float(total_energy(params, x))
    worst = 0.0
    for _ in range(round(seconds / dt)):
        x = step(params, x, np.zeros(2), dt, substeps)
        worst = max(worst, abs(float(total_energy(params, x)) - e0))
    return worst / abs(e0), abs(float(total_energy(params, x)) - e0) / abs(e0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--json", type=str, default=None, help="write the results here")
    args = parser.parse_args()
    rows = []
    print("| dt [s] | substeps | sub-step [ms] | max relative drift | final relative drift |")
    print("|---|---|---|---|---|")
    for dt, n in CASES:
        t0 = time.perf_counter()
        worst, final = drift(dt, n, args.seconds)
        rows.append(
            {
                "dt": dt,
                "substeps": n,
                "max_drift": worst,
                "final_drift": final,
                "seconds": time.perf_counter() - t0,
            }
        )
        print(f"| {dt} | {n} | {1000 * dt / n:.1f} | {worst:.2e} | {final:.2e} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()
