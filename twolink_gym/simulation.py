"""The configuration of an environment, validated: arm, task, integrator, limits, models.

:class:`Simulation` composes arm parameters, a task and the integrator's
settings, and holds the observation layout, the action layout and the episode
starts. It knows nothing of Gymnasium and holds no per-episode state: the
batched core (:mod:`twolink_gym.core`) owns the arms' states and steps them,
and both envs are thin adapters of one core.

The observation codec and the actuation table (``encode_state``,
``decode_observation``, ``ACTUATIONS``) live in :mod:`twolink_gym.codec` and are
re-exported here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym import kernel
from twolink_gym.codec import (
    ACTUATIONS,
    STATE_OBS_NAMES,
    DecodedObservation,
    check_action,
    check_actuation,
    decode_observation,
    encode_state,
    expand_action,
)
from twolink_gym.dynamics import arm_vectors
from twolink_gym.env_config import DEFAULT_MAX_SPEED, DEFAULT_SUBSTEPS, EnvConfig
from twolink_gym.imperfections import (
    ActuatorModel,
    ObservationModel,
    PushModel,
    Randomization,
)
from twolink_gym.params import ArmParams
from twolink_gym.tasks import Task
from twolink_gym.tasks.base import DEFAULT_MAX_TORQUE, goal_batch

__all__ = [
    "ACTUATIONS",
    "DEFAULT_MAX_SPEED",
    "DEFAULT_MAX_TORQUE",
    "DEFAULT_SUBSTEPS",
    "STATE_OBS_NAMES",
    "DecodedObservation",
    "Simulation",
    "check_actuation",
    "decode_observation",
    "encode_state",
]

Array = NDArray[np.float64]


@dataclasses.dataclass(frozen=True)
class Simulation:
    """Parameters + task + integrator: the batched core of the environments.

    Build it with :meth:`create`, which validates every argument.

    Attributes
    ----------
    params : ArmParams
    task : Task
    dt : float
        Control period [s].
    substeps : int
        RK4 sub-steps per control period.
    max_torque : ndarray, shape (2,)
        Torque at action ±1, per joint [N·m].
    max_speed : float
        Joint speed limit [rad/s]; speeds are clipped to it after every step.
    actuation : str
        ``"full"``, ``"acrobot"`` or ``"pendubot"`` (:data:`ACTUATIONS`).
    randomization : Randomization or None
        Per-episode arm parameters (``None``: every episode has :attr:`params`).
    observation_model : ObservationModel or None
        What the agent observes (``None``: the full state, without noise).
    actuator_model : ActuatorModel or None
        The motors' delay, response and noise (``None``: ideal motors).
    push_model : PushModel or None
        Pushes of the arm at random times (``None``: none).
    """

    params: ArmParams
    task: Task
    dt: float
    substeps: int
    max_torque: Array
    max_speed: float
    actuation: str = "full"
    randomization: Randomization | None = None
    observation_model: ObservationModel | None = None
    actuator_model: ActuatorModel | None = None
    push_model: PushModel | None = None
    #: ``[max_torque1, max_torque2, max_speed, dt, substeps]``, the step kernel's ``config``
    config: Array = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        config = np.array([*self.max_torque, self.max_speed, self.dt, float(self.substeps)])
        object.__setattr__(self, "config", config)

    @classmethod
    def create(cls, config: EnvConfig | None = None, /, **settings: Any) -> Simulation:
        """Build the simulation of an env configuration.

        Parameters
        ----------
        config : EnvConfig, optional
            The settings (default: :class:`EnvConfig`'s defaults).
        **settings
            Fields of :class:`EnvConfig` (``task="reach"``, ``dt=0.01``, ...),
            over ``config``.

        ``max_torque=None`` takes the task's default for the actuation,
        :meth:`~twolink_gym.tasks.Task.default_max_torque_for`. ``randomize``,
        ``observation``, ``obs_noise``, ``torque_noise``, ``torque_response``,
        ``action_delay`` and ``push_rate`` build the models of :mod:`twolink_gym.imperfections`
        (``None`` where they change nothing).

        Raises
        ------
        EnvConfigError
            A ``ValueError`` naming the setting (its ``key``) and the allowed values.
        TypeError
            On an unknown setting.
        """
        c = EnvConfig.from_settings(config, settings).checked()
        actuation = c["actuation"]
        actuator_model = ActuatorModel.create(
            c["torque_noise"], c["torque_response"], c["action_delay"], ACTUATIONS[actuation]
        )
        return cls(
            c["params"],
            c["task_options"],
            c["dt"],
            c["substeps"],
            c["max_torque"],
            c["max_speed"],
            actuation,
            c["randomize"],
            c["obs_noise"],
            actuator_model,
            PushModel.create(c["push_rate"]),
        )

    # -- spaces ----------------------------------------------------------
    @property
    def kernel_observation_size(self) -> int:
        """Length of the step kernel's observation (the full state encoding and the extras)."""
        return len(STATE_OBS_NAMES) + self.task.extras_size

    @property
    def observation_kind(self) -> str:
        """``"state"`` or ``"angles"`` (the env's ``observation`` keyword)."""
        return "state" if self.observation_model is None else self.observation_model.kind

    @property
    def observation_size(self) -> int:
        """Length of the observation vector (after the observation model)."""
        model = self.observation_model
        return self.kernel_observation_size if model is None else model.size

    @property
    def observation_names(self) -> tuple[str, ...]:
        """Names of the observation entries, in order (after the observation model)."""
        names = STATE_OBS_NAMES + self.task.extras_names()
        return names if self.observation_model is None else self.observation_model.names(names)

    def observation_bounds(
        self, params: Sequence[ArmParams] | None = None
    ) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """Finite float32 bounds ``(low, high)`` of the observation, each ``(obs_size,)``.

        With ``params`` (one arm per copy), the bounds cover every copy's arm;
        with a randomisation, every arm its ranges allow around them (the
        extras' bounds at the all-lowest and the all-highest arm, see
        :meth:`Randomization.extremes`); with observation noise, the noisy
        entries' bounds are widened (:meth:`ObservationModel.bounds`).
        """
        arms = list(dict.fromkeys([self.params] if params is None else params))
        if self.randomization is not None:
            arms = [extreme for arm in arms for extreme in self.randomization.extremes(arm)]
        bounds = [self.task.extras_bounds(arm) for arm in arms]
        lo = np.min([b[0] for b in bounds], axis=0)
        hi = np.max([b[1] for b in bounds], axis=0)
        s = self.max_speed
        low = np.concatenate([[-1.0, -1.0, -1.0, -1.0, -s, -s], lo])
        high = np.concatenate([[1.0, 1.0, 1.0, 1.0, s, s], hi])
        if self.observation_model is not None:
            low, high = self.observation_model.bounds(low, high)
        return low.astype(np.float32), high.astype(np.float32)

    @property
    def max_episode_steps(self) -> int:
        """The task's default episode length in control steps."""
        return max(1, round(self.task.episode_seconds / self.dt))

    # -- actions ---------------------------------------------------------
    def check_action(self, action: ArrayLike, shape: tuple[int, ...]) -> Array:
        """Validate an action batch and clip it to ``[-1, 1]`` (:func:`~twolink_gym.codec.check_action`).

        Raises
        ------
        ValueError
            On a wrong shape or a NaN or infinite entry.
        """
        return check_action(action, shape)

    @property
    def actuated(self) -> tuple[int, ...]:
        """The joints with a motor (0: shoulder, 1: elbow), in action order."""
        return ACTUATIONS[self.actuation]

    @property
    def action_size(self) -> int:
        """Length of the action vector: 2, or 1 for an underactuated arm."""
        return len(self.actuated)

    def expand_action(self, action: Array) -> Array:
        """Actions ``(n, action_size)`` → both joints' normalised torques ``(n, 2)``.

        A joint without a motor gets 0 (:func:`~twolink_gym.codec.expand_action`).
        """
        return expand_action(action, self.actuated)

    def torque(self, action: Array) -> Array:
        """Normalised action ``(n, 2)`` in ``[-1, 1]`` → joint torques [N·m]."""
        return action * self.max_torque

    # -- the step kernel -------------------------------------------------
    def arms(self, params: Sequence[ArmParams] | None, n: int) -> Array:
        """Arm vectors ``(n, 12)`` of ``params`` (one per copy), or of :attr:`params` for all."""
        return arm_vectors(self.params if params is None else params, n)

    def observe(
        self, state: ArrayLike, goal: ArrayLike, time: ArrayLike = 0.0
    ) -> NDArray[np.float32]:
        """Kernel observations ``(n, 6 + extras_size)`` of states ``(n, 4)`` with goals ``(n, goal_size)``.

        The full, noiseless observation (before any :attr:`observation_model`)
        of :attr:`params`'s arm at episode times ``time`` [s] (a float or
        ``(n,)``; default 0), each state seen as its episode's first (fresh
        task memory).
        """
        x = np.ascontiguousarray(state, dtype=np.float64)
        n = x.shape[0]
        arrays = kernel.loop_arrays(self.task, n, self.config)
        arrays.arms[:] = self.arms(None, n)
        arrays.state[:] = x
        arrays.goal[:] = np.asarray(goal, dtype=np.float64).reshape(n, self.task.goal_size)
        arrays.outcome["time"] = time
        kernel.step_kernels(self.task).observe(*arrays)
        return arrays.obs

    # -- episode starts --------------------------------------------------
    @property
    def option_keys(self) -> list[str]:
        """The keys ``reset(options=...)`` accepts for this task, sorted."""
        task = self.task
        valid = {"state"}
        if task.goal_size:
            valid |= {"goal"} | ({task.goal_option} if task.goal_option else set())
        return sorted(valid)

    def check_options(self, options: object) -> dict[str, Any]:
        """``options`` of ``reset`` as a dict, after checking its type and keys.

        Raises
        ------
        ValueError
            If ``options`` is not a mapping or ``None``, or has a key not in
            :attr:`option_keys` (listing them).
        """
        valid = self.option_keys
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(
                f"options must be a dict (or None), got {type(options).__name__} "
                f"{options!r}; the valid keys for task {self.task.name!r} are {valid}"
            )
        options = dict(options or {})
        unknown = sorted(set(options) - set(valid), key=str)
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown}; valid options are {valid}")
        return options

    def initial_conditions(
        self,
        rngs: Sequence[np.random.Generator],
        options: Mapping[str, Any] | None,
        n: int,
        params: Sequence[ArmParams] | None = None,
    ) -> tuple[Array, Array]:
        """Initial states ``(n, 4)`` and goals ``(n, goal_size)`` for ``n`` episodes.

        Episode ``i`` draws from ``rngs[i]`` for the arm ``params[i]`` (default:
        :attr:`params` for all); ``options["state"]`` and
        ``options["target"]`` (reach), of shape ``(4,)``/``(2,)`` for one
        episode or ``(n, 4)``/``(n, 2)`` for a batch, replace the draws.

        Raises
        ------
        ValueError
            If ``options`` is not a mapping (or ``None``), on an unknown option
            key, a wrong shape or a non-finite value.
        """
        options = self.check_options(options)
        task = self.task
        arms = [self.params] * n if params is None else params
        given: Array | None = None
        if "goal" in options and task.goal_option in options:
            raise ValueError(
                f"options 'goal' and {task.goal_option!r} both set the goal; give one of them"
            )
        if "goal" in options:
            given = task.goal_vectors(options["goal"], n, arms)
        elif task.goal_option in options:
            given = task.goals_from_option(options[task.goal_option], n, arms)
        states = np.empty((n, 4))
        goals = np.empty((n, task.goal_size))
        for i in range(n):
            states[i], goals[i] = task.sample_episode(
                rngs[i], arms[i], None if given is None else given[i]
            )
        np.clip(states[:, 2:], -self.max_speed, self.max_speed, out=states[:, 2:])
        if "state" in options:
            states = goal_batch(options["state"], "state", 4, n)
            if np.any(np.abs(states[:, 2:]) > self.max_speed):
                raise ValueError(
                    f"options['state'] joint speeds must lie within ±max_speed = {self.max_speed} rad/s"
                )
        return states, goals
