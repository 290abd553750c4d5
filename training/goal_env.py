"""A goal-conditioned view of a goal task (reach), for SB3's ``HerReplayBuffer``.

Hindsight experience replay (HER) stores each transition again with goals the
arm actually reached later in the episode, so that every step teaches about
several targets. SB3's ``HerReplayBuffer`` needs what Gymnasium-Robotics' Fetch
environments offer: dict observations ``observation`` / ``achieved_goal`` /
``desired_goal`` and a batched ``compute_reward(achieved_goal, desired_goal,
info)``. :class:`GoalObservationVecEnv` gives exactly that on top of any SB3
``VecEnv`` of a goal task (the native vector env or ``DummyVecEnv``):

* ``observation``: the arm's state encoding ``[cos q1, sin q1, cos q2, sin q2,
  dq1, dq2]``;
* ``achieved_goal``: the tip position [m] (``target - to_target`` of the flat
  observation);
* ``desired_goal``: the target [m].

``compute_reward`` calls the task's own reward
(:meth:`~twolink_gym.tasks.ReachTask.reward_at_distance`) with the new distance
and the step's target-independent terms (``reward_ctrl``, ``reward_speed``),
which the env reports in ``info``: relabelled rewards are the env's reward for
the relabelled target, not a second definition of it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, cast

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvStepReturn

from twolink_gym.tasks import TASKS, Task

__all__ = ["GOAL_FREE_TERMS", "GoalObservationVecEnv", "GoalSplit"]

#: The info entries a relabelled reward may need besides the two goals (the task's
#: ``goal_free_terms`` says which it does).
GOAL_FREE_TERMS = ("reward_ctrl", "reward_speed")

_STATE_NAMES = ("cos_q1", "sin_q1", "cos_q2", "sin_q2", "dq1", "dq2")


class GoalSplit:
    """Splits flat observations of a goal task into HER's three parts.

    Parameters
    ----------
    names : sequence of str
        The flat observation's entry names (``sim.observation_names``).
    low, high : ndarray, shape (len(names),)
        The flat observation space's bounds.

    Raises
    ------
    ValueError
        If the observation has no ``target_*`` and ``to_target_*`` entries (the
        task has no goal to condition on).
    """

    def __init__(self, names: Sequence[str], low: NDArray[Any], high: NDArray[Any]) -> None:
        names = list(names)
        missing = [
            n
            for n in (*_STATE_NAMES, "target_x", "target_y", "to_target_x", "to_target_y")
            if n not in names
        ]
        if missing:
            raise ValueError(
                f"env.goal_observation needs a task with a target (reach): the observation "
                f"{names} has no {missing}"
            )
        self.state = np.array([names.index(n) for n in _STATE_NAMES])
        self.target = np.array([names.index("target_x"), names.index("target_y")])
        self.to_target = np.array([names.index("to_target_x"), names.index("to_target_y")])
        goal_low = np.asarray(low, dtype=np.float32)[self.target]
        goal_high = np.asarray(high, dtype=np.float32)[self.target]
        self.space = spaces.Dict(
            {
                "observation": spaces.Box(
                    np.asarray(low, dtype=np.float32)[self.state],
                    np.asarray(high, dtype=np.float32)[self.state],
                    dtype=np.float32,
                ),
                "achieved_goal": spaces.Box(goal_low, goal_high, dtype=np.float32),
                "desired_goal": spaces.Box(goal_low, goal_high, dtype=np.float32),
            }
        )

    def __call__(self, obs: NDArray[Any]) -> dict[str, NDArray[np.float32]]:
        """Flat observations ``(n, d)`` (or ``(d,)``) → the dict of HER's parts.

        ``achieved_goal`` (the tip) is ``target - to_target``, clipped to the
        space's bounds like every other part.
        """
        obs = np.asarray(obs, dtype=np.float32)
        target = obs[..., self.target]
        tip = target - obs[..., self.to_target]
        goal_space = self.space["achieved_goal"]
        assert isinstance(goal_space, spaces.Box)
        return {
            "observation": obs[..., self.state],
            "achieved_goal": np.clip(tip, goal_space.low, goal_space.high),
            "desired_goal": target.copy(),
        }


class GoalReward(Protocol):
    """What a goal-conditioned task (``Task.goal_conditioned``) adds: its reward from a distance."""

    def goal_free_term_names(self) -> tuple[str, ...]:
        """The reward terms that do not depend on the target (read from ``infos``)."""
        ...

    def reward_at_distance(self, dist: Any, terms: Mapping[str, Any]) -> Any:
        """The reward at tip-to-target distance ``dist`` [m] with the goal-free ``terms``."""
        ...


class GoalObservationVecEnv(VecEnvWrapper):
    """Dict observations and ``compute_reward`` over a ``VecEnv`` of a goal task.

    Parameters
    ----------
    venv : VecEnv
        With flat observations of ``task`` whose ``infos`` carry the task's
        target-independent reward terms (:data:`GOAL_FREE_TERMS` that exist).
    task : Task
        The env's task; its ``reward_at_distance`` defines the reward.
    split : GoalSplit
        The flat observation's layout.
    """

    def __init__(self, venv: VecEnv, task: Task, split: GoalSplit) -> None:
        if not task.goal_conditioned:
            goal_tasks = sorted(name for name, cls in TASKS.items() if cls.goal_conditioned)
            raise ValueError(
                f"env.goal_observation: task {task.name!r} has no goal-conditioned reward; "
                f"tasks with one: {goal_tasks}"
            )
        super().__init__(venv, observation_space=split.space)
        self.task = cast(GoalReward, task)  # goal_conditioned: checked above
        self.split = split

    def reset(self) -> dict[str, NDArray[np.float32]]:
        """Reset every copy; dict observations."""
        return self.split(self.venv.reset())  # type: ignore[arg-type]

    def step_wait(self) -> VecEnvStepReturn:
        """Step; dict observations (also each ``terminal_observation``)."""
        obs, rewards, dones, infos = self.venv.step_wait()
        for info in infos:
            if "terminal_observation" in info:
                info["terminal_observation"] = self.split(info["terminal_observation"])
        return self.split(obs), rewards, dones, infos  # type: ignore[arg-type]

    def compute_reward(
        self,
        achieved_goal: NDArray[Any],
        desired_goal: NDArray[Any],
        info: Sequence[dict[str, Any]] | dict[str, Any],
    ) -> NDArray[np.float64]:
        """The task's reward for tips ``achieved_goal`` and targets ``desired_goal``.

        Parameters
        ----------
        achieved_goal, desired_goal : ndarray, shape (n, 2) or (2,)
            Tip positions and targets [m].
        info : sequence of dict (length n) or dict
            The stored transitions' infos (with ``reward_ctrl``, and
            ``reward_speed`` if the task has it).

        Returns
        -------
        ndarray, shape (n,) or ()
        """
        delta = np.asarray(achieved_goal, dtype=np.float64) - np.asarray(
            desired_goal, dtype=np.float64
        )
        dist = np.sqrt(np.sum(delta * delta, axis=-1))
        infos = [info] if isinstance(info, dict) else list(info)
        terms: dict[str, Any] = {}
        for key in self.task.goal_free_term_names():
            if not all(key in i for i in infos):
                raise ValueError(
                    f"compute_reward needs each transition's {key!r} in its info; with SB3's "
                    "HerReplayBuffer set replay_buffer_kwargs.copy_info_dict: true"
                )
            terms[key] = np.array([i[key] for i in infos], dtype=np.float64).reshape(dist.shape)
        return np.asarray(self.task.reward_at_distance(dist, terms), dtype=np.float64)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """``compute_reward`` is answered here (once per index); others go to the wrapped env."""
        if method_name == "compute_reward":
            reward = self.compute_reward(*method_args, **method_kwargs)
            return [reward for _ in self._get_indices(indices)]
        return self.venv.env_method(method_name, *method_args, indices=indices, **method_kwargs)
