"""The ``twolink`` command: ``train``, ``run``, ``evaluate``, ``compare``, ``watch``, ``configs``...

Examples::

    twolink run default                              # train, evaluate, compare (a shipped config)
    twolink configs                                  # the shipped configs; --out copies one
    twolink train reach_ppo --set train.seed=3
    twolink train --resume runs/reach_ppo_s3         # after Ctrl-C, with the run's own config
    twolink train reach_ppo --resume runs/reach_ppo_s0/checkpoints/model_245760_steps.zip
    twolink agents                                   # the shipped agents (--json)
    twolink evaluate pretrained:balance_ppo lqr      # the agent's own env and episodes
    twolink evaluate --task balance lqr pd_gravity   # controllers need no config
    twolink evaluate balance_ppo runs/balance_ppo_s0 lqr --out results/
    twolink compare reach_ppo runs/reach_ppo_s0 runs/reach_sac_s0 --out docs/results/reach
    twolink watch pretrained:swingup_pendubot_ppo    # in a window (--record FILE without one)
    twolink record pretrained:reach_sac --out reach.gif --episode 0
    twolink robustness pretrained:balance_ppo auto --episodes 20
    twolink tune reach_sac --trials 40 --workers 2 --report

A config is a YAML file or the name of a shipped config (``twolink configs``).
``evaluate``, ``compare``, ``record``, ``robustness`` and ``watch`` take the
environment from a config (the first argument), from ``--task``, or from the
first agent that carries its config (``pretrained:NAME``, a run folder, an
exported agent); their results go to the evaluated run's own folder, else to
``<output dir>/<command>/<name>``
(:func:`~twolink_gym.training.commands._setup.default_output`).

Each command is a module of :mod:`twolink_gym.training.commands` with its
options beside its code. Building the parser imports only the standard
library, so ``twolink --help`` works with the core install; a command that
needs the ``train`` extra says how to install it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from twolink_gym.training.commands import COMMANDS
from twolink_gym.training.commands._args import CommandError

__all__ = ["TRAIN_EXTRA_HINT", "build_parser", "main"]

#: The commands that take an optional config, then policies (positionals may follow options).
EVALUATION_COMMANDS = ("evaluate", "compare", "record", "robustness", "watch")

#: How to install what the training commands need.
TRAIN_EXTRA_HINT = 'pip install "twolink-gym[train]"'

#: Top-level modules of the ``train`` extra (and torch, which stable-baselines3 brings).
_TRAIN_EXTRA_MODULES = frozenset(
    {
        "yaml",
        "stable_baselines3",
        "sb3_contrib",
        "torch",
        "matplotlib",
        "optuna",
        "imageio",
        "imageio_ffmpeg",
        "moviepy",
        "tensorboard",
        "tqdm",
        "rich",
    }
)


def _version() -> str:
    """The installed distribution's version (the package's own if not installed)."""
    from importlib import metadata

    try:
        return metadata.version("twolink-gym")
    except metadata.PackageNotFoundError:  # pragma: no cover - a source checkout
        from twolink_gym import __version__

        return __version__


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``twolink``: each command adds its own (``add_parser``)."""
    parser = argparse.ArgumentParser(
        prog="twolink", description="Train and compare agents on the two-link arm."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        importlib.import_module(f"twolink_gym.training.commands.{name}").add_parser(sub)
    from twolink_gym.training.realaigym import add_parser as add_realaigym_parser

    add_realaigym_parser(sub)
    return parser


def _missing_extra(exc: ModuleNotFoundError) -> bool:
    """Whether ``exc`` is a module of the ``train`` extra that is not installed."""
    return (exc.name or "").split(".")[0] in _TRAIN_EXTRA_MODULES


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``twolink`` command."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if args.command in EVALUATION_COMMANDS:
        # policies may follow options (`evaluate CONFIG --episodes 2 lqr`): argparse hands
        # back those after the first run of positionals as unknown
        if any(item.startswith("-") for item in extra):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.items = ([args.config] if args.config is not None else []) + args.items + extra
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return int(args.func(args))
    except ModuleNotFoundError as exc:
        if not _missing_extra(exc):
            raise
        print(
            f"twolink {args.command}: error: this command needs the train extra, which is not "
            f"installed ({exc}); install it with: {TRAIN_EXTRA_HINT}",
            file=sys.stderr,
        )
        return 2
    except (CommandError, ValueError, FileNotFoundError, FileExistsError) as exc:  # ConfigError too
        print(f"twolink {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
