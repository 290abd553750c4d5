"""The learning algorithms a config can name, mapped once to SB3 classes.

Besides SB3's own constructor arguments, two config conventions of
rl-baselines3-zoo are understood (and mapped here, once):

* ``"lin_<x>"`` for a schedulable value (``learning_rate``, ``clip_range``,
  ``clip_range_vf``): a linear decay from ``x`` at the start of training to 0
  at the end;
* ``replay_buffer_class: her`` for SB3's ``HerReplayBuffer`` (goal
  relabelling; needs ``env.goal_observation: true``).

The ``jax_*`` names (:data:`REJAX_ALGORITHMS`) are rejax's algorithms, trained
end to end in JAX on the twin of the env (``twolink_gym.jax``), every seed of
``train.seeds`` at once (:mod:`twolink_gym.training.jax_train`); their
``algo.hyperparams`` are the rejax class's fields. They are not SB3 classes and
so not entries of :data:`ALGORITHMS`; :func:`check_hyperparams` and
:func:`is_rejax` know them.

The imitation names (:data:`IMITATION_ALGORITHMS`, ``dagger`` and ``dart``) label
networks trained by imitating a controller, outside ``twolink train``: the script named
there writes their agent folders (a numpy policy, ``policy.npz``, like the
``jax_*`` agents') with a config whose ``algo.hyperparams`` records the settings
it used (:data:`IMITATION_SETTINGS`). Every command that runs a policy loads
them; ``twolink train``, ``tune`` and ``sweep`` refuse them
(:func:`check_trainable`).

The ``sbx_*`` names are the JAX implementations of SBX (``sbx-rl``, the
optional ``jax`` extra): same SB3 API, callbacks, saving and replay buffers.
They are imported only when first looked up in :data:`ALGORITHMS`; without JAX
that look-up raises :class:`BackendNotInstalledError` naming the extra. Before
JAX is first imported, ``XLA_FLAGS`` is given the flags that keep XLA's CPU
computations on one thread (:data:`XLA_ONE_THREAD`), unless ``XLA_FLAGS``
already sets them: one training process uses one core, like torch with
``train.torch_threads: 1``.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from sb3_contrib import TQC
from stable_baselines3 import PPO, SAC, HerReplayBuffer
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.buffers import ReplayBuffer
from stable_baselines3.common.utils import LinearSchedule
from stable_baselines3.common.vec_env import VecEnv

__all__ = [
    "ALGORITHMS",
    "IMITATION_ALGORITHMS",
    "IMITATION_SETTINGS",
    "JAX_INSTALL_HINT",
    "REJAX_ALGORITHMS",
    "REPLAY_BUFFERS",
    "SBX_ALGORITHMS",
    "XLA_ONE_THREAD",
    "BackendNotInstalledError",
    "algorithm_names",
    "build_model",
    "check_hyperparams",
    "check_trainable",
    "is_imitation",
    "is_numpy_agent",
    "is_rejax",
    "is_sbx",
    "resolve_hyperparams",
]

#: The JAX algorithms by config name: the class name in the ``sbx`` package.
SBX_ALGORITHMS: dict[str, str] = {
    "sbx_sac": "SAC",
    "sbx_tqc": "TQC",
    "sbx_crossq": "CrossQ",
    "sbx_ppo": "PPO",
}

#: rejax's algorithms by config name: the class name in the ``rejax`` package.
REJAX_ALGORITHMS: dict[str, str] = {"jax_ppo": "PPO", "jax_sac": "SAC"}

#: Networks trained by imitation, by config name: the script that trains them.
IMITATION_ALGORITHMS: dict[str, str] = {
    "dagger": "benchmarks/realaigym_v3_distill.py",
    "dart": "benchmarks/realaigym_v2_distill.py",
}

#: The settings an imitation algorithm's ``algo.hyperparams`` may record, by config name.
IMITATION_SETTINGS: dict[str, frozenset[str]] = {
    "dagger": frozenset(
        {
            "teacher",
            "samples",
            "rounds",
            "runs",
            "fit_steps",
            "hidden",
            "lr",
            "lr_schedule",
            "final_hidden",
            "final_fit_steps",
            "velocity_noise",
            "select_seeds",
            "chosen_round",
        }
    ),
    "dart": frozenset(
        {
            "teacher",
            "rounds",
            "runs",
            "fit_steps",
            "hidden",
            "lr",
            "activation",
            "torque_noise",
            "pulse_fraction",
            "model_fraction",
            "delay_fraction",
            "delay_max",
            "velocity_noise",
            "select_arms",
            "select_spread",
            "select_from",
            "chosen_round",
        }
    ),
}

#: How to install the JAX algorithms.
JAX_INSTALL_HINT = 'pip install "twolink-gym[jax]"'

#: ``XLA_FLAGS`` entries that keep XLA's CPU computations on one thread.
XLA_ONE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"


class BackendNotInstalledError(ImportError):
    """An ``sbx_*`` algorithm was chosen but JAX or SBX is not installed."""


def is_sbx(name: str) -> bool:
    """Whether the config name ``name`` is one of the JAX algorithms (:data:`SBX_ALGORITHMS`)."""
    return name in SBX_ALGORITHMS


def is_rejax(name: str) -> bool:
    """Whether the config name ``name`` is one of rejax's algorithms (:data:`REJAX_ALGORITHMS`)."""
    return name in REJAX_ALGORITHMS


def is_imitation(name: str) -> bool:
    """Whether ``name`` labels a network trained by imitation (:data:`IMITATION_ALGORITHMS`)."""
    return name in IMITATION_ALGORITHMS


def is_numpy_agent(name: str) -> bool:
    """Whether an agent of the algorithm ``name`` is a numpy policy (``policy.npz``).

    The ``jax_*`` algorithms' and the imitation-trained networks' agents are.
    """
    return is_rejax(name) or is_imitation(name)


def check_trainable(name: str, source: str) -> None:
    """Raise ``ValueError`` if ``twolink train`` cannot train the algorithm ``name``.

    The imitation names (:data:`IMITATION_ALGORITHMS`) label agents that their own
    script trains; the message starts with ``source`` (the config file that names
    ``name``) and names the script and the algorithms that train.
    """
    if is_imitation(name):
        trainable = [n for n in algorithm_names() if not is_imitation(n)]
        raise ValueError(
            f"{source}: algo.name {name!r} labels a network trained by imitation "
            f"({IMITATION_ALGORITHMS[name]} writes its agent folders); twolink train, tune "
            f"and sweep train one of {trainable}"
        )


def algorithm_names() -> list[str]:
    """Every algorithm a config can name.

    :data:`ALGORITHMS`, :data:`REJAX_ALGORITHMS` and :data:`IMITATION_ALGORITHMS`.
    """
    return [*ALGORITHMS, *REJAX_ALGORITHMS, *IMITATION_ALGORITHMS]


def _limit_xla_threads() -> None:
    """Add :data:`XLA_ONE_THREAD` to ``XLA_FLAGS`` if JAX is not imported yet and they are unset."""
    if "jax" in sys.modules:
        return
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_cpu_multi_thread_eigen" in flags or "intra_op_parallelism_threads" in flags:
        return
    os.environ["XLA_FLAGS"] = f"{flags} {XLA_ONE_THREAD}".strip()


def _sbx_class(name: str) -> type[BaseAlgorithm]:
    """The SBX class of the config name ``name``, imported on first use."""
    _limit_xla_threads()
    try:
        module = importlib.import_module("sbx")
    except ImportError as exc:
        raise BackendNotInstalledError(
            f"algorithm {name!r} is SBX's JAX implementation, and SBX (sbx-rl) with JAX is "
            f"not installed ({exc}); install it with: {JAX_INSTALL_HINT}"
        ) from exc
    cls: type[BaseAlgorithm] = getattr(module, SBX_ALGORITHMS[name])
    return cls


class _Algorithms(Mapping[str, type[BaseAlgorithm]]):
    """Config name -> algorithm class; the SBX classes are imported when looked up."""

    def __init__(self, sb3: Mapping[str, type[BaseAlgorithm]]) -> None:
        self._sb3 = dict(sb3)

    def __getitem__(self, name: str) -> type[BaseAlgorithm]:
        if name in self._sb3:
            return self._sb3[name]
        if name in SBX_ALGORITHMS:
            return _sbx_class(name)
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        yield from self._sb3
        yield from SBX_ALGORITHMS

    def __len__(self) -> int:
        return len(self._sb3) + len(SBX_ALGORITHMS)

    def __contains__(self, name: object) -> bool:
        return name in self._sb3 or name in SBX_ALGORITHMS


#: Algorithm classes by config name: the only place these names are mapped to code.
#: The ``sbx_*`` entries import SBX (JAX) when looked up: see :class:`BackendNotInstalledError`.
ALGORITHMS: Mapping[str, type[BaseAlgorithm]] = _Algorithms({"ppo": PPO, "sac": SAC, "tqc": TQC})

#: Replay buffer classes by config name (``algo.hyperparams.replay_buffer_class``).
REPLAY_BUFFERS: dict[str, type[ReplayBuffer]] = {"her": HerReplayBuffer}

#: Hyperparameters that accept a schedule (``"lin_<initial value>"``).
SCHEDULABLE = ("learning_rate", "clip_range", "clip_range_vf")

# set by the training code, not by the config
_RESERVED = {"policy", "env", "seed", "device", "tensorboard_log", "verbose", "_init_setup_model"}


def check_hyperparams(name: str, hyperparams: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` naming any key that the algorithm's constructor does not take.

    Parameters
    ----------
    name : str
        A name of :func:`algorithm_names`.
    hyperparams : mapping
        Constructor keyword arguments.

    Raises
    ------
    BackendNotInstalledError
        For an ``sbx_*`` or ``jax_*`` algorithm without JAX: its signature cannot be read.
    """
    if is_rejax(name):
        from twolink_gym.training.jax_hyperparams import check_rejax_hyperparams

        check_rejax_hyperparams(name, hyperparams)
        return
    if is_imitation(name):
        unknown = sorted(set(hyperparams) - IMITATION_SETTINGS[name])
        if unknown:
            raise ValueError(
                f"unknown key(s) {unknown} for {name}; valid keys are "
                f"{sorted(IMITATION_SETTINGS[name])}"
            )
        return
    if name not in ALGORITHMS:
        raise ValueError(
            f"unknown algorithm {name!r}; valid algorithms are {sorted(algorithm_names())}"
        )
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
        if key in SCHEDULABLE and isinstance(value, str) and value.startswith("lin_"):
            if not _looks_numeric(value[4:]) or not float(value[4:]) > 0:
                raise ValueError(
                    f"{key} {value!r}: a linear schedule is written lin_<initial value > 0>, "
                    "e.g. lin_3.0e-4"
                )
            continue
        if isinstance(value, str) and value.startswith("lin_"):
            raise ValueError(f"{key} {value!r}: only {list(SCHEDULABLE)} take a lin_<x> schedule")
        if key == "replay_buffer_class":
            if value not in REPLAY_BUFFERS:
                raise ValueError(
                    f"replay_buffer_class {value!r} is not known; valid values are "
                    f"{sorted(REPLAY_BUFFERS)}"
                )
            continue
        if isinstance(value, str) and _looks_numeric(value):
            raise ValueError(
                f"{key} is the string {value!r}; YAML reads exponents without a decimal point "
                f"as strings, write e.g. {float(value):.1e} (with a '.')"
            )


def resolve_hyperparams(hyperparams: Mapping[str, Any]) -> dict[str, Any]:
    """Config hyperparameters → SB3 constructor arguments (schedules and classes mapped).

    Parameters
    ----------
    hyperparams : mapping
        As checked by :func:`check_hyperparams`; not modified.

    Returns
    -------
    dict
        A deep copy with ``"lin_<x>"`` replaced by a linear schedule from ``x``
        to 0 and ``replay_buffer_class`` by its class.
    """
    resolved = copy.deepcopy(dict(hyperparams))  # SB3 edits policy_kwargs in place
    for key in SCHEDULABLE:
        value = resolved.get(key)
        if isinstance(value, str) and value.startswith("lin_"):
            resolved[key] = LinearSchedule(float(value[4:]), 0.0, 1.0)
    if "replay_buffer_class" in resolved:
        resolved["replay_buffer_class"] = REPLAY_BUFFERS[resolved["replay_buffer_class"]]
    return resolved


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
        **resolve_hyperparams(hyperparams),
    )
