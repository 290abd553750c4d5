"""``twolink evaluate``: every policy on the same fixed episodes, a table and per-episode results."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from twolink_gym.training.commands._args import add_evaluation_parser, integer

__all__ = ["add_parser", "episodes_header"]


def add_parser(sub: Any) -> None:
    """Add ``evaluate``."""
    p = add_evaluation_parser(
        sub,
        "evaluate",
        "evaluate policies on a fixed episode set (controllers, pretrained:NAME, runs)",
        "Run every policy deterministically on the same fixed episodes (drawn from "
        "evaluate.seed) and print a table; write per-episode CSV and summary.json.",
        "+",
    )
    p.add_argument("--episodes", type=integer(1), help="number of episodes (default: config)")
    p.add_argument("--seed", type=integer(0), help="first episode seed (default: config)")
    p.add_argument(
        "--out", help="output folder (default: <run>/evaluation or <output dir>/evaluate/<name>)"
    )
    p.add_argument(
        "--json", action="store_true", help="print one JSON line per policy instead of the table"
    )
    p.set_defaults(func=run)


def episodes_header(task: object, n: int, seed: int) -> str:
    """``Task 'reach', 100 episodes (seeds 1000000..1000099), identical for every policy:``."""
    return (
        f"Task {task!r}, {n} episodes (seeds {seed}..{seed + n - 1}), identical for every policy:"
    )


def run(args: argparse.Namespace) -> int:
    """Run ``twolink evaluate``."""
    from twolink_gym.training.commands._setup import default_output, setup_from_args
    from twolink_gym.training.compare import markdown_table
    from twolink_gym.training.evaluate import evaluate_policies, summarize

    setup = setup_from_args(args)
    if not setup.policies:
        raise ValueError("give at least one policy to evaluate (after the config, if any)")
    cfg = setup.cfg
    out = Path(args.out) if args.out else default_output("evaluate", setup, setup.policies)
    episodes, results = evaluate_policies(
        setup.policies, cfg, out, episodes=args.episodes, seed=args.seed
    )
    if args.json:
        for r in results:
            print(json.dumps(summarize(r)))
    else:
        print(episodes_header(cfg.env.task, len(episodes), episodes.seed))
        print(markdown_table(results, cfg.env.task), end="")
    print(f"results (summary.json, per-episode CSV) in {out}")
    return 0
