"""Where a command's config, environment and output folder come from.

``train``, ``run``, ``sweep`` and ``tune`` take a config (:func:`run_config`);
``evaluate``, ``compare``, ``record``, ``robustness`` and ``watch`` an optional
config, then policies (:func:`evaluation_setup`). A config is a YAML file or
the name of a shipped config (:mod:`~twolink_gym.training.shipped_configs`).
The config module (PyYAML) is imported when a command runs, not when the
parser is built.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from twolink_gym.training import shipped_configs
from twolink_gym.training.commands._args import RUN_SUBFOLDER

if TYPE_CHECKING:
    from twolink_gym.training.config import EvalConfig, RunConfig

__all__ = [
    "PRETRAINED",
    "EvaluationSetup",
    "default_output",
    "evaluation_setup",
    "run_config",
    "setup_from_args",
]

#: The prefix of a shipped agent in a policy string.
PRETRAINED = "pretrained:"
_CONFIG_SUFFIXES = (".yaml", ".yml")


def run_config(args: argparse.Namespace) -> RunConfig:
    """The training config of ``args.config`` (a file or a shipped name) with ``--set``."""
    from twolink_gym.training.config import load_config

    return load_config(shipped_configs.resolve(args.config), args.set or ())


@dataclasses.dataclass(frozen=True)
class EvaluationSetup:
    """What an evaluation command runs: the config, the policies, the name of its results.

    Attributes
    ----------
    cfg : EvalConfig
        The environment and the episode set.
    policies : list of str
        The policy strings as given.
    name : str
        What set the environment: the config file's name (its folder's for a
        run's ``config.yaml``), the task of ``--task`` (``<task>_<actuation>``
        for an underactuated arm), or the agent whose config was used.
    """

    cfg: EvalConfig
    policies: list[str]
    name: str


def _is_controller(item: str) -> bool:
    from twolink_gym.controllers import CONTROLLERS

    return item == "auto" or item in CONTROLLERS


def _is_config(item: str) -> bool:
    """Whether a positional argument names a config: a YAML file, another existing file, a shipped name."""
    path = Path(item)
    if path.suffix.lower() in _CONFIG_SUFFIXES:
        return True
    if path.exists():
        return path.is_file() and path.suffix.lower() != ".zip"
    return not _is_controller(item) and shipped_configs.is_shipped_name(item)


def _config_name(path: Path) -> str:
    """``configs/balance_ppo.yaml`` → ``balance_ppo``; a run's ``config.yaml`` → the run's name."""
    if path.stem == "config" and path.resolve().parent.name:
        return path.resolve().parent.name
    return path.stem


def _agent_config(spec: str) -> tuple[Path, str] | None:
    """The ``config.yaml`` an agent carries, and the agent's name; ``None`` for a controller."""
    if spec.startswith(PRETRAINED):
        from twolink_gym import pretrained

        name = spec[len(PRETRAINED) :]
        return pretrained.pretrained_dir(name) / "config.yaml", name
    path = Path(spec)
    if path.is_dir():
        folder = path
    elif path.is_file() and path.suffix.lower() == ".zip":
        folder = path.parent.parent if path.parent.name == "checkpoints" else path.parent
    else:
        return None
    config = folder / "config.yaml"
    return (config, folder.resolve().name) if config.is_file() else None


def _check_paths(policies: Sequence[str]) -> None:
    """Refuse a policy that is neither a controller, ``pretrained:NAME`` nor an existing path."""
    from twolink_gym.controllers import CONTROLLERS

    for spec in policies:
        if spec.startswith(PRETRAINED) or _is_controller(spec) or Path(spec).exists():
            continue
        path = Path(spec)
        if len(path.parts) > 1 or path.suffix.lower() == ".zip":
            raise FileNotFoundError(
                f"no such run folder or model: {spec} (a policy is a controller name, "
                "pretrained:NAME, a run folder, an exported agent folder or a model .zip)"
            )
        raise FileNotFoundError(
            f"policy {spec!r} is neither a controller ({', '.join(sorted(CONTROLLERS))}, "
            "auto), pretrained:NAME (`twolink agents`) nor an existing run folder or model .zip"
        )


def evaluation_setup(
    items: Sequence[str],
    overrides: Sequence[str] = (),
    *,
    task: str | None = None,
    actuation: str | None = None,
) -> EvaluationSetup:
    """The config and policies of ``twolink evaluate|compare|record|robustness|watch``.

    Parameters
    ----------
    items : sequence of str
        The positional arguments: an optional config first (a ``.yaml``/``.yml``
        file, any existing file but a ``.zip``, or a shipped config's name),
        then policy strings.
    overrides : sequence of str
        ``--set`` values, applied to whichever config is used.
    task, actuation : str, optional
        ``--task`` and ``--actuation``: a config of that env alone (instead of a
        config file).

    Returns
    -------
    EvaluationSetup
        The environment comes from the config file, else from ``--task``, else
        from the first agent among the policies that carries its config
        (``pretrained:NAME``, a run folder or a model inside one, an exported
        agent). With a config or ``--task``, each agent is checked against that
        environment when it is loaded.

    Raises
    ------
    FileNotFoundError
        If the config, or a policy written as a path, does not exist.
    ValueError
        If both a config and ``--task`` are given, ``--actuation`` comes without
        ``--task``, or nothing gives the environment.
    ConfigError
        If the config (or ``--task`` with ``--set``) is invalid.
    """
    from twolink_gym.training.config import apply_overrides, eval_config_from_dict, load_eval_config

    items = list(items)
    config = items.pop(0) if items and _is_config(items[0]) else None
    if actuation is not None and task is None:
        raise ValueError(
            "--actuation goes with --task (a config sets env.actuation; --set env.actuation=... "
            "changes it)"
        )
    if config is not None and task is not None:
        raise ValueError(
            f"give either a config ({config}) or --task {task}, not both (--set env.task=... "
            "changes a config's task)"
        )
    _check_paths(items)
    if config is not None:
        path = shipped_configs.resolve(config)
        return EvaluationSetup(load_eval_config(path, overrides), items, _config_name(path))
    if task is not None:
        arm = actuation or "full"
        source = f"--task {task}" + (f" --actuation {actuation}" if actuation else "")
        data = apply_overrides({"env": {"task": task, "actuation": arm}}, overrides, source)
        if overrides:
            source += f" (with overrides {list(overrides)})"
        name = task if arm == "full" else f"{task}_{arm}"
        return EvaluationSetup(eval_config_from_dict(data, source), items, name)
    for spec in items:
        found = _agent_config(spec)
        if found is not None:
            path, name = found
            return EvaluationSetup(load_eval_config(path, overrides), items, name)
    raise ValueError(
        "nothing gives the environment to evaluate on: give a config first (e.g. "
        "balance_ppo, configs/balance_ppo.yaml, or a config with only env: {task: balance}), "
        "--task TASK [--actuation full|acrobot|pendubot], or an agent that carries its config "
        "(pretrained:NAME, see `twolink agents`; a run folder)"
    )


def setup_from_args(args: argparse.Namespace) -> EvaluationSetup:
    """:func:`evaluation_setup` of an evaluation command's parsed arguments."""
    return evaluation_setup(args.items, args.set or (), task=args.task, actuation=args.actuation)


def _run_folder(spec: str) -> Path | None:
    """The training run folder a policy string names (the folder, or a model inside it)."""
    if spec.startswith(PRETRAINED):
        return None
    path = Path(spec)
    if path.is_dir():
        return path if (path / "model.zip").is_file() else None
    if path.is_file() and path.suffix.lower() == ".zip":
        folder = path.parent.parent if path.parent.name == "checkpoints" else path.parent
        return folder if (folder / "config.yaml").is_file() else None
    return None


def default_output(command: str, setup: EvaluationSetup, policies: Sequence[str]) -> Path:
    """Where ``command`` writes its results when no ``--out`` is given.

    Into the evaluated run's own folder (``<run>/evaluation``, ``<run>/compare``,
    ``<run>/robustness``) when exactly one run folder (or a model inside one) is
    among ``policies``; otherwise ``<output dir>/<command>/<name>``, where the
    output dir is the config's ``train.output_dir`` (``runs`` for a config
    without one) and the name is :attr:`EvaluationSetup.name`. Never a run
    folder that does not exist.
    """
    runs = {folder.resolve(): folder for spec in policies if (folder := _run_folder(spec))}
    if len(runs) == 1:
        (run,) = runs.values()
        return run / RUN_SUBFOLDER[command]
    return setup.cfg.output_dir / command / setup.name
