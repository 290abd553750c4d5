"""``twolink summarize``: one table and seed-band plot for several sweeps."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Add ``summarize``."""
    p = sub.add_parser(
        "summarize", help="one table and seed-band plot for several sweeps (e.g. PPO and SAC)"
    )
    p.add_argument("sweeps", nargs="+", help="sweep folders (<output_dir>/<name>_sweep)")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument(
        "--baseline",
        metavar="SWEEP",
        help="a sweep folder to compare every other sweep with: difference of the mean "
        "success rate with its bootstrap interval, probability of improvement, Mann-Whitney p "
        "(comparison.md)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``twolink summarize``."""
    from twolink_gym.training.sweep import combine_sweeps

    print(combine_sweeps(args.sweeps, args.out, baseline=args.baseline), end="")
    extra = ", comparison.md/.json" if args.baseline else ""
    print(f"table.md, learning_curves.png, sweeps.json{extra} in {args.out}/")
    return 0
