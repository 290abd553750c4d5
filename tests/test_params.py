"""Tests of ArmParams: defaults, validation, immutability and dict conversion."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twolink_gym import ArmParams
from twolink_gym.params import NonphysicalArmParams

FIELDS = (
    "m1",
    "m2",
    "l1",
    "l2",
    "lc1",
    "lc2",
    "I1",
    "I2",
    "gravity",
    "friction1",
    "friction2",
    "rotor_inertia",
    "gear_ratio",
    "coulomb1",
    "coulomb2",
)

# The parameter table of docs/physics.md (Parameters), typed in from it.
SPEC_DEFAULTS = {
    "m1": 1.0,
    "m2": 1.0,
    "l1": 1.0,
    "l2": 1.0,
    "lc1": 0.5,
    "lc2": 0.5,
    "I1": 0.1,
    "I2": 0.1,
    "gravity": 9.81,
    "friction1": 0.1,
    "friction2": 0.1,
    # the motor and Coulomb terms of RealAIGym's plant; these defaults add exact zeros
    "rotor_inertia": 0.0,
    "gear_ratio": 1.0,
    "coulomb1": 0.0,
    "coulomb2": 0.0,
}


def test_fields_are_exactly_the_spec_table():
    assert tuple(f.name for f in dataclasses.fields(ArmParams)) == FIELDS
    assert set(SPEC_DEFAULTS) == set(FIELDS)


def test_defaults_match_spec_table():
    p = ArmParams()
    for name, value in SPEC_DEFAULTS.items():
        assert getattr(p, name) == value, name
    assert p.to_dict() == SPEC_DEFAULTS


def test_derived_radii():
    p = ArmParams(l1=1.5, l2=0.4, lc1=0.7, lc2=0.2)
    assert p.reach == pytest.approx(1.9)
    assert p.inner_radius == pytest.approx(1.1)
    q = ArmParams(l1=0.4, l2=1.5, lc1=0.2, lc2=0.7)
    assert q.inner_radius == pytest.approx(1.1)


# -- validation ---------------------------------------------------------------

# (field, invalid value) pairs; lc_i > l_i uses the default l_i = 1.
INVALID_VALUES = [
    *[(name, v) for name in ("m1", "m2", "l1", "l2") for v in (0.0, -1.0, -1e-12)],
    *[(name, v) for name in ("lc1", "lc2") for v in (0.0, -0.1, 1.0000001, 2.0)],
    *[
        (name, v)
        for name in (
            "I1",
            "I2",
            "gravity",
            "friction1",
            "friction2",
            "rotor_inertia",
            "coulomb1",
            "coulomb2",
        )
        for v in (-1e-9, -1.0)
    ],
    *[("gear_ratio", v) for v in (0.0, -6.0)],
    *[(name, v) for name in FIELDS for v in (math.nan, math.inf, -math.inf)],
    *[(name, v) for name in FIELDS for v in ("1.0", "abc", True, False, None, [1.0], 1 + 2j)],
]


@pytest.mark.parametrize(("name", "value"), INVALID_VALUES)
def test_invalid_value_rejected_naming_field_and_value(name, value):
    with pytest.raises(ValueError) as info:
        ArmParams(**{name: value})
    message = str(info.value)
    assert name in message
    assert repr(value) in message or str(value) in message


def test_lc_bound_uses_the_matching_length():
    # lc1 = 1.5 is fine with l1 = 2, but not with l1 = 1.4; the bound is per link.
    ArmParams(l1=2.0, lc1=1.5)
    ArmParams(l2=2.0, lc2=2.0)  # lc == l is allowed (mass at the tip)
    with pytest.raises(ValueError, match="lc1"):
        ArmParams(l1=1.4, lc1=1.5)
    with pytest.raises(ValueError, match="lc2"):
        ArmParams(l1=3.0, lc2=1.5)  # lc2 is bounded by l2 = 1, not by l1


def test_boundary_values_accepted():
    p = ArmParams(gravity=0.0, I1=0.0, I2=0.0, friction1=0.0, friction2=0.0, lc1=1.0, lc2=1.0)
    assert p.gravity == 0.0
    assert p.I1 == 0.0
    assert p.lc1 == p.l1


def test_numeric_types_are_stored_as_float():
    p = ArmParams(m1=2, l1=np.float64(1.5), gravity=np.int64(10))
    for name in FIELDS:
        assert type(getattr(p, name)) is float, name
    assert p.m1 == 2.0
    assert p.gravity == 10.0


valid_params = st.builds(
    lambda m1, m2, l1, l2, f1, f2, i1, i2, g, fr1, fr2: ArmParams(
        m1=m1,
        m2=m2,
        l1=l1,
        l2=l2,
        lc1=f1 * l1,
        lc2=f2 * l2,
        I1=i1,
        I2=i2,
        gravity=g,
        friction1=fr1,
        friction2=fr2,
    ),
    *[st.floats(0.05, 20.0)] * 4,
    *[st.floats(0.01, 1.0)] * 2,
    *[st.floats(0.0, 5.0)] * 2,
    st.floats(0.0, 30.0),
    *[st.floats(0.0, 3.0)] * 2,
)


@settings(max_examples=50, deadline=None)
@given(valid_params)
def test_dict_round_trip(p):
    d = p.to_dict()
    assert type(d) is dict
    assert list(d) == list(FIELDS)
    assert all(type(v) is float for v in d.values())
    assert ArmParams.from_dict(d) == p
    assert ArmParams(**d) == p
    assert hash(ArmParams.from_dict(d)) == hash(p)


def test_from_dict_missing_fields_take_defaults():
    p = ArmParams.from_dict({"m2": 3.0})
    assert p == ArmParams(m2=3.0)
    assert ArmParams.from_dict({}) == ArmParams()


def test_from_dict_unknown_key_named():
    with pytest.raises(ValueError, match="mass1"):
        ArmParams.from_dict({"m1": 1.0, "mass1": 2.0})
    with pytest.raises(ValueError, match="lc3"):
        ArmParams.from_dict({"lc3": 0.1})


def test_from_dict_validates_values():
    with pytest.raises(ValueError, match="m1"):
        ArmParams.from_dict({"m1": -2.0})


def test_from_dict_rejects_non_mapping():
    with pytest.raises(ValueError):
        ArmParams.from_dict([("m1", 1.0)])


def test_frozen():
    p = ArmParams()
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.m1 = 2.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.gravity = 0.0
    assert p.m1 == 1.0
    assert p.gravity == 9.81


def test_replace_validates_and_copies():
    p = ArmParams()
    q = p.replace(m2=2.5)
    assert q.m2 == 2.5
    assert p.m2 == 1.0
    with pytest.raises(ValueError, match="m2"):
        p.replace(m2=0.0)


def test_equality_and_hash():
    assert ArmParams() == ArmParams()
    assert ArmParams(m1=2.0) != ArmParams()
    assert len({ArmParams(), ArmParams(), ArmParams(m1=2.0)}) == 2


def test_coerce():
    assert ArmParams.coerce(None) == ArmParams()
    p = ArmParams(m1=2.0)
    assert ArmParams.coerce(p) is p
    assert ArmParams.coerce({"m1": 2.0}) == p
    with pytest.raises(ValueError, match="bogus"):
        ArmParams.coerce({"bogus": 1.0})
    with pytest.raises(ValueError, match="m1"):
        ArmParams.coerce({"m1": math.nan})


@pytest.mark.parametrize(("m1", "m2", "l1", "l2"), [(1.0, 1.0, 1.0, 1.0), (2.0, 0.5, 1.2, 0.7)])
def test_uniform_rods(m1, m2, l1, l2):
    p = ArmParams.uniform_rods(m1=m1, m2=m2, l1=l1, l2=l2, gravity=3.0, friction2=0.0)
    assert p.lc1 == pytest.approx(l1 / 2)
    assert p.lc2 == pytest.approx(l2 / 2)
    # I of a uniform slender rod about its centre: m l^2 / 12
    assert p.I1 == pytest.approx(m1 * l1**2 / 12)
    assert p.I2 == pytest.approx(m2 * l2**2 / 12)
    assert (p.m1, p.m2, p.l1, p.l2) == (m1, m2, l1, l2)
    assert p.gravity == 3.0
    assert p.friction2 == 0.0
    assert p.friction1 == 0.1


def test_uniform_rods_defaults_are_unit_rods():
    p = ArmParams.uniform_rods()
    assert (p.lc1, p.lc2) == (0.5, 0.5)
    assert p.I1 == pytest.approx(1.0 / 12.0)
    assert p.I2 == pytest.approx(1.0 / 12.0)


def test_uniform_rods_validates():
    with pytest.raises(ValueError, match="l2"):
        ArmParams.uniform_rods(l2=-1.0)


# -- non-physical arms (robustness studies) ------------------------------------


def test_nonphysical_arms_only_by_name():
    # negative damping / Coulomb friction, a centre of mass beyond the link with a
    # negative centre-of-mass inertia (inertia about the joint 0.1 - 0.05 + 1.2**2 > 0)
    bad = {"friction1": -0.1, "coulomb2": -0.2, "lc1": 1.2, "I1": -0.05}
    for name, value in bad.items():
        with pytest.raises(ValueError, match=name):
            ArmParams(**{name: value})
        with pytest.raises(ValueError, match=name):
            ArmParams.from_dict({name: value})
    p = NonphysicalArmParams(**bad)
    assert isinstance(p, ArmParams) and repr(p).startswith("NonphysicalArmParams(")
    q = p.replace(friction2=-0.05)
    assert type(q) is NonphysicalArmParams and q.friction2 == -0.05
    # the same numbers as a physical arm compare unequal (another class)
    assert NonphysicalArmParams() != ArmParams()


def test_nonphysical_arms_keep_a_positive_definite_mass_matrix():
    with pytest.raises(ValueError, match="positive definite"):
        NonphysicalArmParams(I1=-0.6)  # det M < 0 at q2 = pi (folded arm)
    with pytest.raises(ValueError, match="positive definite"):
        NonphysicalArmParams(I2=-0.3)  # M22 = 0.25 - 0.3 < 0
    with pytest.raises(ValueError, match="m1"):
        NonphysicalArmParams(m1=0.0)
    with pytest.raises(ValueError, match="lc2"):
        NonphysicalArmParams(lc2=0.0)
    with pytest.raises(ValueError, match="rotor_inertia"):
        NonphysicalArmParams(rotor_inertia=-1e-5)
    # the check is the exact one: minimum of det M over q2 (at cos q2 = +-1)
    from twolink_gym.dynamics import mass_matrix

    p = NonphysicalArmParams(I1=-0.1, I2=-0.02, rotor_inertia=1e-3, gear_ratio=6.0)
    dets = np.linalg.det(
        mass_matrix(p, np.stack([np.zeros(721), np.linspace(-np.pi, np.pi, 721)], -1))
    )
    assert dets.min() > 0.0
    assert dets.min() == pytest.approx(min(dets[0], dets[360]), rel=1e-12)
