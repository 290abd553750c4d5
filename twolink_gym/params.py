"""Physical parameters of the two-link arm."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping
from typing import Any

__all__ = ["ArmParams", "NonphysicalArmParams"]


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
    rotor_inertia : float
        Inertia of each motor's rotor about its own axis [kg·m²], >= 0 (both
        motors alike, as RealAIGym models them). Motor 1 sits on the base and
        turns at ``gear_ratio · dq1``; motor 2 sits on link 1 and turns at
        ``dq1 - gear_ratio · dq2`` in space, so the rotors add
        ``½ Ir (gr dq1)² + ½ Ir (dq1 - gr dq2)²`` to the kinetic energy:
        ``M11 += (gr² + 1) Ir``, ``M12 += -gr Ir``, ``M22 += gr² Ir``.
    gear_ratio : float
        Gear ratio ``gr`` of both motors' gearboxes (motor turns per joint
        turn), > 0; it matters only with ``rotor_inertia > 0``. Default 1
        (direct drive).
    coulomb1, coulomb2 : float
        Coulomb friction at each joint [N·m], >= 0, in RealAIGym's smooth
        form: the friction torque is ``coulomb_i · atan(100 dq_i)`` beside the
        viscous ``friction_i · dq_i``.

    The defaults of the last four fields (no rotor, no Coulomb friction) add
    exact zeros to the equations: an arm that leaves them alone moves bit for
    bit as it did before they existed.

    Non-physical arms (negative damping or Coulomb coefficients, a centre of
    mass beyond its link's end, a negative centre-of-mass inertia) are not
    :class:`ArmParams`: robustness studies that sweep through them (RealAIGym's
    model family) build a :class:`NonphysicalArmParams` explicitly.

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
    rotor_inertia: float = 0.0
    gear_ratio: float = 1.0
    coulomb1: float = 0.0
    coulomb2: float = 0.0

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ValueError(f"ArmParams.{field.name} must be a real number, got {value!r}")
            value = float(value)
            if not math.isfinite(value):
                raise ValueError(f"ArmParams.{field.name} must be finite, got {value!r}")
            object.__setattr__(self, field.name, value)
        self._check_bounds()

    def _check_bounds(self) -> None:
        """Raise ``ValueError`` naming the first field outside its physical bounds."""
        cls = type(self).__name__
        for name in ("m1", "m2", "l1", "l2", "gear_ratio"):
            if getattr(self, name) <= 0.0:
                raise ValueError(f"{cls}.{name} must be > 0, got {getattr(self, name)!r}")
        nonnegative = ("I1", "I2", "gravity", "friction1", "friction2", "rotor_inertia")
        for name in (*nonnegative, "coulomb1", "coulomb2"):
            if getattr(self, name) < 0.0:
                raise ValueError(f"{cls}.{name} must be >= 0, got {getattr(self, name)!r}")
        for lc, length in (("lc1", "l1"), ("lc2", "l2")):
            lc_value, l_value = getattr(self, lc), getattr(self, length)
            if not 0.0 < lc_value <= l_value:
                raise ValueError(
                    f"{cls}.{lc} must satisfy 0 < {lc} <= {length} (= {l_value!r}), got {lc_value!r}"
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


@dataclasses.dataclass(frozen=True)
class NonphysicalArmParams(ArmParams):
    """An :class:`ArmParams` with the physical bounds relaxed, for robustness studies.

    RealAIGym's robustness board sweeps the joints' damping through negative
    values (``b ∈ [-0.1, 0.1]`` N·m·s, ``cf ∈ [-0.2, 0.2]`` N·m) and moves a
    link's centre of mass along the link with its inertia about the joint kept,
    which can put it beyond the link's end with a negative inertia about the
    centre of mass. Such a plant is a valid mathematical model but not a rigid
    arm, so :class:`ArmParams` rejects it and this class must be asked for by
    name: it is an :class:`ArmParams` (every function of the physics takes it),
    prints as ``NonphysicalArmParams(...)``, and :meth:`replace` keeps its
    class. :meth:`ArmParams.from_dict` and configuration files always build
    physical arms.

    Allowed here: ``friction_i`` and ``coulomb_i`` of any sign, ``lc_i > l_i``,
    ``I_i < 0``. Still required: masses, lengths and ``gear_ratio`` > 0,
    ``lc_i > 0``, gravity and ``rotor_inertia`` >= 0, and a mass matrix that is
    positive definite at every ``q2`` (checked at ``cos q2 = ±1``, where its
    determinant is smallest: the determinant is concave in ``cos q2``).

    Raises
    ------
    ValueError
        Naming the field (or the mass matrix) and the value.
    """

    def _check_bounds(self) -> None:
        cls = type(self).__name__
        for name in ("m1", "m2", "l1", "l2", "gear_ratio", "lc1", "lc2"):
            if getattr(self, name) <= 0.0:
                raise ValueError(f"{cls}.{name} must be > 0, got {getattr(self, name)!r}")
        for name in ("gravity", "rotor_inertia"):
            if getattr(self, name) < 0.0:
                raise ValueError(f"{cls}.{name} must be >= 0, got {getattr(self, name)!r}")
        ir, gr = self.rotor_inertia, self.gear_ratio
        a = self.m1 * self.lc1**2 + self.m2 * (self.l1**2 + self.lc2**2) + self.I1 + self.I2
        a += (gr**2 + 1.0) * ir
        b = self.m2 * self.l1 * self.lc2
        d = self.m2 * self.lc2**2 + self.I2 + gr**2 * ir
        e = self.m2 * self.lc2**2 + self.I2 - gr * ir
        dets = [(a + 2.0 * b * c) * d - (e + b * c) ** 2 for c in (-1.0, 1.0)]
        if not (d > 0.0 and min(dets) > 0.0):
            raise ValueError(
                f"{cls}: the mass matrix must be positive definite at every q2, got "
                f"M22 = {d!r} and det M = {min(dets)!r} (I1 = {self.I1!r}, I2 = {self.I2!r})"
            )
