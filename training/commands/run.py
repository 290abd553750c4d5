"""``twolink run``: train a config's agent, then compare it with the classical controllers."""

from __future__ import annotations

import argparse
import time
from typing import Any

from twolink_gym.training.commands._args import add_config, add_overwrite

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Add ``run``."""
    p = sub.add_parser(
        "run",
        help="train, then compare with the classical controllers",
        description="Train the config's agent into its run folder, then compare it with the "
        "classical controllers. If the run folder already holds a run, twolink run refuses "
        "and says how to proceed, unless --overwrite is given (`make run` passes it: the "
        "default run is seeded and reproducible).",
    )
    add_config(p)
    add_overwrite(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``twolink run``."""
    from twolink_gym.training.commands._setup import run_config
    from twolink_gym.training.commands.train import timesteps_note, train_stopping_on_sigterm
    from twolink_gym.training.compare import compare

    cfg = run_config(args)
    start = time.perf_counter()
    result = train_stopping_on_sigterm(cfg, overwrite=args.overwrite)
    if result.interrupted:
        print(
            "training interrupted; comparing the model saved at that point (continue "
            f"training with: twolink train --resume {result.run_dir})"
        )
    out = cfg.run_dir / "compare"
    # the run just trained owns its compare/ (training cleared an earlier one)
    table, episodes, _ = compare(cfg, [result.run_dir], out, overwrite=True)
    total = time.perf_counter() - start
    print()
    print(
        f"Task {cfg.env.task!r}: {cfg.algo.name} trained for {result.timesteps:,} steps"
        f"{timesteps_note(result)} ({result.wall_time_s:.0f} s); {len(episodes)} evaluation "
        "episodes, identical for all."
    )
    print(table)
    print(f"total wall time {total:.0f} s")
    shown = ("model.zip", "config.yaml", "tb", "eval", "checkpoints", "best")
    held = [n + ("/" if p.is_dir() else "") for n in shown if (p := result.run_dir / n).exists()]
    print(f"run folder:  {result.run_dir}/ ({', '.join(held)})")
    print(
        f"comparison:  {out}/ (table.md, field_metrics.md, learning_curves.png, distributions.png, trajectory.png)"
    )
    return 0
