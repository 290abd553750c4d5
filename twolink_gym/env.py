"""``TwoLinkEnv``: the single Gymnasium environment of the two-link arm."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from twolink_gym.adapters import BoundStepLoop, check_render_mode, draw, new_renderer
from twolink_gym.env_config import EnvConfig
from twolink_gym.kernel import TIP_X, TIP_Y
from twolink_gym.params import ArmParams
from twolink_gym.simulation import (
    DecodedObservation,
    Simulation,
    SimulationProperties,
    decode_observation,
)
from twolink_gym.tasks import Task

__all__ = ["TwoLinkEnv"]

ObsType = NDArray[np.float32]


class TwoLinkEnv(BoundStepLoop, SimulationProperties, gym.Env[ObsType, NDArray[np.float32]]):
    """A planar two-link arm driven by torques at both joints.

    Parameters
    ----------
    task : str or Task, optional
        The setting ``task`` (the one setting that may be given by position).
    config : EnvConfig, optional
        The env's settings (:class:`~twolink_gym.env_config.EnvConfig`: task,
        arm, control period, torque and speed limits, actuation, robustness
        models); default: its defaults.
    render_mode : {"human", "rgb_array"}, optional
    **settings
        Fields of :class:`~twolink_gym.env_config.EnvConfig` as keywords
        (``TwoLinkEnv(task="reach", dt=0.01)``), over ``config``. With
        ``randomize``, the episode's arm is drawn at every reset from the env's
        ``np_random``; it is in ``info["params"]`` (a dict of every ``ArmParams``
        field, in every info) and :attr:`arm_params`.

    Raises
    ------
    EnvConfigError
        A ``ValueError`` naming the invalid setting (its ``key``) and the allowed values.
    TypeError
        On a keyword that is not a setting.

    Notes
    -----
    Actions are ``Box(-1, 1, (2,), float32)``, scaled by ``max_torque``; actions
    outside ``[-1, 1]`` are clipped, a NaN or infinite action or one of the wrong
    shape raises ``ValueError``. Observations are described in
    :mod:`twolink_gym.codec`; :meth:`decode` inverts them. The env itself
    never truncates: ``gym.make`` adds a ``TimeLimit`` of the id's
    ``max_episode_steps`` (see :mod:`twolink_gym.registration`);
    :attr:`default_max_episode_steps` is the task's own length.
    ``reset(options=...)`` accepts ``"state"`` (shape ``(4,)``), for reach
    ``"target"`` (shape ``(2,)``), for track ``"path"`` (a path spec, see
    :class:`~twolink_gym.tasks.TrackTask`), and for any task with a goal
    ``"goal"`` (a goal vector as :attr:`goal` returns it), to replay exact episodes.

    The robustness models (:mod:`twolink_gym.imperfections`) act around the
    step kernel: the actuator model turns the command into the applied
    action (which the reward's torque terms, ``render`` and the dynamics
    see), the observation model turns the kernel's observation into the
    returned one. Per step, the torque noise is drawn before the observation
    noise; per reset, the arm before the episode start and the observation noise.
    """

    metadata: dict[str, Any] = {  # noqa: RUF012 - Gymnasium's convention
        "render_modes": ["human", "rgb_array"],
        "render_fps": 50,
    }

    def __init__(
        self,
        task: str | Task | None = None,
        *,
        config: EnvConfig | None = None,
        render_mode: str | None = None,
        **settings: Any,
    ) -> None:
        if task is not None:
            settings["task"] = task
        #: The env's settings (:class:`~twolink_gym.env_config.EnvConfig`).
        self.config = EnvConfig.from_settings(config, settings)
        self.sim = Simulation.create(self.config)
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        self.metadata = {**self.metadata, "render_fps": round(1.0 / self.sim.dt)}
        low, high = self.sim.observation_bounds()
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        self._obs_bounds = (low, high)
        self._plain_obs = self.sim.observation_model is None
        # read on every step: kept as plain attributes
        self._action_size = self.sim.action_size
        self._reported = self.sim.task.reported_columns
        # the task's goal entries of info: a copy of the goal as "target" (the base
        # goal_info), the task's own goal_info, or none (a task without a goal)
        has_goal = self.sim.task.goal_size > 0
        plain = type(self.sim.task).goal_info is Task.goal_info
        self._goal_copy = has_goal and plain
        self._goal_entries = has_goal and not plain
        self.action_space = spaces.Box(-1.0, 1.0, shape=(self.sim.action_size,), dtype=np.float32)

        # the kernel's arrays, updated in place (never rebound: _step_args holds them)
        self._arms = self.sim.arms(None, 1)
        self._state = np.zeros((1, 4))
        self._goal = np.zeros((1, self.sim.task.goal_size))
        self._elapsed = np.zeros(1, dtype=np.int64)  # steps into the episode (the kernel's count)
        self._last_action = np.zeros((1, 2))
        self._buffers = self.sim.buffers(1)
        self._episode_params = self.sim.params
        model = self.sim.actuator_model
        self._actuator = None if model is None else model.new_state(1)
        self._bind_kernel()
        self._last_reward = 0.0
        self._renderer: Any = None
        # valid right after __init__: an episode drawn from an unseeded generator
        self._start(None)

    def _bind_kernel(self) -> None:
        """Bind the step loop, and keep the one arm's rows of its arrays (views, read per step)."""
        super()._bind_kernel()
        self._command = self._last_action[0]  # written by step
        self._state_row = self._state[0]
        self._goal_row = self._goal[0]
        self._obs_row = self._buffers.obs[0]
        self._out_row = self._buffers.out[0]
        self._terms_row = self._buffers.terms[0]
        self._tip_row = self._buffers.out[0, TIP_X : TIP_Y + 1]

    # -- properties ------------------------------------------------------
    @property
    def state(self) -> NDArray[np.float64]:
        """The true state ``[q1, q2, dq1, dq2]`` (a copy), shape ``(4,)``."""
        return self._state[0].copy()

    @property
    def goal(self) -> NDArray[np.float64]:
        """The episode's goal (reach: the target tip position [m]), shape ``(goal_size,)``."""
        return self._goal[0].copy()

    @property
    def _time(self) -> float:
        """Time since the episode started [s]."""
        return int(self._elapsed[0]) * self.sim.dt

    @property
    def default_max_episode_steps(self) -> int:
        """The task's episode length at this env's ``dt``, in control steps.

        The length of the task's per-task id at the default ``dt``; pass it as
        ``gym.make(..., max_episode_steps=...)`` to keep the task's length in
        seconds at another ``dt`` or through ``TwoLink-v0``.
        """
        return self.sim.max_episode_steps

    @property
    def arm_params(self) -> ArmParams:
        """The arm of the current episode (:attr:`params`, or the randomisation's draw)."""
        return self._episode_params

    def decode(self, observation: Any) -> DecodedObservation:
        """Recover state and goal from an observation of this env (see :func:`decode_observation`).

        An angles-only observation decodes to NaN speeds.
        """
        return decode_observation(observation, self.sim.task, self.sim.observation_kind)

    # -- Gymnasium API ---------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsType, dict[str, Any]]:
        """Start an episode (see the class notes for ``options``).

        Raises
        ------
        ValueError
            If ``options`` is not a dict (or ``None``) of the task's option keys
            (:attr:`Simulation.option_keys <twolink_gym.simulation.Simulation.option_keys>`),
            or an option's value is invalid.
        """
        self.sim.check_options(options)  # before the generator is reseeded
        super().reset(seed=seed)
        self._start(options)
        if self._renderer is not None:
            self._renderer.params = self._episode_params
            self._renderer.reset_trail()
        if self.render_mode == "human":
            self.render()
        return self._observation(), self._info()

    def _start(self, options: dict[str, Any] | None) -> None:
        rngs = [self.np_random]
        if self.sim.randomization is not None:
            (self._episode_params,) = self.sim.randomization.draw(rngs, [self.sim.params])
            self._arms[:] = self.sim.arms([self._episode_params], 1)
            self._params_info = self._episode_params.to_dict()
        if self._actuator is not None:
            self._actuator.reset()
        state, goal = self.sim.initial_conditions(rngs, options, 1, [self._episode_params])
        self._state[:] = state
        self._goal[:] = goal
        self._last_action[:] = 0.0
        self._elapsed[0] = 0
        self._last_reward = 0.0
        self.sim.observe_into(self._arms, self._state, self._goal, self._buffers)

    def step(self, action: Any) -> tuple[ObsType, float, bool, bool, dict[str, Any]]:
        """Apply a normalised torque for one control period."""
        if self._action_size != 2:
            a = self.sim.check_action(action, (self._action_size,))
            self._last_action[:] = self.sim.expand_action(a[None, :])
            return self._advance()
        if type(action) is np.ndarray and action.shape == (2,) and action.dtype.kind == "f":
            a1, a2 = action.tolist()
            if not (math.isfinite(a1) and math.isfinite(a2)):
                self.sim.check_action(action, (2,))  # raises the ValueError
        else:
            a1, a2 = self.sim.check_action(action, (2,)).tolist()
        # clipped to [-1, 1] (documented), on floats: cheaper than numpy on 2 numbers
        last = self._command
        last[0] = -1.0 if a1 < -1.0 else (1.0 if a1 > 1.0 else a1)
        last[1] = -1.0 if a2 < -1.0 else (1.0 if a2 > 1.0 else a2)
        return self._advance()

    def _advance(self) -> tuple[ObsType, float, bool, bool, dict[str, Any]]:
        """Run the step kernel with the command in ``_last_action``; the step's return.

        The actuator model (if any) replaces the command by the applied action first.
        """
        if self._actuator is not None:
            model = self.sim.actuator_model
            assert model is not None
            self._last_action[:] = model.apply(self._last_action, self._actuator, [self.np_random])
        self._step_loop()  # advances _elapsed too
        row = self._out_row.tolist()
        self._last_reward = reward = row[0]
        if self.render_mode == "human":
            self.render()
        obs = self._obs_row.copy() if self._plain_obs else self._observation()
        return obs, reward, row[4] != 0.0, False, self._info(row)

    def _observation(self) -> ObsType:
        """The observation of the current state (a new array), through the observation model."""
        model = self.sim.observation_model
        if model is None:
            return self._obs_row.copy()
        return model.apply(self._buffers.obs, [self.np_random], *self._obs_bounds)[0]

    def _info(self, row: list[float] | None = None) -> dict[str, Any]:
        """The info dict of the current state, from the kernel's outcome row ``row``.

        Built on floats, with the vector env's entries in its order (see
        :mod:`twolink_gym.adapters`). Every array in it is new.
        """
        if row is None:
            row = self._out_row.tolist()
        _, distance, _, _, _, success, time = row
        info: dict[str, Any] = {
            "state": self._state_row.copy(),
            "tip": self._tip_row.copy(),
            "distance": distance,
            "is_success": success != 0.0,
            "time": time,
        }
        if self._goal_copy:
            info["target"] = self._goal_row.copy()
        elif self._goal_entries:
            for key, value in self.sim.task.goal_info(self._goal, self._buffers.extras).items():
                info[key] = value[0]
        terms = self._terms_row.tolist()
        for name, j in self._reported:
            info[name] = terms[j]
        if self.sim.randomization is not None:
            info["params"] = dict(self._params_info)
        return info

    # -- rendering -------------------------------------------------------
    def render(self) -> NDArray[np.uint8] | None:
        """Draw the arm (``rgb_array``: return an ``(H, W, 3)`` uint8 frame)."""
        if self.render_mode is None:
            gym.logger.warn(
                "You are calling render method without specifying any render mode. "
                "You can specify the render_mode at initialization, "
                f'e.g. gym.make("{self.spec.id if self.spec else "TwoLink-v0"}", render_mode="rgb_array")'
            )
            return None
        if self._renderer is None:
            self._renderer = new_renderer(
                self.sim, self._episode_params, self.render_mode, self.metadata["render_fps"]
            )
        return draw(
            self._renderer,
            self.sim,
            self._state[0],
            self._goal[0],
            self._time,
            self._last_reward,
            self._last_action[0],
        )

    def close(self) -> None:
        """Release the renderer (safe to call more than once)."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
