"""``TwoLinkEnv``: the single Gymnasium environment of the two-link arm."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from twolink_gym.adapters import EnvSettings, check_render_mode, draw, new_renderer
from twolink_gym.core import Core, StepResult, step_info
from twolink_gym.env_config import EnvConfig
from twolink_gym.params import ArmParams
from twolink_gym.simulation import DecodedObservation, Simulation, decode_observation
from twolink_gym.tasks import Task

__all__ = ["TwoLinkEnv"]

ObsType = NDArray[np.float32]


class TwoLinkEnv(EnvSettings, gym.Env[ObsType, NDArray[np.float32]]):
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
        field, in every info) and :attr:`arm_params`. With ``push_rate``,
        ``info["pushed"]`` says whether the step began with a push (False at a reset).

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
    see), the push model moves a pushed arm before the step, the observation
    model turns the kernel's observation into the returned one. Per step, the
    torque noise is drawn first, then the push, then the observation noise; per
    reset, the arm before the episode start and the observation noise.
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
        #: The batched core of one arm (row 0 of its arrays and results).
        self._core = Core(self.sim, [self.np_random])
        low, high = self._core.obs_bounds
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(self.sim.action_size,), dtype=np.float32)
        self._action_size = self.sim.action_size  # read on every step
        # the models that draw noise from np_random on every step
        self._noisy = any(
            model is not None
            for model in (
                self.sim.actuator_model,
                self.sim.observation_model,
                self.sim.push_model,
            )
        )
        self._params_info: dict[str, Any] | None = None
        self._last_reward = 0.0
        self._renderer: Any = None
        # valid right after __init__: an episode drawn from an unseeded generator
        self._start(None)

    # -- properties ------------------------------------------------------
    @property
    def state(self) -> NDArray[np.float64]:
        """The true state ``[q1, q2, dq1, dq2]`` (a copy), shape ``(4,)``."""
        return self._core.arrays.state[0].copy()

    @property
    def goal(self) -> NDArray[np.float64]:
        """The episode's goal (reach: the target tip position [m]), shape ``(goal_size,)``."""
        return self._core.arrays.goal[0].copy()

    @property
    def _time(self) -> float:
        """Time since the episode started [s]."""
        return self._core.time(0)

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
        return self._core.params[0]

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
        result = self._start(options)
        if self._renderer is not None:
            self._renderer.params = self._core.params[0]
            self._renderer.reset_trail()
        if self.render_mode == "human":
            self.render()
        return result.obs[0], self._info(result)

    def _start(self, options: dict[str, Any] | None) -> StepResult:
        """A new episode of the core's arm, drawn from :attr:`np_random`."""
        core = self._core
        core.rngs[0] = self.np_random  # reset(seed=...) makes a new generator
        result = core.reset(None, options)
        if self.sim.randomization is not None:
            self._params_info = core.params[0].to_dict()
        self._last_reward = 0.0
        return result

    def step(self, action: Any) -> tuple[ObsType, float, bool, bool, dict[str, Any]]:
        """Apply a normalised torque for one control period."""
        core = self._core
        if self._action_size != 2:
            core.set_command(self.sim.check_action(action, (self._action_size,))[None, :])
        else:
            if type(action) is np.ndarray and action.shape == (2,) and action.dtype.kind == "f":
                a1, a2 = action.tolist()
                if not (math.isfinite(a1) and math.isfinite(a2)):
                    self.sim.check_action(action, (2,))  # raises the ValueError
            else:
                a1, a2 = self.sim.check_action(action, (2,)).tolist()
            # clipped to [-1, 1] (documented), on floats: cheaper than numpy on 2 numbers
            command = core.arrays.action
            command[0, 0] = -1.0 if a1 < -1.0 else (1.0 if a1 > 1.0 else a1)
            command[0, 1] = -1.0 if a2 < -1.0 else (1.0 if a2 > 1.0 else a2)
        if self._noisy:
            core.rngs[0] = self.np_random
        result = core.step()
        self._last_reward = reward = result.reward.item(0)
        if self.render_mode == "human":
            self.render()
        return result.obs[0], reward, result.terminated.item(0), False, self._info(result)

    def _info(self, result: StepResult) -> dict[str, Any]:
        """The info dict of the core's arm (:func:`~twolink_gym.core.step_info`, row 0)."""
        params = None if self._params_info is None else dict(self._params_info)
        return step_info(result, self.sim.task, 0, params)

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
        core = self._core
        if self._renderer is None:
            self._renderer = new_renderer(
                self.sim, core.params[0], self.render_mode, self.metadata["render_fps"]
            )
        return draw(
            self._renderer,
            self.sim,
            core.arrays.state[0],
            core.arrays.goal[0],
            self._time,
            self._last_reward,
            core.arrays.action[0],
        )

    def close(self) -> None:
        """Release the renderer (safe to call more than once)."""
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None
