"""The JAX env of the two-link arm: :class:`TwoLinkJaxEnv` and :func:`make` (gymnax's interface).

``env, params = make(env_id, **env_kwargs)`` takes every registered id and the
keywords of ``gym.make`` (the settings of :class:`~twolink_gym.env_config.EnvConfig`
and ``max_episode_steps``). The env is a :class:`gymnax.environments.environment.Environment`
(gymnax 0.0.9): ``reset(key, params, options=None) -> (obs, state)`` and
``step(key, state, action, params) -> (obs, state, reward, done, info)``, five
values, with gymnax's auto-reset (where ``done``, the returned ``obs`` and
``state`` are a new episode's; ``info`` describes the step that ended).
``done`` is ``terminated | truncated``; both are in ``info``, beside the
Gymnasium env's entries (``state``, ``tip``, ``distance``, ``is_success``,
``time``, the goal's, the reported reward terms, ``pushed`` with ``push_rate``). ``step_env`` is the step
without the auto-reset.

A step: clip the action to ``[-1, 1]``, expand it to both joints (a joint
without a motor gets 0), the actuator model, RK4 of ``params.substeps``
sub-steps with the torque held (from where a push leaves the arm, with
``push_rate``), the speed limit, the task twin's kernel at
the new state, the observation ``[cos q1, sin q1, cos q2, sin q2, dq1, dq2,
*extras]`` and the observation model: the compiled step loop's order
(:mod:`twolink_gym.kernel`). Everything is traced (no Python control flow on
values): ``jax.jit`` and ``jax.vmap`` apply.

Random draws: a key is split only among the parts that draw from it, which
is static (the task's episode draw always; the robustness models' hooks
listed in ``Models.draws``). A step of an env without noise hands its key
to the auto-reset whole; one with noise splits it in two.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
from gymnax.environments import spaces
from gymnax.environments.environment import Environment

from twolink_gym.codec import ACTUATIONS
from twolink_gym.env_config import EnvConfig
from twolink_gym.jax import robustness
from twolink_gym.jax.dynamics import rk4
from twolink_gym.jax.kinematics import tip_from_trig
from twolink_gym.jax.params import EnvParams, EnvState, float_dtype
from twolink_gym.jax.tasks import TaskTwin, twin_for
from twolink_gym.jax.tasks.common import named
from twolink_gym.kernel import Step
from twolink_gym.registration import (
    CONVENIENCE_IDS,
    ENV_ID,
    FULL_ARM_ONLY_TASKS,
    UNDERACTUATED_IDS,
)
from twolink_gym.tasks import Task

__all__ = ["TwoLinkJaxEnv", "make"]


class TwoLinkJaxEnv(Environment):
    """The two-link arm as pure functions over :class:`EnvState` and :class:`EnvParams`.

    Parameters
    ----------
    config : EnvConfig
        The settings (as the compiled envs take them).
    max_episode_steps : int or None
        Truncate after this many steps (``None``: never).

    Attributes
    ----------
    config : EnvConfig
    task : Task
        The compiled task object (options, names, render items).
    twin : TaskTwin
        The task's JAX twin.
    actuated : tuple of int
        The joints with a motor, in action order.
    """

    def __init__(self, config: EnvConfig, max_episode_steps: int | None = None) -> None:
        self.config = config
        checked = config.checked()
        self._checked = checked
        self.task: Task = checked["task_options"]
        self.twin: TaskTwin = twin_for(self.task)
        self.actuated: tuple[int, ...] = ACTUATIONS[checked["actuation"]]
        self.models = robustness.build(checked)
        self.max_episode_steps = max_episode_steps
        self._reported = self.task.reported_columns
        draws = self.models.draws
        self._step_draws = ("actuate" in draws, "push" in draws, "observe" in draws)
        self._pushes = "push" in draws  # info["pushed"] with a push model
        self._reset_draws = (
            "draw_arm" in draws,
            True,
            "init_actuator" in draws,
            "observe" in draws,
        )

    # -- parameters and spaces ---------------------------------------------------
    @property
    def default_params(self) -> EnvParams:
        """The params of :attr:`config`, in the default float (a new pytree on each call)."""
        return EnvParams.from_checked(
            self._checked, self.max_episode_steps, self.models.params(float_dtype())
        )

    @property
    def name(self) -> str:
        """The task and actuation, e.g. ``"TwoLinkJax-balance-acrobot"``."""
        return f"TwoLinkJax-{self.task.name}-{self._checked['actuation']}"

    @property
    def num_actions(self) -> int:
        """Length of the action vector: 2, or 1 for an underactuated arm."""
        return len(self.actuated)

    def action_space(self, params: EnvParams | None = None) -> spaces.Box:
        """``Box(-1, 1, (action_size,))``: normalised torques."""
        return spaces.Box(-1.0, 1.0, (self.num_actions,), jnp.float32)

    def observation_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The observation's float32 bounds ``(low, high)`` (as the compiled env's space)."""
        low_x, high_x = self.task.extras_bounds(self._checked["params"])
        s = float(self._checked["max_speed"])
        low = np.concatenate([[-1.0, -1.0, -1.0, -1.0, -s, -s], low_x])
        high = np.concatenate([[1.0, 1.0, 1.0, 1.0, s, s], high_x])
        low, high = self.models.bounds(low, high)
        return low.astype(np.float32), high.astype(np.float32)

    def observation_space(self, params: EnvParams | None = None) -> spaces.Box:
        """A ``Box`` of the observation's bounds, shape ``(6 + extras_size,)``."""
        low, high = self.observation_bounds()
        return spaces.Box(jnp.asarray(low), jnp.asarray(high), low.shape, jnp.float32)

    # -- the functional API ------------------------------------------------------
    @functools.partial(jax.jit, static_argnames=("self",))
    def reset(
        self,
        key: jax.Array,
        params: EnvParams | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> tuple[jax.Array, EnvState]:
        """Start an episode: ``(obs, state)``.

        ``options`` as the Gymnasium env's ``reset``: ``"state"`` ``(4,)``,
        ``"goal"`` ``(goal_size,)`` and the task's own goal option (reach:
        ``"target"`` ``(2,)``) replace the draws (their values are not checked
        here: check them with the compiled env).
        """
        return self.reset_env(key, self.default_params if params is None else params, options)

    @functools.partial(jax.jit, static_argnames=("self",))
    def step(
        self,
        key: jax.Array,
        state: EnvState,
        action: jax.Array,
        params: EnvParams | None = None,
    ) -> tuple[jax.Array, EnvState, jax.Array, jax.Array, dict[str, Any]]:
        """One control step with auto-reset: ``(obs, state, reward, done, info)`` (gymnax's five).

        Where ``done``, ``obs`` and ``state`` start a new episode (drawn with
        ``key``); ``reward`` and ``info`` are the finished step's.
        """
        params = self.default_params if params is None else params
        key_step, key_reset = split_among(key, (any(self._step_draws), True))
        obs_st, state_st, reward, done, info = self.step_env(key_step, state, action, params)
        obs_re, state_re = self.reset_env(key_reset, params)
        state = jax.tree.map(lambda r, s: jnp.where(done, r, s), state_re, state_st)
        obs = jnp.where(done, obs_re, obs_st)
        return obs, state, reward, done, info

    def reset_env(
        self, key: jax.Array, params: EnvParams, options: Mapping[str, Any] | None = None
    ) -> tuple[jax.Array, EnvState]:
        """:meth:`reset` without the jit (see there)."""
        valid = self._option_keys()
        options = dict(options or {})
        unknown = sorted(set(options) - set(valid))
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown}; valid options are {valid}")
        goal_option = self.task.goal_option
        if "goal" in options and goal_option in options:
            raise ValueError(
                f"options 'goal' and {goal_option!r} both set the goal; give one of them"
            )
        dtype = params.dt.dtype
        k_arm, k_episode, k_actuator, k_obs = split_among(key, self._reset_draws)
        arm = self.models.draw_arm(k_arm, params)
        given = [name for name in ("goal", goal_option) if name is not None and name in options]
        if given:
            # a given goal first: a task may start on it (track starts on its path)
            goal = self.twin.goal_from_option(given[0], options[given[0]], params)
            x, goal = self.twin.sample_on(k_episode, params, arm, goal.astype(dtype))
        else:
            x, goal = self.twin.sample(k_episode, params, arm)
        speeds = jnp.clip(x[2:], -params.max_speed, params.max_speed)
        x = jnp.concatenate([x[:2], speeds]).astype(dtype)
        if "state" in options:
            x = jnp.asarray(options["state"], dtype).reshape(4)
        goal = goal.astype(dtype)
        steps = jnp.zeros((), jnp.int32)
        action = jnp.zeros((2,), dtype)
        memory = self.twin.initial_memory(dtype)
        # the compiled observe pass: the kernel at the start state, zero action, t = 0
        obs, _, _, memory, _ = self._evaluate(arm, params, x, goal, memory, steps, action)
        state = EnvState(
            x=x,
            goal=goal,
            memory=memory,
            arm=arm,
            steps=steps,
            time=jnp.zeros((), dtype),
            action=action,
            reward=jnp.zeros((), dtype),
            actuator=self.models.init_actuator(k_actuator, params, dtype),
        )
        return self.models.observe(k_obs, obs, params), state

    def step_env(
        self, key: jax.Array, state: EnvState, action: jax.Array, params: EnvParams
    ) -> tuple[jax.Array, EnvState, jax.Array, jax.Array, dict[str, Any]]:
        """One control step without the auto-reset: ``(obs, state, reward, done, info)``."""
        dtype = params.dt.dtype
        k_actuator, k_push, k_obs = split_among(key, self._step_draws)
        a = jnp.clip(jnp.asarray(action, dtype).reshape(self.num_actions), -1.0, 1.0)
        command = jnp.zeros((2,), dtype).at[jnp.asarray(self.actuated)].set(a)
        applied, actuator = self.models.actuate(k_actuator, command, state.actuator, params)
        x, pushed = self.models.push(k_push, state.x, state.arm, params)
        q1, q2, dq1, dq2 = rk4(
            state.arm,
            x[0],
            x[1],
            x[2],
            x[3],
            applied[0] * params.max_torque[0],
            applied[1] * params.max_torque[1],
            params.dt,
            params.substeps,
            params.coulomb,
        )
        dq1 = jnp.clip(dq1, -params.max_speed, params.max_speed)
        dq2 = jnp.clip(dq2, -params.max_speed, params.max_speed)
        x = jnp.stack([q1, q2, dq1, dq2])
        steps = state.steps + 1
        obs, outcome, terms, memory, tip = self._evaluate(
            state.arm, params, x, state.goal, state.memory, steps, applied
        )
        time = steps.astype(dtype) * params.dt
        terminated = jnp.asarray(outcome.terminated, bool)
        truncated = steps >= params.max_steps_in_episode
        done = terminated | truncated
        reward = jnp.asarray(outcome.reward, dtype)
        new_state = dataclasses.replace(
            state,
            x=x,
            memory=memory,
            steps=steps,
            time=time,
            action=applied,
            reward=reward,
            actuator=actuator,
        )
        info: dict[str, Any] = {
            "state": x,
            "tip": tip,
            "distance": outcome.distance,
            "is_success": jnp.asarray(outcome.success, bool),
            "time": time,
        }
        info.update(self.twin.goal_info(state.goal, obs[6:]))
        for name, j in self._reported:
            info[name] = terms[j]
        if self._pushes:
            info["pushed"] = pushed
        info.update(self.models.info(new_state))
        info["terminated"] = terminated
        info["truncated"] = truncated
        return self.models.observe(k_obs, obs, params), new_state, reward, done, info

    def _evaluate(
        self,
        arm: Any,
        params: EnvParams,
        x: jax.Array,
        goal: jax.Array,
        memory: Any,
        steps: jax.Array,
        action: jax.Array,
    ) -> tuple[jax.Array, Any, Any, Any, jax.Array]:
        """The task kernel at state ``x``: ``(kernel obs, outcome, terms, memory, tip (2,))``."""
        q1, q2, dq1, dq2 = x[0], x[1], x[2], x[3]
        s1, c1 = jnp.sin(q1), jnp.cos(q1)
        s2, c2 = jnp.sin(q2), jnp.cos(q2)
        c12 = c1 * c2 - s1 * s2
        s12 = s1 * c2 + c1 * s2
        t = steps.astype(x.dtype) * params.dt
        step = named(Step, t, q1, q2, dq1, dq2, c1, s1, c12, s12, action[0], action[1])
        outcome, terms, memory, extras = self.twin.kernel(arm, params.options, step, goal, memory)
        tip = jnp.stack(tip_from_trig(arm, c1, s1, c12, s12))
        obs = jnp.concatenate([jnp.stack([c1, s1, c2, s2, dq1, dq2]), extras.astype(x.dtype)])
        return obs, outcome, terms, memory, tip

    def _option_keys(self) -> list[str]:
        """The keys ``reset(options=...)`` accepts, sorted (as the compiled env's)."""
        keys = {"state"}
        if self.task.goal_size:
            keys |= {"goal"} | ({self.task.goal_option} if self.task.goal_option else set())
        return sorted(keys)


def split_among(key: jax.Array, draws: Sequence[bool]) -> list[jax.Array]:
    """One key per consumer: ``key`` split among the consumers that draw (``draws``, static).

    With one drawing consumer it gets ``key`` itself (no split); a consumer
    that does not draw gets ``key`` too (it never uses it).
    """
    count = sum(bool(d) for d in draws)
    if count <= 1:
        return [key] * len(draws)
    keys = iter(jax.random.split(key, count))
    return [next(keys) if d else key for d in draws]


def make(env_id: str, **env_kwargs: Any) -> tuple[TwoLinkJaxEnv, EnvParams]:
    """The JAX env of a registered id and its params: ``env, params = make(env_id, **kwargs)``.

    Parameters
    ----------
    env_id : str
        A registered id of the package (``"TwoLinkBalance-v0"``, ``"TwoLink-v0"``, ...).
    **env_kwargs
        The keywords of ``gym.make``: :class:`~twolink_gym.env_config.EnvConfig`
        settings over the id's own, and ``max_episode_steps`` (default: the
        id's; ``-1``: never truncate). ``render_mode`` is taken and ignored
        (draw a state with :func:`twolink_gym.jax.render`).

    Raises
    ------
    ValueError
        On an id that is not one of the package's (listing them), or a setting
        the JAX env does not model.
    EnvConfigError, TypeError
        On an invalid or unknown setting (as ``gym.make``).
    """
    import twolink_gym  # noqa: F401  (registers the ids)

    ids = sorted({*CONVENIENCE_IDS.values(), *UNDERACTUATED_IDS.values(), ENV_ID})
    if not isinstance(env_id, str) or env_id not in ids:
        raise ValueError(f"env_id must be one of {ids}, got {env_id!r}")
    spec = gym.spec(env_id)
    kwargs = {**spec.kwargs, **env_kwargs}
    if env_id != ENV_ID and kwargs.get("actuation", "full") != "full":
        if spec.kwargs.get("task") in FULL_ARM_ONLY_TASKS:
            raise ValueError(
                f"actuation must be 'full' for {env_id} (the task has no underactuated "
                f"form), got {kwargs['actuation']!r}; the underactuated ids are "
                f"{sorted(UNDERACTUATED_IDS.values())}"
            )
    kwargs.pop("render_mode", None)
    max_steps = kwargs.pop("max_episode_steps", spec.max_episode_steps)
    if max_steps is not None and (
        isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer))
    ):
        raise ValueError(f"max_episode_steps must be an integer >= 1 or -1, got {max_steps!r}")
    if max_steps is not None and max_steps != -1 and max_steps < 1:
        raise ValueError(f"max_episode_steps must be an integer >= 1 or -1, got {max_steps!r}")
    config = EnvConfig.from_settings(None, kwargs)
    env = TwoLinkJaxEnv(config, None if max_steps in (None, -1) else int(max_steps))
    return env, env.default_params
