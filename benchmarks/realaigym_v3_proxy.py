r"""A cheap, batched proxy of the v3 board for tuning a global swing-up: recovery from pushes.

Every start state is one the protocol's push leaves: 30 pushes of 0.2 s (the push PID of
:class:`~twolink_gym.realaigym.v3.ResetSupervisor`, fresh memory, plus gravity compensation)
from the upright at rest, towards the robot's 15 schedule targets and 15 random ones; with
``--board-csv``, also the hand-back states of a run ``twolink realaigym v3`` wrote (its
``sim_swingup.csv``). From all of them at once the variant drives the protocol's plant (RK4,
2 ms, both joints clipped to ±6 N·m) for ``--horizon`` seconds; the proxy is the mean fraction
of that time the tip is above 0.45 m (the v3 score's test).

Usage::

    python benchmarks/realaigym_v3_proxy.py realaigym_pendubot_global --robot pendubot \
        [--board-csv results/realaigym_pendubot_global/sim_swingup.csv] \
        [--set brake_level=4 --set brake_gain=1] [--horizon 3.5]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from twolink_gym.integrators import step
from twolink_gym.realaigym.arm import arm, from_realaigym_state, to_realaigym_state
from twolink_gym.realaigym.controllers import VARIANTS, variant_runner
from twolink_gym.realaigym.protocol import DT
from twolink_gym.realaigym.scoring import above_line, read_csv
from twolink_gym.realaigym.v3 import (
    LINKS,
    RESET_LENGTH,
    TORQUE_LIMIT,
    PushPID,
    ResetSupervisor,
    schedule,
)

PLANT = arm()


def pushes_from_upright(robot: str, n_random: int = 15, seed: int = 0) -> np.ndarray:
    """States ``(15 + n_random, 4)`` (our angles) the push leaves from the upright at rest."""
    targets = schedule(robot).targets[:, :2]
    rng = np.random.RandomState(seed)
    targets = np.vstack([targets, rng.uniform(-math.pi, math.pi, (n_random, 2))])
    y = np.tile([math.pi / 2, 0.0, 0.0, 0.0], (len(targets), 1))
    pid = PushPID(targets, PLANT)  # fresh memory: each push as the run's first
    for _ in range(round(RESET_LENGTH / DT)):
        tau = pid.torque(to_realaigym_state(y))
        y = step(PLANT, y, np.clip(tau, -TORQUE_LIMIT, TORQUE_LIMIT), DT, 1)
    return y


def hand_back_states(csv: str, robot: str) -> np.ndarray:
    """The states (our angles) at which a written v3 run handed the arm back after each push."""
    tr = read_csv(csv)
    supervisor = ResetSupervisor(schedule(robot))
    pushed = np.array([supervisor.in_push(float(t)) for t in tr.t])
    ends = np.flatnonzero(pushed[:-1] & ~pushed[1:]) + 1
    return from_realaigym_state(tr.x[ends])


def uptime_fraction(
    name: str, robot: str, starts: np.ndarray, horizon: float, **gains: float
) -> np.ndarray:
    """Fraction of ``horizon`` [s] the tip is above the line, per start state ``(n,)``."""
    runner = variant_runner(name, robot, **gains)
    y, state = starts.copy(), None
    up = np.zeros(len(y))
    steps = round(horizon / DT)
    for k in range(steps):
        if k % runner.decision_steps == 0:  # the command is held between decisions
            tau, state = runner.command(y, state, k == 0)
        up += above_line(y[:, :2] + [math.pi / 2, 0.0], LINKS)  # their angles
        y = step(PLANT, y, np.clip(tau, -TORQUE_LIMIT, TORQUE_LIMIT), DT, 1)
    return up / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("variant", choices=sorted(VARIANTS))
    parser.add_argument("--robot", choices=("acrobot", "pendubot"), required=True)
    parser.add_argument("--board-csv", help="a v3 run's sim_swingup.csv: add its hand-back states")
    parser.add_argument("--horizon", type=float, default=3.5, help="[s] per start state")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one of the variant's gains (a float; inf allowed)")  # fmt: skip
    args = parser.parse_args()
    gains = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--set takes KEY=VALUE, got {item!r}")
        gains[key] = float(value)
    starts = pushes_from_upright(args.robot)
    if args.board_csv:
        starts = np.vstack([starts, hand_back_states(args.board_csv, args.robot)])
    t0 = time.perf_counter()
    up = uptime_fraction(args.variant, args.robot, starts, args.horizon, **gains)
    board = f", board states {up[30:].mean():.3f}" if args.board_csv else ""
    print(
        f"{args.variant} {gains}: proxy {up.mean():.3f} over {len(up)} starts (worst {up.min():.3f};"
        f" pushes from the upright {up[:30].mean():.3f}{board}), {args.horizon} s each,"
        f" {time.perf_counter() - t0:.0f} s"
    )


if __name__ == "__main__":
    main()
