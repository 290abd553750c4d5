"""The conditions of ``twolink robustness``: variations of the arm, declared as data.

A :class:`Condition` is a mapping of :class:`~twolink_gym.training.config.EnvConfig`
overrides (``{"params": {..., "m1": 1.2}}``, ``{"obs_noise": 0.01}``). Conditions
are built from the declared :data:`PERTURBATIONS` (one kind of variation each,
with default levels), one condition per level (and, for the model, per arm
parameter, one at a time). A perturbation whose env keyword the
:class:`EnvConfig` does not have is unavailable, and asking for it is an error.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

from twolink_gym.training.config import EnvConfig

from twolink_gym.env_config import EnvConfigError, setting_default
from twolink_gym.params import ArmParams

__all__ = [
    "MODEL_FIELDS",
    "NOMINAL",
    "PERTURBATIONS",
    "Condition",
    "Perturbation",
    "available_perturbations",
    "build_conditions",
    "parse_levels",
]

#: The arm parameters the model-mismatch conditions scale, one at a time.
MODEL_FIELDS = ("m1", "m2", "l1", "l2", "lc1", "lc2", "I1", "I2", "friction1", "friction2")


def _positive_factor(value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"must be a finite factor > 0, got {value!r}")
    return value


@dataclasses.dataclass(frozen=True)
class Perturbation:
    """One kind of variation, at several levels (each level is one condition per field).

    Attributes
    ----------
    name : str
        Its name on the command line (``--conditions``, ``--levels``).
    group : str
        The score group its conditions belong to.
    env_key : str
        The env setting it varies, a field of
        :class:`twolink_gym.env_config.EnvConfig` (``"params"``: scales each of
        :data:`MODEL_FIELDS` by the level, one at a time). A level is a value
        of that setting: the setting's own check applies, and it must differ
        from the setting's default (the nominal, ideal value).
    levels : tuple
        The default levels.
    meaning : str
        What a level means, with its unit.
    """

    name: str
    group: str
    env_key: str
    levels: tuple[Any, ...]
    meaning: str

    @property
    def numeric(self) -> bool:
        """Levels are numbers (a factor, or a numeric setting), else strings."""
        if self.env_key == "params":
            return True
        default = setting_default(self.env_key)
        return isinstance(default, (int, float)) and not isinstance(default, bool)

    def check(self, level: Any, base: EnvConfig) -> Any:
        """``level`` as a value of the setting, checked against ``base``'s env.

        Raises
        ------
        ValueError
            Saying what is allowed.
        """
        if self.env_key == "params":
            return _positive_factor(level)
        default = setting_default(self.env_key)
        if isinstance(default, int) and isinstance(level, float) and level.is_integer():
            level = int(level)
        try:
            base.env_config().replace(**{self.env_key: level})
        except EnvConfigError as exc:
            raise ValueError(f"is not a valid {self.env_key}: {exc}") from exc
        if level == default:
            raise ValueError(f"is the nominal {self.env_key} (a condition must change it)")
        return level


#: The declared variations, by command-line name. Defaults follow the spirit of
#: RealAIGym's robustness benchmark: ±20 % on each parameter, two noise levels, a
#: slower motor, one and two steps of delay.
PERTURBATIONS: dict[str, Perturbation] = {
    p.name: p
    for p in (
        Perturbation(
            "model",
            "model",
            "params",
            (0.8, 1.2),
            "factor on one arm parameter of the true arm (m1, m2, l1, l2, lc1, lc2, I1, I2, "
            "friction1, friction2), one at a time",
        ),
        Perturbation(
            "obs_noise",
            "observation noise",
            "obs_noise",
            (0.01, 0.05),
            "std of Gaussian noise added to every observation entry",
        ),
        Perturbation(
            "torque_noise",
            "torque noise",
            "torque_noise",
            (0.05, 0.1),
            "std of Gaussian noise on each joint torque, as a fraction of its max_torque",
        ),
        Perturbation(
            "torque_response",
            "torque response",
            "torque_response",
            (0.5, 0.25),
            "k of the first-order motor tau_t = tau_{t-1} + k (tau_cmd - tau_{t-1})",
        ),
        Perturbation(
            "action_delay",
            "delay",
            "action_delay",
            (1, 2),
            "control steps between an action and its torque",
        ),
        Perturbation(
            "observation",
            "observation model",
            "observation",
            ("angles",),
            "the observation: 'angles' gives the joint angles only (encoders)",
        ),
    )
}

#: The group of the nominal condition (reported, not scored).
NOMINAL = "nominal"


def available_perturbations() -> list[str]:
    """Names of :data:`PERTURBATIONS` whose env keyword exists in :class:`EnvConfig`."""
    fields = {f.name for f in dataclasses.fields(EnvConfig)}
    return [name for name, p in PERTURBATIONS.items() if p.env_key in fields]


@dataclasses.dataclass(frozen=True)
class Condition:
    """One variation of the environment: a mapping of :class:`EnvConfig` overrides.

    Attributes
    ----------
    name : str
        Its label in tables (``"m1 ×0.8"``, ``"obs_noise 0.01"``, ``"nominal"``).
    group : str
        Its score group (``"nominal"`` is not scored).
    overrides : mapping
        :class:`EnvConfig` field → value (``params`` is the whole parameter mapping).
    """

    name: str
    group: str
    overrides: Mapping[str, Any]

    def env_config(self, base: EnvConfig) -> EnvConfig:
        """``base`` with this condition's overrides."""
        return dataclasses.replace(base, **self.overrides)


def _format_level(value: Any) -> str:
    return format(value, "g") if isinstance(value, float) else str(value)


def build_conditions(
    env_cfg: EnvConfig,
    kinds: Sequence[str] | None = None,
    levels: Mapping[str, Sequence[Any]] | None = None,
) -> list[Condition]:
    """The nominal condition and one condition per perturbation, field and level.

    Parameters
    ----------
    env_cfg : EnvConfig
        The nominal environment; model factors scale its arm parameters.
    kinds : sequence of str, optional
        Names of :data:`PERTURBATIONS` (default: every available one).
    levels : mapping, optional
        Levels per perturbation name, replacing its defaults.

    Raises
    ------
    ValueError
        For an unknown or unavailable perturbation, a level that is out of range,
        or a model factor that gives an invalid arm.
    """
    available = available_perturbations()
    chosen = list(available if kinds is None else kinds)
    for name in [*chosen, *(levels or {})]:
        if name not in PERTURBATIONS:
            raise ValueError(f"unknown condition {name!r}; conditions are {sorted(PERTURBATIONS)}")
    for name in levels or {}:
        if name not in chosen:
            raise ValueError(
                f"--levels names condition {name!r}, which is not among the chosen "
                f"conditions {chosen}"
            )
    for name in chosen:
        if name not in available:
            raise ValueError(
                f"condition {name!r} needs the env keyword {PERTURBATIONS[name].env_key!r}, "
                f"which this version of the environment does not have; available: {available}"
            )
    conditions = [Condition("nominal", NOMINAL, {})]
    nominal = ArmParams(**env_cfg.params)
    for name in chosen:
        p = PERTURBATIONS[name]
        given = (levels or {}).get(name, p.levels)
        if not given:
            raise ValueError(f"--levels {name}: give at least one level")
        values = []
        for level in given:
            try:
                values.append(p.check(level, env_cfg))
            except ValueError as exc:
                raise ValueError(f"--levels {name}: level {level!r} {exc} ({p.meaning})") from exc
        if p.env_key != "params":
            for v in values:
                label = f"{name} {_format_level(v)}"
                conditions.append(Condition(label, p.group, {p.env_key: v}))
            continue
        for field in MODEL_FIELDS:
            for v in values:
                value = getattr(nominal, field) * v
                try:
                    nominal.replace(**{field: value})
                except ValueError as exc:
                    raise ValueError(
                        f"--levels model: factor {v} on {field} gives an invalid arm ({exc})"
                    ) from exc
                label = f"{field} ×{_format_level(v)}"
                conditions.append(
                    Condition(label, p.group, {"params": {**env_cfg.params, field: value}})
                )
    return conditions


def parse_levels(items: Sequence[str]) -> dict[str, list[Any]]:
    """``["model=0.7,1.3", "action_delay=1"]`` → ``{"model": [0.7, 1.3], "action_delay": [1.0]}``.

    Raises
    ------
    ValueError
        For an item without ``=``, an unknown name, or a non-number where numbers go.
    """
    out: dict[str, list[Any]] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not text.strip():
            raise ValueError(f"--levels {item!r} must look like NAME=V1,V2 (e.g. model=0.8,1.2)")
        if name not in PERTURBATIONS:
            raise ValueError(
                f"--levels {item!r}: unknown condition {name!r}; conditions are "
                f"{sorted(PERTURBATIONS)}"
            )
        values: list[Any] = []
        for part in text.split(","):
            part = part.strip()
            if not PERTURBATIONS[name].numeric:
                values.append(part)
                continue
            try:
                values.append(float(part))
            except ValueError as exc:
                raise ValueError(f"--levels {name}: {part!r} is not a number") from exc
        out[name] = values
    return out
