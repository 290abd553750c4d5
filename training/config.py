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

import dataclasses
import re
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Union

import yaml

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
class EnvConfig:
    """The environment every policy of a run is trained and evaluated on.

    Attributes
    ----------
    task : str
        Task name (``"reach"``, ``"balance"``).
    id : str
        Gymnasium id used by the ``dummy`` vectorisation (default ``TwoLink-v0``).
    params : dict
        :class:`~twolink_gym.params.ArmParams` fields to override (SI units).
    max_torque : float, list of float or None
        Torque at action ±1 for each joint [N·m]: a pair ``[joint 1, joint 2]``,
        or one number for both joints; ``None`` (the default, or
        omitted): the task's default limits for the actuation (``[30, 10]``
        for reach and balance, ``[8, 4]`` for the full arm's swing-up,
        ``[30, 10]`` for the acrobot's and the pendubot's).
    dt : float
        Control period [s].
    substeps : int
        Integrator sub-steps per control period.
    max_episode_steps : int or None
        Episode length in steps (None: the task's length).
    task_options : dict
        Options of the task class (reward weights, tolerances, ...).
    train_task_options : dict
        Options that draw the *training* episodes only, over ``task_options``:
        the task's ``episode_option_names`` (start spread, target or path
        ranges, swing-up's exploring starts), e.g. ``{explore_fraction: 0.5}``
        for half the swing-up episodes starting anywhere. Every evaluation (the periodic one, the
        sweep's, ``evaluate``, ``compare``) draws its episodes with
        ``task_options`` alone, so an agent trained this way is judged on the
        task's own episodes. Empty: train on those episodes too.
    actuation : str
        ``"full"`` (default), ``"acrobot"`` (elbow motor only) or ``"pendubot"``
        (shoulder motor only). The classical controllers need ``"full"``.
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
    randomize : dict
        Per-episode domain randomisation, ``{field: [low, high]}`` (factors of
        the nominal value) or ``{field: {absolute: [low, high]}}``
        (:class:`twolink_gym.imperfections.Randomization`); empty: none.
    observation : str
        ``"state"`` (default) or ``"angles"`` (joint angles only, no speeds).
    obs_noise : float or list of float
        Std of the Gaussian observation noise (a number: on every state
        entry; a list: one per observation entry).
    torque_noise : float
        Std of the Gaussian torque noise, a fraction of ``max_torque``.
    torque_response : float
        First-order torque response gain in ``(0, 1]`` (1: ideal motors).
    action_delay : int
        Control steps between a command and its application.
    frame_stack : int
        Observations stacked for the agent (SB3's ``VecFrameStack`` over the
        training and evaluation envs; 1: none). The usual remedy for
        ``observation: angles``. Not with ``goal_observation``.
    """

    task: str
    id: str = "TwoLink-v0"
    params: dict[str, float] = dataclasses.field(default_factory=dict)
    max_torque: float | list[float] | None = None
    dt: float = 0.02
    substeps: int = 2
    max_episode_steps: int | None = None
    task_options: dict[str, Any] = dataclasses.field(default_factory=dict)
    train_task_options: dict[str, Any] = dataclasses.field(default_factory=dict)
    actuation: str = "full"
    vectorization: str = "native"
    normalize_obs: bool = True
    normalize_reward: bool = True
    goal_observation: bool = False
    randomize: dict[str, Any] = dataclasses.field(default_factory=dict)
    observation: str = "state"
    obs_noise: float | list[float] = 0.0
    torque_noise: float = 0.0
    torque_response: float = 1.0
    action_delay: int = 0
    frame_stack: int = 1

    @property
    def resolved_max_torque(self) -> tuple[float, float]:
        """``max_torque``, or the task's default limits for the actuation when it is ``None`` [N·m]."""
        if isinstance(self.max_torque, list):
            return (float(self.max_torque[0]), float(self.max_torque[1]))
        if self.max_torque is not None:
            return (float(self.max_torque), float(self.max_torque))
        from twolink_gym.tasks import TASKS  # the config module itself needs no simulation code

        return TASKS[self.task].default_max_torque_for(self.actuation)

    def make_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of ``TwoLinkEnv`` / ``TwoLinkVectorEnv`` (without the episode length)."""
        return {
            "task": self.task,
            "params": dict(self.params) or None,
            "dt": self.dt,
            "substeps": self.substeps,
            "max_torque": self.resolved_max_torque,
            "task_options": dict(self.task_options) or None,
            "actuation": self.actuation,
            "randomize": dict(self.randomize) or None,
            "observation": self.observation,
            "obs_noise": list(self.obs_noise)
            if isinstance(self.obs_noise, list)
            else self.obs_noise,
            "torque_noise": self.torque_noise,
            "torque_response": self.torque_response,
            "action_delay": self.action_delay,
        }

    def for_training(self) -> EnvConfig:
        """The env the agent trains on: ``task_options`` updated by ``train_task_options``."""
        if not self.train_task_options:
            return self
        return dataclasses.replace(
            self,
            task_options={**self.task_options, **self.train_task_options},
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

        episode_only = set(TASKS[self.task].episode_option_names)
        return dataclasses.replace(
            self,
            task_options={k: v for k, v in self.task_options.items() if k not in episode_only},
            train_task_options={},
            randomize={},
            obs_noise=0.0,
            torque_noise=0.0,
            torque_response=1.0,
            action_delay=0,
        )


@dataclasses.dataclass(frozen=True)
class AlgoConfig:
    """The learning algorithm.

    Attributes
    ----------
    name : str
        ``"ppo"`` or ``"sac"``.
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
    device : str
        Torch device.
    progress_bar : bool
        Show SB3's progress bar.
    """

    total_timesteps: int
    n_envs: int = 8
    seed: int = 0
    eval_freq: int = 10_000
    eval_episodes: int = 20
    checkpoint_freq: int = 50_000
    output_dir: str = "runs"
    run_name: str | None = None
    torch_threads: int = 1
    device: str = "cpu"
    progress_bar: bool = True


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
        for arg, error in errors:  # a list (or mapping) with a bad entry: name the entry
            if typing.get_origin(arg) is type(value) and isinstance(value, (list, dict)):
                raise error
        kinds = [_KIND.get(typing.get_origin(arg) or arg, _type_name(arg)) for arg, _ in errors]
        if len(kinds) == 1:
            raise errors[0][1]
        raise ConfigError(f"{source}: {key} must be {' or '.join(kinds)}, got {value!r}")
    if tp is Any:
        return value
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{source}: {key} must be a list, got {value!r}")
        (item,) = typing.get_args(tp)
        return [_check(v, item, f"{key}[{i}]", source) for i, v in enumerate(value)]
    if origin is dict:
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
    for name, field in fields.items():
        key = f"{section}.{name}"
        if name in data:
            kwargs[name] = _check(data[name], hints[name], key, source)
        elif field.default is MISSING and field.default_factory is MISSING:
            raise ConfigError(f"{source}: missing required key {key!r}")
    return cls(**kwargs)


def _validate_evaluation(cfg: EvalConfig) -> None:
    """Check the ``env`` and ``evaluate`` values that have a range or a fixed set of choices."""
    # imported here: the config module itself does not need the simulation code
    from twolink_gym.tasks import TASKS

    src = cfg.source
    if cfg.env.task not in TASKS:
        raise ConfigError(f"{src}: env.task must be one of {sorted(TASKS)}, got {cfg.env.task!r}")
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
    if isinstance(cfg.env.max_torque, list) and len(cfg.env.max_torque) != 2:
        raise ConfigError(
            f"{src}: env.max_torque must have 2 entries [joint 1, joint 2] (or be one number "
            f"for both joints), got {cfg.env.max_torque}"
        )
    for key, value in {
        "evaluate.episodes": cfg.evaluate.episodes,
        "env.substeps": cfg.env.substeps,
    }.items():
        if value < 1:
            raise ConfigError(f"{src}: {key} must be >= 1, got {value}")
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
    from twolink_gym.training.algorithms import ALGORITHMS, check_hyperparams

    src = cfg.source
    if cfg.algo.name not in ALGORITHMS:
        raise ConfigError(
            f"{src}: algo.name must be one of {sorted(ALGORITHMS)}, got {cfg.algo.name!r}"
        )
    try:
        check_hyperparams(cfg.algo.name, cfg.algo.hyperparams)
    except ValueError as exc:
        raise ConfigError(f"{src}: algo.hyperparams: {exc}") from exc
    positive = {
        "train.total_timesteps": cfg.train.total_timesteps,
        "train.n_envs": cfg.train.n_envs,
        "train.eval_episodes": cfg.train.eval_episodes,
        "train.torch_threads": cfg.train.torch_threads,
    }
    for key, value in positive.items():
        if value < 1:
            raise ConfigError(f"{src}: {key} must be >= 1, got {value}")
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


def _check_keys(given: Mapping[str, Any], valid: Sequence[str], key: str, src: str) -> None:
    unknown = sorted(set(given) - set(valid))
    if unknown:
        raise ConfigError(
            f"{src}: unknown key(s) {[f'{key}.{k}' for k in unknown]}; "
            f"valid keys of {key!r} are {sorted(valid)}"
        )


def _with_key_path(message: str, pattern: str, key: str) -> str:
    """``message`` with the field that ``pattern`` (group 1) names rewritten as ``key.field``.

    Messages that name no single field are prefixed with ``key``.
    """
    renamed, count = re.subn(pattern, lambda m: f"{key}.{m[1]}", message, count=1)
    return renamed if count else f"{key}: {message}"


def _check_environment(env: EnvConfig, src: str) -> None:
    """Build the arm, the task and one env from ``env`` and reset it once.

    A value the simulation rejects (a negative mass, a tolerance <= 0, an empty
    target range, ...) becomes a :class:`ConfigError` naming the key path
    (``env.params.m1``, ``env.task_options.tolerance``, ``env.dt``) and the file.
    """
    import gymnasium as gym

    import twolink_gym  # noqa: F401  (registers the ids)
    from twolink_gym.env import TwoLinkEnv
    from twolink_gym.params import ArmParams
    from twolink_gym.tasks import TASKS, make_task

    _check_keys(env.params, [f.name for f in dataclasses.fields(ArmParams)], "env.params", src)
    task_fields = [f.name for f in dataclasses.fields(TASKS[env.task])]
    _check_keys(env.task_options, task_fields, "env.task_options", src)
    _check_keys(
        env.train_task_options,
        TASKS[env.task].episode_option_names,
        "env.train_task_options",
        src,
    )
    try:
        ArmParams(**env.params)
    except (TypeError, ValueError) as exc:
        message = _with_key_path(str(exc), r"\bArmParams\.(\w+)", "env.params")
        raise ConfigError(f"{src}: {message}") from exc
    # the task's own options first: an error after them lies in the training ones
    for key, options in (
        ("env.task_options", env.task_options),
        ("env.train_task_options", env.for_training().task_options),
    ):
        try:
            make_task(env.task, options)
        except (TypeError, ValueError) as exc:
            message = _with_key_path(str(exc), r"^(?:\w+ )?task option (\w+)\b", key)
            raise ConfigError(f"{src}: {message}") from exc
    try:
        TwoLinkEnv(**env.make_kwargs()).reset(seed=0)
    except (TypeError, ValueError) as exc:
        message = _with_key_path(
            str(exc),
            r"^(dt|substeps|max_torque|actuation|randomize|observation|obs_noise"
            r"|torque_noise|torque_response|action_delay)\b",
            "env",
        )
        raise ConfigError(f"{src}: {message}") from exc
    try:
        gym.spec(env.id)
    except gym.error.Error as exc:
        raise ConfigError(
            f"{src}: env.id must be a registered Gymnasium id such as 'TwoLink-v0', "
            f"got {env.id!r} ({exc})"
        ) from exc


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
