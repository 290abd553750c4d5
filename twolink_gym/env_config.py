"""The environment's settings, declared once: :class:`EnvConfig`.

Every setting of :class:`~twolink_gym.env.TwoLinkEnv`,
:class:`~twolink_gym.vector_env.TwoLinkVectorEnv` and
:meth:`Simulation.create <twolink_gym.simulation.Simulation.create>` is one
field of :class:`EnvConfig`: its name, type, default, check, allowed values and
documentation are written there and nowhere else. The envs take the settings
as keywords (``TwoLinkEnv(task="reach", dt=0.01)``, which builds an
:class:`EnvConfig`) or as ``config=EnvConfig(...)``; the ``env:`` section of a
training config (:class:`twolink_gym.training.config.EnvConfig`) is this class
plus the training-side keys, and the robustness conditions vary its fields by
name.

An invalid setting raises :class:`EnvConfigError`, a ``ValueError`` that
carries the setting's key path (``"dt"``, ``"params.m1"``,
``"task_options.tolerance"``) and its allowed values as attributes.

This module sits below :mod:`twolink_gym.simulation` and imports no Gymnasium
and no stable-baselines3.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from twolink_gym._arrays import positive_integer, positive_number
from twolink_gym.codec import ACTUATIONS, check_actuation
from twolink_gym.imperfections import (
    OBSERVATIONS,
    ActuatorModel,
    ObservationModel,
    PushModel,
    Randomization,
)
from twolink_gym.params import ArmParams
from twolink_gym.tasks import TASKS, Task, make_task

__all__ = [
    "ACTUATIONS",
    "DEFAULT_MAX_SPEED",
    "DEFAULT_SUBSTEPS",
    "EnvConfig",
    "EnvConfigError",
    "Setting",
    "check_actuation",
    "ideal_defaults",
    "setting_default",
    "setting_fields",
    "setting_names",
]

#: Default joint speed limit [rad/s] (3 revolutions per second).
DEFAULT_MAX_SPEED = 6 * math.pi
#: Default number of RK4 sub-steps per control step.
DEFAULT_SUBSTEPS = 2

_TASK_NAMES = sorted(TASKS)

#: Length of the state encoding at the start of every observation.
_STATE_SIZE = len(OBSERVATIONS["state"])


class EnvConfigError(ValueError):
    """An invalid env setting, with its key path as data.

    Parameters
    ----------
    message : str
        What is wrong, naming the setting and the allowed values.
    key : str
        The setting's key path: a field of :class:`EnvConfig` (``"max_torque"``),
        or an entry inside one (``"params.m1"``, ``"task_options.tolerance"``,
        ``"randomize.lc2"``).
    allowed : object, optional
        The allowed values: a list of choices, or a description of the range
        (``"a number in (0, 1]"``); ``None`` where the message says it.
    value : object, optional
        The rejected value of the setting ``key`` (``None`` if not known).
    """

    def __init__(self, message: str, key: str, allowed: Any = None, value: Any = None) -> None:
        super().__init__(message)
        self.key = key
        self.allowed = allowed
        self.value = value

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle with the key and allowed values (worker processes send errors back)."""
        return (type(self), (str(self), self.key, self.allowed, self.value))

    def within(self, prefix: str) -> EnvConfigError:
        """The same error with its key under ``prefix`` (``"m1"`` → ``"params.m1"``)."""
        if not self.key:
            return EnvConfigError(str(self), prefix, self.allowed, self.value)
        return EnvConfigError(str(self), f"{prefix}.{self.key}", self.allowed, self.value)


# -- the declaration of a setting -----------------------------------------------
#: A setting's check: ``(value, checked)`` → the checked value, where ``checked``
#: maps the settings declared before it to their checked values. It raises
#: ``ValueError`` (an :class:`EnvConfigError` for an entry inside the setting,
#: keyed relative to it).
Check = Callable[[Any, Mapping[str, Any]], Any]


@dataclasses.dataclass(frozen=True)
class Setting:
    """What a field of :class:`EnvConfig` declares beside its name, type and default.

    The setting's documentation is the field's docstring in :class:`EnvConfig`.

    Attributes
    ----------
    check : callable
        ``(value, checked) -> checked value`` (see :data:`Check`).
    allowed : object
        The allowed values (a list of choices or a description), for errors.
    imperfection : bool
        The setting models an imperfection of the real arm (the randomisation,
        the noises, the actuator model), ideal at its default: an agent trained
        with it acts on the env without it (:func:`ideal_defaults`).
    """

    check: Check
    allowed: Any
    imperfection: bool = False


def _setting(
    default: Any,
    check: Check,
    allowed: Any,
    *,
    factory: bool = False,
    imperfection: bool = False,
) -> Any:
    """A dataclass field of :class:`EnvConfig` with its :class:`Setting` as metadata."""
    meta = {"setting": Setting(check, allowed, imperfection)}
    if factory:
        return dataclasses.field(default_factory=default, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def _entries(
    build: Callable[[Mapping[str, Any]], Any], mapping: Mapping[str, Any], error: ValueError
) -> EnvConfigError:
    """The error of ``build(mapping)``, keyed by the entry that is invalid on its own.

    ``build`` is called with each entry of ``mapping`` alone; the first one it
    rejects gives the key (and its own message). If every entry is valid alone
    (a constraint between entries), the key is the whole setting (``""``).
    """
    for name, value in mapping.items():
        try:
            build({name: value})
        except EnvConfigError as single:
            return single
        except ValueError as single:
            return EnvConfigError(str(single), str(name))
    return EnvConfigError(str(error), "")


def _check_task(value: Any, checked: Mapping[str, Any]) -> str | Task:
    if isinstance(value, Task):
        return value
    if not isinstance(value, str) or value not in TASKS:
        raise EnvConfigError(
            f"unknown task {value!r}; valid tasks are {sorted(TASKS)}", "", sorted(TASKS)
        )
    return value


def _check_task_options(value: Any, checked: Mapping[str, Any]) -> Task:
    """The task built from ``task`` and its options."""
    task = checked["task"]
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise ValueError(f"task_options must be a mapping of option names to values, got {value!r}")
    if isinstance(task, Task):
        if value:
            raise ValueError("task_options cannot be combined with a Task instance")
        return task
    try:
        return make_task(task, value)
    except ValueError as exc:
        raise _entries(lambda one: make_task(task, one), value, exc) from exc


def _check_params(value: Any, checked: Mapping[str, Any]) -> ArmParams:
    if value is None or isinstance(value, ArmParams):
        return ArmParams.coerce(value)
    if not isinstance(value, Mapping):
        raise ValueError(
            f"params must be an ArmParams or a mapping of its fields, got {type(value).__name__}"
        )
    try:
        return ArmParams.from_dict(value)
    except ValueError as exc:
        raise _entries(ArmParams.from_dict, value, exc) from exc


def _check_max_torque(value: Any, checked: Mapping[str, Any]) -> np.ndarray:
    """``max_torque`` as a float array ``(2,)``; ``None``: the task's default for the actuation."""
    if value is None:
        value = checked["task_options"].default_max_torque_for(checked["actuation"])
    message = f"max_torque must be a number or a pair of numbers > 0 (N·m), got {value!r}"
    try:
        torque = np.broadcast_to(np.asarray(value, dtype=np.float64), (2,)).copy()
    except (TypeError, ValueError) as exc:
        raise ValueError(message) from exc
    if isinstance(value, bool) or not np.all(np.isfinite(torque) & (torque > 0)):
        raise ValueError(message)
    return torque


def _check_randomize(value: Any, checked: Mapping[str, Any]) -> Randomization | None:
    def build(spec: Mapping[str, Any] | None) -> Randomization | None:
        randomization = Randomization.create(spec)
        if randomization is not None:
            randomization.check([checked["params"]])
        return randomization

    try:
        return build(value)
    except ValueError as exc:
        if isinstance(value, Mapping):
            raise _entries(build, value, exc) from exc
        raise


def _check_observation(value: Any, checked: Mapping[str, Any]) -> str:
    if not isinstance(value, str) or value not in OBSERVATIONS:
        raise ValueError(f"observation must be one of {sorted(OBSERVATIONS)}, got {value!r}")
    return value


def _check_obs_noise(value: Any, checked: Mapping[str, Any]) -> ObservationModel | None:
    extras = checked["task_options"].extras_size
    return ObservationModel.create(checked["observation"], value, _STATE_SIZE, extras)


# The actuator model's arguments, each checked with the others at their ideal values.
def _check_torque_noise(value: Any, checked: Mapping[str, Any]) -> float:
    ActuatorModel.create(value, 1.0, 0)
    return float(value)


def _check_torque_response(value: Any, checked: Mapping[str, Any]) -> float:
    ActuatorModel.create(0.0, value, 0)
    return float(value)


def _check_action_delay(value: Any, checked: Mapping[str, Any]) -> int:
    ActuatorModel.create(0.0, 1.0, value)
    return int(value)


def _check_push_rate(value: Any, checked: Mapping[str, Any]) -> float:
    PushModel.create(value)
    return float(value)


@dataclasses.dataclass(frozen=True)
class EnvConfig:
    """Every setting of the two-link arm's environments, checked on construction.

    Each field (its name, type, default, check, allowed values and docstring)
    is one keyword of :class:`~twolink_gym.env.TwoLinkEnv`,
    :class:`~twolink_gym.vector_env.TwoLinkVectorEnv` and
    :meth:`Simulation.create <twolink_gym.simulation.Simulation.create>`. The
    values are kept as given (JSON-friendly where they were); :meth:`checked`
    gives the validated objects the simulation is built from.

    Raises
    ------
    EnvConfigError
        On an invalid value, with the setting's key path and allowed values.

    Examples
    --------
    >>> config = EnvConfig(task="balance", dt=0.01)
    >>> config.replace(torque_noise=0.05).torque_noise
    0.05
    """

    task: str | Task = _setting("reach", _check_task, _TASK_NAMES)  # noqa: RUF009
    """``"reach"``, ``"balance"``, ``"swingup"`` or ``"track"`` (see
    :data:`twolink_gym.tasks.TASKS`), or a task object."""

    task_options: Mapping[str, Any] | None = _setting(
        dict, _check_task_options, "the task's options", factory=True
    )
    """Options of the task class (reward weights, tolerances, initial
    perturbation sizes); empty or ``None``: the task's defaults."""

    params: ArmParams | Mapping[str, float] | None = _setting(  # noqa: RUF009
        dict, _check_params, "ArmParams fields", factory=True
    )
    """The arm's physical parameters: an :class:`~twolink_gym.params.ArmParams`,
    or a mapping of some of its fields (the others keep their defaults); empty
    or ``None``: the default arm."""

    actuation: str = _setting("full", lambda v, _: check_actuation(v), sorted(ACTUATIONS))
    """``"full"``: motors at both joints; ``"acrobot"``: at the elbow only;
    ``"pendubot"``: at the shoulder only. An underactuated arm's action has one
    entry, scaled by that joint's ``max_torque``."""

    dt: float = _setting(0.02, lambda v, _: positive_number(v, "dt"), "a finite number > 0")
    """Control period [s] (default 0.02 s, 50 Hz)."""

    substeps: int = _setting(
        DEFAULT_SUBSTEPS, lambda v, _: positive_integer(v, "substeps"), "an integer >= 1"
    )
    """RK4 sub-steps per control period (default 2, i.e. 10 ms sub-steps)."""

    max_torque: float | Sequence[float] | None = _setting(
        None, _check_max_torque, "a number or a pair of numbers > 0, or None for the task's default"
    )
    """Joint torques at action ±1 [N·m]: one number for both joints or a pair
    ``[joint 1, joint 2]``; ``None`` (default): the task's default for the
    actuation (``(30, 10)`` for reach and balance, ``(8, 4)`` for the full
    arm's swing-up, ``(30, 10)`` for the acrobot's and the pendubot's)."""

    max_speed: float = _setting(
        DEFAULT_MAX_SPEED, lambda v, _: positive_number(v, "max_speed"), "a finite number > 0"
    )
    """Joint speed limit [rad/s]; speeds are clipped to ±max_speed after every
    control step (default 6π)."""

    randomize: Mapping[str, Any] | None = _setting(
        dict,
        _check_randomize,
        "ArmParams field → (low, high) factors or {'absolute': (low, high)}",
        factory=True,
        imperfection=True,
    )
    """Per-episode domain randomisation: ``ArmParams`` field → ``(low, high)``
    factors of the nominal value, or ``{"absolute": (low, high)}``
    (:class:`~twolink_gym.imperfections.Randomization`); empty or ``None``:
    none. Drawn at every reset from the env's ``np_random``; the episode's arm
    is in ``info["params"]``."""

    observation: str = _setting("state", _check_observation, sorted(OBSERVATIONS))
    """``"state"``: the full state observation (default); ``"angles"``: the
    joint angles only (the angle encoding and the task's extras, no speeds)."""

    obs_noise: float | Sequence[float] = _setting(
        0.0,
        _check_obs_noise,
        "a number >= 0 or one number >= 0 per observation entry",
        imperfection=True,
    )
    """Std of additive Gaussian observation noise: a number for every state
    entry (the task's extras stay exact), or one std per observation entry
    (default 0)."""

    torque_noise: float = _setting(0.0, _check_torque_noise, "a number >= 0", imperfection=True)
    """Std of additive Gaussian torque noise, a fraction of each motor's
    ``max_torque``, added before saturation (default 0)."""

    torque_response: float = _setting(
        1.0, _check_torque_response, "a number in (0, 1]", imperfection=True
    )
    """Gain ``k`` in ``(0, 1]`` of a first-order torque response
    ``tau_t = tau_{t-1} + k (tau_cmd - tau_{t-1})`` (default 1: ideal motors)."""

    action_delay: int = _setting(0, _check_action_delay, "an integer >= 0", imperfection=True)
    """Control steps between a command and its application (default 0)."""

    push_rate: float = _setting(
        0.0, _check_push_rate, "a number >= 0 (pushes per second)", imperfection=True
    )
    """Pushes of the arm per second [1/s] (default 0: none): at each control
    step a copy is pushed with probability ``1 - exp(-push_rate · dt)`` as
    RealAIGym v3 pushes it (0.2 s of a saturated PID towards a random
    configuration, taking no episode time; :class:`~twolink_gym.imperfections.PushModel`),
    and ``info["pushed"]`` says which steps began with one. v3: 0.25."""

    def __post_init__(self) -> None:
        """Check every setting in declaration order (see :meth:`checked`)."""
        checked: dict[str, Any] = {}
        for field in setting_fields():
            setting: Setting = field.metadata["setting"]
            value = getattr(self, field.name)
            if value is None and field.default_factory is not dataclasses.MISSING:
                value = field.default_factory()  # None: the (empty) default
                object.__setattr__(self, field.name, value)
            try:
                checked[field.name] = setting.check(value, checked)
            except EnvConfigError as exc:
                if not exc.key:
                    exc = EnvConfigError(str(exc), "", setting.allowed, value)
                raise exc.within(field.name) from exc
            except ValueError as exc:
                raise EnvConfigError(str(exc), field.name, setting.allowed, value) from exc
        object.__setattr__(self, "_checked", checked)

    def checked(self) -> dict[str, Any]:
        """The validated settings, by field name (a new dict).

        ``task_options`` maps to the :class:`~twolink_gym.tasks.Task` built from
        ``task`` and its options, ``params`` to an :class:`ArmParams`,
        ``max_torque`` to a float array ``(2,)`` [N·m] (the task's default when
        ``None``), ``randomize`` to a :class:`~twolink_gym.imperfections.Randomization`
        or ``None``, ``obs_noise`` to an
        :class:`~twolink_gym.imperfections.ObservationModel` or ``None``, and the
        numbers to floats and ints.
        """
        return dict(self._checked)  # type: ignore[attr-defined]

    def replace(self, **changes: Any) -> EnvConfig:
        """A copy with some settings changed (checked)."""
        return dataclasses.replace(self, **changes)

    def to_kwargs(self) -> dict[str, Any]:
        """The settings as keyword arguments of the envs (each field, as given)."""
        return {name: getattr(self, name) for name in setting_names()}

    @classmethod
    def from_settings(
        cls, config: EnvConfig | None = None, settings: Mapping[str, Any] | None = None
    ) -> EnvConfig:
        """``config`` (default: the defaults) with the keyword ``settings`` applied.

        What the envs and :meth:`Simulation.create
        <twolink_gym.simulation.Simulation.create>` do with their arguments.
        A ``config`` of a subclass (the training config's ``env`` section)
        contributes its env settings only.

        Raises
        ------
        TypeError
            On a name that is not a setting (listing the settings), or a
            ``config`` that is not an :class:`EnvConfig`.
        EnvConfigError
            On an invalid value.
        """
        settings = dict(settings or {})
        names = setting_names()
        unknown = sorted(set(settings) - set(names))
        if unknown:
            raise TypeError(f"unknown env setting(s) {unknown}; the settings are {list(names)}")
        if config is None:
            return cls(**settings)
        if not isinstance(config, EnvConfig):
            raise TypeError(f"config must be an EnvConfig, got {type(config).__name__}")
        if type(config) is not cls or settings:
            return cls(**{**config.to_kwargs(), **settings})
        return config


def setting_fields() -> tuple[dataclasses.Field[Any], ...]:
    """The fields of :class:`EnvConfig` that are env settings, in declaration order."""
    return tuple(f for f in dataclasses.fields(EnvConfig) if "setting" in f.metadata)


def setting_default(name: str) -> Any:
    """The default of the setting ``name`` (a new object for a mapping).

    Raises
    ------
    KeyError
        If ``name`` is not a setting.
    """
    for field in setting_fields():
        if field.name == name:
            if field.default_factory is not dataclasses.MISSING:
                return field.default_factory()
            return field.default
    raise KeyError(f"{name!r} is not an env setting; the settings are {list(setting_names())}")


def ideal_defaults() -> dict[str, Any]:
    """The imperfection settings (:attr:`Setting.imperfection`) at their ideal defaults."""
    return {
        f.name: setting_default(f.name)
        for f in setting_fields()
        if f.metadata["setting"].imperfection
    }


def setting_names() -> tuple[str, ...]:
    """The names of the env settings (the fields of :class:`EnvConfig`), in order."""
    return tuple(f.name for f in setting_fields())
