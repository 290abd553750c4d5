"""``twolink sweep``: train a config over several seeds, evaluate and summarise (local or shared)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from twolink_gym.training.commands._args import add_config, add_overwrite, integer
from twolink_gym.training.commands._setup import run_config

if TYPE_CHECKING:
    from twolink_gym.training.config import RunConfig
    from twolink_gym.training.stats import SeedStatistics

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Add ``sweep``."""
    p = sub.add_parser(
        "sweep",
        help="train a config over several seeds in parallel, evaluate and summarise",
        description="Train the config once per seed (run folders <run name>_s<seed>), in "
        "parallel processes, then evaluate every final model on the config's fixed episode "
        "set and report each seed, the mean, the worst seed and a bootstrap interval.",
    )
    add_config(p)
    p.add_argument("--seeds", default="0-4", help="seeds, e.g. 0-4 or 0,3,7 (default 0-4)")
    p.add_argument(
        "--workers", type=integer(1), default=1, help="training processes at once (default 1)"
    )
    p.add_argument(
        "--no-train", action="store_true", help="only evaluate and summarise existing runs"
    )
    p.add_argument(
        "--storage",
        default=None,
        help="database URL of a study storage (sqlite:///sweep.db, postgresql://...): the seeds "
        "are handed out through it, so sweep processes on several machines share the sweep "
        "(default: local processes only)",
    )
    p.add_argument(
        "--study",
        default=None,
        help="the sweep's study name in --storage (default <run name>_sweep)",
    )
    add_overwrite(p)
    p.set_defaults(func=run)


def _print_seed_summary(out_dir: Path, s: SeedStatistics) -> None:
    """A sweep's table and its success rate over seeds (mean, worst seed, interval)."""
    print((out_dir / "table.md").read_text(), end="")
    print(
        f"success rate: mean {100 * s.mean:.1f}%, worst seed {100 * s.worst:.0f}%, "
        f"{100 * s.confidence:.0f}% bootstrap CI of the mean [{100 * s.ci_low:.1f}%, "
        f"{100 * s.ci_high:.1f}%]"
    )


def run(args: argparse.Namespace) -> int:
    """Run ``twolink sweep``."""
    from twolink_gym.training.sweep import parse_seeds, sweep

    cfg = run_config(args)
    seeds = parse_seeds(args.seeds)
    if args.study is not None and args.storage is None:
        raise ValueError("--study names a sweep in a study storage: give --storage URL too")
    if args.storage is not None:
        return _shared_sweep(args, cfg, seeds)
    start = time.perf_counter()
    result = sweep(
        cfg, seeds, workers=args.workers, train=not args.no_train, overwrite=args.overwrite
    )
    total = time.perf_counter() - start
    print(
        f"Task {cfg.env.task!r}, {cfg.algo.name}, {len(seeds)} seeds, each evaluated on the "
        f"same {cfg.evaluate.episodes} episodes (seeds {cfg.evaluate.seed}..):"
    )
    _print_seed_summary(result.out_dir, result.success)
    print(f"total wall time {total:.0f} s; runs {[str(r) for r in result.runs]}")
    print(f"summary: {result.out_dir}/ (sweep.json, table.md, learning_curves.png)")
    return 0


def _shared_sweep(args: argparse.Namespace, cfg: RunConfig, seeds: list[int]) -> int:
    """``twolink sweep --storage URL``: this process's share of a sweep kept in a study."""
    from twolink_gym.training.shared_sweep import shared_sweep

    start = time.perf_counter()
    try:
        result = shared_sweep(
            cfg,
            seeds,
            storage=args.storage,
            study=args.study,
            workers=args.workers,
            train=not args.no_train,
            overwrite=args.overwrite,
        )
    except KeyboardInterrupt:
        print(
            "\ninterrupted: completed seeds are kept in the storage and interrupted runs are "
            "saved; run the same command again to continue the sweep"
        )
        return 130
    total = time.perf_counter() - start
    print(f"sweep study {result.study!r} ({result.storage}), seeds {list(result.seeds)}:")
    for seed, worker in sorted(result.workers.items()):
        print(f"  seed {seed}: done by {worker}")
    if result.success is None:
        print(
            f"seeds {list(result.pending)} are not done yet (waiting, running on another "
            "machine, or interrupted); when they are, `twolink sweep CONFIG --seeds ... "
            "--storage URL --no-train` writes the summary (a sweep process re-enqueues "
            "interrupted seeds)"
        )
        return 0
    _print_seed_summary(result.out_dir, result.success)
    print(f"total wall time {total:.0f} s")
    print(f"summary: {result.out_dir}/ (sweep.json, table.md, learning_curves.png)")
    return 0
