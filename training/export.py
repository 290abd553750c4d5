"""``twolink export``: a trained run reduced to what acting needs, for shipping.

A run's ``model.zip`` holds the whole algorithm: actor, critics, target
networks, optimiser states, hyperparameters. Acting needs only the policy
network, so an exported agent is::

    policy.pt           the SB3 policy (``policy.save``: weights and constructor
                        arguments, no optimiser state), with the run's frozen
                        observation statistics inside it
    agent.json          the agent's card (task, actuation, algorithm, Gymnasium
                        id, success on its evaluation set)
    config.yaml         the run's resolved config (environment, algorithm, seed)
    train_summary.json  steps, wall time, machine
    eval/evaluations.npz  the run's periodic evaluations (its learning curve)

The policy acts on the env's raw observations: a run trained with
``VecNormalize`` gets a features extractor of
:mod:`twolink_gym.training.normalization` that holds the statistics and
normalises exactly as ``VecNormalize`` did; a goal-conditioned agent (reach
with HER, a ``MultiInputPolicy``) gets one that also splits the env's flat
observation into the goal parts it was trained on. So SB3's own
``Policy.load("policy.pt")`` (``ActorCriticPolicy``, ``SACPolicy``, ...)
returns a policy that acts correctly on ``env.step``'s observations, and there
is no separate ``vecnormalize.pkl`` to lose.

:func:`export_agent` also takes a folder exported in the earlier layout
(``policy.pt`` acting on normalised observations, beside ``vecnormalize.pkl``)
and writes it in this one. :func:`twolink_gym.training.policies.load_policy`
loads both layouts. This is how the agents of :mod:`twolink_gym.pretrained`
were made.

A run trained with an SBX (JAX) algorithm (``algo.name: sbx_*``) is exported
without PyTorch: its card says ``"backend": "sbx"``, and in place of
``policy.pt`` the folder holds::

    policy.msgpack      the actor's parameters (and batch statistics, for
                        CrossQ): flax's msgpack state dict, no critic, no
                        optimiser state
    obs_stats.npz       the frozen observation statistics as numpy arrays
                        (:class:`~twolink_gym.training.normalization.ObservationStatistics`),
                        absent for a run trained without normalisation

:func:`load_sbx_policy` builds the SBX policy from ``config.yaml`` (SBX's own
classes) and gives it these parameters; the loaders apply the statistics
before it, so an SBX agent too acts on raw observations.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from twolink_gym.training.algorithms import (
    ALGORITHMS,
    is_imitation,
    is_numpy_agent,
    is_sbx,
    resolve_hyperparams,
)
from twolink_gym.training.config import RunConfig, config_from_dict
from twolink_gym.training.jax_export import JAX_POLICY_FILE

from twolink_gym.pretrained import BACKEND_KEY, BACKENDS, CARD_FILE, AgentCard, backend_of

if TYPE_CHECKING:
    from stable_baselines3.common.policies import BasePolicy
    from stable_baselines3.common.vec_env import VecNormalize

__all__ = [
    "CARD_FILE",
    "OBS_STATS_FILE",
    "POLICY_FILE",
    "SBX_POLICY_FILE",
    "agent_card",
    "describe",
    "export_agent",
    "load_sbx_policy",
    "measure_success",
    "normalized_policy",
    "sbx_actor_bytes",
]

#: The policy-only file of an exported agent.
POLICY_FILE = BACKENDS["torch"]

#: The actor's parameters of an exported SBX agent (flax msgpack).
SBX_POLICY_FILE = BACKENDS["sbx"]

#: The frozen observation statistics of an exported SBX agent (numpy ``.npz``).
OBS_STATS_FILE = "obs_stats.npz"

# what an exported folder carries over from the run (besides the new policy and card)
_CARRIED = ("config.yaml", "train_summary.json", "eval/evaluations.npz")


def _extractor(
    cfg: RunConfig, policy: BasePolicy, vec: VecNormalize | None, flat_space: Any
) -> tuple[type, dict[str, Any]] | None:
    """The features extractor (class, kwargs) that makes ``policy`` act on raw observations."""
    from gymnasium import spaces
    from twolink_gym.training.envs import goal_split
    from twolink_gym.training.normalization import GoalNormalizedFlatten, NormalizedFlatten

    norm = vec is not None and vec.norm_obs
    common: dict[str, Any] = {}
    if norm:
        assert vec is not None
        common = {"clip_obs": float(vec.clip_obs), "epsilon": float(vec.epsilon)}
    if isinstance(policy.observation_space, spaces.Dict):
        if cfg.env.frame_stack > 1:
            raise ValueError(
                "export: an agent with env.goal_observation and env.frame_stack > 1 cannot be "
                "written with its observation split inside the policy"
            )
        split, _ = goal_split(dataclasses.replace(cfg.env, goal_observation=False))
        order = list(policy.observation_space.spaces)
        kwargs: dict[str, Any] = {
            "state_index": split.state.tolist(),
            "target_index": split.target.tolist(),
            "to_target_index": split.to_target.tolist(),
            "goal_low": split.space["achieved_goal"].low.tolist(),
            "goal_high": split.space["achieved_goal"].high.tolist(),
            "order": order,
        }
        if norm:
            assert vec is not None
            rms = vec.obs_rms
            if not isinstance(rms, dict) or sorted(vec.norm_obs_keys or []) != sorted(order):
                raise ValueError(
                    f"export: the VecNormalize statistics normalise {vec.norm_obs_keys}, "
                    f"not every part {order} of the goal observation"
                )
            kwargs["mean"] = np.concatenate([rms[k].mean for k in order]).tolist()
            kwargs["var"] = np.concatenate([rms[k].var for k in order]).tolist()
        return GoalNormalizedFlatten, {**kwargs, **common}
    if not norm:
        return None
    assert vec is not None
    if policy.observation_space != flat_space:
        raise ValueError(
            f"export: the policy's observation space {policy.observation_space} is not the "
            f"env's {flat_space}"
        )
    rms = vec.obs_rms
    if isinstance(rms, dict):
        raise ValueError(f"export: dict statistics {sorted(rms)} for a flat observation")
    return NormalizedFlatten, {"mean": rms.mean.tolist(), "var": rms.var.tolist(), **common}


def normalized_policy(cfg: RunConfig, policy: BasePolicy, vec: VecNormalize | None) -> BasePolicy:
    """``policy`` rebuilt to act on the env's raw observations (same weights).

    The policy is built the way training built it (the algorithm of
    ``cfg.algo`` with its hyperparameters, on the flat env of ``cfg.env``),
    with a features extractor of :mod:`twolink_gym.training.normalization`
    holding ``vec``'s observation statistics (and, for a goal-conditioned
    policy, the split of the flat observation), then given ``policy``'s weights.

    Parameters
    ----------
    cfg : RunConfig
        The run's config.
    policy : BasePolicy
        The trained policy, acting on normalised (and, for a goal-conditioned
        agent, dict) observations.
    vec : VecNormalize or None
        The run's frozen statistics (``None`` if it was trained without them).

    Returns
    -------
    BasePolicy
        ``policy`` itself if it already takes raw observations (no
        normalisation, flat observations), else the rebuilt policy.

    Raises
    ------
    ValueError
        If the weights do not fit the rebuilt policy (a config that does not
        match the policy).
    """
    from twolink_gym.training.envs import make_vec
    from twolink_gym.training.policies import ACT_ONLY

    flat_cfg = dataclasses.replace(cfg.env, goal_observation=False)
    venv = make_vec(flat_cfg, 1, seed=0)
    try:
        extractor = _extractor(cfg, policy, vec, venv.observation_space)
        if extractor is None:
            return policy
        algo = ALGORITHMS[cfg.algo.name]
        accepted = inspect.signature(algo.__init__).parameters
        act_only = {k: v for k, v in ACT_ONLY.items() if k in accepted}
        hyper = {**resolve_hyperparams(cfg.algo.hyperparams), **act_only}
        policy_kwargs = {
            **hyper.pop("policy_kwargs", {}),
            "features_extractor_class": extractor[0],
            "features_extractor_kwargs": extractor[1],
        }
        # a goal-conditioned agent's new policy takes the flat observation: an MlpPolicy
        alias = "MlpPolicy" if cfg.env.goal_observation else cfg.algo.policy
        with warnings.catch_warnings():
            # e.g. PPO's batch size against a one-env rollout: nothing is trained here
            warnings.simplefilter("ignore", UserWarning)
            model = algo(alias, venv, device="cpu", verbose=0, policy_kwargs=policy_kwargs, **hyper)
    finally:
        venv.close()
    new = model.policy
    buffers = {name for name, _ in new.named_buffers(remove_duplicate=False)}
    result = new.load_state_dict(policy.state_dict(), strict=False)
    wrong = [k for k in result.missing_keys if k not in buffers] + list(result.unexpected_keys)
    if wrong:
        raise ValueError(
            f"export: the trained weights do not fit a {cfg.algo.name} {alias} built from the "
            f"config (keys {wrong}); is config.yaml the run's own?"
        )
    new.set_training_mode(False)
    return new


def _acting_fields(policy: Any) -> list[str]:
    """The fields of an SBX policy's ``actor_state`` that acting reads."""
    state = policy.actor_state
    return ["params"] + (["batch_stats"] if hasattr(state, "batch_stats") else [])


def sbx_actor_bytes(policy: Any) -> bytes:
    """What acting needs of an SBX policy, as flax msgpack bytes.

    Parameters
    ----------
    policy : sbx policy
        ``model.policy`` of an SBX algorithm (its ``actor_state`` is a flax
        ``TrainState``).

    Returns
    -------
    bytes
        The state dict ``{"params": ..., "batch_stats": ...}`` of the actor
        (``batch_stats`` only for actors that have them, CrossQ's), serialised
        with ``flax.serialization.msgpack_serialize``.
    """
    from flax import serialization

    state = policy.actor_state
    acting = {
        field: serialization.to_state_dict(getattr(state, field))
        for field in _acting_fields(policy)
    }
    return serialization.msgpack_serialize(acting)


def load_sbx_policy(cfg: RunConfig, data: bytes, source: str = "<bytes>") -> Any:
    """The SBX policy of ``cfg`` with the actor of :func:`sbx_actor_bytes` ``data``.

    The algorithm of ``cfg.algo`` is built with its hyperparameters (no replay
    buffer) on a one-env :func:`~twolink_gym.training.envs.make_vec` of
    ``cfg.env``, by SBX's own classes; its actor then gets ``data``'s parameters.
    The critics keep their initial values: acting does not read them.

    Parameters
    ----------
    cfg : RunConfig
        The agent's config (``algo.name`` one of the ``sbx_*`` names).
    data : bytes
        Written by :func:`sbx_actor_bytes`.
    source : str
        Where ``data`` came from, for messages.

    Returns
    -------
    sbx policy
        Its ``predict(obs, state, episode_start, deterministic)`` is SB3's; it
        acts on the observations the model was trained on (normalised, if the
        run normalised them).

    Raises
    ------
    BackendNotInstalledError
        If JAX or SBX is not installed (the message names the ``jax`` extra).
    ValueError
        If ``cfg.algo.name`` is no SBX algorithm, or the parameters do not fit
        the policy ``cfg`` builds.
    """
    from twolink_gym.training.envs import make_vec
    from twolink_gym.training.policies import ACT_ONLY

    if not is_sbx(cfg.algo.name):
        raise ValueError(f"{source}: algo.name {cfg.algo.name!r} is not an SBX algorithm")
    algo = ALGORITHMS[cfg.algo.name]  # BackendNotInstalledError without JAX
    import jax
    from flax import serialization

    accepted = inspect.signature(algo.__init__).parameters
    act_only = {k: v for k, v in ACT_ONLY.items() if k in accepted}
    hyper = {**resolve_hyperparams(cfg.algo.hyperparams), **act_only}
    venv = make_vec(cfg.env, 1, seed=0)
    try:
        with warnings.catch_warnings():
            # e.g. PPO's batch size against a one-env rollout: nothing is trained here
            warnings.simplefilter("ignore", UserWarning)
            model = algo(cfg.algo.policy, venv, device="cpu", verbose=0, seed=0, **hyper)
    finally:
        venv.close()
    policy = model.policy
    saved = serialization.msgpack_restore(data)
    fields = _acting_fields(policy)
    if not isinstance(saved, dict) or sorted(saved) != sorted(fields):
        found = sorted(saved) if isinstance(saved, dict) else type(saved).__name__
        raise ValueError(f"{source}: expected the actor's {fields}, found {found}")
    state = policy.actor_state
    restored = {}
    for field in fields:
        target = getattr(state, field)
        try:
            value = serialization.from_state_dict(target, saved[field])
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(
                f"{source}: the actor's {field} do not fit a {cfg.algo.name} {cfg.algo.policy} "
                f"built from the config ({exc}); is config.yaml the agent's own?"
            ) from None
        shapes = jax.tree_util.tree_map(np.shape, target)
        if jax.tree_util.tree_map(np.shape, value) != shapes:
            raise ValueError(
                f"{source}: the actor's {field} have other shapes than a {cfg.algo.name} "
                f"{cfg.algo.policy} built from the config; is config.yaml the agent's own?"
            )
        restored[field] = value
    policy.actor_state = state.replace(**restored)
    policy.set_training_mode(False)
    return policy


def _export_sbx(src: Path, cfg: RunConfig, tmp: Path) -> None:
    """Write the SBX agent of the run (or exported folder) ``src`` into ``tmp``."""
    from twolink_gym.training.envs import load_vec_normalize
    from twolink_gym.training.normalization import ObservationStatistics
    from twolink_gym.training.policies import ACT_ONLY
    from twolink_gym.training.train import MODEL_FILE, VECNORM_FILE

    if cfg.env.goal_observation:
        raise ValueError(
            f"export: {src} was trained with env.goal_observation and {cfg.algo.name}; an "
            "SBX agent is exported for flat observations only (env.goal_observation: false)"
        )
    if not (src / MODEL_FILE).is_file():  # an exported SBX folder: already in this layout
        shutil.copy2(src / SBX_POLICY_FILE, tmp / SBX_POLICY_FILE)
        if (src / OBS_STATS_FILE).is_file():
            shutil.copy2(src / OBS_STATS_FILE, tmp / OBS_STATS_FILE)
        return
    stats = src / VECNORM_FILE
    if cfg.env.normalize_obs and not stats.is_file():
        raise FileNotFoundError(f"{src}: trained with VecNormalize but {stats} is missing")
    model = ALGORITHMS[cfg.algo.name].load(str(src / MODEL_FILE), device="cpu", **ACT_ONLY)
    (tmp / SBX_POLICY_FILE).write_bytes(sbx_actor_bytes(model.policy))
    vec = load_vec_normalize(stats, cfg.env) if stats.is_file() else None
    if vec is not None and vec.norm_obs:
        rms = vec.obs_rms
        if isinstance(rms, dict):
            raise ValueError(f"export: dict statistics {sorted(rms)} for a flat observation")
        ObservationStatistics(rms.mean, rms.var, vec.clip_obs, vec.epsilon).save(
            tmp / OBS_STATS_FILE
        )


def describe(cfg: RunConfig) -> str:
    """A one-line description of an agent trained with ``cfg`` (for its card)."""
    arm = {"full": "the fully actuated arm", "acrobot": "the acrobot", "pendubot": "the pendubot"}
    method = cfg.algo.name.upper()
    teacher = cfg.algo.hyperparams.get("teacher")
    if is_imitation(cfg.algo.name) and teacher:
        method += f" (imitating {teacher})"
    text = f"{method} on {cfg.env.task}, {arm.get(cfg.env.actuation, cfg.env.actuation)}"
    extras = []
    if cfg.algo.hyperparams.get("replay_buffer_class") == "her":
        extras.append("goal-conditioned with HER")
    if cfg.env.randomize or cfg.env.obs_noise or cfg.env.torque_noise:
        extras.append("trained and evaluated with domain randomisation and noise")
    if cfg.env.train_task_options:
        extras.append(f"trained with the task options {dict(cfg.env.train_task_options)}")
    return text + (f" ({'; '.join(extras)})" if extras else "")


def measure_success(folder: str | Path, cfg: RunConfig) -> float:
    """The success rate of the agent in ``folder`` on ``cfg``'s evaluation set.

    ``cfg.evaluate.episodes`` episodes drawn from ``cfg.evaluate.seed`` on
    ``cfg.env``, deterministic actions (:func:`twolink_gym.training.evaluate.evaluate_policies`).
    """
    from twolink_gym.training.evaluate import evaluate_policies

    _, results = evaluate_policies([str(folder)], cfg, trajectories=False)
    return float(np.mean(results[0].success))


def agent_card(
    name: str, cfg: RunConfig, success: float | None, description: str | None = None
) -> AgentCard:
    """The :class:`~twolink_gym.pretrained.AgentCard` of an agent trained with ``cfg``."""
    from twolink_gym.training.envs import env_id_for

    return AgentCard(
        name=name,
        task=cfg.env.task,
        actuation=cfg.env.actuation,
        algorithm=cfg.algo.name,
        env_id=env_id_for(cfg.env.task, cfg.env.actuation),
        success=success,
        episodes=cfg.evaluate.episodes,
        seed=cfg.evaluate.seed,
        description=description if description is not None else describe(cfg),
    )


def _load_source(src: Path, cfg: RunConfig) -> tuple[BasePolicy, VecNormalize | None]:
    """The trained policy of a run folder or an exported folder, and its statistics."""
    from twolink_gym.training.envs import load_vec_normalize
    from twolink_gym.training.normalization import is_normalizing
    from twolink_gym.training.policies import ACT_ONLY
    from twolink_gym.training.train import MODEL_FILE, VECNORM_FILE

    stats = src / VECNORM_FILE
    vec = load_vec_normalize(stats, cfg.env) if stats.is_file() else None
    if (src / MODEL_FILE).is_file():
        model = ALGORITHMS[cfg.algo.name].load(str(src / MODEL_FILE), device="cpu", **ACT_ONLY)
        policy = model.policy
    else:
        algo = ALGORITHMS[cfg.algo.name]
        policy = algo.policy_aliases[cfg.algo.policy].load(str(src / POLICY_FILE), device="cpu")
        if is_normalizing(policy):
            if vec is not None:
                raise ValueError(
                    f"{src}: {POLICY_FILE} normalises its observations itself, but "
                    f"{VECNORM_FILE} is there too; remove one of them"
                )
            return policy, None
    if cfg.env.normalize_obs and vec is None:
        raise FileNotFoundError(f"{src}: trained with VecNormalize but {stats} is missing")
    return policy, vec


def export_agent(
    run_dir: str | Path,
    out_dir: str | Path,
    *,
    overwrite: bool = False,
    evaluate: bool = True,
    description: str | None = None,
) -> Path:
    """Write the acting part of the run in ``run_dir`` to ``out_dir``.

    Parameters
    ----------
    run_dir : path
        A training run folder (``model.zip``, ``config.yaml``, ...), or an
        exported agent folder (``policy.pt`` or, for SBX, ``policy.msgpack``;
        ``config.yaml``; ``vecnormalize.pkl`` in the earlier layout) to write
        in the current layout.
    out_dir : path
        The agent folder to create (may be ``run_dir`` itself for an exported
        folder, with ``overwrite``).
    overwrite : bool
        Replace an existing ``out_dir``.
    evaluate : bool
        Measure the exported agent's success on its config's evaluation set
        (``evaluate.episodes`` from ``evaluate.seed``) for its card; if false,
        the card's ``success`` is ``null``.
    description : str, optional
        The card's one-line description (default: :func:`describe`).

    Returns
    -------
    Path
        ``out_dir``.

    Raises
    ------
    FileNotFoundError
        If ``run_dir`` has neither ``model.zip`` nor an exported policy file, or no
        ``config.yaml``.
    FileExistsError
        If ``out_dir`` exists and ``overwrite`` is false.
    ValueError
        If an ``sbx_*`` run was trained with ``env.goal_observation`` (SBX
        agents are exported for flat observations only), or ``description`` is
        empty or more than one line.
    BackendNotInstalledError
        If the run was trained with an ``sbx_*`` algorithm and JAX is not installed.

    Notes
    -----
    The folder is written to a temporary sibling and moved into place at the
    end: a failed export leaves ``out_dir`` as it was.
    """
    import yaml
    from twolink_gym.training.train import CONFIG_FILE, MODEL_FILE

    src, out = Path(run_dir), Path(out_dir)
    if description is not None and (not description.strip() or "\n" in description):
        raise ValueError(f"description must be one non-empty line, got {description!r}")
    if not (src / CONFIG_FILE).is_file():
        raise FileNotFoundError(f"{src} is not a finished run: no {CONFIG_FILE}")
    exported = src / BACKENDS[backend_of(src)]
    if not (src / MODEL_FILE).is_file() and not exported.is_file():
        raise FileNotFoundError(
            f"{src} is not a finished run: no {MODEL_FILE} (nor an exported {exported.name})"
        )
    if out.exists() and not overwrite:
        raise FileExistsError(f"{out} exists; pass --overwrite to replace it")
    cfg = config_from_dict(yaml.safe_load((src / CONFIG_FILE).read_text()), str(src / CONFIG_FILE))
    sbx = is_sbx(cfg.algo.name)
    numpy_agent = is_numpy_agent(cfg.algo.name)  # policy.npz: already the acting part
    if sbx:
        _ = ALGORITHMS[cfg.algo.name]  # BackendNotInstalledError (naming the jax extra) first
    elif not numpy_agent:
        trained, vec = _load_source(src, cfg)
        policy = normalized_policy(cfg, trained, vec)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    umask = os.umask(0o022)
    os.umask(umask)
    tmp.chmod(0o777 & ~umask)  # mkdtemp's folder is private; the agent's is not
    try:
        if sbx:
            _export_sbx(src, cfg, tmp)
        elif numpy_agent:
            shutil.copy2(src / JAX_POLICY_FILE, tmp / JAX_POLICY_FILE)
        elif policy is trained and (src / POLICY_FILE).is_file():
            shutil.copy2(src / POLICY_FILE, tmp / POLICY_FILE)  # already acts on raw observations
        else:
            policy.save(str(tmp / POLICY_FILE))
        for name in _CARRIED:
            if (src / name).is_file():
                (tmp / name).parent.mkdir(exist_ok=True)
                shutil.copy2(src / name, tmp / name)
        backend = {BACKEND_KEY: "sbx"} if sbx else {BACKEND_KEY: "numpy"} if numpy_agent else {}
        for measured in (False, True) if evaluate else (False,):
            # the card names the backend the loader dispatches on: written before measuring
            success = measure_success(tmp, cfg) if measured else None
            card = {**agent_card(out.name, cfg, success, description).to_dict(), **backend}
            (tmp / CARD_FILE).write_text(json.dumps(card, indent=2) + "\n")
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out
