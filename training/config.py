"""Run configurations: YAML files loaded into typed, validated dataclasses.

A config has four sections::

    env:       which environment, task, arm and torque limits, and how it is vectorised
    algo:      the SB3 algorithm and its constructor arguments
    train:     timesteps, number of envs, seed, evaluation/checkpoint cadence, output folder
    evaluate:  the fixed episode set used by ``evaluate``/``compare`` and the baselines

Training (``train``, ``run``, ``sweep``, ``tune``) needs ``env``, ``algo`` and
``train`` (:class:`RunConfig`, :func:`load_config`). Evaluating (``evaluate``,
``compare``, ``record``, ``robustness``) needs only ``env`` and optionally
``evaluate`` (:class:`EvalConfig`, :func:`load_eval_config`); a training config
serves there too.

Every key is checked: an unknown key, a missing required key or a value of the
wrong type raises :class:`ConfigError` naming the key and the file. Single
values can be overridden with ``"section.key=value"`` strings (the value is
parsed as YAML), e.g. ``train.seed=3``.
"""

from __future__ import annotations

import copy
import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Union

import yaml

from twolink_gym import env_config
from twolink_gym.env_config import EnvConfigError

__all__ = [
    "AlgoConfig",
    "ConfigError",
    "EnvConfig",
    "EvalConfig",
    "EvaluateConfig",
    "RunConfig",
    "TrainConfig",
    "apply_overrides",
    "config_from_dict",
    "eval_config_from_dict",
    "load_config",
    "load_eval_config",
]

MISSING = dataclasses.MISSING


class ConfigError(ValueError):
    """A config file or override is invalid (the message names the key and the source)."""


@dataclasses.dataclass(frozen=True)
class EnvConfig(env_config.EnvConfig):
    """The ``env:`` section: the environment every policy of a run is trained and evaluated on.

    Every env setting of :class:`twolink_gym.env_config.EnvConfig` (``task``,
    ``params``, ``dt``, ``max_torque``, ``actuation``, the robustness models,
    ...; ``task`` is required in a file), plus the training-side keys below.
    An invalid env setting is an :class:`~twolink_gym.env_config.EnvConfigError`
    on construction; in a file, a :class:`ConfigError` naming ``env.<key>`` and the file.

    Attributes
    ----------
    id : str
        Gymnasium id used by the ``dummy`` vectorisation (default ``TwoLink-v0``).
    max_episode_steps : int or None
        Episode length in steps (None: the task's length).
    train_task_options : dict
        Task options of the *training* env only, over ``task_options``: the
        episodes it draws (start spread, target or path ranges, swing-up's
        exploring and catch starts), e.g. ``{explore_fraction: 0.5}`` for half
        the swing-up episodes starting anywhere, and its reward and termination
        (track's ``lost_distance``), but not the observation's layout (track's
        ``preview``: a :class:`ConfigError`). Every evaluation (the periodic one, the
        sweep's, ``evaluate``, ``compare``) runs the task with ``task_options``
        alone, so an agent trained this way is judged on the task itself.
        Empty: train on that task too.
    vectorization : str
        ``"native"`` (the batched :class:`~twolink_gym.vector_env.TwoLinkVectorEnv`
        behind SB3's VecEnv API) or ``"dummy"`` (SB3's ``DummyVecEnv`` over
        ``gym.make``).
    normalize_obs, normalize_reward : bool
        Wrap the training env in SB3's ``VecNormalize``.
    goal_observation : bool
        Give the agent a goal-conditioned view of the task
        (:class:`twolink_gym.training.goal_env.GoalObservationVecEnv`: dict observations
        ``observation`` / ``achieved_goal`` / ``desired_goal`` and a batched
        ``compute_reward``), as SB3's ``HerReplayBuffer`` needs. Tasks with a
        goal only (reach).
    frame_stack : int
        Observations stacked for the agent (SB3's ``VecFrameStack`` over the
        training and evaluation envs; 1: none). The usual remedy for
        ``observation: angles``. Not with ``goal_observation``.
    """

    id: str = "TwoLink-v0"
    max_episode_steps: int | None = None
    train_task_options: dict[str, Any] = dataclasses.field(default_factory=dict)
    vectorization: str = "native"
    normalize_obs: bool = True
    normalize_reward: bool = True
    goal_observation: bool = False
    frame_stack: int = 1

    @property
    def resolved_max_torque(self) -> tuple[float, float]:
        """``max_torque``, or the task's default limits for the actuation when it is ``None`` [N·m]."""
        first, second = self.checked()["max_torque"].tolist()
        return (first, second)

    def make_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of ``TwoLinkEnv`` / ``TwoLinkVectorEnv``: the env settings.

        ``max_torque`` resolved (:attr:`resolved_max_torque`), mappings and lists copied.
        """
        kwargs = copy.deepcopy(self.to_kwargs())
        kwargs["max_torque"] = self.resolved_max_torque
        return kwargs

    def env_config(self) -> env_config.EnvConfig:
        """The env settings alone, as the core :class:`twolink_gym.env_config.EnvConfig`."""
        return env_config.EnvConfig.from_settings(self)

    def for_training(self) -> EnvConfig:
        """The env the agent trains on: ``task_options`` updated by ``train_task_options``."""
        if not self.train_task_options:
            return self
        return dataclasses.replace(
            self,
            task_options={**(self.task_options or {}), **self.train_task_options},
            train_task_options={},
        )

    def nominal(self) -> EnvConfig:
        """The same env without its robustness conditions (randomisation, noise, actuator models).

        What an agent's environment must match to run it: an agent trained
        with randomisation or noise acts on the nominal env as well (the
        ``observation`` and ``frame_stack``, which fix the observation's
        layout, stay). So does one trained on another episode distribution:
        the task options that only shape the drawn episodes (the task's
        ``episode_option_names``, such as reach's target radius range) are
        dropped too, and so are ``train_task_options``.
        """
        from twolink_gym.tasks import TASKS

        episode_only = set(TASKS[str(self.task)].episode_option_names)
        task_options = self.task_options or {}
        return dataclasses.replace(
            self,
            task_options={k: v for k, v in task_options.items() if k not in episode_only},
            train_task_options={},
            **env_config.ideal_defaults(),
        )


@dataclasses.dataclass(frozen=True)
class AlgoConfig:
    """The learning algorithm.

    Attributes
    ----------
    name : str
        ``"ppo"``, ``"sac"``, ``"tqc"`` (PyTorch, stable-baselines3 and
        sb3-contrib) or ``"sbx_sac"``, ``"sbx_tqc"``, ``"sbx_crossq"``,
        ``"sbx_ppo"`` (JAX, SBX; the ``jax`` extra).
    policy : str
        SB3 policy class name.
    hyperparams : dict
        Keyword arguments of the SB3 algorithm's constructor (``learning_rate``,
        ``n_steps``, ``policy_kwargs``, ...); checked against its signature.
    """

    name: str
    policy: str = "MlpPolicy"
    hyperparams: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """How long and where to train.

    Attributes
    ----------
    total_timesteps : int
        Environment steps (summed over the parallel envs).
    n_envs : int
        Parallel training envs.
    seed : int
        Seed of the algorithm, the training envs and the evaluation env.
    seeds : list of int or None
        Seeds trained at once, for the ``jax_*`` algorithms (``jax.vmap`` over
        seeds; a run folder each, named with its seed); None: ``seed`` alone.
        SB3 algorithms train one seed a process (``twolink sweep`` runs several).
    eval_freq : int
        Environment steps between evaluations (0 disables).
    eval_episodes : int
        Episodes per periodic evaluation.
    checkpoint_freq : int
        Environment steps between checkpoints (0 disables).
    output_dir : str
        Parent folder of the run folders.
    run_name : str or None
        Run folder name (default ``<task>_<algo>_s<seed>``, or
        ``<task>_<actuation>_<algo>_s<seed>`` for an underactuated arm).
    torch_threads : int
        ``torch.set_num_threads`` for the training process.
    jax_devices : int
        For the ``jax_*`` algorithms: the devices ``train.seeds`` are split over
        (each trains its share in parallel; at most one per seed): on a CPU, that
        many XLA CPU devices (one per core is the fastest), on a machine with GPUs,
        that many of them. The float32 results of a seed depend on the layout (the
        batch each device computes), so it is a setting of the config, not of the
        machine: 1 by default. Ignored by SB3 algorithms.
    device : str
        Torch device.
    progress_bar : bool
        Show SB3's progress bar.
    save_best : bool
        Keep the model of the best periodic evaluation (highest success rate,
        then highest mean return; the first of equals) in ``<run>/best/``, a
        folder every command loads as it loads a run (needs ``eval_freq`` > 0).
    eval_v3_pushes_seeds : list of int or None
        For the ``jax_*`` algorithms on a RealAIGym swing-up (``task: swingup``,
        ``actuation`` acrobot or pendubot): at each periodic evaluation, also
        run every seed's agent through the RealAIGym v3 protocol (60 s, 15
        pushes) once per seed of the pushes given here, in JAX on the training
        device (:mod:`twolink_gym.jax.realaigym_v3`): held-out schedules, never
        the board's (333 acrobot, 777 pendubot, refused). Each seed's scores go
        to ``<run>/eval/v3_heldout.csv``, and ``best/`` keeps the agent of the
        highest mean score (then success rate, then mean return). None: no v3 runs.
    init_from : str or None
        For the ``jax_*`` algorithms: start from another run instead of a fresh
        initialisation, as rl-baselines3-zoo's ``--trained-agent`` does. The folder
        of one seed of a ``jax_*`` run (``runs/NAME_s0``); each seed of this
        run starts from the train state its group saved for the same seed
        (networks, optimisers, observation normaliser, replay buffer, step
        count), so the group must hold every seed of ``train.seeds``, and the
        algorithm, network and env must give the same train state's shapes
        (the env may differ in what leaves them: task options, the
        randomisation, the observation noise, ``push_rate``; not the actuator
        model's settings, whose motor memory is part of the env state). Training goes on to
        ``train.total_timesteps`` (counted from the source's first step), into
        this run's own folders; the source is read, never written. None: a
        fresh start.
    """

    total_timesteps: int
    n_envs: int = 8
    seed: int = 0
    seeds: list[int] | None = None
    eval_freq: int = 10_000
    eval_episodes: int = 20
    checkpoint_freq: int = 50_000
    output_dir: str = "runs"
    run_name: str | None = None
    torch_threads: int = 1
    jax_devices: int = 1
    device: str = "cpu"
    progress_bar: bool = True
    save_best: bool = True
    eval_v3_pushes_seeds: list[int] | None = None
    init_from: str | None = None


@dataclasses.dataclass(frozen=True)
class EvaluateConfig:
    """The fixed episode set of ``evaluate`` and ``compare``.

    Attributes
    ----------
    episodes : int
        Number of episodes.
    seed : int
        Episode ``i`` is drawn from seed ``seed + i`` (kept apart from training seeds).
    controllers : list of str
        Classical controllers to compare with; ``["auto"]`` means every
        controller that applies to the task.
    """

    episodes: int = 100
    seed: int = 1_000_000
    controllers: list[str] = dataclasses.field(default_factory=lambda: ["auto"])


#: Where evaluation results go when no config names an output folder.
DEFAULT_OUTPUT_DIR = "runs"


@dataclasses.dataclass(frozen=True, kw_only=True)
class EvalConfig:
    """What evaluating policies needs: the ``env`` and the ``evaluate`` sections.

    The config of ``evaluate``, ``compare``, ``record`` and ``robustness``. A
    :class:`RunConfig` (a training config) is one too.

    Attributes
    ----------
    env : EnvConfig
    evaluate : EvaluateConfig
    source : str
        Where the config came from (a file, ``--task balance``), for messages.
    """

    env: EnvConfig
    evaluate: EvaluateConfig = dataclasses.field(default_factory=EvaluateConfig)
    source: str = "<dict>"

    @property
    def output_dir(self) -> Path:
        """The parent folder of results (``runs``; a training config's ``train.output_dir``)."""
        return Path(DEFAULT_OUTPUT_DIR)

    def to_dict(self) -> dict[str, Any]:
        """The resolved config as plain data, section by section."""
        return {
            name: dataclasses.asdict(getattr(self, name))
            for name in _SECTIONS
            if hasattr(self, name)
        }


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunConfig(EvalConfig):
    """A whole run: ``env``, ``algo``, ``train`` and ``evaluate`` sections."""

    algo: AlgoConfig
    train: TrainConfig

    @property
    def output_dir(self) -> Path:
        """``train.output_dir``: the parent folder of the run folders."""
        return Path(self.train.output_dir)

    @property
    def default_group(self) -> str:
        """``<task>_<algo>``, or ``<task>_<actuation>_<algo>`` for an underactuated arm."""
        arm = "" if self.env.actuation == "full" else f"{self.env.actuation}_"
        return f"{self.env.task}_{arm}{self.algo.name}"

    @property
    def run_name(self) -> str:
        """The run folder's name (``train.run_name``, or :attr:`default_group` and the seed)."""
        return self.train.run_name or f"{self.default_group}_s{self.train.seed}"

    @property
    def run_dir(self) -> Path:
        """The run folder."""
        return Path(self.train.output_dir) / self.run_name


#: Keys a config file must give although the class has a default (the file names its task).
_REQUIRED_KEYS: dict[str, tuple[str, ...]] = {"env": ("task",)}

_SECTIONS: dict[str, type] = {
    "env": EnvConfig,
    "algo": AlgoConfig,
    "train": TrainConfig,
    "evaluate": EvaluateConfig,
}


# -- type checking ----------------------------------------------------------
#: How messages name the config types.
_KIND: dict[Any, str] = {
    float: "a number",
    int: "an integer",
    bool: "true or false",
    str: "a string",
    list: "a list",
    dict: "a mapping",
}


#: The plain type of each kind of YAML value.
_DATA: dict[str | None, type | tuple[type, ...]] = {"a list": list, "a mapping": dict}


def _kind(tp: Any) -> str | None:
    """How messages name the YAML values of type ``tp`` (``None``: no YAML value is one)."""
    origin = typing.get_origin(tp) or tp
    origin = {Sequence: list, Mapping: dict}.get(origin, origin)
    return _KIND.get(origin)


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def _check(value: Any, tp: Any, key: str, source: str) -> Any:
    """Return ``value`` converted to ``tp`` (int → float only) or raise ConfigError."""
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _check(value, arg, key, source)
            except ConfigError as exc:
                errors.append((arg, exc))
        # the alternatives a YAML value can be (not ArmParams or Task objects)
        errors = [(arg, e) for arg, e in errors if _kind(arg) is not None]
        for arg, error in errors:  # a list (or mapping) with a bad entry: name the entry
            if isinstance(value, (list, dict)) and isinstance(value, _DATA.get(_kind(arg), ())):
                raise error
        kinds = [str(_kind(arg)) for arg, _ in errors]
        if len(kinds) == 1:
            raise errors[0][1]
        raise ConfigError(f"{source}: {key} must be {' or '.join(kinds)}, got {value!r}")
    if tp is Any:
        return value
    if origin in (list, Sequence):
        if not isinstance(value, list):
            raise ConfigError(f"{source}: {key} must be a list, got {value!r}")
        (item,) = typing.get_args(tp)
        return [_check(v, item, f"{key}[{i}]", source) for i, v in enumerate(value)]
    if origin in (dict, Mapping):
        if not isinstance(value, dict):
            raise ConfigError(f"{source}: {key} must be a mapping, got {value!r}")
        _, item = typing.get_args(tp)
        return {str(k): _check(v, item, f"{key}.{k}", source) for k, v in value.items()}
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{source}: {key} must be a number, got {value!r}")
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{source}: {key} must be an integer, got {value!r}")
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{source}: {key} must be true or false, got {value!r}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{source}: {key} must be a string, got {value!r}")
        return value
    if isinstance(tp, type) and tp not in _KIND:  # a Python object (ArmParams, Task): not from YAML
        if isinstance(value, tp):
            return value
        raise ConfigError(f"{source}: {key} must be a {tp.__name__}, got {value!r}")
    raise TypeError(f"unsupported config type {_type_name(tp)} for {key}")  # pragma: no cover


def _build(cls: type, data: Any, section: str, source: str) -> Any:
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: section {section!r} must be a mapping, got {data!r}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(
            f"{source}: unknown key(s) {[f'{section}.{k}' for k in unknown]}; "
            f"valid keys of {section!r} are {sorted(fields)}"
        )
    kwargs = {}
    required = _REQUIRED_KEYS.get(section, ())
    for name, field in fields.items():
        key = f"{section}.{name}"
        if name in data:
            kwargs[name] = _check(data[name], hints[name], key, source)
        elif name in required or (field.default is MISSING and field.default_factory is MISSING):
            raise ConfigError(f"{source}: missing required key {key!r}")
    try:
        return cls(**kwargs)
    except EnvConfigError as exc:
        raise ConfigError(_env_message(exc, source, section)) from exc


def _env_message(error: EnvConfigError, source: str, prefix: str = "env") -> str:
    """The config message of an invalid env setting: its key path (read from the error) and the file.

    A choice (``allowed`` a list) reads ``<source>: env.<key> must be one of
    <allowed>, got <value>``; any other error ``<source>: env.<key>: <the env's message>``.
    """
    key = f"{prefix}.{error.key}"
    if isinstance(error.allowed, list) and error.key in env_config.setting_names():
        return f"{source}: {key} must be one of {error.allowed}, got {error.value!r}"
    return f"{source}: {key}: {error}"


def _validate_evaluation(cfg: EvalConfig) -> None:
    """Check the ``env`` and ``evaluate`` values that have a range or a fixed set of choices."""
    src = cfg.source
    if cfg.env.vectorization not in ("native", "dummy"):
        raise ConfigError(
            f"{src}: env.vectorization must be 'native' or 'dummy', got {cfg.env.vectorization!r}"
        )
    if cfg.env.frame_stack < 1:
        raise ConfigError(f"{src}: env.frame_stack must be >= 1, got {cfg.env.frame_stack}")
    if cfg.env.frame_stack > 1 and cfg.env.goal_observation:
        raise ConfigError(
            f"{src}: env.frame_stack > 1 cannot be combined with env.goal_observation "
            "(the goal-conditioned view splits a flat observation)"
        )
    if cfg.evaluate.episodes < 1:
        raise ConfigError(f"{src}: evaluate.episodes must be >= 1, got {cfg.evaluate.episodes}")
    if cfg.env.max_episode_steps is not None and cfg.env.max_episode_steps < 1:
        raise ConfigError(
            f"{src}: env.max_episode_steps must be >= 1 (or null for the task's length), "
            f"got {cfg.env.max_episode_steps}"
        )
    if cfg.evaluate.seed < 0:
        raise ConfigError(f"{src}: evaluate.seed must be >= 0, got {cfg.evaluate.seed}")
    _check_environment(cfg.env, src)


def _validate(cfg: RunConfig) -> None:
    """Check values that have a type but also a range or a fixed set of choices."""
    from twolink_gym.training.algorithms import (
        BackendNotInstalledError,
        algorithm_names,
        check_hyperparams,
        is_rejax,
    )

    src = cfg.source
    if cfg.algo.name not in algorithm_names():
        raise ConfigError(
            f"{src}: algo.name must be one of {algorithm_names()}, got {cfg.algo.name!r}"
        )
    seeds = cfg.train.seeds
    if seeds is not None:
        if not is_rejax(cfg.algo.name):
            raise ConfigError(
                f"{src}: train.seeds trains several seeds at once, for the jax_* algorithms; "
                f"{cfg.algo.name} trains train.seed (run several with `twolink sweep --seeds`)"
            )
        if not seeds or min(seeds) < 0 or len(set(seeds)) != len(seeds):
            raise ConfigError(
                f"{src}: train.seeds must be a non-empty list of distinct seeds >= 0, got {seeds}"
            )
    if cfg.train.eval_v3_pushes_seeds is not None:
        _check_v3_pushes_seeds(cfg, is_rejax(cfg.algo.name))
    if cfg.train.init_from is not None:
        _check_init_from(cfg, is_rejax(cfg.algo.name))
    try:
        check_hyperparams(cfg.algo.name, cfg.algo.hyperparams)
    except BackendNotInstalledError as exc:
        raise ConfigError(f"{src}: algo.name: {exc}") from exc
    except ValueError as exc:
        raise ConfigError(f"{src}: algo.hyperparams: {exc}") from exc
    positive = {
        "train.total_timesteps": cfg.train.total_timesteps,
        "train.n_envs": cfg.train.n_envs,
        "train.eval_episodes": cfg.train.eval_episodes,
        "train.torch_threads": cfg.train.torch_threads,
        "train.jax_devices": cfg.train.jax_devices,
    }
    for key, value in positive.items():
        if value < 1:
            raise ConfigError(f"{src}: {key} must be >= 1, got {value}")
    _check_hyperparam_values(cfg)
    name = cfg.train.run_name
    if name is not None and (name in ("", ".", "..") or "/" in name or "\\" in name):
        raise ConfigError(
            f"{src}: train.run_name must be a plain folder name (no '/', not '.' or '..') "
            f"or null for <task>_<algo>_s<seed>, got {name!r}"
        )
    if not cfg.train.output_dir:
        raise ConfigError(f"{src}: train.output_dir must be a folder path, got ''")
    for key, value in {
        "train.eval_freq": cfg.train.eval_freq,
        "train.checkpoint_freq": cfg.train.checkpoint_freq,
        "train.seed": cfg.train.seed,
    }.items():
        if value < 0:
            raise ConfigError(f"{src}: {key} must be >= 0, got {value}")


def _check_init_from(cfg: RunConfig, rejax: bool) -> None:
    """Check ``train.init_from`` (its folder is read when training starts)."""
    src, init_from = cfg.source, cfg.train.init_from
    if not rejax:
        raise ConfigError(
            f"{src}: train.init_from starts a jax_* run from another one's train state; "
            f"{cfg.algo.name} continues a run with --resume"
        )
    if not isinstance(init_from, str) or not init_from:
        raise ConfigError(
            f"{src}: train.init_from must be the folder of one seed of a jax_* run "
            f"(e.g. runs/NAME_s0) or null, got {init_from!r}"
        )


def _check_v3_pushes_seeds(cfg: RunConfig, rejax: bool) -> None:
    """Check ``train.eval_v3_pushes_seeds`` and that the run can take a v3 evaluation."""
    from twolink_gym.realaigym.protocol import DT, decision_steps
    from twolink_gym.realaigym.v3 import SEEDS

    src, seeds, env = cfg.source, cfg.train.eval_v3_pushes_seeds, cfg.env
    key = "train.eval_v3_pushes_seeds"
    if not rejax:
        raise ConfigError(
            f"{src}: {key} runs the v3 protocol inside jax_* training; {cfg.algo.name} "
            "agents run it with `twolink realaigym v3 RUN --robot R --pushes-seed N`"
        )
    if env.task != "swingup" or env.actuation not in SEEDS:
        raise ConfigError(
            f"{src}: {key} needs a RealAIGym swing-up (env.task 'swingup', env.actuation one of "
            f"{sorted(SEEDS)}), got task {env.task!r} with actuation {env.actuation!r}"
        )
    if env.observation != "state" or env.frame_stack != 1:
        raise ConfigError(
            f"{src}: {key} asks the agent with the true state: env.observation must be 'state' "
            f"and env.frame_stack 1, got {env.observation!r} and {env.frame_stack}"
        )
    try:
        decision_steps(env.dt)
    except ValueError as err:
        raise ConfigError(f"{src}: {key} needs env.dt a multiple of {DT} s, got {env.dt}") from err
    if cfg.train.eval_freq < 1:
        raise ConfigError(
            f"{src}: {key} runs at the periodic evaluations: train.eval_freq must be > 0"
        )
    board = SEEDS[str(env.actuation)]
    valid = (
        isinstance(seeds, list)
        and seeds
        and all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**32 for s in seeds)
        and len(set(seeds)) == len(seeds)
    )
    if not valid or not isinstance(seeds, list):
        raise ConfigError(
            f"{src}: {key} must be a non-empty list of distinct integers in [0, 2**32) or null, "
            f"got {seeds!r}"
        )
    if board in seeds:
        raise ConfigError(
            f"{src}: {key} must not hold {board}, the board's seed of the {env.actuation}'s "
            "pushes: models are chosen on held-out pushes, not on the runs they are scored on"
        )


def _check_hyperparam_values(cfg: RunConfig) -> None:
    """Check each ``algo.hyperparams`` value's kind and range (:mod:`~twolink_gym.training.hyperparams`)."""
    from twolink_gym.training.algorithms import ALGORITHMS
    from twolink_gym.training.hyperparams import HyperparamError, check_values

    if cfg.algo.name not in ALGORITHMS:  # not an SB3 class: checked by its own trainer
        return
    try:
        check_values(ALGORITHMS[cfg.algo.name], cfg.algo.hyperparams, cfg.train.n_envs)
    except HyperparamError as exc:
        raise ConfigError(f"{cfg.source}: algo.hyperparams.{exc}") from exc


def _check_keys(given: Mapping[str, Any], valid: Sequence[str], key: str, src: str) -> None:
    unknown = sorted(set(given) - set(valid))
    if unknown:
        raise ConfigError(
            f"{src}: unknown key(s) {[f'{key}.{k}' for k in unknown]}; "
            f"valid keys of {key!r} are {sorted(valid)}"
        )


def _check_environment(env: EnvConfig, src: str) -> None:
    """Check the training task options and the Gymnasium id; build one env and reset it once.

    The env settings themselves were checked when ``env`` was built. A value
    that only fails in an episode (an empty target range for this arm, ...)
    becomes a :class:`ConfigError` naming ``env`` and the file; an invalid
    ``train_task_options`` entry one naming ``env.train_task_options.<option>``.
    """
    import gymnasium as gym

    import twolink_gym  # noqa: F401  (registers the ids)
    from twolink_gym.env import TwoLinkEnv
    from twolink_gym.tasks import TASKS

    task_cls = TASKS[str(env.task)]
    _check_keys(
        env.train_task_options,
        [f.name for f in dataclasses.fields(task_cls)],
        "env.train_task_options",
        src,
    )
    try:
        trained = env.for_training().checked()["task_options"]
    except EnvConfigError as exc:  # the training options over the task's: key them as such
        error = exc
        if exc.key.split(".")[0] == "task_options":
            key = "train_task_options" + exc.key[len("task_options") :]
            error = EnvConfigError(str(exc), key, exc.allowed, exc.value)
        raise ConfigError(_env_message(error, src)) from exc
    if env.train_task_options:
        _check_same_layout(env, trained, src)
    try:
        TwoLinkEnv(config=env.env_config()).reset(seed=0)
    except EnvConfigError as exc:
        raise ConfigError(_env_message(exc, src)) from exc
    except ValueError as exc:
        raise ConfigError(f"{src}: env: {exc}") from exc
    try:
        gym.spec(env.id)
    except gym.error.Error as exc:
        raise ConfigError(
            f"{src}: env.id must be a registered Gymnasium id such as 'TwoLink-v0', "
            f"got {env.id!r} ({exc})"
        ) from exc


def _check_same_layout(env: EnvConfig, trained: Any, src: str) -> None:
    """Refuse training options that give the agent other observations than it is evaluated on."""
    task = env.checked()["task_options"]
    sizes = {"extras_size": "the observation's length"}
    if env.goal_observation:
        sizes["goal_size"] = "the goal's length"
    for attr, what in sizes.items():
        if getattr(trained, attr) != getattr(task, attr):
            changed = sorted(
                k for k, v in env.train_task_options.items() if getattr(task, k, v) != v
            )
            raise ConfigError(
                f"{src}: env.train_task_options {changed} change {what} "
                f"({getattr(trained, attr)} against {getattr(task, attr)} in evaluation): "
                "an agent acts on one observation layout; set these in env.task_options"
            )


def _sections(data: Any, source: str, required: Sequence[str]) -> dict[str, Any]:
    """The config's sections built from ``data``; ``required`` must be there."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: a config must be a mapping of sections, got {data!r}")
    unknown = sorted(set(data) - set(_SECTIONS))
    if unknown:
        raise ConfigError(
            f"{source}: unknown section(s) {unknown}; valid sections are {sorted(_SECTIONS)}"
        )
    sections = {}
    for name, cls in _SECTIONS.items():
        if name not in data:
            if name not in required:
                continue
            hint = (
                " (training needs env:, algo: and train:; evaluate, compare, record and "
                "robustness need only env:)"
                if name in ("algo", "train")
                else ""
            )
            raise ConfigError(f"{source}: missing required section {name!r}{hint}")
        sections[name] = _build(cls, data[name], name, source)
    return sections


def config_from_dict(data: Any, source: str = "<dict>") -> RunConfig:
    """Build and validate a training :class:`RunConfig` from plain data (e.g. parsed YAML).

    Raises
    ------
    ConfigError
        On a missing section or key, an unknown key, a wrong type or an invalid value.
    """
    sections = _sections(data, source, ("env", "algo", "train"))
    cfg = RunConfig(**sections, source=source)
    _validate_evaluation(cfg)
    _validate(cfg)
    return cfg


def eval_config_from_dict(data: Any, source: str = "<dict>") -> EvalConfig:
    """Build and validate the config of an evaluation from plain data.

    ``env`` is required and ``evaluate`` optional. A config that has an
    ``algo`` or a ``train`` section is a training config: it is checked whole
    and returned as a :class:`RunConfig`.

    Raises
    ------
    ConfigError
        On a missing section or key, an unknown key, a wrong type or an invalid value.
    """
    if isinstance(data, Mapping) and ("algo" in data or "train" in data):
        return config_from_dict(data, source)
    cfg = EvalConfig(**_sections(data, source, ("env",)), source=source)
    _validate_evaluation(cfg)
    return cfg


def apply_overrides(data: dict[str, Any], overrides: Sequence[str], source: str) -> dict[str, Any]:
    """Return a copy of ``data`` with ``"section.key[.subkey]=value"`` overrides applied.

    The value is parsed as YAML (``train.seed=3`` gives an int, ``env.normalize_obs=false``
    a bool, ``algo.hyperparams.policy_kwargs={net_arch: [64, 64]}`` a dict).
    """
    import copy

    data = copy.deepcopy(data)
    for item in overrides:
        path, sep, text = item.partition("=")
        if not sep or not path:
            raise ConfigError(f"override {item!r} must look like section.key=value")
        keys = path.strip().split(".")
        if len(keys) < 2:
            raise ConfigError(f"override {item!r} must name a section and a key (section.key)")
        node = data
        for k in keys[:-1]:
            child = node.setdefault(k, {})
            if not isinstance(child, dict):
                raise ConfigError(f"override {item!r}: {k!r} is not a section")
            node = child
        try:
            node[keys[-1]] = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"override {item!r}: value is not valid YAML ({exc})") from exc
    return data


def _read(path: str | Path, overrides: Sequence[str]) -> tuple[Any, str]:
    """The YAML data of ``path`` with ``overrides`` applied, and its source for messages."""
    path = Path(path)
    source = str(path)
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: not valid YAML ({exc})") from exc
    if overrides:
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: a config must be a mapping of sections, got {data!r}")
        data = apply_overrides(data, overrides, source)
        source = f"{source} (with overrides {list(overrides)})"
    return data, source


def load_config(path: str | Path, overrides: Sequence[str] = ()) -> RunConfig:
    """Load a training config (``env``, ``algo``, ``train``), apply ``overrides``, validate it.

    Parameters
    ----------
    path : str or Path
        The YAML file.
    overrides : sequence of str
        ``"section.key=value"`` strings applied after loading.

    Raises
    ------
    ConfigError
        On invalid YAML or content (the message names the file and the key).
    FileNotFoundError
        If the file does not exist.
    """
    return config_from_dict(*_read(path, overrides))


def load_eval_config(path: str | Path, overrides: Sequence[str] = ()) -> EvalConfig:
    """Load the config of an evaluation (``env``, optionally ``evaluate``); see :func:`load_config`.

    A training config loads as the :class:`RunConfig` it is.
    """
    return eval_config_from_dict(*_read(path, overrides))
