"""Gymnasium objects over the JAX twin: a ``FuncEnv`` and its single and vector envs.

:class:`TwoLinkFuncEnv` is a :class:`gymnasium.experimental.functional.FuncEnv`
(Gymnasium 1.4's functional API) over a :class:`~twolink_gym.jax.env.TwoLinkJaxEnv`:
``initial``, ``transition``, ``observation``, ``reward``, ``terminal`` and
``transition_info`` as pure functions of a state. Gymnasium's vector adapter
indexes the state as one array (``state.at[rows].set(...)``), so the state is
the twin's :class:`~twolink_gym.jax.params.EnvState`, its last observation,
reward, termination and ``info``, packed into one float vector
(:func:`jax.flatten_util.ravel_pytree`; :meth:`TwoLinkFuncEnv.unpack` gives
the pytree back). A transition runs the twin's ``step_env`` once and stores
what it returns; the other functions read it.

:func:`make_gymnasium_env`
    a :class:`gymnasium.envs.functional_jax_env.FunctionalJaxEnv` (jitted),
    under :class:`~gymnasium.wrappers.TimeLimit` at the id's episode length
    (the functional env itself never truncates); observations float32 JAX
    arrays, ``info`` the twin's entries as JAX arrays (wrap in
    :class:`gymnasium.wrappers.JaxToNumpy` for numpy);
:func:`make_gymnasium_vector_env`
    :class:`TwoLinkFuncVectorEnv`, Gymnasium's ``FunctionalJaxVectorEnv``
    (next-step autoreset, time limit) jitted and vmapped.

What a functional env cannot do here: ``reset(options=...)`` (Gymnasium's
adapters drop them; use the twin's ``reset`` for a given state or goal), and
the reset's ``info`` is empty. Each step crosses to the host (Gymnasium's
adapters convert the reward and termination, and the vector env checks for
episodes to reset): for speed, step the twin itself under ``jit``/``vmap``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
from gymnasium.envs.functional_jax_env import FunctionalJaxEnv, FunctionalJaxVectorEnv
from gymnasium.experimental.functional import FuncEnv
from jax.flatten_util import ravel_pytree

from twolink_gym.jax.env import TwoLinkJaxEnv, make
from twolink_gym.jax.params import EnvParams
from twolink_gym.jax.render import render

__all__ = [
    "TwoLinkFuncEnv",
    "TwoLinkFuncVectorEnv",
    "make_func_env",
    "make_gymnasium_env",
    "make_gymnasium_vector_env",
]


class TwoLinkFuncEnv(FuncEnv):
    """The twin as a Gymnasium ``FuncEnv`` (see the module notes).

    Parameters
    ----------
    env : TwoLinkJaxEnv
    params : EnvParams, optional
        Default: ``env.default_params``.

    Attributes
    ----------
    env : TwoLinkJaxEnv
    observation_space, action_space : gymnasium.spaces.Box
        float32, the compiled env's spaces.
    """

    def __init__(self, env: TwoLinkJaxEnv, params: EnvParams | None = None) -> None:
        self.env = env
        self._params = env.default_params if params is None else params
        low, high = env.observation_bounds()
        self.observation_space = gym.spaces.Box(low, high, dtype=np.float32)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (env.num_actions,), dtype=np.float32)
        shapes = jax.eval_shape(self._tree_of_step, jax.random.key(0), self._params)
        self._zeros = jax.tree.map(lambda s: np.zeros(s.shape, s.dtype), shapes)
        flat, self._unravel = ravel_pytree(self._zeros)
        self.state_size = int(flat.shape[0])
        self._info = jax.jit(lambda state: self.unpack(state)["info"])
        super().__init__()

    def get_default_params(self, **kwargs: Any) -> EnvParams:
        """The params the env was made with."""
        return self._params

    # -- packing --------------------------------------------------------------------
    def _tree_of_step(self, key: jax.Array, params: EnvParams) -> dict[str, Any]:
        """The packed pytree of a first step (for its structure)."""
        _, state = self.env.reset_env(key, params)
        action = jnp.zeros((self.env.num_actions,), params.dt.dtype)
        return self._tree(*self.env.step_env(key, state, action, params))

    @staticmethod
    def _tree(obs: Any, state: Any, reward: Any, done: Any, info: Any) -> dict[str, Any]:
        return {
            "state": state,
            "obs": obs.astype(jnp.float32),
            "reward": reward,
            "terminated": info["terminated"],
            "info": info,
        }

    def pack(self, tree: dict[str, Any]) -> jax.Array:
        """The flat state vector ``(state_size,)`` of a packed pytree."""
        return ravel_pytree(tree)[0]

    def unpack(self, state: jax.Array) -> dict[str, Any]:
        """The pytree of a state vector: ``state`` (the twin's EnvState), ``obs``, ``reward``, ``terminated``, ``info``.

        A batch ``(n, state_size)`` gives a batched pytree.
        """
        if state.ndim == 2:
            return jax.vmap(self._unravel)(state)
        return self._unravel(state)

    # -- the functional API -------------------------------------------------------------
    def initial(self, rng: Any, params: EnvParams | None = None) -> jax.Array:
        """An episode start (the twin's ``reset_env``); reward 0, not terminated."""
        params = self._params if params is None else params
        obs, state = self.env.reset_env(rng, params)
        return self.pack({**self._zeros, "state": state, "obs": obs.astype(jnp.float32)})

    def transition(
        self, state: jax.Array, action: Any, rng: Any, params: EnvParams | None = None
    ) -> jax.Array:
        """One control step (the twin's ``step_env``, no auto-reset), its outcome kept."""
        params = self._params if params is None else params
        current = self.unpack(state)["state"]
        return self.pack(self._tree(*self.env.step_env(rng, current, action, params)))

    def observation(self, state: jax.Array, rng: Any, params: EnvParams | None = None) -> jax.Array:
        """The float32 observation of the state (noise, if any, drawn at its transition)."""
        obs: jax.Array = self.unpack(state)["obs"]
        return obs

    def reward(
        self,
        state: jax.Array,
        action: Any,
        next_state: jax.Array,
        rng: Any,
        params: EnvParams | None = None,
    ) -> jax.Array:
        """The reward of the transition into ``next_state``."""
        reward: jax.Array = self.unpack(next_state)["reward"]
        return reward

    def terminal(self, state: jax.Array, rng: Any, params: EnvParams | None = None) -> jax.Array:
        """Whether the task ended the episode at ``state`` (truncation is the time limit's)."""
        terminated: jax.Array = self.unpack(state)["terminated"]
        return terminated

    def transition_info(
        self,
        state: jax.Array,
        action: Any,
        next_state: jax.Array,
        params: EnvParams | None = None,
    ) -> dict[str, Any]:
        """The twin's ``info`` of the transition (batched for a batch of states).

        Jitted here: Gymnasium's ``transform`` leaves this function out.
        """
        info: dict[str, Any] = self._info(next_state)
        return info

    # -- rendering ------------------------------------------------------------------
    def render_init(self, params: EnvParams | None = None, **kwargs: Any) -> Any:
        """Nothing: the twin's renderer is made on the first frame."""
        return None

    def render_image(
        self, state: jax.Array, render_state: Any, params: EnvParams | None = None
    ) -> tuple[Any, np.ndarray]:
        """An ``(H, W, 3)`` uint8 frame of one env's state (the package's renderer)."""
        params = self._params if params is None else params
        frame = render(self.env, self.unpack(state)["state"], params, "rgb_array")
        assert frame is not None
        return render_state, frame

    def render_close(self, render_state: Any, params: EnvParams | None = None) -> None:
        """Nothing to release."""


class TwoLinkFuncVectorEnv(FunctionalJaxVectorEnv):
    """Gymnasium's ``FunctionalJaxVectorEnv``, with the step of the copies not being reset kept.

    Gymnasium 1.4's ``step`` builds the reset copies' states on the
    *previous* state of all copies (``self.state.at[rows].set(...)``), so on a
    step where one copy starts a new episode every other copy's transition is
    dropped; this step puts the new episodes into the new state instead. It
    also draws a start for every copy on such a step and keeps those of the
    copies to reset (``jnp.where``), so the jitted ``initial`` sees one batch
    size (Gymnasium's draws as many as reset, a compilation per count).
    Next-step autoreset and the time limit are Gymnasium's.
    """

    def step(self, action: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        """Step every copy; the copies whose episode ended at the last step start a new one."""
        self.steps += 1
        rng, self.rng = jax.random.split(self.rng)
        rng = jax.random.split(rng, self.num_envs)
        next_state = self.func_env.transition(self.state, action, rng)
        reward = self.func_env.reward(self.state, action, next_state, rng)
        terminated = self.func_env.terminal(next_state, rng)
        if self.time_limit > 0:
            truncated = self.steps >= self.time_limit
        else:
            truncated = jnp.zeros_like(terminated)
        info = self.func_env.transition_info(self.state, action, next_state)
        if jnp.any(self.prev_done):
            done = self.prev_done
            rng, self.rng = jax.random.split(self.rng)
            starts = self.func_env.initial(jax.random.split(rng, self.num_envs))
            next_state = jnp.where(done[:, None], starts, next_state)
            self.steps = jnp.where(done, 0, self.steps)
            reward = jnp.where(done, 0.0, reward)
            terminated = terminated & ~done
            truncated = truncated & ~done
        self.prev_done = jnp.logical_or(terminated, truncated)
        observation = self.func_env.observation(
            next_state, jax.random.split(self.rng, self.num_envs)
        )
        self.state = next_state
        return observation, reward, terminated, truncated, info


def make_func_env(env_id: str, **env_kwargs: Any) -> TwoLinkFuncEnv:
    """The ``FuncEnv`` of a registered id (``env_kwargs``: the keywords of ``gym.make``)."""
    env, params = make(env_id, **env_kwargs)
    return TwoLinkFuncEnv(env, params)


def _metadata(func_env: TwoLinkFuncEnv) -> dict[str, Any]:
    dt = float(func_env.get_default_params().dt)
    return {"render_modes": ["rgb_array"], "render_fps": max(1, round(1.0 / dt)), "jax": True}


def _vector_metadata(func_env: TwoLinkFuncEnv) -> dict[str, Any]:
    return {**_metadata(func_env), "autoreset_mode": gym.vector.AutoresetMode.NEXT_STEP}


def make_gymnasium_env(
    env_id: str, render_mode: str | None = None, **env_kwargs: Any
) -> gym.Env[Any, Any]:
    """A Gymnasium env over the twin: ``FunctionalJaxEnv`` (jitted) under ``TimeLimit``.

    Parameters
    ----------
    env_id : str
        A registered id of the package.
    render_mode : {None, "rgb_array"}
    **env_kwargs
        The keywords of ``gym.make`` (``max_episode_steps`` included; -1: no limit).

    Raises
    ------
    ValueError
        On an unknown id or setting, or a ``render_mode`` other than ``None`` or ``"rgb_array"``.
    """
    if render_mode not in (None, "rgb_array"):
        raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
    func_env = make_func_env(env_id, **env_kwargs)
    metadata = _metadata(func_env)
    func_env.transform(jax.jit)
    env: gym.Env[Any, Any] = FunctionalJaxEnv(func_env, metadata, render_mode)
    limit = func_env.env.max_episode_steps
    if limit is not None:
        env = gym.wrappers.TimeLimit(env, limit)
    return env


def make_gymnasium_vector_env(
    env_id: str, num_envs: int, **env_kwargs: Any
) -> TwoLinkFuncVectorEnv:
    """``num_envs`` copies of the twin as a Gymnasium vector env (jitted and vmapped).

    Parameters
    ----------
    env_id : str
    num_envs : int
        >= 1.
    **env_kwargs
        The keywords of ``gym.make`` (``max_episode_steps`` included; -1: no limit).

    Raises
    ------
    ValueError
        On ``num_envs < 1``, an unknown id or setting.
    """
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
    func_env = make_func_env(env_id, **env_kwargs)
    limit = func_env.env.max_episode_steps
    vector = TwoLinkFuncVectorEnv(func_env, num_envs, limit or 0, _vector_metadata(func_env))
    func_env.transform(jax.jit)  # over Gymnasium's vmap: jit(vmap(f))
    return vector
