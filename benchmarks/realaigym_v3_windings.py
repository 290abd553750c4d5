"""How wound the arm is when v3 pushes it, and how fast the push hands it back, per run.

Usage::

    python benchmarks/realaigym_v3_windings.py OUT_DIR [OUT_DIR ...] --robot pendubot

For every ``OUT_DIR/*/sim_swingup.csv`` written by ``twolink realaigym v3`` (the
board's pushes): at each push's first row (the first at or after its time in
:func:`twolink_gym.realaigym.v3.schedule`) the whole turns each joint is wound
beyond the range of the push targets, ``[-π, π)`` in RealAIGym's angles (the
push PID does not wrap angles, so an arm wound ``k`` turns is pushed back
through them): the shoulder ``max(0, round((|q1| - π) / 2π))`` (0 at either
upright, ``±π``), the elbow ``|round(q2 / 2π)|``; the share of the pushes that meet the
arm wound by :func:`twolink_gym.tasks.push.wound` (the swing-up task's
``wound_weight`` reads it; wound exactly when a joint's turns above are not 0);
and at the hand-back (100 rows later) the larger joint speed. Prints per run
the v3 score, the mean ``|turns|`` of each joint, the wound share, the median
and largest hand-back speed; then the Spearman rank correlations, over the
runs, of the score with the mean ``|turns|`` of both joints, the wound share
and the median hand-back speed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from twolink_gym.realaigym import read_csv
from twolink_gym.realaigym.arm import from_realaigym_state
from twolink_gym.realaigym.v3 import schedule, score_v3
from twolink_gym.tasks.push import wound

#: Rows from a push's first to its hand-back (a push lasts 100 or 101 steps of 2 ms).
PUSH_ROWS = 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--robot", required=True, choices=["acrobot", "pendubot"])
    args = parser.parse_args()
    times = schedule(args.robot).times
    files = sorted(f for d in args.dirs for f in d.glob("*/sim_swingup.csv"))
    if not files:
        parser.error(f"no */sim_swingup.csv under {[str(d) for d in args.dirs]}")
    print(
        f"{'run':<60} {'score':>6} {'|turns| 1':>9} {'|turns| 2':>9} {'wound':>6} "
        f"{'median':>7} {'max':>6}"
    )
    scores, turned, shares, speeds = [], [], [], []
    for path in files:
        tr = read_csv(path)
        starts = np.searchsorted(tr.t, times - 1e-9)
        q = tr.x[starts, :2]
        shoulder = np.maximum(0.0, np.round((np.abs(q[:, 0]) - np.pi) / (2 * np.pi)))
        turns = np.column_stack([shoulder, np.abs(np.round(q[:, 1] / (2 * np.pi)))])
        ours = from_realaigym_state(tr.x[starts])
        share = float(np.mean([wound(q1, q2) for q1, q2 in ours[:, :2]]))
        assert share == float(np.mean(turns.max(axis=1) > 0))  # the two definitions agree
        back = np.abs(tr.x[starts + PUSH_ROWS, 2:]).max(axis=1)
        score = score_v3(tr).score
        scores.append(score)
        turned.append(turns.mean(axis=0).sum())
        shares.append(share)
        speeds.append(np.median(back))
        name = f"{path.parent.parent.name}/{path.parent.name}"[-60:]
        print(
            f"{name:<60} {score:6.3f} {turns[:, 0].mean():9.2f} {turns[:, 1].mean():9.2f} "
            f"{share:6.2f} {np.median(back):7.1f} {back.max():6.1f}"
        )
    if len(files) > 2:
        rho_turns = spearmanr(scores, turned).statistic
        rho_share = spearmanr(scores, shares).statistic
        rho_speed = spearmanr(scores, speeds).statistic
        print(
            f"Spearman over {len(files)} runs: score vs mean |turns| (both joints) "
            f"{rho_turns:.2f}, vs wound share {rho_share:.2f}, "
            f"vs median hand-back speed {rho_speed:.2f}"
        )


if __name__ == "__main__":
    main()
