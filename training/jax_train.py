"""``twolink train`` for the ``jax_*`` algorithms: rejax on the JAX twin, every seed at once.

A config with ``algo.name: jax_ppo`` trains rejax's ``PPO`` on the functional
twin of its env (:func:`twolink_gym.jax.make` with the config's env settings),
all of ``train.seeds`` in one computation: the train states of the seeds are
stacked along a leading axis and every step of training is ``jax.vmap``-ed over
it and compiled once with ``jax.jit``.

Training runs in **segments** of whole PPO iterations (``train.eval_freq``
steps rounded up to ``n_envs · num_steps``): one compiled call per segment, then,
on the host, a periodic evaluation of every seed (also compiled, on the twin of
the evaluation env, deterministic actions), the progress line, the time log,
TensorBoard scalars and the resume state of every seed. Segments chain exactly:
rejax's PPO keeps everything it learns with in its train state (constant
learning rate, the random key, the envs' states, the running statistics), so a
run cut into segments and one run in a single call go the same way, and
``--resume`` continues from the last segment saved. Ctrl-C stops at the end of
the running segment's compiled call and saves what the last segment produced.

Each seed gets a run folder in the layout of SB3 runs::

    config.yaml          the config of that seed alone (train.seed: S, train.seeds: null)
    policy.npz           the agent as a numpy forward pass (jax_export)
    agent.json           its card (backend "numpy"; success null until exported)
    train_state.npz      the rejax train state of the last segment (for --resume)
    eval/evaluations.npz periodic evaluations (timesteps, results, ep_lengths, successes)
    eval/time_log.csv    each periodic evaluation with its cumulative wall times
    best/                the policy of the best periodic evaluation (train.save_best)
    tb/run_1/            TensorBoard scalars
    train_summary.json   timesteps, wall time (compile included), compile time, machine

so ``twolink evaluate``, ``compare``, ``robustness`` and ``load_policy`` run the
agent on the compiled env through the same ``predict`` as every other policy.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from twolink_gym.training.algorithms import (
    JAX_INSTALL_HINT,
    REJAX_ALGORITHMS,
    BackendNotInstalledError,
    _limit_xla_threads,
)
from twolink_gym.training.config import RunConfig
from twolink_gym.training.jax_export import ACTIVATIONS, JAX_POLICY_FILE, NumpyPolicy

from twolink_gym.pretrained import BACKEND_KEY, CARD_FILE

__all__ = [
    "HYPERPARAMETERS",
    "JAX_ARTIFACTS",
    "RESERVED",
    "STATE_FILE",
    "JaxTrainResult",
    "bootstrapping_ppo",
    "check_rejax_hyperparams",
    "export_policy",
    "field_kinds",
    "rejax_class",
    "seed_config",
    "train_jax",
]

#: The rejax train state of one seed after the last segment (``--resume``).
STATE_FILE = "train_state.npz"

#: What a ``jax_*`` training writes into a run folder: what ``--overwrite`` replaces.
JAX_ARTIFACTS = (
    "config.yaml",
    JAX_POLICY_FILE,
    CARD_FILE,
    STATE_FILE,
    "train_summary.json",
    "eval",
    "best",
    "tb",
    "compare",
    "evaluation",
    "robustness",
)

#: rejax fields set from the config's other sections, not from ``algo.hyperparams``:
#: ``train.n_envs`` → ``num_envs``, ``train.total_timesteps``, ``train.eval_freq``,
#: ``env.normalize_obs`` → ``normalize_observations``, ``env.normalize_reward`` →
#: ``normalize_rewards``; the env and the networks are built here.
RESERVED = {
    "env": "env",
    "env_params": "env",
    "eval_callback": "train.eval_freq",
    "eval_freq": "train.eval_freq",
    "skip_initial_evaluation": "train.eval_freq",
    "total_timesteps": "train.total_timesteps",
    "num_envs": "train.n_envs",
    "normalize_observations": "env.normalize_obs",
    "normalize_rewards": "env.normalize_reward",
    "actor": "algo.hyperparams.agent_kwargs",
    "critic": "algo.hyperparams.agent_kwargs",
}

#: The ``algo.hyperparams`` of each ``jax_*`` algorithm: the rejax class's fields that
#: are not :data:`RESERVED`, with the kind of value each takes, and ``agent_kwargs``
#: (read here without importing rejax, so that a run's config loads without JAX;
#: a test holds it equal to the class's fields).
HYPERPARAMETERS: dict[str, dict[str, str]] = {
    "jax_ppo": {
        "learning_rate": "number",
        "gamma": "number",
        "max_grad_norm": "number",
        "reward_normalization_discount": "number",
        "num_steps": "int",
        "num_minibatches": "int",
        "num_epochs": "int",
        "gae_lambda": "number",
        "clip_eps": "number",
        "vf_coef": "number",
        "ent_coef": "number",
        "agent_kwargs": "mapping",
        "log_std_init": "number",
    },
}

#: Hyperparameters of ours, not rejax fields: applied to the initial train state.
#: ``log_std_init``: the Gaussian policy's initial log standard deviation (rejax
#: starts it at 0, an action noise of std 1 on actions in [-1, 1]; SB3's
#: ``policy_kwargs.log_std_init``).
INITIAL_STATE_KEYS = ("log_std_init",)

#: Keys of ``algo.hyperparams.agent_kwargs`` (the networks: both actor and critic).
AGENT_KWARGS = ("activation", "hidden_layer_sizes")

#: Hyperparameters with a range: (low, high, low included, high included).
_RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "learning_rate": (0.0, math.inf, False, False),
    "gamma": (0.0, 1.0, False, True),
    "gae_lambda": (0.0, 1.0, True, True),
    "clip_eps": (0.0, math.inf, False, False),
    "vf_coef": (0.0, math.inf, True, False),
    "ent_coef": (0.0, math.inf, True, False),
    "max_grad_norm": (0.0, math.inf, False, True),
    "reward_normalization_discount": (0.0, 1.0, False, True),
    "num_steps": (1, math.inf, True, False),
    "num_epochs": (1, math.inf, True, False),
    "num_minibatches": (1, math.inf, True, False),
}


def rejax_class(name: str) -> Any:
    """The rejax algorithm class of the config name ``name`` (imports JAX and rejax)."""
    _limit_xla_threads()
    try:
        import rejax
    except ImportError as exc:
        raise BackendNotInstalledError(
            f"algorithm {name!r} is rejax's JAX implementation, and rejax with JAX is not "
            f"installed ({exc}); install it with: {JAX_INSTALL_HINT}"
        ) from exc
    return getattr(rejax, REJAX_ALGORITHMS[name])


def field_kinds(cls: Any) -> dict[str, str]:
    """The settable fields of a rejax class and the kind of value each takes (as rejax has them)."""
    kinds = {}
    for f in dataclasses.fields(cls):
        if f.name in RESERVED:
            continue
        default = f.default
        if isinstance(default, bool):
            kinds[f.name] = "bool"
        elif isinstance(default, int):
            kinds[f.name] = "int"
        else:
            kinds[f.name] = "number"
    kinds["agent_kwargs"] = "mapping"
    return kinds


def check_rejax_hyperparams(name: str, hyperparams: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` naming a key of ``hyperparams`` that rejax's ``create`` would not take.

    Parameters
    ----------
    name : str
        A key of :data:`~twolink_gym.training.algorithms.REJAX_ALGORITHMS`.
    hyperparams : mapping
        ``algo.hyperparams``: fields of the rejax class (``num_steps``,
        ``learning_rate``, ``clip_eps``, ...) and ``agent_kwargs``
        (``activation``, ``hidden_layer_sizes``).

    Raises
    ------
    ValueError
        On a key set from another section, an unknown key, a value of the wrong
        type or out of range; the message names the key and the allowed ones.
    """
    kinds = HYPERPARAMETERS[name]
    reserved = sorted(set(hyperparams) & set(RESERVED))
    if reserved:
        where = sorted({RESERVED[k] for k in reserved})
        raise ValueError(f"{reserved} are set from {where}, not algo.hyperparams")
    unknown = sorted(set(hyperparams) - set(kinds))
    if unknown:
        raise ValueError(f"unknown key(s) {unknown} for {name}; valid keys are {sorted(kinds)}")
    for key, value in hyperparams.items():
        kind = kinds[key]
        if kind == "mapping":
            _check_agent_kwargs(value)
            continue
        if kind == "bool":
            ok = isinstance(value, bool)
        elif kind == "int":
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok:
            what = {"bool": "true or false", "int": "an integer", "number": "a number"}[kind]
            hint = ""
            if isinstance(value, str):
                hint = " (YAML reads exponents without a decimal point as strings: write 3.0e-4)"
            raise ValueError(f"{key} must be {what}, got {value!r}{hint}")
        if key in _RANGES:
            low, high, low_in, high_in = _RANGES[key]
            inside = (value >= low if low_in else value > low) and (
                value <= high if high_in else value < high
            )
            if not inside:
                interval = f"{'[' if low_in else '('}{low}, {high}{']' if high_in else ')'}"
                raise ValueError(f"{key} must be in {interval}, got {value!r}")


def _check_agent_kwargs(value: Any) -> None:
    if not isinstance(value, Mapping):
        raise ValueError(f"agent_kwargs must be a mapping with keys {list(AGENT_KWARGS)}")
    unknown = sorted(set(value) - set(AGENT_KWARGS))
    if unknown:
        raise ValueError(
            f"unknown key(s) {[f'agent_kwargs.{k}' for k in unknown]}; valid keys are "
            f"{list(AGENT_KWARGS)}"
        )
    activation = value.get("activation", "swish")
    if activation not in ACTIVATIONS:
        raise ValueError(
            f"agent_kwargs.activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}"
        )
    sizes = value.get("hidden_layer_sizes", [64, 64])
    if (
        not isinstance(sizes, list)
        or not sizes
        or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in sizes)
    ):
        raise ValueError(
            f"agent_kwargs.hidden_layer_sizes must be a list of positive integers, got {sizes!r}"
        )


def seed_config(cfg: RunConfig, seed: int) -> RunConfig:
    """The config of seed ``seed`` alone: ``train.seed`` set, ``train.seeds`` cleared.

    Its :attr:`~RunConfig.run_dir` is that seed's run folder (``train.run_name``
    with ``_s<seed>`` added when it names the folder of several seeds).
    """
    tc = cfg.train
    name = tc.run_name
    if name is not None and len(_seeds(cfg)) > 1:
        name = f"{name}_s{seed}"
    train = dataclasses.replace(tc, seed=seed, seeds=None, run_name=name)
    return dataclasses.replace(cfg, train=train)


def _seeds(cfg: RunConfig) -> list[int]:
    return list(cfg.train.seeds) if cfg.train.seeds else [cfg.train.seed]


@dataclasses.dataclass(frozen=True)
class JaxTrainResult:
    """What :func:`train_jax` produced: one run folder per seed."""

    run_dirs: list[Path]
    seeds: list[int]
    timesteps: int
    wall_time_s: float
    compile_time_s: float
    interrupted: bool
    requested_timesteps: int
    planned_timesteps: int
    segment_steps: int
    resumed_at: int | None = None


# -- the twin ---------------------------------------------------------------------


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


# -- time limits ------------------------------------------------------------------


def bootstrapping_ppo(cls: Any) -> Any:
    """A subclass of rejax's ``PPO`` that bootstraps the value of an episode cut by the time limit.

    rejax's PPO reads the twin's ``done`` (``terminated | truncated``) as the end
    of the return, so an episode stopped by ``max_episode_steps`` counts as one
    that ended, and its last states are learned as worth nothing after it (for
    reach, which never terminates, every episode). This subclass collects the
    rollout as rejax does, but steps the twin without its auto-reset first
    (:meth:`~twolink_gym.jax.env.TwoLinkJaxEnv.step_env`, then
    ``reset_env``, selected by ``done``: the order of the twin's ``step``), and on a
    truncated, not terminated step adds ``gamma · V(s_T)`` of the step's own final
    observation to the (normalised) reward, as SB3's PPO does with
    ``TimeLimit.truncated``. Other classes are returned unchanged.
    """
    import jax
    import jax.numpy as jnp
    from rejax.algos.ppo import PPO, Trajectory

    if not issubclass(cls, PPO):
        return cls

    class BootstrappingPPO(cls):  # type: ignore[misc, valid-type]
        def collect_trajectories(self, ts: Any) -> tuple[Any, Any]:
            twin = self.env

            def twin_step(key: Any, state: Any, action: Any, params: Any) -> tuple[Any, ...]:
                key_step, key_reset = jax.random.split(key)
                obs, state_st, reward, done, info = twin.step_env(key_step, state, action, params)
                obs_re, state_re = twin.reset_env(key_reset, params)
                state = jax.tree.map(lambda r, s: jnp.where(done, r, s), state_re, state_st)
                cut = jnp.logical_and(info["truncated"], jnp.logical_not(info["terminated"]))
                return jnp.where(done, obs_re, obs), state, reward, done, obs, cut

            vmap_step = jax.vmap(twin_step, in_axes=(0, 0, 0, None))

            def env_step(ts: Any, unused: Any) -> tuple[Any, Any]:
                rng, new_rng = jax.random.split(ts.rng)
                ts = ts.replace(rng=rng)
                rng_steps, rng_action = jax.random.split(new_rng, 2)
                rng_steps = jax.random.split(rng_steps, self.num_envs)
                action_raw, log_prob = self.actor.apply(
                    ts.actor_ts.params, ts.last_obs, rng_action, method="action_log_prob"
                )
                value = self.critic.apply(ts.critic_ts.params, ts.last_obs)
                space = self.env.action_space(self.env_params)
                action = jnp.clip(action_raw, space.low, space.high)
                next_obs, env_state, reward, done, final_obs, cut = vmap_step(
                    rng_steps, ts.env_state, action, self.env_params
                )
                if self.normalize_observations:  # rejax's FloatObsWrapper casts the same way
                    next_obs, final_obs = next_obs.astype(float), final_obs.astype(float)
                    obs_rms_state, next_obs = self.update_and_normalize_obs(
                        ts.obs_rms_state, next_obs
                    )
                    ts = ts.replace(obs_rms_state=obs_rms_state)
                    final_obs = self.normalize_obs(obs_rms_state, final_obs)
                if self.normalize_rewards:
                    rew_rms_state, reward = self.update_and_normalize_rew(
                        ts.rew_rms_state, reward, done
                    )
                    ts = ts.replace(rew_rms_state=rew_rms_state)
                final_value = self.critic.apply(ts.critic_ts.params, final_obs)
                reward = reward + jnp.where(cut, self.gamma * final_value, 0.0)
                transition = Trajectory(ts.last_obs, action_raw, log_prob, reward, value, done)
                ts = ts.replace(
                    env_state=env_state,
                    last_obs=next_obs,
                    last_done=done,
                    global_step=ts.global_step + self.num_envs,
                )
                return ts, transition

            return jax.lax.scan(env_step, ts, None, self.num_steps)

    BootstrappingPPO.__name__ = BootstrappingPPO.__qualname__ = f"Bootstrapping{cls.__name__}"
    return BootstrappingPPO


# -- export -----------------------------------------------------------------------


def _dense_layers(params: Mapping[str, Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (kernel, bias) pairs of a rejax ``GaussianPolicy``'s parameters, input to output."""
    p = params["params"]
    features = p["features"]
    names = sorted(features, key=lambda k: int(k.split("_")[-1]))
    layers = [(np.asarray(features[n]["kernel"]), np.asarray(features[n]["bias"])) for n in names]
    layers.append((np.asarray(p["action_mean"]["kernel"]), np.asarray(p["action_mean"]["bias"])))
    return layers


def export_policy(
    actor_params: Mapping[str, Any],
    activation: str,
    action_low: Any,
    action_high: Any,
    obs_rms: tuple[Any, Any] | None,
) -> NumpyPolicy:
    """The numpy policy of one seed's trained rejax PPO actor.

    Parameters
    ----------
    actor_params : mapping
        ``train_state.actor_ts.params`` of one seed (JAX or numpy arrays).
    activation : str
        ``agent_kwargs.activation`` (a key of :data:`~twolink_gym.training.jax_export.ACTIVATIONS`).
    action_low, action_high : array
        The action space's bounds ``(action_dim,)``.
    obs_rms : (mean, var) or None
        ``train_state.obs_rms_state``'s mean and variance ``(obs_dim,)`` if the
        observations were normalised.
    """
    arrays: dict[str, Any] = {}
    for i, (k, b) in enumerate(_dense_layers(actor_params)):
        arrays[f"kernel_{i}"], arrays[f"bias_{i}"] = k, b
    arrays["activation"] = activation
    arrays["output"] = "clip"
    dim = arrays[f"bias_{i}"].shape[0]
    arrays["action_low"] = np.broadcast_to(np.asarray(action_low, np.float32), (dim,))
    arrays["action_high"] = np.broadcast_to(np.asarray(action_high, np.float32), (dim,))
    if obs_rms is not None:
        arrays["obs_mean"] = np.asarray(obs_rms[0], np.float32)
        arrays["obs_var"] = np.asarray(obs_rms[1], np.float32)
        arrays["obs_epsilon"] = np.float32(1e-8)  # rejax's NormalizeObservationsMixin
    return NumpyPolicy(arrays, "rejax train state")


# -- the training program ------------------------------------------------------


@dataclasses.dataclass
class _Program:
    """The compiled pieces of one config's training (all vmapped over seeds)."""

    algo: Any
    init: Any  # jitted: (keys) -> state
    segment: Any  # jitted: (state) -> state
    evaluate: Any  # jitted: (state, keys) -> (returns, lengths, successes)
    iterations: int
    segment_steps: int
    activation: str
    action_low: np.ndarray
    action_high: np.ndarray


def _build_program(cfg: RunConfig) -> _Program:
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
    cls = bootstrapping_ppo(rejax_class(cfg.algo.name))
    env, params = make_env(cfg.env.for_training())
    eval_env, eval_params = make_env(cfg.env)
    hp = {k: v for k, v in cfg.algo.hyperparams.items() if k not in INITIAL_STATE_KEYS}
    agent_kwargs = dict(hp.pop("agent_kwargs", {}))
    activation = str(agent_kwargs.get("activation", "swish"))
    agent_kwargs["activation"] = activation
    tc = cfg.train
    num_steps = int(hp.get("num_steps", 64))
    minibatches = int(hp.get("num_minibatches", 16))
    iteration = tc.n_envs * num_steps
    if iteration % minibatches:
        raise ValueError(
            f"{cfg.source}: train.n_envs x algo.hyperparams.num_steps = {tc.n_envs} x "
            f"{num_steps} = {iteration} steps per iteration is not divisible by "
            f"algo.hyperparams.num_minibatches = {minibatches}"
        )
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
    low = np.asarray(space.low, np.float32)
    high = np.asarray(space.high, np.float32)
    normalize = cfg.env.normalize_obs
    episodes = tc.eval_episodes
    max_steps = int(eval_params.max_steps_in_episode)

    def act(ts: Any, obs: Any) -> Any:
        if normalize:
            obs = algo.normalize_obs(ts.obs_rms_state, obs)
        mean = algo.actor.apply(
            ts.actor_ts.params, obs, method=lambda m, o: m.action_mean(m.features(o))
        )
        return jnp.clip(mean, low, high)

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

    return _Program(
        algo=algo,
        init=jax.jit(jax.vmap(algo.init_state)),
        segment=jax.jit(jax.vmap(segment)),
        evaluate=jax.jit(jax.vmap(evaluate)),
        iterations=iterations,
        segment_steps=iterations * iteration,
        activation=activation,
        action_low=low,
        action_high=high,
    )


# -- saving and restoring ------------------------------------------------------


def _seed_leaves(ts: Any, i: int) -> list[np.ndarray]:
    import jax

    return [np.asarray(leaf[i]) for leaf in jax.tree.leaves(ts)]


def _save_state(path: Path, leaves: Sequence[np.ndarray], steps: int) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        arrays: dict[str, Any] = {f"leaf_{j}": v for j, v in enumerate(leaves)}
        np.savez(f, steps=np.int64(steps), **arrays)
    tmp.replace(path)


def _load_states(template: Any, run_dirs: Sequence[Path]) -> tuple[Any, int]:
    """The stacked train states saved in ``run_dirs`` and their common step count."""
    import jax
    import jax.numpy as jnp

    leaves, treedef = jax.tree.flatten(template)
    stacked: list[list[np.ndarray]] = [[] for _ in leaves]
    steps = set()
    for run_dir in run_dirs:
        path = run_dir / STATE_FILE
        if not path.is_file():
            raise FileNotFoundError(f"--resume: {path} is missing (no segment of it was saved)")
        with np.load(path) as data:
            steps.add(int(data["steps"]))
            count = sum(1 for k in data.files if k.startswith("leaf_"))
            if count != len(leaves):
                raise ValueError(
                    f"--resume: {path} holds {count} arrays, this config's train state "
                    f"{len(leaves)}: it was trained with other settings"
                )
            for j, leaf in enumerate(leaves):
                value = data[f"leaf_{j}"]
                if value.shape != leaf.shape[1:]:
                    raise ValueError(
                        f"--resume: {path} array {j} has shape {value.shape}, this config's "
                        f"train state {leaf.shape[1:]}: it was trained with other settings"
                    )
                stacked[j].append(value)
    if len(steps) != 1:
        raise ValueError(
            f"--resume: the seeds' run folders stopped at different steps {sorted(steps)}"
        )
    state = jax.tree.unflatten(treedef, [jnp.asarray(np.stack(v)) for v in stacked])
    return state, steps.pop()


def _write_policy(folder: Path, policy: NumpyPolicy, cfg: RunConfig) -> None:
    """``policy.npz``, ``config.yaml`` and a card (backend numpy, success null) in ``folder``."""
    from twolink_gym.training.export import agent_card

    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / (JAX_POLICY_FILE + ".tmp")
    policy.save(tmp)
    tmp.replace(folder / JAX_POLICY_FILE)
    (folder / "config.yaml").write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    card = {**agent_card(folder.name, cfg, None).to_dict(), BACKEND_KEY: "numpy"}
    (folder / CARD_FILE).write_text(json.dumps(card, indent=2) + "\n")


def _clear(run_dir: Path) -> None:
    for name in JAX_ARTIFACTS:
        path = run_dir / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()


def _check_folders(run_dirs: Sequence[Path], resume: bool, overwrite: bool) -> bool:
    """Refuse to overwrite a run unless asked; return whether to clear the folders."""
    if resume:
        return False
    taken = [d for d in run_dirs if any((d / n).exists() for n in JAX_ARTIFACTS)]
    if not taken:
        return False
    if overwrite:
        return True
    from twolink_gym.training.train import RunExistsError

    raise RunExistsError(
        f"run folder(s) {[str(d) for d in taken]} already exist. To keep them, train into "
        "other folders with --set train.run_name=NEW_NAME (or other train.seeds); to continue "
        "them, use --resume; to replace them, pass --overwrite"
    )


class _TimeLog:
    """One seed's periodic evaluations: ``eval/time_log.csv``, ``evaluations.npz``, TensorBoard."""

    def __init__(self, run_dir: Path, resume_at: int | None) -> None:
        from twolink_gym.training.train import TIME_LOG_COLUMNS, read_time_log

        self.run_dir = run_dir
        self.columns = TIME_LOG_COLUMNS
        self.rows: list[dict[str, float]] = []
        self.npz: dict[str, list[Any]] = {
            "timesteps": [],
            "results": [],
            "ep_lengths": [],
            "successes": [],
        }
        if resume_at is not None:
            log = read_time_log(run_dir)
            if log is not None:
                for i in np.flatnonzero(log["timesteps"] <= resume_at):
                    row = {k: log[k][i].item() for k in TIME_LOG_COLUMNS}
                    row["timesteps"], row["episodes"] = int(row["timesteps"]), int(row["episodes"])
                    self.rows.append(row)
            old = run_dir / "eval" / "evaluations.npz"
            if old.is_file():
                with np.load(old) as data:
                    keep = data["timesteps"] <= resume_at
                    for k in self.npz:
                        self.npz[k] = list(data[k][keep])
        (run_dir / "eval").mkdir(parents=True, exist_ok=True)
        self._writer: Any = None

    def offsets(self) -> tuple[float, float]:
        if not self.rows:
            return 0.0, 0.0
        return float(self.rows[-1]["train_time_s"]), float(self.rows[-1]["eval_time_s"])

    def add(self, row: dict[str, float], returns: Any, lengths: Any, successes: Any) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.rows.append(row)
        lines = [",".join(self.columns)]
        lines += [",".join(str(r[k]) for k in self.columns) for r in self.rows]
        (self.run_dir / "eval" / "time_log.csv").write_text("\n".join(lines) + "\n")
        for key, value in zip(
            self.npz, (row["timesteps"], returns, lengths, successes), strict=True
        ):
            self.npz[key].append(np.asarray(value))
        with open(self.run_dir / "eval" / "evaluations.npz", "wb") as f:
            arrays: dict[str, Any] = {k: np.asarray(v) for k, v in self.npz.items()}
            np.savez(f, **arrays)
        if self._writer is None:
            self._writer = SummaryWriter(str(self.run_dir / "tb" / "run_1"))
        step = int(row["timesteps"])
        self._writer.add_scalar("eval/mean_reward", row["mean_return"], step)
        if not math.isnan(row["success_rate"]):
            self._writer.add_scalar("eval/success_rate", row["success_rate"], step)
        self._writer.add_scalar("time/wall_time_s", row["wall_time_s"], step)
        self._writer.flush()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


def _progress(steps: int, planned: int, wall: float, rows: Sequence[dict[str, float]]) -> str:
    success = [r["success_rate"] for r in rows]
    returns = [r["mean_return"] for r in rows]
    shown = (
        f"success {np.nanmean(success):.0%} (worst {np.nanmin(success):.0%})"
        if not all(math.isnan(s) for s in success)
        else f"return {np.mean(returns):.1f}"
    )
    return f"{steps:>12,} / {planned:,} steps per seed  {wall:7.1f} s  {len(rows)} seeds: {shown}"


def train_jax(cfg: RunConfig, *, resume: bool = False, overwrite: bool = False) -> JaxTrainResult:
    """Train every seed of ``cfg`` at once on the JAX twin; write a run folder per seed.

    Parameters
    ----------
    cfg : RunConfig
        ``algo.name`` a ``jax_*`` algorithm; ``train.seeds`` (or ``train.seed``)
        the seeds.
    resume : bool
        Continue every seed from its run folder's ``train_state.npz`` (the
        last segment saved) up to ``train.total_timesteps``.
    overwrite : bool
        Replace the seeds' existing runs.

    Returns
    -------
    JaxTrainResult

    Raises
    ------
    RunExistsError
        If a seed's folder holds a run and neither ``overwrite`` nor ``resume`` was asked.
    FileNotFoundError, ValueError
        On ``resume`` without a saved state, or one of other settings.
    """
    started = time.perf_counter()
    seeds = _seeds(cfg)
    seed_cfgs = [seed_config(cfg, s) for s in seeds]
    run_dirs = [c.run_dir for c in seed_cfgs]
    if len(set(run_dirs)) != len(run_dirs):
        raise ValueError(f"{cfg.source}: train.seeds {seeds} repeat a seed")
    clear = _check_folders(run_dirs, resume, overwrite)

    import jax
    import jax.numpy as jnp

    program = _build_program(cfg)
    keys = jax.vmap(jax.random.PRNGKey)(jnp.asarray(seeds, dtype=jnp.uint32))
    # the train state's shapes and dtypes as a segment returns them (rejax starts some
    # statistics as integers that training turns into floats): the compiled segment
    # takes and returns these, and the initial state is cast to them
    abstract = jax.eval_shape(program.segment, jax.eval_shape(program.init, keys))
    start_steps = 0
    loaded = None
    if resume:
        loaded, start_steps = _load_states(abstract, run_dirs)
        if start_steps >= cfg.train.total_timesteps:
            raise ValueError(
                f"--resume: the runs already have {start_steps:,} timesteps, "
                f"train.total_timesteps is {cfg.train.total_timesteps:,}; raise it, e.g. "
                f"--set train.total_timesteps={2 * cfg.train.total_timesteps}"
            )
    seg = program.segment_steps
    n_segments = math.ceil((cfg.train.total_timesteps - start_steps) / seg)
    planned = start_steps + n_segments * seg

    # -- validated: from here on the run folders are written ---------------------
    logs = []
    for c, run_dir in zip(seed_cfgs, run_dirs, strict=True):
        if clear:
            _clear(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "config.yaml").write_text(yaml.safe_dump(c.to_dict(), sort_keys=False))
        logs.append(_TimeLog(run_dir, start_steps if resume else None))
    offsets = [log.offsets() for log in logs]
    best = [_best_row(d) if resume else None for d in run_dirs]
    print(
        f"{cfg.algo.name}: {len(seeds)} seeds {seeds} at once on {jax.devices()[0].platform}, "
        f"{cfg.train.n_envs} envs each, segments of {seg:,} steps"
        + (f", resuming at {start_steps:,}" if resume else ""),
        flush=True,
    )

    compile_started = time.perf_counter()
    init, segment, evaluate = _compile(program, abstract, keys, bool(cfg.train.eval_freq))
    compile_time = time.perf_counter() - compile_started
    print(f"compiled in {compile_time:.1f} s", flush=True)
    if loaded is not None:
        state = loaded
    else:
        state = jax.tree.map(
            lambda x, a: x if x.dtype == a.dtype else x.astype(a.dtype), init(keys), abstract
        )
        if "log_std_init" in cfg.algo.hyperparams:
            state = _with_log_std(state, float(cfg.algo.hyperparams["log_std_init"]))

    from twolink_gym.training.interrupts import interruptible

    steps = start_steps
    train_time = eval_time = 0.0
    interrupted = False
    # the same episodes at every periodic evaluation of a seed (drawn from seed + 10000)
    eval_keys = jax.vmap(jax.random.PRNGKey)(jnp.asarray(seeds, dtype=jnp.uint32) + 10_000)
    try:
        with interruptible():
            for _ in range(n_segments):
                t0 = time.perf_counter()
                new_state = jax.block_until_ready(segment(state))
                train_time += time.perf_counter() - t0
                state, steps = new_state, steps + seg
                _save_segment(program, cfg, seed_cfgs, state, steps)
                if evaluate is None:
                    continue
                t0 = time.perf_counter()
                train_clock = t0 - started - eval_time  # since the start, compile included
                returns, lengths, success = (np.asarray(a) for a in evaluate(state, eval_keys))
                eval_time += time.perf_counter() - t0
                rows = []
                for i, log in enumerate(logs):
                    t_off, e_off = offsets[i]
                    row = {
                        "timesteps": steps,
                        "train_time_s": round(t_off + train_clock, 3),
                        "eval_time_s": round(e_off + eval_time, 3),
                        "wall_time_s": round(t_off + e_off + train_clock + eval_time, 3),
                        "success_rate": float(np.mean(success[i])),
                        "mean_return": float(np.mean(returns[i])),
                        "episodes": int(returns.shape[1]),
                    }
                    log.add(row, returns[i], lengths[i], success[i])
                    rows.append(row)
                    earlier = best[i]
                    if cfg.train.save_best and (earlier is None or _rank(row) > _rank(earlier)):
                        best[i] = row
                        _save_best(program, seed_cfgs[i], state, i, row)
                print(_progress(steps, planned, time.perf_counter() - started, rows), flush=True)
    except KeyboardInterrupt:
        interrupted = True
        print(f"\ninterrupted at {steps:,} timesteps per seed; saving the last segment", flush=True)
    wall = time.perf_counter() - started
    _save_segment(program, cfg, seed_cfgs, state, steps)
    for log in logs:
        log.close()
    summary_base = {
        "task": cfg.env.task,
        "algo": cfg.algo.name,
        "seeds_trained_together": seeds,
        "timesteps": steps,
        "requested_timesteps": cfg.train.total_timesteps,
        "planned_timesteps": planned,
        "rollout_steps": seg,
        "wall_time_s": round(wall, 2),
        "compile_time_s": round(compile_time, 2),
        "steps_per_s": round((steps - start_steps) / wall, 1) if wall > 0 else None,
        "steps_per_s_all_seeds": round(len(seeds) * (steps - start_steps) / wall, 1),
        "eval_time_s": round(eval_time, 2),
        "interrupted": interrupted,
        "resumed_at": start_steps if resume else None,
        "device": str(jax.devices()[0]),
    }
    for c, run_dir, (t_off, e_off) in zip(seed_cfgs, run_dirs, offsets, strict=True):
        summary = {
            "run": c.run_name,
            "seed": c.train.seed,
            **summary_base,
            "cumulative_train_time_s": round(t_off + wall - eval_time, 2),
            "cumulative_eval_time_s": round(e_off + eval_time, 2),
            "cumulative_wall_time_s": round(t_off + e_off + wall, 2),
            "load_average": [round(v, 2) for v in os.getloadavg()],
            "cpu_model": _machine()["cpu_model"],
            "machine": _machine(),
        }
        (run_dir / "train_summary.json").write_text(json.dumps(summary, indent=2))
    return JaxTrainResult(
        run_dirs=run_dirs,
        seeds=seeds,
        timesteps=steps,
        wall_time_s=wall,
        compile_time_s=compile_time,
        interrupted=interrupted,
        requested_timesteps=cfg.train.total_timesteps,
        planned_timesteps=planned,
        segment_steps=seg,
        resumed_at=start_steps if resume else None,
    )


def _compile(
    program: _Program, abstract: Any, keys: Any, evaluation: bool
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


def _with_log_std(state: Any, value: float) -> Any:
    """``state`` with the Gaussian policy's ``action_log_std`` set to ``value`` everywhere."""
    import jax.numpy as jnp

    params = state.actor_ts.params
    inner = dict(params["params"])
    inner["action_log_std"] = jnp.full_like(inner["action_log_std"], value)
    actor_ts = state.actor_ts.replace(params={**params, "params": inner})
    return state.replace(actor_ts=actor_ts)


def _machine() -> dict[str, Any]:
    import platform

    import jax
    from twolink_gym.training.train import _cpu_model

    return {
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "jax": jax.__version__,
        "rejax": _version("rejax"),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
    }


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def _policy_of(program: _Program, cfg: RunConfig, state: Any, i: int) -> NumpyPolicy:
    import jax

    params = jax.tree.map(lambda x: np.asarray(x[i]), state.actor_ts.params)
    rms = None
    if cfg.env.normalize_obs:
        rms = (np.asarray(state.obs_rms_state.mean[i]), np.asarray(state.obs_rms_state.var[i]))
    return export_policy(params, program.activation, program.action_low, program.action_high, rms)


def _save_segment(
    program: _Program, cfg: RunConfig, seed_cfgs: Sequence[RunConfig], state: Any, steps: int
) -> None:
    """Every seed's policy and resume state after a segment."""
    for i, c in enumerate(seed_cfgs):
        _write_policy(c.run_dir, _policy_of(program, cfg, state, i), c)
        _save_state(c.run_dir / STATE_FILE, _seed_leaves(state, i), steps)


def _rank(row: Mapping[str, float]) -> tuple[float, float]:
    success = row["success_rate"]
    return (-math.inf if math.isnan(success) else success, row["mean_return"])


def _best_row(run_dir: Path) -> dict[str, float] | None:
    from twolink_gym.training.train import read_best_selection

    return read_best_selection(run_dir)


def _save_best(
    program: _Program, cfg: RunConfig, state: Any, i: int, row: Mapping[str, float]
) -> None:
    best = cfg.run_dir / "best"
    tmp = best.with_name("best.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    _write_policy(tmp, _policy_of(program, cfg, state, i), cfg)
    (tmp / "selection.json").write_text(json.dumps(dict(row), indent=2) + "\n")
    if best.exists():
        shutil.rmtree(best)
    tmp.rename(best)


def train_from_cli(cfg: RunConfig, config_path: str, *, resume: str | None, overwrite: bool) -> int:
    """``twolink train`` of a ``jax_*`` config: train, print where it went; the exit status.

    ``resume`` (``--resume``) must be the run folder of one of the config's
    seeds (or the folder holding them): every seed continues. SIGTERM stops
    training as Ctrl-C does.
    """
    import signal

    from twolink_gym.training.interrupts import deferred_interrupts

    if resume is not None:
        given = Path(resume).resolve()
        folders = [seed_config(cfg, s).run_dir for s in _seeds(cfg)]
        allowed = {d.resolve() for d in folders} | {d.parent.resolve() for d in folders}
        if given not in allowed:
            raise ValueError(
                f"--resume {resume}: a {cfg.algo.name} config resumes all its seeds together; "
                f"give one of their run folders {[str(d) for d in folders]}"
            )
    with deferred_interrupts(signal.SIGTERM):
        result = train_jax(cfg, resume=resume is not None, overwrite=overwrite)
    state = "interrupted" if result.interrupted else "done"
    rounded = (
        f" (train.total_timesteps {result.requested_timesteps:,} rounded up to whole segments "
        f"of {result.segment_steps:,} steps)"
        if result.planned_timesteps > result.requested_timesteps and not result.interrupted
        else ""
    )
    print(
        f"{state}: {len(result.seeds)} seeds x {result.timesteps:,} timesteps{rounded} in "
        f"{result.wall_time_s:.0f} s (compile {result.compile_time_s:.0f} s); agents in "
        + ", ".join(str(d) for d in result.run_dirs)
    )
    if result.interrupted:
        print(f"continue with: twolink train {config_path} --resume {result.run_dirs[0]}")
    return 130 if result.interrupted else 0
