"""Hyperparameter search spaces of ``twolink tune``: declared as data, parsed once, validated.

A search space maps a hyperparameter of the algorithm's constructor to a
distribution. Nested constructor arguments are written as dotted keys
(``policy_kwargs.net_arch``). In YAML (``twolink tune CONFIG --space FILE``)::

    learning_rate: {type: float, low: 1.0e-5, high: 1.0e-3, log: true}
    n_epochs: {type: int, low: 5, high: 20, step: 5}
    gamma: {type: categorical, choices: [0.98, 0.99, 0.995]}
    policy_kwargs.net_arch: {type: categorical, choices: {small: [64, 64], medium: [256, 256]}}

``type`` is ``float`` (keys ``low``, ``high``, optional ``log``), ``int``
(``low``, ``high``, optional ``log`` or ``step``) or ``categorical``
(``choices``: a list of numbers, strings, booleans or nulls, or a mapping of
names to any values, e.g. network shapes; Optuna then records the name). The
defaults (:data:`DEFAULT_SPACES`) follow rl-baselines3-zoo's
``hyperparams_opt.py`` in spirit, narrowed to what suits short runs on this arm.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Mapping
from typing import Any, Protocol

from twolink_gym.training.algorithms import algorithm_names, check_hyperparams

__all__ = [
    "DEFAULT_SPACES",
    "Categorical",
    "Dimension",
    "FloatRange",
    "IntRange",
    "SearchSpace",
    "apply_values",
    "parse_space",
]

_NETS = {"small": [64, 64], "medium": [256, 256], "big": [400, 300]}

_OFF_POLICY: dict[str, dict[str, Any]] = {
    "learning_rate": {"type": "float", "low": 1.0e-5, "high": 3.0e-3, "log": True},
    "batch_size": {"type": "categorical", "choices": [64, 128, 256, 512]},
    "buffer_size": {"type": "categorical", "choices": [10_000, 100_000, 1_000_000]},
    "learning_starts": {"type": "categorical", "choices": [100, 1_000, 5_000]},
    "gamma": {"type": "categorical", "choices": [0.95, 0.98, 0.99, 0.995]},
    "tau": {"type": "categorical", "choices": [0.005, 0.01, 0.02, 0.05]},
    "policy_kwargs.net_arch": {"type": "categorical", "choices": _NETS},
}

#: The search space of each algorithm when ``--space`` is not given (rl-zoo-like).
DEFAULT_SPACES: dict[str, dict[str, dict[str, Any]]] = {
    "ppo": {
        "learning_rate": {"type": "float", "low": 1.0e-5, "high": 3.0e-3, "log": True},
        "n_steps": {"type": "categorical", "choices": [64, 128, 256, 512, 1024]},
        "batch_size": {"type": "categorical", "choices": [32, 64, 128, 256]},
        "n_epochs": {"type": "categorical", "choices": [5, 10, 20]},
        "gamma": {"type": "categorical", "choices": [0.95, 0.98, 0.99, 0.995, 0.999]},
        "gae_lambda": {"type": "categorical", "choices": [0.9, 0.95, 0.98, 1.0]},
        "clip_range": {"type": "categorical", "choices": [0.1, 0.2, 0.3]},
        "ent_coef": {"type": "float", "low": 1.0e-8, "high": 1.0e-2, "log": True},
        "policy_kwargs.net_arch": {
            "type": "categorical",
            "choices": {"small": [64, 64], "medium": [256, 256]},
        },
    },
    "sac": _OFF_POLICY,
    "tqc": _OFF_POLICY,
    # rejax's PPO fields (twolink_gym.training.jax_hyperparams); num_minibatches must divide
    # train.n_envs x num_steps, which powers of two do for the shipped configs' n_envs
    "jax_ppo": {
        "learning_rate": {"type": "float", "low": 1.0e-5, "high": 3.0e-3, "log": True},
        "num_steps": {"type": "categorical", "choices": [32, 64, 128, 256]},
        "num_minibatches": {"type": "categorical", "choices": [4, 8, 16, 32]},
        "num_epochs": {"type": "categorical", "choices": [5, 10, 20]},
        "gamma": {"type": "categorical", "choices": [0.95, 0.98, 0.99, 0.995, 0.999]},
        "gae_lambda": {"type": "categorical", "choices": [0.9, 0.95, 0.98, 1.0]},
        "clip_eps": {"type": "categorical", "choices": [0.1, 0.2, 0.3]},
        "ent_coef": {"type": "float", "low": 1.0e-8, "high": 1.0e-2, "log": True},
        "log_std_init": {"type": "float", "low": -2.0, "high": 0.0},
        "agent_kwargs.hidden_layer_sizes": {
            "type": "categorical",
            "choices": {"small": [64, 64], "medium": [256, 256]},
        },
    },
}


class _Trial(Protocol):
    """The part of ``optuna.trial.Trial`` a dimension uses."""

    def suggest_float(
        self, name: str, low: float, high: float, *, step: float | None = ..., log: bool = ...
    ) -> float: ...

    def suggest_int(
        self, name: str, low: int, high: int, *, step: int = ..., log: bool = ...
    ) -> int: ...

    def suggest_categorical(self, name: str, choices: Any) -> Any: ...


@dataclasses.dataclass(frozen=True)
class FloatRange:
    """A real hyperparameter drawn from ``[low, high]`` (log-uniformly if ``log``)."""

    key: str
    low: float
    high: float
    log: bool = False

    def suggest(self, trial: _Trial) -> float:
        """The trial's value."""
        return float(trial.suggest_float(self.key, self.low, self.high, log=self.log))

    def extremes(self) -> list[Any]:
        """Values that span the dimension (checked against the constructor)."""
        return [self.low, self.high]


@dataclasses.dataclass(frozen=True)
class IntRange:
    """An integer hyperparameter drawn from ``low, low + step, ..., high`` (log-uniformly if ``log``)."""

    key: str
    low: int
    high: int
    log: bool = False
    step: int = 1

    def suggest(self, trial: _Trial) -> int:
        """The trial's value."""
        return int(trial.suggest_int(self.key, self.low, self.high, step=self.step, log=self.log))

    def extremes(self) -> list[Any]:
        """Values that span the dimension (checked against the constructor)."""
        return [self.low, self.high]


@dataclasses.dataclass(frozen=True)
class Categorical:
    """A hyperparameter drawn from named choices (``names[i]`` stands for ``values[i]``)."""

    key: str
    names: tuple[Any, ...]
    values: tuple[Any, ...]

    def suggest(self, trial: _Trial) -> Any:
        """The trial's value (Optuna records the name)."""
        name = trial.suggest_categorical(self.key, list(self.names))
        return copy.deepcopy(self.values[self.names.index(name)])

    def extremes(self) -> list[Any]:
        """Every value (checked against the constructor)."""
        return list(self.values)


Dimension = FloatRange | IntRange | Categorical

#: ``type`` of a dimension → its class: the only place these names are mapped.
KINDS: dict[str, type] = {"float": FloatRange, "int": IntRange, "categorical": Categorical}

_KEYS = {
    "float": {"type", "low", "high", "log"},
    "int": {"type", "low", "high", "log", "step"},
    "categorical": {"type", "choices"},
}


@dataclasses.dataclass(frozen=True)
class SearchSpace:
    """The dimensions of a study, in declaration order.

    Attributes
    ----------
    algo : str
        The algorithm (one of
        :func:`~twolink_gym.training.algorithms.algorithm_names`).
    dimensions : tuple of Dimension
    data : dict
        The declaration it was parsed from (stored with the study).
    """

    algo: str
    dimensions: tuple[Dimension, ...]
    data: dict[str, Any]

    def sample(self, trial: _Trial) -> dict[str, Any]:
        """``{dotted key: value}`` for one trial."""
        return {d.key: d.suggest(trial) for d in self.dimensions}


def apply_values(hyperparams: Mapping[str, Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``hyperparams`` with ``values`` (dotted keys) set in it.

    Parameters
    ----------
    hyperparams : mapping
        The config's ``algo.hyperparams`` (not modified).
    values : mapping
        ``{"learning_rate": 3e-4, "policy_kwargs.net_arch": [64, 64]}``.

    Raises
    ------
    ValueError
        If a dotted key passes through a value that is not a mapping.
    """
    out = copy.deepcopy(dict(hyperparams))
    for key, value in values.items():
        *parents, last = key.split(".")
        node = out
        for i, part in enumerate(parents):
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                path = ".".join(parents[: i + 1])
                raise ValueError(
                    f"search space key {key!r}: algo.hyperparams.{path} is {child!r}, not a mapping"
                )
            node = child
        node[last] = copy.deepcopy(value)
    return out


def _number(value: Any, integer: bool) -> bool:
    if isinstance(value, bool):
        return False
    if integer:
        return isinstance(value, int)
    return isinstance(value, (int, float)) and math.isfinite(value)


def _dimension(key: str, spec: Any, where: str) -> Dimension:
    """Parse one entry of a search space (``where`` names the file or source)."""
    if not isinstance(spec, Mapping):
        raise ValueError(
            f"{where}: search space key {key!r} must be a mapping such as "
            f"{{type: float, low: 1.0e-5, high: 1.0e-3}}, got {spec!r}"
        )
    kind = spec.get("type")
    if kind not in KINDS:
        raise ValueError(f"{where}: {key}.type must be one of {sorted(KINDS)}, got {kind!r}")
    unknown = sorted(set(spec) - _KEYS[kind])
    if unknown:
        raise ValueError(
            f"{where}: unknown key(s) {[f'{key}.{k}' for k in unknown]}; "
            f"a {kind} dimension takes {sorted(_KEYS[kind])}"
        )
    if kind == "categorical":
        return _categorical(key, spec.get("choices"), where)
    integer = kind == "int"
    for bound in ("low", "high"):
        if bound not in spec:
            raise ValueError(f"{where}: {key}.{bound} is missing ({kind} dimension)")
        if not _number(spec[bound], integer):
            raise ValueError(
                f"{where}: {key}.{bound} must be {'an integer' if integer else 'a finite number'}, "
                f"got {spec[bound]!r}"
            )
    low, high = spec["low"], spec["high"]
    if not low < high:
        raise ValueError(
            f"{where}: {key} is an empty or reversed range: low must be < high, "
            f"got low={low!r}, high={high!r}"
        )
    log = spec.get("log", False)
    if not isinstance(log, bool):
        raise ValueError(f"{where}: {key}.log must be true or false, got {log!r}")
    if log and low <= 0:
        raise ValueError(f"{where}: {key}.log needs low > 0, got low={low!r}")
    if integer:
        step = spec.get("step", 1)
        if not _number(step, True) or step < 1:
            raise ValueError(f"{where}: {key}.step must be an integer >= 1, got {step!r}")
        if log and step != 1:
            raise ValueError(f"{where}: {key}: log and step > 1 cannot be combined")
        return IntRange(key, int(low), int(high), log=log, step=int(step))
    return FloatRange(key, float(low), float(high), log=log)


def _categorical(key: str, choices: Any, where: str) -> Categorical:
    if isinstance(choices, Mapping):
        if not choices or not all(isinstance(n, str) for n in choices):
            raise ValueError(
                f"{where}: {key}.choices as a mapping needs at least one name (strings), "
                f"got {choices!r}"
            )
        return Categorical(key, tuple(choices), tuple(choices.values()))
    if not isinstance(choices, list) or not choices:
        raise ValueError(
            f"{where}: {key}.choices must be a non-empty list (or a mapping of names to "
            f"values), got {choices!r}"
        )
    for c in choices:
        if c is not None and not isinstance(c, (bool, int, float, str)):
            raise ValueError(
                f"{where}: {key}.choices in a list must be numbers, strings, booleans or null; "
                f"name other values in a mapping ({{small: [64, 64], ...}}), got {c!r}"
            )
    if len(set(map(repr, choices))) != len(choices):
        raise ValueError(f"{where}: {key}.choices has repeated values: {choices!r}")
    return Categorical(key, tuple(choices), tuple(choices))


def parse_space(
    algo: str, data: Mapping[str, Any] | None = None, where: str = "search space"
) -> SearchSpace:
    """Parse and validate a search space for ``algo`` (its default if ``data`` is None).

    Every key is checked with each of its extreme values (both bounds, every
    choice) as the config's ``algo.hyperparams`` are: against the algorithm's
    constructor (SB3, SBX), or against the rejax fields and ranges of a
    ``jax_*`` algorithm (:func:`~twolink_gym.training.jax_hyperparams.check_rejax_hyperparams`).

    Parameters
    ----------
    algo : str
        One of :func:`~twolink_gym.training.algorithms.algorithm_names`.
    data : mapping, optional
        ``{key: {type: ..., ...}}``; None: :data:`DEFAULT_SPACES` ``[algo]``.
    where : str
        Names the source in error messages (e.g. the ``--space`` file).

    Raises
    ------
    ValueError
        Naming the key: an unknown hyperparameter, an unknown ``type``, an
        empty or reversed range, empty choices, a value the constructor rejects.
    """
    if algo not in algorithm_names():
        raise ValueError(
            f"unknown algorithm {algo!r}; valid algorithms are {sorted(algorithm_names())}"
        )
    if data is None:
        if algo not in DEFAULT_SPACES:
            raise ValueError(f"{algo} has no default search space; pass --space FILE")
        data, where = DEFAULT_SPACES[algo], f"default search space of {algo}"
    if not isinstance(data, Mapping) or not data:
        raise ValueError(
            f"{where}: a search space is a non-empty mapping of hyperparameters to "
            f"distributions, got {data!r}"
        )
    dims = tuple(_dimension(str(key), spec, where) for key, spec in data.items())
    for dim in dims:
        for value in dim.extremes():
            try:
                check_hyperparams(algo, apply_values({}, {dim.key: value}))
            except ValueError as exc:
                raise ValueError(f"{where}: search space key {dim.key!r}: {exc}") from exc
    return SearchSpace(algo, dims, copy.deepcopy(dict(data)))
