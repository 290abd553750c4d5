"""``twolink train``: train an agent from a config into its run folder, or continue a run."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from twolink_gym.training.commands._args import add_config, add_overwrite

if TYPE_CHECKING:
    from twolink_gym.training.config import RunConfig
    from twolink_gym.training.train import TrainResult

__all__ = ["add_parser", "resume_config", "timesteps_note", "train_stopping_on_sigterm"]


def add_parser(sub: Any) -> None:
    """Add ``train``."""
    p = sub.add_parser(
        "train",
        help="train an agent from a config, or continue a run (--resume RUN alone)",
        description="Train the config's agent into its run folder. `twolink train --resume "
        "RUN` alone continues a run with the config saved in its folder (which holds the "
        "--set overrides the run was started with); --set applies on top, e.g. "
        "--set train.total_timesteps=N to train further.",
    )
    add_config(p, optional=True, note="; optional with --resume (the run's own config.yaml)")
    p.add_argument(
        "--resume",
        metavar="RUN_OR_MODEL",
        help="continue a run: its folder (the newest of model.zip and the checkpoints), its "
        "model.zip, or a checkpoint .zip; restores the VecNormalize statistics, the replay "
        "buffer (SAC) and the step count, and trains up to train.total_timesteps in total. "
        "For a jax_* run: the run folder of one of its seeds, which continues every seed "
        "trained together with it",
    )
    add_overwrite(p)
    p.set_defaults(func=run)


def timesteps_note(result: TrainResult) -> str:
    """``" (train.total_timesteps N rounded up to whole rollouts of M steps)"``, or ``""``."""
    if result.planned_timesteps > result.requested_timesteps and result.rollout_steps:
        return (
            f" (train.total_timesteps {result.requested_timesteps:,} rounded up to whole "
            f"rollouts of {result.rollout_steps:,} steps)"
        )
    return ""


def train_stopping_on_sigterm(cfg: RunConfig, **kwargs: Any) -> TrainResult:
    """:func:`~twolink_gym.training.train.train`, SIGTERM (``kill PID``, a job scheduler) as Ctrl-C.

    Either signal stops the learning loop and saves the run; one that arrives
    while the run is being set up or saved waits for the learning loop or is
    not needed (:mod:`~twolink_gym.training.interrupts`).
    """
    import signal

    from twolink_gym.training.interrupts import deferred_interrupts
    from twolink_gym.training.train import train

    with deferred_interrupts(signal.SIGTERM):
        return train(cfg, **kwargs)


def resume_config(resume: str | Path, overrides: list[str]) -> RunConfig:
    """The config of a run continued without a config file: the one saved in its folder.

    The run folder of ``resume`` (a run folder or a model in one) stays the
    run folder (``train.output_dir`` and ``train.run_name`` are set from it,
    so it resumes from any working folder); ``overrides`` apply on top.

    A ``jax_*`` run folder (one seed's, holding ``train_state.npz``) gives the
    config of every seed trained together with it
    (:func:`~twolink_gym.training.jax_run_folders.resume_config`).

    Raises
    ------
    FileNotFoundError
        If ``resume`` does not exist or its run folder holds no ``config.yaml``.
    """
    import yaml
    from twolink_gym.training.config import apply_overrides, config_from_dict
    from twolink_gym.training.jax_run_folders import is_jax_run
    from twolink_gym.training.jax_run_folders import resume_config as jax_resume_config
    from twolink_gym.training.train import CONFIG_FILE, find_resume_point

    if is_jax_run(Path(resume)):
        return jax_resume_config(resume, overrides)
    run_dir = find_resume_point(resume).run_dir
    path = run_dir / CONFIG_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"--resume {resume}: the run folder {run_dir} holds no {CONFIG_FILE}; give the "
            "config it was trained with: twolink train CONFIG --resume ..."
        )
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("train"), dict):
        return config_from_dict(data, str(path))  # raises, naming the file
    data["train"].update(output_dir=str(run_dir.parent), run_name=run_dir.name)
    source = str(path)
    if overrides:
        data = apply_overrides(data, overrides, source)
        source = f"{source} (with overrides {overrides})"
    return config_from_dict(data, source)


def run(args: argparse.Namespace) -> int:
    """Run ``twolink train``."""
    from twolink_gym.training.commands._setup import run_config

    if args.config is None:
        if args.resume is None:
            raise ValueError(
                "give a CONFIG (a YAML file or a shipped config's name, see `twolink configs`), "
                "or --resume RUN to continue a run with its own config"
            )
        cfg = resume_config(args.resume, list(args.set or ()))
    else:
        cfg = run_config(args)
    from twolink_gym.training.algorithms import is_rejax

    if is_rejax(cfg.algo.name):  # every seed at once, in JAX
        from twolink_gym.training.jax_train import train_from_cli

        return train_from_cli(cfg, resume=args.resume, overwrite=args.overwrite)
    result = train_stopping_on_sigterm(cfg, resume=args.resume, overwrite=args.overwrite)
    state = "interrupted" if result.interrupted else "done"
    print(
        f"{state}: {result.timesteps:,} timesteps{timesteps_note(result)} "
        f"in {result.wall_time_s:.0f} s; model {result.model_path}"
    )
    if result.interrupted:
        # the run's config.yaml holds every override: the folder alone continues it
        print(f"continue with: twolink train --resume {result.run_dir}")
    return 130 if result.interrupted else 0
