"""``twolink robustness``: success of policies under model mismatch, noise, slow motors, delay."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from twolink_gym.training.commands._args import add_evaluation_parser, add_overwrite, integer

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Add ``robustness``."""
    p = add_evaluation_parser(
        sub,
        "robustness",
        "success of policies under model mismatch, noise, slow motors and delay",
        "Run every policy on the evaluation episodes nominally and under each condition "
        "(one variation of the true arm, its sensors or motors at a time; controllers keep "
        "the config's arm as their model) and report success per condition and a "
        "robustness score in [0, 1] (docs/robustness.md).",
        "+",
    )
    p.add_argument(
        "--conditions",
        nargs="+",
        metavar="NAME",
        help="which variations (default: all): model, obs_noise, torque_noise, "
        "torque_response, action_delay, observation",
    )
    p.add_argument(
        "--levels",
        nargs="+",
        metavar="NAME=V1,V2",
        help="levels of a variation, replacing its defaults, e.g. model=0.7,1.3 "
        "obs_noise=0.02 action_delay=1,2,3",
    )
    p.add_argument("--episodes", type=integer(1), help="number of episodes (default: config)")
    p.add_argument(
        "--out",
        help="output folder (default: <run>/robustness or <output dir>/robustness/<name>)",
    )
    add_overwrite(p, "replace the results in the output folder (default: refuse if it holds some)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``twolink robustness``."""
    from twolink_gym.training.commands._setup import default_output, setup_from_args
    from twolink_gym.training.conditions import parse_levels
    from twolink_gym.training.robustness import check_output, robustness, write_results

    setup = setup_from_args(args)
    if not setup.policies:
        raise ValueError("give at least one policy (after the config, if any)")
    cfg = setup.cfg
    levels = parse_levels(args.levels or ())
    out = Path(args.out) if args.out else default_output("robustness", setup, setup.policies)
    check_output(out, args.overwrite)
    result = robustness(
        cfg,
        setup.policies,
        kinds=args.conditions,
        levels=levels,
        episodes=args.episodes,
        progress=print,
    )
    table = write_results(result, out)
    print(table, end="")
    print(f"robustness.json, table.md, robustness.png and timing.json in {out}/")
    return 0
