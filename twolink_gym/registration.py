"""Gymnasium registration of ``TwoLink-v0`` and its per-task convenience ids.

One id serves several tasks, and each task has its own episode length. A
Gymnasium spec has a single ``max_episode_steps``, so ``TwoLink-v0`` is
registered without one and its entry point, :func:`make_env`, adds the
``TimeLimit`` of the chosen task itself, unless ``gym.make`` was given
``max_episode_steps`` (then Gymnasium adds that ``TimeLimit``, as for any env).
The convenience ids (``TwoLinkReach-v0``, ``TwoLinkBalance-v0``) carry their
task's length in their spec, the ordinary way.
"""

from __future__ import annotations

import inspect
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import make as _gym_make
from gymnasium.wrappers import TimeLimit

from twolink_gym.env import TwoLinkEnv
from twolink_gym.simulation import Simulation
from twolink_gym.tasks import TASKS

__all__ = ["CONVENIENCE_IDS", "ENV_ID", "make_env", "register_envs"]

ENV_ID = "TwoLink-v0"
#: Per-task ids, from the task names.
CONVENIENCE_IDS = {name: f"TwoLink{name.capitalize()}-v0" for name in TASKS}


def _max_episode_steps_given_to_gym_make() -> bool:
    """Whether the ``gym.make`` creating this env will add its own ``TimeLimit``.

    That is the case when ``gym.make`` was given ``max_episode_steps``, or was
    given a spec that carries one (re-making ``env.spec``).

    ``gym.make`` consumes that argument before calling the entry point and then
    wraps the env in its own ``TimeLimit``; the entry point must not add a
    second, shorter one. The calling frame is identified by its code object,
    so this is exact, and False for any other caller.
    """
    frame = inspect.currentframe()
    try:
        caller = frame.f_back.f_back if frame and frame.f_back else None
        if caller is None or caller.f_code is not _gym_make.__code__:
            return False
        if caller.f_locals.get("max_episode_steps") is not None:
            return True
        # gym.make(spec) of a spec that already carries a length (e.g. env.spec re-made)
        return getattr(caller.f_locals.get("env_spec"), "max_episode_steps", None) is not None
    finally:
        del frame


def make_env(**kwargs: Any) -> gym.Env:
    """Entry point of ``TwoLink-v0``: a :class:`TwoLinkEnv` in its task's ``TimeLimit``.

    Parameters
    ----------
    **kwargs
        Keyword arguments of :class:`TwoLinkEnv`.
    """
    env = TwoLinkEnv(**kwargs)
    if _max_episode_steps_given_to_gym_make():
        return env
    return TimeLimit(env, env.default_max_episode_steps)


def register_envs() -> None:
    """Register ``TwoLink-v0`` and the per-task ids (idempotent)."""
    if ENV_ID not in gym.registry:
        gym.register(
            id=ENV_ID,
            entry_point="twolink_gym.registration:make_env",
            vector_entry_point="twolink_gym.vector_env:TwoLinkVectorEnv",
            max_episode_steps=None,
            kwargs={"task": "reach"},
        )
    for name, env_id in CONVENIENCE_IDS.items():
        if env_id not in gym.registry:
            gym.register(
                id=env_id,
                entry_point="twolink_gym.env:TwoLinkEnv",
                vector_entry_point="twolink_gym.vector_env:TwoLinkVectorEnv",
                max_episode_steps=Simulation.create(task=name).max_episode_steps,
                kwargs={"task": name},
            )
