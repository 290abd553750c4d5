"""Gymnasium registration of the per-task ids and of the generic ``TwoLink-v0``.

The per-task ids are the primary registration: ``TwoLinkReach-v0``,
``TwoLinkBalance-v0``, ``TwoLinkSwingup-v0`` and the underactuated variants
(``TwoLinkAcrobotSwingup-v0``, ``TwoLinkPendubotSwingup-v0``,
``TwoLinkAcrobotBalance-v0``, ``TwoLinkPendubotBalance-v0``) carry their task's episode length in their spec, the
ordinary Gymnasium way, so ``gym.make(id, max_episode_steps=N)`` overrides it
(longer or shorter; ``-1`` for no limit) and re-making ``env.spec`` keeps it.

``TwoLink-v0`` serves every task through its ``task`` keyword. A Gymnasium spec
has one ``max_episode_steps`` for all keyword arguments, so ``TwoLink-v0`` is
registered without one and its entry point, :data:`make_env`, wraps the env in
a ``TimeLimit`` of the chosen task's length. ``gym.make`` wraps its own
``TimeLimit`` around that when given ``max_episode_steps``: through
``TwoLink-v0`` that can end episodes earlier than the task's length, never
later. (Gymnasium gives an entry point no way to learn of ``max_episode_steps``:
``gym.make`` keeps that argument to itself.) For longer episodes, or none, use
the per-task id.

Only public Gymnasium API is used: :func:`gymnasium.register`,
:class:`gymnasium.wrappers.TimeLimit`, and an entry point that carries the
env's ``metadata`` (``gym.make`` reads the supported render modes there, to
add ``RenderCollection`` for ``"rgb_array_list"`` and ``HumanRendering``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
from gymnasium.wrappers import TimeLimit

from twolink_gym.env import TwoLinkEnv
from twolink_gym.simulation import Simulation
from twolink_gym.tasks import TASKS

__all__ = [
    "CONVENIENCE_IDS",
    "ENV_ID",
    "UNDERACTUATED_IDS",
    "TaskLengthEntryPoint",
    "make_env",
    "register_envs",
]

ENV_ID = "TwoLink-v0"
#: Per-task ids of the full arm, from the task names (the primary registration).
CONVENIENCE_IDS = {name: f"TwoLink{name.capitalize()}-v0" for name in TASKS}
#: Ids of the underactuated variants, ``(task, actuation) -> id``: one motor can
#: hold the upright (balance) and pump energy (swing-up), but not hold a reach
#: target, so reach has none.
UNDERACTUATED_IDS = {
    (name, actuation): f"TwoLink{actuation.capitalize()}{name.capitalize()}-v0"
    for name in ("balance", "swingup")
    for actuation in ("acrobot", "pendubot")
}


class TaskLengthEntryPoint:
    """Entry point of ``TwoLink-v0``: a :class:`TwoLinkEnv` in its task's ``TimeLimit``.

    A callable object rather than a function so that it carries
    :attr:`metadata`, which ``gym.make`` reads from the entry point to learn the
    render modes (see the module docstring).
    """

    #: The env's metadata (render modes and frame rate), as ``gym.make`` expects.
    metadata: ClassVar[dict[str, Any]] = TwoLinkEnv.metadata

    def __call__(self, **kwargs: Any) -> gym.Env:
        """Make the env and limit its episodes to the task's length.

        Parameters
        ----------
        **kwargs
            Keyword arguments of :class:`TwoLinkEnv`.

        Returns
        -------
        gymnasium.wrappers.TimeLimit
            The env, truncated after ``env.default_max_episode_steps`` steps.
        """
        env = TwoLinkEnv(**kwargs)
        return TimeLimit(env, env.default_max_episode_steps)

    def __repr__(self) -> str:
        return "twolink_gym.registration.make_env"


#: The entry point of ``TwoLink-v0`` (see :class:`TaskLengthEntryPoint`).
make_env = TaskLengthEntryPoint()


def register_envs() -> None:
    """Register the per-task ids and ``TwoLink-v0`` (idempotent)."""
    ids = {(name, "full"): env_id for name, env_id in CONVENIENCE_IDS.items()} | UNDERACTUATED_IDS
    for (name, actuation), env_id in ids.items():
        if env_id not in gym.registry:
            kwargs = (
                {"task": name} if actuation == "full" else {"task": name, "actuation": actuation}
            )
            gym.register(
                id=env_id,
                entry_point="twolink_gym.env:TwoLinkEnv",
                vector_entry_point="twolink_gym.vector_env:TwoLinkVectorEnv",
                max_episode_steps=Simulation.create(task=name).max_episode_steps,
                kwargs=kwargs,
            )
    if ENV_ID not in gym.registry:
        gym.register(
            id=ENV_ID,
            entry_point="twolink_gym.registration:make_env",
            vector_entry_point="twolink_gym.vector_env:TwoLinkVectorEnv",
            max_episode_steps=None,
            kwargs={"task": "reach"},
        )
