"""The ``jax_*`` algorithms' ``algo.hyperparams``: rejax's fields, read without rejax, and their checks.

A config's ``algo.hyperparams`` for a ``jax_*`` algorithm are the fields of its
rejax class (``rejax.PPO``, ...) that the config does not set elsewhere
(:data:`RESERVED`), ``agent_kwargs`` (the networks) and hyperparameters of ours
applied to the initial train state (:data:`INITIAL_STATE_KEYS`). The table
:data:`HYPERPARAMETERS` is written out here so that a config loads and is
checked without JAX; a test holds it equal to the rejax class's fields
(:func:`field_kinds`). :func:`rejax_class` imports rejax.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from twolink_gym.training.algorithms import (
    JAX_INSTALL_HINT,
    REJAX_ALGORITHMS,
    BackendNotInstalledError,
    _limit_xla_threads,
)
from twolink_gym.training.jax_export import ACTIVATIONS

__all__ = [
    "AGENT_KWARGS",
    "DEFAULT_ACTIVATION",
    "HYPERPARAMETERS",
    "INITIAL_STATE_KEYS",
    "NOT_APPLICABLE",
    "RESERVED",
    "check_rejax_hyperparams",
    "field_kinds",
    "rejax_class",
]

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
        "action_mean_init_scale": "number",
        "clip_value_loss": "bool",
    },
    "jax_sac": {
        "learning_rate": "number",
        "gamma": "number",
        "max_grad_norm": "number",
        "target_update_freq": "int",
        "polyak": "number",
        "reward_normalization_discount": "number",
        "buffer_size": "int",
        "fill_buffer": "int",
        "batch_size": "int",
        "num_critics": "int",
        "num_epochs": "int",
        "agent_kwargs": "mapping",
    },
}

#: Fields of a rejax class that do nothing on the twin, refused with the reason.
NOT_APPLICABLE: dict[str, dict[str, str]] = {
    "jax_ppo": {},
    "jax_sac": {
        "target_entropy_ratio": "rejax's SAC reads it for discrete actions only; on the "
        "twin's continuous torques its target entropy is -action_dim",
    },
}

#: The hidden layers' activation when ``agent_kwargs.activation`` is not given (rejax's).
DEFAULT_ACTIVATION = {"jax_ppo": "swish", "jax_sac": "relu"}

#: Hyperparameters of ours, not rejax fields: applied to the initial train state.
#: ``log_std_init``: the Gaussian policy's initial log standard deviation (rejax
#: starts it at 0, an action noise of std 1 on actions in [-1, 1]; SB3's
#: ``policy_kwargs.log_std_init``). ``action_mean_init_scale``: a factor on the initial
#: weights and bias of the policy's mean layer (rejax draws them as every dense layer,
#: so the first policy's mean actions spread over about ±0.5; SB3 initialises that
#: layer orthogonally with gain 0.01, a policy that starts near zero torque).
INITIAL_STATE_KEYS = ("log_std_init", "action_mean_init_scale")

#: Keys of ``algo.hyperparams.agent_kwargs`` (the networks: both actor and critic).
AGENT_KWARGS = ("activation", "hidden_layer_sizes")

#: Hyperparameters with a range: (low, high, low included, high included).
_RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "learning_rate": (0.0, math.inf, False, False),
    "action_mean_init_scale": (0.0, math.inf, False, False),
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
    "polyak": (0.0, 1.0, True, True),
    "target_update_freq": (1, math.inf, True, False),
    "buffer_size": (1, math.inf, True, False),
    "fill_buffer": (0, math.inf, True, False),
    "batch_size": (1, math.inf, True, False),
    "num_critics": (1, math.inf, True, False),
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
    for key in sorted(set(hyperparams) & set(NOT_APPLICABLE[name])):
        raise ValueError(f"{key} does not apply to {name}: {NOT_APPLICABLE[name][key]}")
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
