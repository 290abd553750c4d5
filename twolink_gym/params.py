"""Physical parameters of the two-link arm."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping
from typing import Any

__all__ = ["ArmParams"]


@dataclasses.dataclass(frozen=True)
class ArmParams:
    """Physical parameters of a planar two-link arm (SI units).

    Link 1 is attached to a fixed base at the origin, link 2 to the end of
    link 1; gravity acts along -y. Instances are immutable, validated on
    construction, and convert to and from plain dicts (:meth:`to_dict`,
    :meth:`from_dict`) so that they travel through YAML files and
    ``gym.make`` keyword arguments.

    Parameters
    ----------
    m1, m2 : float
        Link masses [kg], > 0.
    l1, l2 : float
        Link lengths [m], > 0.
    lc1, lc2 : float
        Distance from each link's proximal joint to its centre of mass [m],
        ``0 < lc_i <= l_i``.
    I1, I2 : float
        Moment of inertia of each link about its own centre of mass [kg·m²],
        >= 0.
    gravity : float
        Gravitational acceleration [m/s²], >= 0 (0 is an arm in a horizontal
        plane).
    friction1, friction2 : float
        Viscous friction coefficient at each joint [N·m·s/rad], >= 0.

    Raises
    ------
    ValueError
        If any value is not a finite real number or violates its bound; the
        message names the field and the value.
    """

    m1: float = 1.0
    m2: float = 1.0
    l1: float = 1.0
    l2: float = 1.0
    lc1: float = 0.5
    lc2: float = 0.5
    I1: float = 0.1
    I2: float = 0.1
    gravity: float = 9.81
    friction1: float = 0.1
    friction2: float = 0.1

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ValueError(f"ArmParams.{field.name} must be a real number, got {value!r}")
            value = float(value)
            if not math.isfinite(value):
                raise ValueError(f"ArmParams.{field.name} must be finite, got {value!r}")
            object.__setattr__(self, field.name, value)

        for name in ("m1", "m2", "l1", "l2"):
            if getattr(self, name) <= 0.0:
                raise ValueError(f"ArmParams.{name} must be > 0, got {getattr(self, name)!r}")
        for name in ("I1", "I2", "gravity", "friction1", "friction2"):
            if getattr(self, name) < 0.0:
                raise ValueError(f"ArmParams.{name} must be >= 0, got {getattr(self, name)!r}")
        for lc, length in (("lc1", "l1"), ("lc2", "l2")):
            lc_value, l_value = getattr(self, lc), getattr(self, length)
            if not 0.0 < lc_value <= l_value:
                raise ValueError(
                    f"ArmParams.{lc} must satisfy 0 < {lc} <= {length} (= {l_value!r}), got {lc_value!r}"
                )

    # -- conversion -----------------------------------------------------
    def to_dict(self) -> dict[str, float]:
        """Return the parameters as a plain ``{field: float}`` dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ArmParams:
        """Build parameters from a mapping of field names to numbers.

        Missing fields take their defaults.

        Raises
        ------
        ValueError
            On an unknown key (the message lists the valid ones) or an invalid
            value.
        """
        if not isinstance(data, Mapping):
            raise ValueError(f"ArmParams.from_dict expects a mapping, got {type(data).__name__}")
        valid = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(map(repr, set(data) - set(valid)))
        if unknown:
            raise ValueError(
                f"unknown ArmParams field(s) {', '.join(unknown)}; valid fields are {valid}"
            )
        return cls(**dict(data))

    @classmethod
    def coerce(cls, params: ArmParams | Mapping[str, Any] | None) -> ArmParams:
        """Return ``params`` as an :class:`ArmParams` (``None`` gives the defaults)."""
        if params is None:
            return cls()
        if isinstance(params, ArmParams):
            return params
        return cls.from_dict(params)

    def replace(self, **changes: float) -> ArmParams:
        """Return a copy with some fields changed (validated)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def uniform_rods(
        cls,
        m1: float = 1.0,
        m2: float = 1.0,
        l1: float = 1.0,
        l2: float = 1.0,
        **kwargs: float,
    ) -> ArmParams:
        """Parameters of two uniform slender rods: ``lc = l/2`` and ``I = m l²/12``."""
        return cls(
            m1=m1,
            m2=m2,
            l1=l1,
            l2=l2,
            lc1=l1 / 2,
            lc2=l2 / 2,
            I1=m1 * l1**2 / 12,
            I2=m2 * l2**2 / 12,
            **kwargs,
        )

    @classmethod
    def acrobot_v1(cls) -> ArmParams:
        """The arm of Gymnasium's ``Acrobot-v1`` (its default "book" dynamics).

        Unit masses and lengths, centres of mass at the middle of each link,
        unit moments of inertia about the centres of mass, ``g = 9.8`` m/s²,
        no friction. Acrobot-v1 measures ``theta1`` from the hanging pose, so
        ``q1 = theta1 - pi/2`` and ``q2 = theta2``; it applies its torque
        (-1, 0 or +1 N·m) at the elbow only. ``tests/test_dynamics.py`` checks
        that the dynamics agree with Acrobot-v1's own ``_dsdt`` to round-off.
        """
        return cls(
            m1=1.0,
            m2=1.0,
            l1=1.0,
            l2=1.0,
            lc1=0.5,
            lc2=0.5,
            I1=1.0,
            I2=1.0,
            gravity=9.8,
            friction1=0.0,
            friction2=0.0,
        )

    # -- derived quantities --------------------------------------------
    @property
    def reach(self) -> float:
        """Outer radius of the workspace, ``l1 + l2`` [m]."""
        return self.l1 + self.l2

    @property
    def inner_radius(self) -> float:
        """Inner radius of the workspace, ``|l1 - l2|`` [m]."""
        return abs(self.l1 - self.l2)
