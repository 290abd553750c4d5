"""The values of ``algo.hyperparams``: each checked against its kind and range before anything is built.

:func:`~twolink_gym.training.algorithms.check_hyperparams` checks the keys
against the algorithm's constructor and the ``lin_<x>`` schedules;
:func:`check_values` checks each value: a rule of :data:`RULES` for the
arguments whose meaning is the same in every algorithm (``gamma`` in [0, 1],
``n_steps`` an integer >= 1, ``net_arch`` a list of layer widths, ...), else
the kind of the constructor's default (an ``int`` default takes integers,
a ``float`` default numbers, a ``bool`` default true or false). For an
on-policy algorithm the minibatch must fit in a rollout (``batch_size <=
n_steps · train.n_envs``).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["RULES", "HyperparamError", "Rule", "check_values"]


class HyperparamError(ValueError):
    """A hyperparameter's value is invalid; the message starts with its key."""

    def __init__(self, key: str, allowed: str, value: Any) -> None:
        super().__init__(f"{key} must be {allowed}, got {value!r}")
        self.key, self.allowed, self.value = key, allowed, value


#: A rule: whether a value is allowed, and how messages name the allowed values.
Rule = tuple[Callable[[Any], bool], str]


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _schedule(value: Any) -> bool:
    """A ``lin_<x>`` schedule (its ``x`` checked by ``check_hyperparams``)."""
    return isinstance(value, str) and value.startswith("lin_")


def _widths(value: Any) -> bool:
    return isinstance(value, list) and all(_integer(v) and v >= 1 for v in value)


def _net_arch(value: Any) -> bool:
    if isinstance(value, dict):
        return bool(value) and all(_widths(v) for v in value.values())
    return _widths(value)


def _train_freq(value: Any) -> bool:
    if _integer(value):
        return value >= 1
    return (
        isinstance(value, list)
        and len(value) == 2
        and _integer(value[0])
        and value[0] >= 1
        and value[1] in ("step", "episode")
    )


def _auto(value: Any) -> bool:
    """SAC's ``"auto"`` or ``"auto_<initial value > 0>"``."""
    if value == "auto":
        return True
    if not (isinstance(value, str) and value.startswith("auto_")):
        return False
    try:
        return float(value[5:]) > 0
    except ValueError:
        return False


#: The rule of each argument that means the same in every algorithm.
RULES: dict[str, Rule] = {
    "learning_rate": (
        lambda v: (_number(v) and v > 0) or _schedule(v),
        "a number > 0 or a linear schedule lin_<x> (e.g. 3.0e-4, lin_3.0e-4)",
    ),
    "clip_range": (
        lambda v: (_number(v) and v > 0) or _schedule(v),
        "a number > 0 or a linear schedule lin_<x> (e.g. 0.2, lin_0.2)",
    ),
    "clip_range_vf": (
        lambda v: v is None or (_number(v) and v > 0) or _schedule(v),
        "null, a number > 0 or a linear schedule lin_<x>",
    ),
    "gamma": (lambda v: _number(v) and 0 <= v <= 1, "a number in [0, 1] (e.g. 0.99)"),
    "gae_lambda": (lambda v: _number(v) and 0 <= v <= 1, "a number in [0, 1] (e.g. 0.95)"),
    "tau": (lambda v: _number(v) and 0 < v <= 1, "a number in (0, 1] (e.g. 0.005)"),
    "n_steps": (lambda v: _integer(v) and v >= 1, "an integer >= 1"),
    "batch_size": (lambda v: _integer(v) and v >= 1, "an integer >= 1"),
    "n_epochs": (lambda v: _integer(v) and v >= 1, "an integer >= 1"),
    "buffer_size": (lambda v: _integer(v) and v >= 1, "an integer >= 1"),
    "learning_starts": (lambda v: _integer(v) and v >= 0, "an integer >= 0"),
    "gradient_steps": (
        lambda v: _integer(v) and (v >= 1 or v == -1),
        "an integer >= 1, or -1 (as many as environment steps)",
    ),
    "train_freq": (_train_freq, 'an integer >= 1 or [n, "step" or "episode"]'),
    "target_update_interval": (lambda v: _integer(v) and v >= 1, "an integer >= 1"),
    "vf_coef": (lambda v: _number(v) and v >= 0, "a number >= 0"),
    "max_grad_norm": (lambda v: _number(v) and v > 0, "a number > 0"),
    "target_kl": (lambda v: v is None or (_number(v) and v > 0), "null or a number > 0"),
    "sde_sample_freq": (
        lambda v: _integer(v) and (v >= 1 or v == -1),
        "an integer >= 1, or -1 (only at the start of a rollout)",
    ),
    "policy_kwargs": (lambda v: v is None or isinstance(v, dict), "a mapping (or null)"),
}

#: Rules of ``policy_kwargs`` entries (others depend on the policy class and pass unchecked).
POLICY_RULES: dict[str, Rule] = {
    "net_arch": (
        _net_arch,
        "a list of layer widths, integers >= 1 (e.g. [64, 64]), or a mapping of such lists "
        "(e.g. {pi: [64, 64], vf: [64, 64]})",
    ),
    "log_std_init": (_number, "a number (the log of the initial action noise's std)"),
    "n_critics": (lambda v: _integer(v) and v >= 1, "an integer >= 1"),
    "n_quantiles": (lambda v: _integer(v) and v >= 1, "an integer >= 1"),
}


def _rule_of_default(default: Any) -> Rule | None:
    """The rule implied by a constructor default's kind (``None``: nothing to check)."""
    if isinstance(default, bool):
        return (lambda v: isinstance(v, bool), "true or false")
    if isinstance(default, int):
        return (_integer, "an integer")
    if isinstance(default, float):
        return (_number, "a number")
    return None


def _ent_coef_rule(default: Any) -> Rule:
    """``ent_coef``: a number >= 0; ``"auto"`` too where the algorithm learns it (SAC, TQC)."""
    if isinstance(default, str):
        return (
            lambda v: (_number(v) and v >= 0) or _auto(v),
            "a number >= 0, 'auto' or 'auto_<initial value > 0>' (learnt)",
        )
    return (lambda v: _number(v) and v >= 0, "a number >= 0 (e.g. 0.0)")


def check_values(cls: type, hyperparams: Mapping[str, Any], n_envs: int) -> None:
    """Check each hyperparameter's value for the algorithm class ``cls``.

    Parameters
    ----------
    cls : type
        The algorithm's class (its constructor's defaults fix the kind of the
        arguments that :data:`RULES` does not name).
    hyperparams : mapping
        The config's ``algo.hyperparams`` (keys already checked against ``cls``).
    n_envs : int
        ``train.n_envs``: with ``n_steps``, the size of an on-policy rollout.

    Raises
    ------
    HyperparamError
        Naming the key (``policy_kwargs.net_arch`` for an entry), the allowed
        values and the value given.
    """
    parameters = inspect.signature(cls).parameters
    for key, value in hyperparams.items():
        default = parameters[key].default if key in parameters else inspect.Parameter.empty
        if key == "ent_coef":
            rule: Rule | None = _ent_coef_rule(default)
        elif key == "replay_buffer_class":  # a name, checked by check_hyperparams
            rule = None
        else:
            rule = RULES.get(key) or _rule_of_default(default)
        if rule is not None and not rule[0](value):
            raise HyperparamError(key, rule[1], value)
    for key, value in (hyperparams.get("policy_kwargs") or {}).items():
        policy_rule = POLICY_RULES.get(key)
        if policy_rule is not None and not policy_rule[0](value):
            raise HyperparamError(f"policy_kwargs.{key}", policy_rule[1], value)
    from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm

    if issubclass(cls, OnPolicyAlgorithm):  # minibatches are drawn from one rollout
        n_steps = hyperparams.get("n_steps", parameters["n_steps"].default)
        batch = hyperparams.get("batch_size", parameters["batch_size"].default)
        rollout = n_steps * n_envs
        if rollout < 2:
            raise HyperparamError(
                "n_steps",
                f"such that a rollout (n_steps x train.n_envs = {n_steps} x {n_envs}) "
                "holds at least 2 steps",
                n_steps,
            )
        if not 2 <= batch <= rollout:
            raise HyperparamError(
                "batch_size",
                f"in [2, {rollout:,}]: a minibatch is drawn from one rollout of n_steps x "
                f"train.n_envs = {n_steps} x {n_envs} = {rollout:,} steps",
                batch,
            )
