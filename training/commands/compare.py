"""``twolink compare``: agents and classical controllers on one episode set, a table and plots."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from twolink_gym.training.commands._args import add_evaluation_parser, add_overwrite, integer

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Add ``compare``."""
    p = add_evaluation_parser(
        sub,
        "compare",
        "compare agents and classical controllers (table, plots)",
        "Evaluate the agents and the classical controllers on one fixed episode set and "
        "write the comparison: table.md, field_metrics.md, learning curves, distributions, "
        "an example trajectory. Without agents, a training config's own run is compared. "
        "An output folder that holds a comparison is replaced only with --overwrite.",
        "*",
    )
    p.add_argument(
        "--controllers",
        nargs="*",
        metavar="NAME",
        help="controller names or 'auto' (default: the config's evaluate.controllers)",
    )
    p.add_argument("--episodes", type=integer(1), help="number of episodes (default: config)")
    p.add_argument(
        "--out", help="output folder (default: <run>/compare or <output dir>/compare/<name>)"
    )
    p.add_argument(
        "--no-trajectories", action="store_true", help="skip the per-policy trajectories.npz"
    )
    add_overwrite(
        p,
        "replace the comparison the output folder holds: its files and its policies' folders "
        "(default: refuse)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``twolink compare``."""
    from twolink_gym.training.commands._setup import default_output, setup_from_args
    from twolink_gym.training.commands.evaluate import episodes_header
    from twolink_gym.training.compare import compare
    from twolink_gym.training.config import RunConfig

    setup = setup_from_args(args)
    cfg = setup.cfg
    agents = setup.policies
    if not agents and isinstance(cfg, RunConfig):  # a training config: its own run
        if not (cfg.run_dir / "model.zip").is_file():
            raise ValueError(
                f"no agents given, and the config's own run folder {cfg.run_dir} holds no "
                "model.zip: train it first (twolink train CONFIG), or name the agents "
                "to compare (pretrained:NAME, run folders, model .zip files)"
            )
        agents = [str(cfg.run_dir)]
    out = Path(args.out) if args.out else default_output("compare", setup, agents)
    table, episodes, _ = compare(
        cfg,
        agents,
        out,
        controllers=args.controllers,
        episodes=args.episodes,
        trajectories=not args.no_trajectories,
        overwrite=args.overwrite,
    )
    print(episodes_header(cfg.env.task, len(episodes), episodes.seed))
    print(table)
    print(f"table, plots and per-episode results in {out}/")
    return 0
