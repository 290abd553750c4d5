"""Replay RealAIGym's published trajectories through our dynamics, one step at a time.

Usage::

    python benchmarks/realaigym_replay.py DATA_DIR [--tolerance 1e-9]

``DATA_DIR`` holds the published ``sim_swingup.csv`` files and
``published_scores.json`` (each entry's ``csv``, ``model`` and ``score_version``).
From each recorded state, one RK4 step of 2 ms with the recorded torque
(:func:`twolink_gym.step` on :func:`twolink_gym.realaigym.arm.arm`) must land on
the next recorded state. v2 files pair state ``k`` with the torque applied from
it; v1 files with the torque that led to it, so the torque applied from state
``k`` is on row ``k + 1``. The archived v1 acrobot arm (C.0/3.1) has no
rigid-body equivalent (negative inertia) and is skipped. Prints the largest
state error per file; exits 1 if one exceeds the tolerance.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from twolink_gym import step
from twolink_gym.realaigym import read_csv
from twolink_gym.realaigym.arm import DESIGNS, arm, from_realaigym_state

DT = 0.002


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--tolerance", type=float, default=1e-9)
    args = parser.parse_args()
    index = args.data_dir / "published_scores.json"
    if not index.is_file():
        parser.error(f"{index} does not exist")
    worst = 0.0
    for name, entry in sorted(json.loads(index.read_text()).items()):
        if entry["model"] not in DESIGNS:
            print(f"{name:32s} {entry['model']:8s} skipped (no rigid-body equivalent)")
            continue
        trajectory = read_csv(args.data_dir / entry["csv"])
        x = from_realaigym_state(trajectory.x)
        torque = trajectory.u[:-1] if entry["score_version"] == "v2" else trajectory.u[1:]
        predicted = step(arm(entry["model"]), x[:-1], torque, DT)
        error = float(np.max(np.abs(predicted - x[1:])))
        worst = max(worst, error)
        print(f"{name:32s} {entry['model']:8s} {len(x) - 1} steps, max |error| {error:.2e}")
    print(f"largest one-step state error {worst:.2e} (tolerance {args.tolerance:g})")
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
