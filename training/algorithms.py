"""The learning algorithms a config can name, mapped once to SB3 classes."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Mapping
from typing import Any

from stable_baselines3 import PPO, SAC
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecEnv

__all__ = ["ALGORITHMS", "build_model", "check_hyperparams"]

#: Algorithm classes by config name: the only place these names are mapped to code.
ALGORITHMS: dict[str, type[BaseAlgorithm]] = {"ppo": PPO, "sac": SAC}

# set by the training code, not by the config
_RESERVED = {"policy", "env", "seed", "device", "tensorboard_log", "verbose", "_init_setup_model"}


def check_hyperparams(name: str, hyperparams: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` naming any key that the algorithm's constructor does not take.

    Parameters
    ----------
    name : str
        A key of :data:`ALGORITHMS`.
    hyperparams : mapping
        Constructor keyword arguments.
    """
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; valid algorithms are {sorted(ALGORITHMS)}")
    accepted = set(inspect.signature(ALGORITHMS[name].__init__).parameters) - {"self"}
    reserved = sorted(set(hyperparams) & _RESERVED)
    if reserved:
        raise ValueError(f"{reserved} are set from the train section, not algo.hyperparams")
    unknown = sorted(set(hyperparams) - accepted)
    if unknown:
        raise ValueError(
            f"unknown key(s) {unknown} for {name}; valid keys are {sorted(accepted - _RESERVED)}"
        )
    for key, value in hyperparams.items():
        if isinstance(value, str) and _looks_numeric(value):
            raise ValueError(
                f"{key} is the string {value!r}; YAML reads exponents without a decimal point "
                f"as strings, write e.g. {float(value):.1e} (with a '.')"
            )


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def build_model(
    name: str,
    policy: str,
    env: VecEnv,
    hyperparams: Mapping[str, Any],
    *,
    seed: int,
    device: str = "cpu",
    tensorboard_log: str | None = None,
) -> BaseAlgorithm:
    """Construct an SB3 algorithm from its config name and hyperparameters."""
    check_hyperparams(name, hyperparams)
    return ALGORITHMS[name](
        policy,
        env,
        seed=seed,
        device=device,
        tensorboard_log=tensorboard_log,
        verbose=0,
        **copy.deepcopy(dict(hyperparams)),  # SB3 edits policy_kwargs in place
    )
