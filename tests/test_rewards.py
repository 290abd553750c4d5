"""The shared reward primitives against dm_control's definitions, written out here."""

from __future__ import annotations

import math

import numpy as np
import pytest

from twolink_gym._jit import python_source
from twolink_gym.tasks.rewards import control_factor, gaussian, tolerance


def dm_control_tolerance(x, bounds, margin, value_at_margin):
    """dm_control ``utils/rewards.py: tolerance(..., sigmoid="gaussian")``, restated."""
    lower, upper = bounds
    in_bounds = np.logical_and(lower <= x, x <= upper)
    if margin == 0:
        return np.where(in_bounds, 1.0, 0.0)
    d = np.where(x < lower, lower - x, x - upper) / margin
    scale = np.sqrt(-2 * np.log(value_at_margin))
    return np.where(in_bounds, 1.0, np.exp(-0.5 * (d * scale) ** 2))


CASES = [
    ((0.0, 0.0), 0.1, 0.1),
    ((-0.2, 0.3), 0.5, 0.1),
    ((1.0, 2.0), 0.25, 0.5),
    ((0.0, 0.05), 0.0, 0.1),
]


@pytest.mark.parametrize("fn", [tolerance, python_source(tolerance)], ids=["compiled", "python"])
@pytest.mark.parametrize(("bounds", "margin", "value"), CASES)
def test_tolerance_is_dm_controls(fn, bounds, margin, value):
    xs = np.linspace(-2.0, 3.0, 501)
    got = np.array([fn(x, bounds[0], bounds[1], margin, value) for x in xs])
    np.testing.assert_allclose(got, dm_control_tolerance(xs, bounds, margin, value), rtol=1e-14)


def test_tolerance_at_its_bounds_and_margin():
    assert tolerance(0.3, -0.2, 0.3, 0.5, 0.1) == 1.0  # at a bound: inside
    assert tolerance(0.8, -0.2, 0.3, 0.5, 0.1) == pytest.approx(0.1, rel=1e-14)
    assert tolerance(-0.7, -0.2, 0.3, 0.5, 0.1) == pytest.approx(0.1, rel=1e-14)
    assert tolerance(0.31, 0.0, 0.3) == 0.0  # no margin: a step


@pytest.mark.parametrize("sigma", [0.02, 0.12, 0.5])
def test_gaussian_is_tolerance_of_the_distance(sigma):
    d = np.linspace(0.0, 4 * sigma, 41)
    got = np.array([gaussian(x * x, sigma) for x in d])
    want = dm_control_tolerance(d, (0.0, 0.0), sigma, math.exp(-0.5))
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert gaussian(sigma * sigma, sigma) == pytest.approx(math.exp(-0.5), rel=1e-15)


def test_control_factor():
    assert control_factor(0.0, 0.0, 0.3) == 1.0
    assert control_factor(1.0, -1.0, 0.3) == pytest.approx(0.7, rel=1e-15)
    assert control_factor(0.5, 0.0, 0.2) == pytest.approx(1 - 0.2 * 0.25 / 2, rel=1e-15)
