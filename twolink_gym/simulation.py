"""The batched step shared by the single and the vector environment.

:class:`Simulation` composes arm parameters, a task and the integrator, and
holds the observation layout. It knows nothing of Gymnasium; ``env.py`` and
``vector_env.py`` wrap it, so there is one code path for both.

Observation layout (float32), the state encoding followed by the task's extras::

    [cos q1, sin q1, cos q2, sin q2, dq1, dq2, *extras]

The encoding is lossless (angles come back with ``atan2``) and
:func:`decode_observation` inverts it.

Two backends compute a step. The reference is batched numpy over ``(n, 4)``
state arrays: :func:`twolink_gym.integrators.step` and the task's batched
methods (:meth:`Simulation.evaluate`, :meth:`Simulation.observe`). The fast
paths run the same component-wise code (:func:`~twolink_gym.integrators.rk4_components`
and :meth:`Task.outcome <twolink_gym.tasks.Task.outcome>`) either on Python
floats (:meth:`Simulation.step_scalar`, used by the single env: numpy calls on
arrays of 4 numbers cost more than the arithmetic) or on arrays of shape ``(n,)``
with the trigonometry of the arrival state computed once
(:meth:`Simulation.evaluate_and_observe`, used by the vector env). They agree
with the reference to floating-point round-off (``tests/test_fast_paths.py``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym._arrays import positive_integer, positive_number
from twolink_gym.dynamics import Coefficients, coefficients
from twolink_gym.integrators import rk4_components
from twolink_gym.kinematics import forward_kinematics
from twolink_gym.params import ArmParams
from twolink_gym.tasks import Task, make_task
from twolink_gym.tasks.base import ARRAY_OPS, SCALAR_OPS, ArmFrame, Ops, Outcome

__all__ = [
    "STATE_OBS_NAMES",
    "DecodedObservation",
    "Simulation",
    "SimulationProperties",
    "StepOutcome",
    "decode_observation",
    "encode_state",
]

Array = NDArray[np.float64]

#: Names of the state-encoding entries at the start of every observation.
STATE_OBS_NAMES = ("cos_q1", "sin_q1", "cos_q2", "sin_q2", "dq1", "dq2")

#: Default torque limits [N·m]: 1.5x and 2x the largest static gravity torques of
#: the default arm (19.62 and 4.905 N·m), so any static pose can be held.
DEFAULT_MAX_TORQUE = (30.0, 10.0)
#: Default joint speed limit [rad/s] (3 revolutions per second).
DEFAULT_MAX_SPEED = 6 * math.pi
#: Batches up to this size are stepped arm by arm on Python floats by
#: :meth:`Simulation.step_batch` (faster than numpy for few arms; measured
#: crossover with ``benchmarks/bench_speed.py``).
SCALAR_LOOP_MAX_ENVS = 24
#: :meth:`Simulation.advance` integrates batches in blocks of this many arms (the
#: RK4 temporaries of a block fit in the CPU cache; measured with the benchmark).
ADVANCE_BLOCK = 4096


def encode_state(state: Array) -> Array:
    """State ``(n, 4)`` → ``(n, 6)`` encoding ``[cos q1, sin q1, cos q2, sin q2, dq1, dq2]``."""
    q1, q2 = state[:, 0], state[:, 1]
    return np.stack([np.cos(q1), np.sin(q1), np.cos(q2), np.sin(q2), state[:, 2], state[:, 3]], 1)


@dataclasses.dataclass(frozen=True)
class DecodedObservation:
    """What a controller can recover from an observation.

    Attributes
    ----------
    state : ndarray, shape (..., 4)
        ``[q1, q2, dq1, dq2]`` with angles in ``(-pi, pi]`` (float32 precision).
    goal : ndarray, shape (..., goal_size)
        The task's goal (the target tip position for reach; empty for balance).
    extras : ndarray, shape (..., extras_size)
        All task-specific entries.
    """

    state: Array
    goal: Array
    extras: Array


def decode_observation(observation: ArrayLike, task: Task) -> DecodedObservation:
    """Invert the observation encoding of ``task``.

    Parameters
    ----------
    observation : array_like, shape (6 + task.extras_size,) or (..., 6 + task.extras_size)
    task : Task
        The task whose observations these are; by convention its goal is the
        first ``goal_size`` extras.

    Raises
    ------
    ValueError
        If the last axis does not match the task's observation size.
    """
    obs = np.asarray(observation, dtype=np.float64)
    size = len(STATE_OBS_NAMES) + task.extras_size
    if obs.ndim == 0 or obs.shape[-1] != size:
        raise ValueError(
            f"observation must have shape ({size},) or (..., {size}) for task "
            f"{task.name!r}, got {obs.shape}"
        )
    state = np.stack(
        [
            np.arctan2(obs[..., 1], obs[..., 0]),
            np.arctan2(obs[..., 3], obs[..., 2]),
            obs[..., 4],
            obs[..., 5],
        ],
        -1,
    )
    extras = obs[..., len(STATE_OBS_NAMES) :]
    return DecodedObservation(state=state, goal=extras[..., : task.goal_size], extras=extras)


@dataclasses.dataclass(frozen=True)
class StepOutcome:
    """Everything a batched step produces besides the new state (all leading axis ``n``)."""

    reward: Array
    terms: dict[str, Array]
    terminated: NDArray[np.bool_]
    success: NDArray[np.bool_]
    distance: Array
    tip: Array


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
    """

    params: ArmParams
    task: Task
    dt: float
    substeps: int
    max_torque: Array
    max_speed: float
    # constants of the fast paths, derived in __post_init__
    _coef: Coefficients = dataclasses.field(init=False, repr=False, compare=False)
    _torque1: float = dataclasses.field(init=False, repr=False, compare=False)
    _torque2: float = dataclasses.field(init=False, repr=False, compare=False)
    _fast: bool = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_coef", coefficients(self.params))
        object.__setattr__(self, "_torque1", float(self.max_torque[0]))
        object.__setattr__(self, "_torque2", float(self.max_torque[1]))
        object.__setattr__(self, "_fast", type(self.task).outcome is not Task.outcome)

    @classmethod
    def create(
        cls,
        task: str | Task = "reach",
        params: ArmParams | Mapping[str, Any] | None = None,
        dt: float = 0.02,
        substeps: int = 2,
        max_torque: float | Sequence[float] = DEFAULT_MAX_TORQUE,
        max_speed: float = DEFAULT_MAX_SPEED,
        task_options: Mapping[str, Any] | None = None,
    ) -> Simulation:
        """Validate the environment's keyword arguments and build the simulation.

        Raises
        ------
        ValueError
            Naming the argument and the allowed values.
        """
        arm = ArmParams.coerce(params)
        the_task = make_task(task, task_options)
        dt = positive_number(dt, "dt")
        substeps = positive_integer(substeps, "substeps")
        message = f"max_torque must be a number or a pair of numbers > 0 (N·m), got {max_torque!r}"
        try:
            torque = np.broadcast_to(np.asarray(max_torque, dtype=np.float64), (2,)).copy()
        except (TypeError, ValueError) as exc:
            raise ValueError(message) from exc
        if isinstance(max_torque, bool) or not np.all(np.isfinite(torque) & (torque > 0)):
            raise ValueError(message)
        speed = positive_number(max_speed, "max_speed")
        return cls(arm, the_task, dt, substeps, torque, speed)

    # -- spaces ----------------------------------------------------------
    @property
    def observation_size(self) -> int:
        """Length of the observation vector."""
        return len(STATE_OBS_NAMES) + self.task.extras_size

    @property
    def observation_names(self) -> tuple[str, ...]:
        """Names of the observation entries, in order."""
        return STATE_OBS_NAMES + self.task.extras_names()

    def observation_bounds(self) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """Finite float32 bounds ``(low, high)`` of the observation, each ``(obs_size,)``."""
        lo, hi = self.task.extras_bounds(self.params)
        s = self.max_speed
        low = np.concatenate([[-1.0, -1.0, -1.0, -1.0, -s, -s], lo]).astype(np.float32)
        high = np.concatenate([[1.0, 1.0, 1.0, 1.0, s, s], hi]).astype(np.float32)
        return low, high

    @property
    def max_episode_steps(self) -> int:
        """The task's default episode length in control steps."""
        return max(1, round(self.task.episode_seconds / self.dt))

    # -- actions ---------------------------------------------------------
    def check_action(self, action: ArrayLike, shape: tuple[int, ...]) -> Array:
        """Validate an action batch and clip it to ``[-1, 1]`` (documented behaviour).

        Raises
        ------
        ValueError
            On a wrong shape or a NaN or infinite entry.
        """
        try:
            a = np.asarray(action, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"action must be numeric with shape {shape}, got {action!r}") from exc
        if a.shape != shape:
            raise ValueError(f"action must have shape {shape}, got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"action must be finite, got {a.tolist()}")
        return np.clip(a, -1.0, 1.0)

    def torque(self, action: Array) -> Array:
        """Normalised action ``(n, 2)`` in ``[-1, 1]`` → joint torques [N·m]."""
        return action * self.max_torque

    # -- dynamics, observation, reward -----------------------------------
    def advance(self, state: Array, action: Array) -> Array:
        """The state ``(n, 4)`` one control period later under ``action`` ``(n, 2)``.

        Bit-identical to :func:`twolink_gym.integrators.step` with the torque
        ``action * max_torque``, followed by clipping the speeds to ``max_speed``.
        Large batches are integrated in blocks of :data:`ADVANCE_BLOCK` arms so
        that the RK4 temporaries stay in the CPU cache.
        """
        n = state.shape[0]
        nxt = np.empty((n, 4))
        for start in range(0, n, ADVANCE_BLOCK):
            x, a, out = (
                state[start : start + ADVANCE_BLOCK],
                action[start : start + ADVANCE_BLOCK],
                nxt[start : start + ADVANCE_BLOCK],
            )
            parts = rk4_components(
                self._coef,
                x[:, 0],
                x[:, 1],
                x[:, 2],
                x[:, 3],
                a[:, 0] * self._torque1,
                a[:, 1] * self._torque2,
                self.dt,
                self.substeps,
                np.cos,
                np.sin,
            )
            for j in range(4):
                out[:, j] = parts[j]
        np.clip(nxt[:, 2:], -self.max_speed, self.max_speed, out=nxt[:, 2:])
        return nxt

    def observe(self, state: Array, goal: Array) -> NDArray[np.float32]:
        """Observations ``(n, obs_size)`` of states ``(n, 4)`` with goals ``(n, goal_size)``."""
        extras = self.task.observation_extras(self.params, state, goal)
        return np.concatenate([encode_state(state), extras], axis=1).astype(np.float32)

    def evaluate(self, state: Array, goal: Array, action: Array) -> StepOutcome:
        """Reward, termination and success of arriving in ``state`` after ``action``."""
        reward, terms = self.task.reward(self.params, state, goal, action)
        return StepOutcome(
            reward=reward,
            terms=terms,
            terminated=self.task.terminated(self.params, state, goal),
            success=self.task.is_success(self.params, state, goal),
            distance=self.task.distance(self.params, state, goal),
            tip=forward_kinematics(self.params, state[:, :2])[1],
        )

    # -- fast paths (component-wise; see the module docstring) ------------
    @property
    def has_fast_path(self) -> bool:
        """Whether the task implements :meth:`Task.outcome` (the built-in tasks do)."""
        return self._fast

    def frame(self, q1: Any, q2: Any, dq1: Any, dq2: Any, ops: Ops) -> ArmFrame:
        """The trigonometry and tip position of a state, computed once (floats or ``(n,)``).

        The tip is computed as in :func:`twolink_gym.kinematics.forward_kinematics`.
        """
        q12 = q1 + q2
        c1, s1, c12, s12 = ops.cos(q1), ops.sin(q1), ops.cos(q12), ops.sin(q12)
        l1, l2 = self.params.l1, self.params.l2
        return ArmFrame(
            q1,
            q2,
            dq1,
            dq2,
            c1,
            s1,
            ops.cos(q2),
            ops.sin(q2),
            c12,
            s12,
            l1 * c1 + l2 * c12,
            l1 * s1 + l2 * s12,
        )

    def step_scalar(
        self,
        state: Sequence[float],
        goal: Sequence[float],
        a1: float,
        a2: float,
    ) -> tuple[tuple[float, float, float, float], ArmFrame, Outcome, NDArray[np.float32]]:
        """One control step of one arm on Python floats (the single env's fast path).

        Needs :attr:`has_fast_path`.

        Parameters
        ----------
        state : sequence of 4 floats
            ``(q1, q2, dq1, dq2)``.
        goal : sequence of floats
            The goal's ``goal_size`` components.
        a1, a2 : float
            Normalised action, already checked and clipped to ``[-1, 1]``.

        Returns
        -------
        state : tuple of 4 floats
            The next state (speeds clipped to ``max_speed``).
        frame : ArmFrame
            Its trigonometry and tip position.
        outcome : Outcome
            Reward, terms, termination, success, distance and extras (floats).
        observation : ndarray, shape (obs_size,), float32
        """
        x, f, out = self._scalar_core(state, goal, a1, a2)
        obs = np.array((f.c1, f.s1, f.c2, f.s2, x[2], x[3], *out.extras), dtype=np.float32)
        return x, f, out, obs

    def _scalar_core(
        self,
        state: Sequence[float],
        goal: Sequence[float],
        a1: float,
        a2: float,
    ) -> tuple[tuple[float, float, float, float], ArmFrame, Outcome]:
        q1, q2, dq1, dq2 = rk4_components(
            self._coef,
            state[0],
            state[1],
            state[2],
            state[3],
            a1 * self._torque1,
            a2 * self._torque2,
            self.dt,
            self.substeps,
            math.cos,
            math.sin,
        )
        limit = self.max_speed
        dq1 = min(max(dq1, -limit), limit)
        dq2 = min(max(dq2, -limit), limit)
        f = self.frame(q1, q2, dq1, dq2, SCALAR_OPS)
        out = self.task.outcome(self.params, SCALAR_OPS, f, goal, a1, a2)
        assert out is not None
        return (q1, q2, dq1, dq2), f, out

    def step_batch(
        self, state: Array, goal: Array, action: Array
    ) -> tuple[Array, StepOutcome, NDArray[np.float32]]:
        """:meth:`advance`, then :meth:`evaluate_and_observe`, by the fastest backend.

        Up to :data:`SCALAR_LOOP_MAX_ENVS` arms (with :attr:`has_fast_path`) are
        stepped one by one on Python floats, where a numpy call costs more than the
        arithmetic on a few numbers; larger batches use numpy. Both backends give
        bit-identical results (see :mod:`twolink_gym.tasks.base`).

        Parameters
        ----------
        state : ndarray, shape (n, 4)
        goal : ndarray, shape (n, goal_size)
        action : ndarray, shape (n, 2)
            Normalised actions, already checked and clipped to ``[-1, 1]``.

        Returns
        -------
        state : ndarray, shape (n, 4)
            The next states.
        outcome : StepOutcome
        observation : ndarray, shape (n, obs_size), float32
        """
        n = state.shape[0]
        if not self._fast or n > SCALAR_LOOP_MAX_ENVS:
            nxt = self.advance(state, action)
            outcome, obs = self.evaluate_and_observe(nxt, goal, action)
            return nxt, outcome, obs
        core = self._scalar_core
        rows = [
            core(x, g, a[0], a[1])
            for x, g, a in zip(state.tolist(), goal.tolist(), action.tolist(), strict=True)
        ]
        outs = [r[2] for r in rows]
        obs = np.array(
            [(f.c1, f.s1, f.c2, f.s2, x[2], x[3], *o.extras) for x, f, o in rows],
            dtype=np.float32,
        )
        outcome = StepOutcome(
            reward=np.array([o.reward for o in outs], dtype=np.float64),
            terms={
                k: np.array([o.terms[k] for o in outs], dtype=np.float64) for k in outs[0].terms
            },
            terminated=np.array([o.terminated for o in outs], dtype=bool),
            success=np.array([o.success for o in outs], dtype=bool),
            distance=np.array([o.distance for o in outs], dtype=np.float64),
            tip=np.array([(r[1].tip_x, r[1].tip_y) for r in rows]),
        )
        return np.array([r[0] for r in rows]), outcome, obs

    def evaluate_and_observe(
        self, state: Array, goal: Array, action: Array
    ) -> tuple[StepOutcome, NDArray[np.float32]]:
        """:meth:`evaluate` and :meth:`observe` of a batch in one pass.

        With :attr:`has_fast_path`, the arrival state's trigonometry and tip are
        computed once and shared by the observation and the task; otherwise
        this calls :meth:`evaluate` and :meth:`observe`.

        Parameters
        ----------
        state : ndarray, shape (n, 4)
        goal : ndarray, shape (n, goal_size)
        action : ndarray, shape (n, 2)
            The applied normalised action, in ``[-1, 1]``.
        """
        if not self._fast:
            return self.evaluate(state, goal, action), self.observe(state, goal)
        n = state.shape[0]
        f = self.frame(state[:, 0], state[:, 1], state[:, 2], state[:, 3], ARRAY_OPS)
        goal_parts = tuple(goal[:, j] for j in range(goal.shape[1]))
        out = self.task.outcome(self.params, ARRAY_OPS, f, goal_parts, action[:, 0], action[:, 1])
        assert out is not None
        obs = np.empty((n, self.observation_size), dtype=np.float32)
        for j, column in enumerate((f.c1, f.s1, f.c2, f.s2, f.dq1, f.dq2, *out.extras)):
            obs[:, j] = column
        tip = np.empty((n, 2))
        tip[:, 0] = f.tip_x
        tip[:, 1] = f.tip_y
        terminated = out.terminated
        if not isinstance(terminated, np.ndarray):
            terminated = np.full(n, bool(terminated))
        return (
            StepOutcome(
                reward=out.reward,
                terms=out.terms,
                terminated=terminated,
                success=out.success,
                distance=out.distance,
                tip=tip,
            ),
            obs,
        )

    # -- episode starts --------------------------------------------------
    def initial_conditions(
        self,
        rngs: Sequence[np.random.Generator],
        options: Mapping[str, Any] | None,
        n: int,
    ) -> tuple[Array, Array]:
        """Initial states ``(n, 4)`` and goals ``(n, goal_size)`` for ``n`` episodes.

        Episode ``i`` draws from ``rngs[i]``; ``options["state"]`` and
        ``options["target"]`` (reach), of shape ``(4,)``/``(2,)`` for one
        episode or ``(n, 4)``/``(n, 2)`` for a batch, replace the draws.

        Raises
        ------
        ValueError
            On an unknown option key, a wrong shape or a non-finite value.
        """
        options = dict(options or {})
        goal_key = "target" if self.task.goal_size else None
        valid = {"state"} | ({goal_key} if goal_key else set())
        unknown = sorted(set(options) - valid)
        if unknown:
            raise ValueError(
                f"unknown reset option(s) {unknown}; valid options are {sorted(valid)}"
            )
        states = np.empty((n, 4))
        goals = np.empty((n, self.task.goal_size))
        for i in range(n):
            states[i] = self.task.sample_initial_state(rngs[i], self.params)
            goals[i] = self.task.sample_goal(rngs[i], self.params)
        np.clip(states[:, 2:], -self.max_speed, self.max_speed, out=states[:, 2:])
        if "state" in options:
            states = self._option_batch(options["state"], "state", 4, n)
            if np.any(np.abs(states[:, 2:]) > self.max_speed):
                raise ValueError(
                    f"options['state'] joint speeds must lie within ±max_speed = {self.max_speed} rad/s"
                )
        if goal_key and goal_key in options:
            goals = self._option_batch(options[goal_key], goal_key, self.task.goal_size, n)
            self.task.validate_goal(self.params, goals)
        return states, goals

    @staticmethod
    def _option_batch(value: Any, key: str, size: int, n: int) -> Array:
        arr = np.asarray(value, dtype=np.float64)
        if arr.shape == (size,):
            arr = np.broadcast_to(arr, (n, size))
        if arr.shape != (n, size):
            raise ValueError(
                f"options[{key!r}] must have shape ({size},) or ({n}, {size}), got {arr.shape}"
            )
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"options[{key!r}] must be finite, got {arr.tolist()}")
        return arr.copy()


class SimulationProperties:
    """Read-only configuration properties of an env built on a :class:`Simulation`.

    Mixed into :class:`~twolink_gym.env.TwoLinkEnv` and
    :class:`~twolink_gym.vector_env.TwoLinkVectorEnv`, which both hold their
    simulation as ``self.sim`` (shared by all copies of a vector env).
    """

    sim: Simulation

    @property
    def params(self) -> ArmParams:
        """The arm's physical parameters."""
        return self.sim.params

    @property
    def task(self) -> Task:
        """The task object."""
        return self.sim.task

    @property
    def dt(self) -> float:
        """Control period [s]."""
        return self.sim.dt

    @property
    def substeps(self) -> int:
        """RK4 sub-steps per control period."""
        return self.sim.substeps

    @property
    def max_torque(self) -> NDArray[np.float64]:
        """Joint torques at action ±1 [N·m] (a copy), shape ``(2,)``."""
        return self.sim.max_torque.copy()

    @property
    def max_speed(self) -> float:
        """Joint speed limit [rad/s]."""
        return self.sim.max_speed
