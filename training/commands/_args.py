"""Argument types and options that several ``twolink`` commands share (standard library only)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

__all__ = [
    "CONFIG_HELP",
    "POLICY_HELP",
    "RUN_SUBFOLDER",
    "CommandError",
    "add_config",
    "add_evaluation_parser",
    "add_overwrite",
    "add_set",
    "integer",
    "positive_float",
]


class CommandError(Exception):
    """An error that ``twolink`` reports as one line naming the command (no traceback)."""


#: How the commands' help names a config argument.
CONFIG_HELP = (
    "a YAML config file, or the name of a shipped config (reach_ppo, ...; `twolink configs` "
    "lists them)"
)

#: How the evaluation commands' help names the policies they take.
POLICY_HELP = (
    "controller names (lqr, ...), 'auto' (every controller for the task and actuation), "
    "pretrained:NAME (a shipped agent, see `twolink agents`), run folders, exported agent "
    "folders or model .zip files"
)

#: The folder each evaluation command writes into inside an evaluated run folder.
RUN_SUBFOLDER = {"evaluate": "evaluation", "compare": "compare", "robustness": "robustness"}


def integer(minimum: int) -> Callable[[str], int]:
    """An argparse ``type``: an integer >= ``minimum`` (argparse names the argument)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {text!r}")
        return value

    return parse


def positive_float(text: str) -> float:
    """An argparse ``type``: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (value > 0 and value != float("inf")):
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}")
    return value


def add_set(p: argparse.ArgumentParser, example: str = "train.seed=3") -> None:
    """``--set SECTION.KEY=VALUE`` (repeatable)."""
    p.add_argument(
        "--set",
        action="append",
        metavar="SECTION.KEY=VALUE",
        help=f"override one config value (YAML syntax), e.g. --set {example}; repeatable",
    )


def add_config(p: argparse.ArgumentParser, *, optional: bool = False, note: str = "") -> None:
    """The ``config`` positional (a file or a shipped config's name) and ``--set``."""
    p.add_argument(
        "config",
        nargs="?" if optional else None,
        metavar="CONFIG",
        help=CONFIG_HELP + note,
    )
    add_set(p)


def add_overwrite(p: argparse.ArgumentParser, help: str | None = None) -> None:
    """``--overwrite``: replace what the command would otherwise refuse to replace."""
    p.add_argument(
        "--overwrite",
        action="store_true",
        help=help
        or "replace the config's run folder if it already holds a run (default: refuse, "
        "saying how to proceed); only the run's own files are deleted",
    )


def add_evaluation_parser(
    sub: Any, command: str, help: str, description: str, policies: str | int
) -> argparse.ArgumentParser:
    """A sub-command that takes an optional config, then policies (``items``), ``--task``, ``--set``."""
    outputs = (
        f" Results go to --out; by default into the evaluated run's own folder "
        f"(<run>/{RUN_SUBFOLDER[command]}) when exactly one run folder (or a model in one) "
        f"is evaluated, else to <output dir>/{command}/<name> (output dir: the config's "
        "train.output_dir, or runs; name: the config file's, the task's, or the agent's "
        "whose config was used). A failed command writes nothing."
        if command in RUN_SUBFOLDER
        else ""
    )
    p: argparse.ArgumentParser = sub.add_parser(
        command,
        help=help,
        description=description
        + " The environment comes from CONFIG (a YAML file: a training config, or one with "
        "only env: and optionally evaluate:; or a shipped config's name), else from --task, "
        "else from the first agent that carries its config (pretrained:NAME, a run folder, an "
        "exported agent). With a config or --task, every agent must have been trained on that "
        "environment." + outputs,
    )
    p.add_argument(
        "config",
        nargs="?",
        metavar="CONFIG",
        help="YAML config (a file, a run's config.yaml, env: alone, or a shipped config's "
        "name such as balance_ppo); optional",
    )
    one = (
        "one policy: a controller name (lqr, ...), pretrained:NAME (a shipped agent, see "
        "`twolink agents`), a run folder, an exported agent folder or a model .zip"
    )
    p.add_argument(
        "items", nargs=policies, metavar="POLICY", help=one if policies == 1 else POLICY_HELP
    )
    p.add_argument(
        "--task",
        metavar="TASK",
        help="evaluate on this task's default env instead of a config (reach, balance, "
        "swingup, track)",
    )
    p.add_argument(
        "--actuation",
        metavar="A",
        help="with --task: full (default), acrobot (elbow motor only) or pendubot "
        "(shoulder motor only)",
    )
    add_set(p, "evaluate.episodes=20")
    return p
