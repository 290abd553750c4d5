"""``twolink export``: reduce a trained run to what acting needs."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Add ``export``."""
    p = sub.add_parser(
        "export",
        help="reduce a trained run to what acting needs (policy.pt, statistics, config)",
        description="Write the run's policy network (no critics' optimiser states), its "
        "VecNormalize statistics, config and training summary to a folder that every "
        "command accepts as a policy. The shipped pretrained agents were made this way.",
    )
    p.add_argument("run", help="a finished run folder")
    p.add_argument("--out", required=True, help="the agent folder to create")
    p.add_argument("--overwrite", action="store_true", help="replace an existing folder")
    p.add_argument(
        "--description",
        help="the card's one-line description (default: built from the run's config)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``twolink export``."""
    from twolink_gym.training.export import export_agent

    out = export_agent(args.run, args.out, overwrite=args.overwrite, description=args.description)
    size = sum(p.stat().st_size for p in out.iterdir())
    print(f"{args.run} exported to {out}/ ({size / 1024:.0f} KiB): load it as policy {out}")
    return 0
