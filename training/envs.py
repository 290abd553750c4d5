"""Environments of a run: the vectorised training env and the evaluation env."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import VecEnv, VecFrameStack, VecNormalize
from twolink_gym.training.config import EnvConfig
from twolink_gym.training.goal_env import GOAL_FREE_TERMS, GoalObservationVecEnv, GoalSplit

import twolink_gym  # noqa: F401  (registers TwoLink-v0)
from twolink_gym.env import TwoLinkEnv
from twolink_gym.env_config import setting_default, setting_names
from twolink_gym.registration import (
    CONVENIENCE_IDS,
    ENV_ID,
    UNDERACTUATED_IDS,
    EpisodeLengthWarning,
)
from twolink_gym.tasks import TASKS, Task

__all__ = [
    "env_id_for",
    "goal_split",
    "gym_make_kwargs",
    "load_vec_normalize",
    "make_training_env",
    "make_vec",
]


def env_id_for(task: str, actuation: str = "full") -> str:
    """The per-task Gymnasium id of ``task`` on an arm of ``actuation``.

    Raises
    ------
    ValueError
        If no id is registered for that task and actuation, listing the ones that are.
    """
    ids = {(name, "full"): env_id for name, env_id in CONVENIENCE_IDS.items()} | UNDERACTUATED_IDS
    if (task, actuation) not in ids:
        raise ValueError(
            f"no Gymnasium id for task {task!r} with actuation {actuation!r}; "
            f"registered (task, actuation) pairs are {sorted(ids)}"
        )
    return ids[(task, actuation)]


def gym_make_kwargs(cfg: EnvConfig) -> dict[str, Any]:
    """The ``gym.make`` keywords of :func:`env_id_for`'s id that give ``cfg``'s env.

    ``cfg.make_kwargs()`` without ``task`` and ``actuation`` (the id carries
    them) and without the entries equal to the env's defaults (``max_torque``
    is compared with the task's default limits for the actuation), plus
    ``max_episode_steps`` if ``cfg`` sets it. Empty for an env with the
    task's defaults.
    """
    defaults = {name: setting_default(name) for name in setting_names()}
    defaults["max_torque"] = TASKS[str(cfg.task)].default_max_torque_for(cfg.actuation)
    kwargs = {}
    for name, value in cfg.make_kwargs().items():
        if name in ("task", "actuation"):
            continue
        default = defaults[name]
        same = value == default or (
            isinstance(value, (list, tuple))
            and isinstance(default, (list, tuple))
            and list(value) == list(default)
        )
        if not same:
            kwargs[name] = list(value) if isinstance(value, tuple) else value
    if cfg.max_episode_steps is not None:
        kwargs["max_episode_steps"] = cfg.max_episode_steps
    return kwargs


def goal_split(cfg: EnvConfig) -> tuple[GoalSplit, Task]:
    """The goal-conditioned layout of ``cfg``'s observations, and its task.

    Raises
    ------
    ValueError
        If the task has no goal (``env.goal_observation`` applies to reach only).
    """
    env = TwoLinkEnv(**cfg.make_kwargs())
    space = env.observation_space
    assert isinstance(space, gym.spaces.Box)
    return GoalSplit(env.sim.observation_names, space.low, space.high), env.sim.task


def make_vec(cfg: EnvConfig, n_envs: int, seed: int | None) -> VecEnv:
    """An SB3 ``VecEnv`` of ``n_envs`` arms, monitored (episode returns and lengths).

    ``cfg.vectorization`` picks the native batched env (one dynamics call per
    step for all copies) or SB3's ``DummyVecEnv`` over ``gym.make(cfg.id)``.
    Copy ``i`` is seeded ``seed + i`` in both cases. With ``cfg.goal_observation``
    the env is wrapped in :class:`~twolink_gym.training.goal_env.GoalObservationVecEnv`;
    with ``cfg.frame_stack > 1`` in SB3's ``VecFrameStack`` (the last
    ``frame_stack`` observations side by side, newest last, zeros before an
    episode's first), so that ``VecNormalize`` (:func:`make_training_env`)
    normalises the stacked observation.
    """
    kwargs = cfg.make_kwargs()
    venv: VecEnv
    if cfg.vectorization == "native":
        from twolink_gym.training.sb3_vec_env import DEFAULT_INFO_KEYS, make_sb3_vec_env

        info_keys = DEFAULT_INFO_KEYS + (GOAL_FREE_TERMS if cfg.goal_observation else ())
        venv = make_sb3_vec_env(
            n_envs,
            seed=seed,
            max_episode_steps=cfg.max_episode_steps,
            info_keys=info_keys,
            **kwargs,
        )  # monitored: episode returns, lengths and is_success
    else:
        env_id = cfg.id
        steps = cfg.max_episode_steps
        if steps is None and env_id == ENV_ID:
            # the task's own length at the config's dt, as the native env counts it
            # (TwoLink-v0 alone gives every task reach's 200 steps; see registration)
            probe = TwoLinkEnv(**kwargs)
            steps = probe.default_max_episode_steps
            probe.close()
        if steps is not None:
            kwargs["max_episode_steps"] = steps
        with warnings.catch_warnings():
            # the length is passed: TwoLink-v0's notice of its one length does not apply
            warnings.simplefilter("ignore", EpisodeLengthWarning)
            venv = make_vec_env(lambda: gym.make(env_id, **kwargs), n_envs=n_envs, seed=seed)
    if cfg.frame_stack > 1:
        venv = VecFrameStack(venv, cfg.frame_stack)
    if cfg.goal_observation:
        split, task = goal_split(cfg)
        venv = GoalObservationVecEnv(venv, task, split)
    return venv


def make_training_env(
    cfg: EnvConfig, n_envs: int, seed: int, *, training: bool = True, gamma: float = 0.99
) -> VecEnv:
    """The training (or periodic-evaluation) env, with ``VecNormalize`` if configured.

    For evaluation (``training=False``) the normalisation statistics are frozen
    and rewards are left raw; SB3's ``EvalCallback`` copies the training
    statistics into it before each evaluation.
    """
    venv = make_vec(cfg, n_envs, seed)
    if cfg.normalize_obs or cfg.normalize_reward:
        venv = VecNormalize(
            venv,
            training=training,
            norm_obs=cfg.normalize_obs,
            norm_reward=cfg.normalize_reward and training,
            gamma=gamma,
        )
    return venv


def load_vec_normalize(path: str | Path, cfg: EnvConfig) -> VecNormalize:
    """Saved ``VecNormalize`` statistics, frozen, on a one-arm env of ``cfg``."""
    stats = VecNormalize.load(str(path), make_vec(cfg, 1, seed=0))
    stats.training = False
    stats.norm_reward = False
    return stats
