"""``twolink tune``: an Optuna study over a config's hyperparameters."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from twolink_gym.training.commands._args import add_config, integer, positive_float
from twolink_gym.training.commands._setup import run_config

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Add ``tune``."""
    p = sub.add_parser(
        "tune",
        help="an Optuna study over the config's hyperparameters (local workers or many machines)",
        description="Tune the config's algorithm hyperparameters with Optuna (TPE sampler, "
        "median pruning on the periodic evaluations): each trial trains the config with "
        "sampled hyperparameters and is scored by its success rate. The study lives in a "
        "database (default: <run name>_tune/study.db, SQLite); restarting continues it; "
        "--storage postgresql://... shares it between machines. Writes best.yaml.",
    )
    add_config(p)
    p.add_argument(
        "--trials",
        type=integer(1),
        help="the study's total number of trials (a restart runs the rest)",
    )
    p.add_argument(
        "--workers", type=integer(1), default=1, help="local worker processes (default 1)"
    )
    p.add_argument(
        "--storage",
        metavar="URL",
        help="database URL (default sqlite:///<output_dir>/<run name>_tune/study.db), e.g. "
        "postgresql://user:password@host:5432/dbname",
    )
    p.add_argument("--study", metavar="NAME", help="study name (default: the run name)")
    p.add_argument(
        "--timeout", type=positive_float, metavar="S", help="start no trial after S seconds"
    )
    p.add_argument(
        "--space",
        metavar="FILE",
        help="YAML search space replacing the algorithm's default (docs/tuning.md)",
    )
    p.add_argument(
        "--seed",
        type=integer(0),
        help="sampler seed (default train.seed; each worker derives its own from it, its "
        "index and the trials stored); give each "
        "machine sharing a study its own",
    )
    p.add_argument(
        "--report",
        action="store_true",
        help="print the best trials and parameter importances and write the plots "
        "(<run name>_tune/report/*.png)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run ``twolink tune``."""
    from twolink_gym.training.tune import report, tune
    from twolink_gym.training.tune_space import parse_space

    cfg = run_config(args)
    if args.trials is None and not args.report:
        raise ValueError("twolink tune needs --trials N (the study's total), --report, or both")
    space = None
    if args.space is not None:
        import yaml

        path = Path(args.space)
        try:
            data = yaml.safe_load(path.read_text())
        except yaml.YAMLError as exc:
            raise ValueError(f"--space {path}: not valid YAML ({exc})") from exc
        space = parse_space(cfg.algo.name, data, f"--space {path}")
    if args.trials is not None:
        try:
            result = tune(
                cfg,
                trials=args.trials,
                space=space,
                workers=args.workers,
                storage=args.storage,
                study=args.study,
                timeout=args.timeout,
                seed=args.seed,
            )
        except KeyboardInterrupt:
            print(
                "\ninterrupted: completed trials are kept in the storage; run the same "
                "command again to continue the study"
            )
            return 130
        best = result.best
        score = ""
        if best is not None:
            score = f"; best trial {best.number}, success rate {best.value:.3f}"
            if "worst_seed_success" in best.user_attrs:  # a jax_* study: seeds at once
                worst = best.user_attrs["worst_seed_success"]
                score += f" (mean over seeds; worst seed {worst:.3f})"
        print(f"study {result.study!r} ({result.storage}): {result.trials} trials{score}")
        if result.best_yaml is not None:
            print(f"best config: {result.best_yaml} (twolink train {result.best_yaml})")
    if args.report:
        print(report(cfg, storage=args.storage, study=args.study), end="")
    return 0
