"""Replay v3 runs written by ``twolink realaigym v3`` through RealAIGym's own equations of motion.

Usage::

    python benchmarks/realaigym_v3_replay.py OUT_DIR --robot acrobot [--tolerance 1e-10]

For every ``OUT_DIR/*/sim_swingup.csv``: one RK4 step of 2 ms of RealAIGym's
plant, written out here in their angles with their joint-axis inertias and their
``UnderactuatedLecture`` formulas (not our dynamics), from each recorded state
with the recorded torque must land on the next recorded state; and over each
push (from the first row at or after its time in
:func:`twolink_gym.realaigym.v3.schedule` until its timer of the row times
exceeds 0.2 s) the recorded torque must be the protocol's PID plus gravity
compensation, recomputed here. Prints the largest errors per run; exits 1 if one
exceeds the tolerance.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from twolink_gym.realaigym import read_csv
from twolink_gym.realaigym.v3 import schedule

M1, M2 = 0.5234602302310271, 0.6255677234174437
L1, L2 = 0.2, 0.3
R1, R2 = 0.2, 0.25569305436052964
I1, I2 = 0.031887199591513114, 0.05086984812807257
G = 9.81
DT = 0.002


def rhs(x: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``ẋ`` of RealAIGym's plant, rows ``(n, 4)`` in their angles."""
    q1, q2, dq1, dq2 = x.T
    c2, s2 = np.cos(q2), np.sin(q2)
    m11 = I1 + I2 + M2 * L1**2 + 2 * M2 * L1 * R2 * c2
    m12 = I2 + M2 * L1 * R2 * c2
    h = M2 * L1 * R2 * s2
    g1 = -M1 * G * R1 * np.sin(q1) - M2 * G * (L1 * np.sin(q1) + R2 * np.sin(q1 + q2))
    g2 = -M2 * G * R2 * np.sin(q1 + q2)
    b1 = u[:, 0] + g1 + 2 * h * dq2 * dq1 + h * dq2 * dq2
    b2 = u[:, 1] + g2 - h * dq1 * dq1
    det = m11 * I2 - m12 * m12
    return np.stack([dq1, dq2, (I2 * b1 - m12 * b2) / det, (m11 * b2 - m12 * b1) / det], 1)


def rk4(x: np.ndarray, u: np.ndarray) -> np.ndarray:
    k1 = rhs(x, u)
    k2 = rhs(x + 0.5 * DT * k1, u)
    k3 = rhs(x + 0.5 * DT * k2, u)
    k4 = rhs(x + DT * k3, u)
    return x + DT * (k1 + 2 * (k2 + k3) + k4) / 6


def push_errors(t: np.ndarray, x: np.ndarray, u: np.ndarray, robot: str) -> float:
    """Largest |recorded − protocol| torque over the push windows."""
    pushes = schedule(robot)
    errors, rows = [], []
    for target, when in zip(pushes.targets[:, :2], pushes.times, strict=True):
        start = int(np.argmax(t >= when))
        # the push's timer adds t_k - t_{k-1} from its first step; it ends at the first
        # step at which the timer exceeds 0.2 s
        timer, stop = 0.0, start
        while not timer > 0.2 and stop < len(t):
            timer += t[stop] - t[stop - 1]
            stop += 1
        window = np.arange(start, stop)
        rows.append(window)
        errors.append(target - x[window, :2])
    e = np.vstack(errors)
    q = x[np.concatenate(rows), :2]
    integral = 0.1 * np.cumsum(e, axis=0) * 0.001
    derivative = np.zeros_like(e)
    derivative[2:] = np.diff(e, axis=0)[1:] / 0.001
    s1, s12 = np.sin(q[:, 0]), np.sin(q[:, 0] + q[:, 1])
    grav = np.stack([M1 * G * R1 * s1 + M2 * G * (L1 * s1 + R2 * s12), M2 * G * R2 * s12], 1)
    pid = np.clip(10.0 * e + integral + derivative, -6.0, 6.0)
    expected = np.clip(pid + grav, -6.0, 6.0)
    return float(np.max(np.abs(expected - u[np.concatenate(rows)])))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--robot", required=True, choices=("acrobot", "pendubot"))
    parser.add_argument("--tolerance", type=float, default=1e-10)
    args = parser.parse_args()
    files = sorted(args.out_dir.glob("*/sim_swingup.csv"))
    if not files:
        parser.error(f"no */sim_swingup.csv under {args.out_dir}")
    worst = 0.0
    for path in files:
        tr = read_csv(path)
        step_error = float(np.max(np.abs(rk4(tr.x[:-1], tr.u[:-1]) - tr.x[1:])))
        torque_error = push_errors(tr.t, tr.x, tr.u, args.robot)
        worst = max(worst, step_error, torque_error)
        print(
            f"{path.parent.name:36s} {len(tr.t)} rows, max one-step state error {step_error:.1e}, "
            f"max push torque error {torque_error:.1e}"
        )
    print(f"largest error {worst:.1e} (tolerance {args.tolerance:g})")
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
