"""The compiled program of a ``jax_*`` config: the rejax algorithm on the twin, vmapped over seeds.

:func:`build_program` builds, from a config, the JAX twin of its training env
and of its evaluation env (:data:`make_env`), the rejax algorithm on the
training twin, and three functions jitted and ``jax.vmap``-ed over a leading
axis of seeds: ``init`` (keys → train states), ``segment`` (train states →
train states after a segment of whole iterations) and ``evaluate`` (train
states, keys → returns, lengths and successes of deterministic episodes on
the evaluation twin), and, with ``train.eval_v3_pushes_seeds``,
``evaluate_v3`` (train states → held-out RealAIGym v3 scores, compiled at its
first call). :func:`compile_program` compiles the first three side by side.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from twolink_gym.training.algorithms import JAX_INSTALL_HINT, BackendNotInstalledError
from twolink_gym.training.config import RunConfig
from twolink_gym.training.jax_bootstrapping_ppo import bootstrapping_ppo
from twolink_gym.training.jax_bootstrapping_sac import bootstrapping_sac
from twolink_gym.training.jax_hyperparams import (
    DEFAULT_ACTIVATION,
    INITIAL_STATE_KEYS,
    rejax_class,
)

__all__ = [
    "SPECS",
    "AlgorithmSpec",
    "Program",
    "build_program",
    "compile_program",
    "deterministic_action",
    "make_env",
    "with_initial_policy",
]


@dataclasses.dataclass(frozen=True)
class AlgorithmSpec:
    """How the trainer drives one rejax algorithm.

    Attributes
    ----------
    subclass : callable
        rejax class → the subclass trained (the time limit bootstrapped).
    output : str
        How the actor's mean becomes the deterministic action: ``"clip"`` (PPO's
        Gaussian: the mean clipped to the action space) or ``"tanh"`` (SAC's
        squashed Gaussian: ``loc + tanh(mean) · scale``); a name of
        :data:`~twolink_gym.training.jax_export.OUTPUTS`.
    on_policy : bool
        An iteration collects ``num_steps`` steps of every env (PPO), or one step
        of every env followed by ``num_epochs`` updates from the replay buffer (SAC).
    layers_in_agent_kwargs : bool
        rejax's ``create`` reads ``hidden_layer_sizes`` inside ``agent_kwargs``
        (PPO), or as a keyword of its own (SAC: its ``agent_kwargs`` entry is
        replaced by the default (64, 64)).
    """

    subclass: Callable[[Any], Any]
    output: str
    on_policy: bool
    layers_in_agent_kwargs: bool


#: The ``jax_*`` algorithms by config name.
SPECS: dict[str, AlgorithmSpec] = {
    "jax_ppo": AlgorithmSpec(bootstrapping_ppo, "clip", True, True),
    "jax_sac": AlgorithmSpec(bootstrapping_sac, "tanh", False, False),
}


def _make_env(env_cfg: Any) -> tuple[Any, Any]:
    """The JAX twin (env, params) of an ``env:`` section."""
    try:
        import twolink_gym.jax as tj
    except ImportError as exc:
        raise BackendNotInstalledError(
            f"the jax_* algorithms train on twolink_gym.jax, which needs JAX ({exc}); "
            f"install it with: {JAX_INSTALL_HINT}"
        ) from exc
    from twolink_gym.training.envs import env_id_for

    from twolink_gym.env import TwoLinkEnv

    kwargs = env_cfg.make_kwargs()
    steps = env_cfg.max_episode_steps
    if steps is None:  # the task's own length at the config's dt, as the compiled env counts it
        probe = TwoLinkEnv(**kwargs)
        steps = probe.default_max_episode_steps
        probe.close()
    return tj.make(env_id_for(env_cfg.task, env_cfg.actuation), max_episode_steps=steps, **kwargs)


#: Builds (env, params) from an ``env:`` section; tests may replace it.
make_env: Callable[[Any], tuple[Any, Any]] = _make_env


@dataclasses.dataclass
class Program:
    """The compiled pieces of one config's training (all vmapped over seeds)."""

    algo: Any
    init: Any  # jitted: (keys) -> state
    segment: Any  # jitted: (state) -> state
    evaluate: Any  # jitted: (state, keys) -> (returns, lengths, successes)
    iterations: int
    segment_steps: int
    activation: str
    output: str
    action_low: np.ndarray
    action_high: np.ndarray
    #: jitted: (state, pushes) -> held-out v3 scores (seeds, schedules); None without
    #: ``train.eval_v3_pushes_seeds`` (:mod:`~twolink_gym.training.jax_v3_eval`)
    evaluate_v3: Any = None
    #: the schedules ``evaluate_v3`` takes
    v3_pushes: Any = None
    #: (state of one seed, observations (n, obs_dim)) -> deterministic actions (n, a)
    act: Any = None


def build_program(cfg: RunConfig) -> Program:
    """The rejax algorithm on the twin of ``cfg``, and its jitted segment and evaluation."""
    import jax
    import jax.numpy as jnp

    unsupported = {
        "env.frame_stack": cfg.env.frame_stack != 1,
        "env.goal_observation": cfg.env.goal_observation,
    }
    for key, used in unsupported.items():
        if used:
            raise ValueError(
                f"{cfg.source}: {key} is not available to the jax_* algorithms "
                "(the twin's agent acts on the flat observation); use an SB3 algorithm"
            )
    spec = SPECS[cfg.algo.name]
    cls = spec.subclass(rejax_class(cfg.algo.name))
    env, params = make_env(cfg.env.for_training())
    eval_env, eval_params = make_env(cfg.env)
    hp = {k: v for k, v in cfg.algo.hyperparams.items() if k not in INITIAL_STATE_KEYS}
    agent_kwargs = dict(hp.pop("agent_kwargs", {}))
    activation = str(agent_kwargs.get("activation", DEFAULT_ACTIVATION[cfg.algo.name]))
    agent_kwargs["activation"] = activation
    if not spec.layers_in_agent_kwargs and "hidden_layer_sizes" in agent_kwargs:
        hp["hidden_layer_sizes"] = agent_kwargs.pop("hidden_layer_sizes")
    tc = cfg.train
    iteration = _iteration_steps(cfg, spec, hp)
    every = tc.eval_freq or max(tc.total_timesteps // 20, 1)
    iterations = max(1, math.ceil(every / iteration))
    algo = cls.create(
        env=env,
        env_params=params,
        num_envs=tc.n_envs,
        total_timesteps=iterations * iteration,
        eval_freq=iterations * iteration,
        skip_initial_evaluation=True,
        normalize_observations=cfg.env.normalize_obs,
        normalize_rewards=cfg.env.normalize_reward,
        agent_kwargs=agent_kwargs,
        **hp,
    )
    space = env.action_space(params)
    low = np.broadcast_to(np.asarray(space.low, np.float32), space.shape)
    high = np.broadcast_to(np.asarray(space.high, np.float32), space.shape)
    normalize = cfg.env.normalize_obs
    episodes = tc.eval_episodes
    max_steps = int(eval_params.max_steps_in_episode)

    action = deterministic_action(algo, spec.output)

    def act(ts: Any, obs: Any) -> Any:
        if normalize:
            obs = algo.normalize_obs(ts.obs_rms_state, obs)
        return action(ts.actor_ts.params, obs)

    def evaluate(ts: Any, key: Any) -> tuple[Any, Any, Any]:
        reset_keys = jax.random.split(key, episodes)
        obs, state = jax.vmap(eval_env.reset, in_axes=(0, None))(reset_keys, eval_params)
        zeros = jnp.zeros(episodes)

        def step(carry: Any, k: Any) -> tuple[Any, None]:
            obs, state, done, ret, length, success = carry
            action = act(ts, obs)
            keys = jax.random.split(k, episodes)
            obs, state, reward, finished, info = jax.vmap(eval_env.step, in_axes=(0, 0, 0, None))(
                keys, state, action, eval_params
            )
            live = jnp.logical_not(done)
            ret = ret + jnp.where(live, reward, 0.0)
            length = length + live
            ends = jnp.logical_and(live, finished)
            flag = info["is_success"] if "is_success" in info else jnp.full(episodes, jnp.nan)
            success = jnp.where(ends, flag.astype(success.dtype), success)
            return (obs, state, jnp.logical_or(done, finished), ret, length, success), None

        init = (obs, state, jnp.zeros(episodes, bool), zeros, zeros, zeros)
        carry, _ = jax.lax.scan(step, init, jax.random.split(key, max_steps))
        return carry[3], carry[4], carry[5]

    def segment(ts: Any) -> Any:
        return jax.lax.fori_loop(0, iterations, lambda _, t: algo.train_iteration(t), ts)

    evaluate_v3 = v3_pushes = None
    if tc.eval_v3_pushes_seeds is not None:
        from twolink_gym.training.jax_v3_eval import v3_scores

        scores, v3_pushes = v3_scores(cfg, make_env, act)
        evaluate_v3 = jax.jit(jax.vmap(scores, in_axes=(0, None)))

    return Program(
        algo=algo,
        init=jax.jit(jax.vmap(algo.init_state)),
        segment=jax.jit(jax.vmap(segment)),
        evaluate=jax.jit(jax.vmap(evaluate)),
        iterations=iterations,
        segment_steps=iterations * iteration,
        activation=activation,
        output=spec.output,
        action_low=low,
        action_high=high,
        evaluate_v3=evaluate_v3,
        v3_pushes=v3_pushes,
        act=act,
    )


def _iteration_steps(cfg: RunConfig, spec: AlgorithmSpec, hp: dict[str, Any]) -> int:
    """Env steps (all envs) of one training iteration; raise on settings that do not fit."""
    n_envs = cfg.train.n_envs
    if spec.on_policy:
        num_steps = int(hp.get("num_steps", 64))
        minibatches = int(hp.get("num_minibatches", 16))
        iteration = n_envs * num_steps
        if iteration % minibatches:
            raise ValueError(
                f"{cfg.source}: train.n_envs x algo.hyperparams.num_steps = {n_envs} x "
                f"{num_steps} = {iteration} steps per iteration is not divisible by "
                f"algo.hyperparams.num_minibatches = {minibatches}"
            )
        return iteration
    buffer_size = int(hp.get("buffer_size", 131_072))
    fill_buffer = int(hp.get("fill_buffer", 2_048))
    batch_size = int(hp.get("batch_size", 256))
    if fill_buffer < batch_size:
        # rejax samples without replacement from the entries stored so far
        raise ValueError(
            f"{cfg.source}: algo.hyperparams.fill_buffer = {fill_buffer} must be at least "
            f"algo.hyperparams.batch_size = {batch_size} (updates start after fill_buffer steps "
            "and sample batch_size distinct stored transitions)"
        )
    if buffer_size < max(n_envs, fill_buffer + n_envs):
        raise ValueError(
            f"{cfg.source}: algo.hyperparams.buffer_size = {buffer_size} must be at least "
            f"fill_buffer + train.n_envs = {fill_buffer + n_envs}"
        )
    return n_envs


def deterministic_action(algo: Any, output: str) -> Callable[[Any, Any], Any]:
    """The deterministic action of ``algo``'s actor: ``(actor params, obs (n, obs_dim)) → (n, a)``.

    ``"clip"``: the Gaussian's mean clipped to the action space (rejax's
    ``GaussianPolicy``); ``"tanh"``: ``action_loc + tanh(mean) · action_scale``
    (rejax's ``SquashedGaussianPolicy`` at zero noise). Observations already
    normalised.
    """
    import jax.numpy as jnp

    space = algo.env.action_space(algo.env_params)
    low, high = jnp.asarray(space.low), jnp.asarray(space.high)

    def clipped(m: Any, obs: Any) -> Any:
        return jnp.clip(m.action_mean(m.features(obs)), low, high)

    def squashed(m: Any, obs: Any) -> Any:
        return m.action_loc + jnp.tanh(m.action_mean(m.features(obs))) * m.action_scale

    method = {"clip": clipped, "tanh": squashed}[output]

    def action(params: Any, obs: Any) -> Any:
        return algo.actor.apply(params, obs, method=method)

    return action


def compile_program(
    program: Program, abstract: Any, keys: Any, evaluation: bool
) -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any] | None]:
    """The compiled init, segment and evaluation, compiled side by side (XLA frees the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=3) as pool:
        init = pool.submit(lambda: program.init.lower(keys).compile())
        segment = pool.submit(lambda: program.segment.lower(abstract).compile())
        evaluate = (
            pool.submit(lambda: program.evaluate.lower(abstract, keys).compile())
            if evaluation
            else None
        )
        return init.result(), segment.result(), evaluate.result() if evaluate else None


def with_initial_policy(state: Any, hyperparams: Mapping[str, Any]) -> Any:
    """``state`` with the initial policy set from ``hyperparams``' initial-state keys.

    ``log_std_init``: the Gaussian policy's ``action_log_std`` set to it everywhere;
    ``action_mean_init_scale``: the weights and bias of the policy's mean layer
    (``action_mean``) multiplied by it. Keys not given leave rejax's initialisation.
    """
    import jax
    import jax.numpy as jnp

    if not set(INITIAL_STATE_KEYS) & set(hyperparams):
        return state
    params = state.actor_ts.params
    inner = dict(params["params"])
    if "log_std_init" in hyperparams:
        value = float(hyperparams["log_std_init"])
        inner["action_log_std"] = jnp.full_like(inner["action_log_std"], value)
    if "action_mean_init_scale" in hyperparams:
        scale = float(hyperparams["action_mean_init_scale"])
        inner["action_mean"] = jax.tree.map(lambda x: x * scale, inner["action_mean"])
    actor_ts = state.actor_ts.replace(params={**params, "params": inner})
    return state.replace(actor_ts=actor_ts)
