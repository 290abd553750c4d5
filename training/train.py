"""``twolink train``: train an SB3 agent from a config into a self-contained run folder.

A run folder holds::

    config.yaml          the resolved config (re-run it with ``twolink train config.yaml``)
    model.zip            the final model (also written on Ctrl-C)
    vecnormalize.pkl     observation-normalisation statistics, if used
    eval/evaluations.npz periodic evaluations (timesteps, returns, successes)
    checkpoints/         periodic checkpoints (model, statistics, SAC replay buffer)
    tb/                  TensorBoard logs
    train_summary.json   timesteps, wall time, steps/s, machine
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import re
import time
from pathlib import Path
from typing import Any

import torch
import yaml
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import CallbackList, CheckpointCallback, EvalCallback
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm
from stable_baselines3.common.vec_env import VecNormalize

from training.algorithms import ALGORITHMS, build_model
from training.config import RunConfig
from training.envs import make_training_env

__all__ = ["MODEL_FILE", "VECNORM_FILE", "TrainResult", "train"]

MODEL_FILE = "model.zip"
VECNORM_FILE = "vecnormalize.pkl"
CONFIG_FILE = "config.yaml"
SUMMARY_FILE = "train_summary.json"


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """What :func:`train` produced."""

    run_dir: Path
    model_path: Path
    timesteps: int
    wall_time_s: float
    interrupted: bool


def _gamma(cfg: RunConfig) -> float:
    return float(cfg.algo.hyperparams.get("gamma", 0.99))


def _checkpoint_stats(checkpoint: Path) -> Path | None:
    """The VecNormalize file CheckpointCallback wrote beside ``checkpoint`` (or None)."""
    match = re.fullmatch(r"(?P<prefix>.+)_(?P<steps>\d+)_steps\.zip", checkpoint.name)
    if match is None:
        return None
    path = checkpoint.with_name(f"{match['prefix']}_vecnormalize_{match['steps']}_steps.pkl")
    return path if path.exists() else None


def _checkpoint_buffer(checkpoint: Path) -> Path | None:
    match = re.fullmatch(r"(?P<prefix>.+)_(?P<steps>\d+)_steps\.zip", checkpoint.name)
    if match is None:
        return None
    path = checkpoint.with_name(f"{match['prefix']}_replay_buffer_{match['steps']}_steps.pkl")
    return path if path.exists() else None


def machine_description() -> dict[str, Any]:
    """CPU count, platform and library versions, for the run summary."""
    import stable_baselines3

    return {
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "stable_baselines3": stable_baselines3.__version__,
        "torch_threads": torch.get_num_threads(),
    }


def train(cfg: RunConfig, *, resume: str | Path | None = None) -> TrainResult:
    """Train the agent of ``cfg``; return where it was saved.

    Parameters
    ----------
    cfg : RunConfig
    resume : path, optional
        A checkpoint ``.zip`` of this run to continue from (its VecNormalize
        statistics and, for SAC, replay buffer are loaded from beside it);
        training continues up to ``cfg.train.total_timesteps`` in total.

    Notes
    -----
    Ctrl-C (``KeyboardInterrupt``) stops training, saves the current model and
    statistics as the run's final model, and returns with ``interrupted=True``.
    """
    torch.set_num_threads(cfg.train.torch_threads)
    tc = cfg.train
    run_dir = cfg.run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / CONFIG_FILE).write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False))

    env = make_training_env(cfg.env, tc.n_envs, tc.seed, gamma=_gamma(cfg))
    eval_env = make_training_env(
        cfg.env, min(tc.eval_episodes, 8), tc.seed + 10_000, training=False, gamma=_gamma(cfg)
    )
    off_policy = issubclass(ALGORITHMS[cfg.algo.name], OffPolicyAlgorithm)

    if resume is not None:
        resume = Path(resume)
        stats = _checkpoint_stats(resume)
        if isinstance(env, VecNormalize):
            if stats is None:
                raise ValueError(f"resume: no VecNormalize statistics found beside {resume}")
            env = VecNormalize.load(str(stats), env.venv)
        model: BaseAlgorithm = ALGORITHMS[cfg.algo.name].load(
            str(resume), env=env, device=tc.device, tensorboard_log=str(run_dir / "tb")
        )
        buffer = _checkpoint_buffer(resume)
        if off_policy and buffer is not None:
            model.load_replay_buffer(str(buffer))  # type: ignore[attr-defined]
    else:
        model = build_model(
            cfg.algo.name,
            cfg.algo.policy,
            env,
            cfg.algo.hyperparams,
            seed=tc.seed,
            device=tc.device,
            tensorboard_log=str(run_dir / "tb"),
        )

    callbacks = []
    if tc.eval_freq:
        callbacks.append(
            EvalCallback(
                eval_env,
                n_eval_episodes=tc.eval_episodes,
                eval_freq=max(tc.eval_freq // tc.n_envs, 1),
                log_path=str(run_dir / "eval"),
                best_model_save_path=None,
                deterministic=True,
                verbose=0,
            )
        )
    if tc.checkpoint_freq:
        callbacks.append(
            CheckpointCallback(
                save_freq=max(tc.checkpoint_freq // tc.n_envs, 1),
                save_path=str(run_dir / "checkpoints"),
                name_prefix="model",
                save_replay_buffer=off_policy,
                save_vecnormalize=True,
            )
        )

    remaining = tc.total_timesteps - (model.num_timesteps if resume is not None else 0)
    start = time.perf_counter()
    start_steps = model.num_timesteps
    interrupted = False
    try:
        if remaining > 0:
            model.learn(
                total_timesteps=remaining,
                callback=CallbackList(callbacks),
                progress_bar=tc.progress_bar,
                reset_num_timesteps=resume is None,
                tb_log_name="run",
            )
    except KeyboardInterrupt:
        interrupted = True
        print(f"\ninterrupted at {model.num_timesteps} timesteps; saving the current model")
    wall = time.perf_counter() - start

    model_path = run_dir / MODEL_FILE
    model.save(str(model_path))
    vec = model.get_vec_normalize_env()
    if vec is not None:
        vec.save(str(run_dir / VECNORM_FILE))
    steps = model.num_timesteps - start_steps
    summary = {
        "run": cfg.run_name,
        "task": cfg.env.task,
        "algo": cfg.algo.name,
        "seed": tc.seed,
        "timesteps": int(model.num_timesteps),
        "wall_time_s": round(wall, 2),
        "steps_per_s": round(steps / wall, 1) if wall > 0 else None,
        "interrupted": interrupted,
        "resumed_from": str(resume) if resume is not None else None,
        "machine": machine_description(),
    }
    (run_dir / SUMMARY_FILE).write_text(json.dumps(summary, indent=2))
    env.close()
    eval_env.close()
    return TrainResult(run_dir, model_path, int(model.num_timesteps), wall, interrupted)
