"""``twolink agents``: the agents shipped with the package."""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Add ``agents``."""
    p = sub.add_parser(
        "agents",
        help="list the shipped agents (use them as pretrained:NAME)",
        description="List the agents shipped with the package: name (use it as "
        "pretrained:NAME), task, actuation, algorithm, Gymnasium id and success rate on "
        "their fixed evaluation set.",
    )
    p.add_argument("--json", action="store_true", help="print a JSON list instead of the table")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``twolink agents``."""
    from twolink_gym import pretrained

    cards = pretrained.catalog()
    if args.json:
        print(json.dumps([dataclasses.asdict(card) for card in cards], indent=2))
        return 0
    header = ("name", "task", "actuation", "algorithm", "env id", "success")
    rows = [
        (
            card.name,
            card.task,
            card.actuation,
            card.algorithm,
            card.env_id,
            "not measured"
            if card.success is None
            else f"{100 * card.success:.0f}% of {card.episodes} (seeds {card.seed}..)",
        )
        for card in cards
    ]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    for row in (header, tuple("-" * w for w in widths), *rows):
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    print(
        "\nsuccess: the fraction of the agent's fixed evaluation episodes it succeeds on "
        "(deterministic actions).\nUse an agent as pretrained:NAME (twolink evaluate "
        "pretrained:balance_ppo), or from Python: twolink_gym.load_pretrained(NAME)."
    )
    return 0
