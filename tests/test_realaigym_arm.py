"""RealAIGym's arm in our parameters: its own equations of motion, written out here.

RealAIGym writes ``M(q) q̈ + C(q, q̇) q̇ = τ_g(q) + u - F(q̇)`` with inertias about the
joint axes ``I1, I2``, ``h = m2 l1 r2``, ``q1`` from hanging down, rotor inertia ``Ir``
and gear ratio ``gr``:
``M11 = I1 + I2 + m2 l1² + 2h cos q2 + (gr² + 1) Ir``, ``M12 = I2 + h cos q2 - gr Ir``,
``M22 = I2 + gr² Ir``, ``C q̇ = (-h sin q2 (2 q̇1 q̇2 + q̇2²), h sin q2 q̇1²)``,
``τ_g = (-(m1 r1 + m2 l1) g sin q1 - m2 r2 g sin(q1 + q2), -m2 r2 g sin(q1 + q2))``,
``F_i = b_i q̇_i + cf_i atan(100 q̇_i)`` (``double_pendulum/model/plant.py``).
Solving that for q̈ must give our forward dynamics on the presets, in our angles.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from twolink_gym import forward_dynamics
from twolink_gym.realaigym.arm import (
    DESIGNS,
    MOTORS,
    arm,
    from_realaigym_state,
    to_realaigym_state,
)


def their_accelerations(design: str, x: np.ndarray, u: np.ndarray) -> np.ndarray:
    m1, m2, l1, _l2, r1, r2, i1, i2 = DESIGNS[design]
    ir, gr, b1, b2, cf1, cf2 = MOTORS[design]
    g = 9.81
    q1, q2, dq1, dq2 = x
    h = m2 * l1 * r2
    c2 = math.cos(q2)
    mass = np.array(
        [
            [i1 + i2 + m2 * l1**2 + 2 * h * c2 + (gr**2 + 1) * ir, i2 + h * c2 - gr * ir],
            [i2 + h * c2 - gr * ir, i2 + gr**2 * ir],
        ]
    )
    coriolis = np.array([-h * math.sin(q2) * (2 * dq1 * dq2 + dq2**2), h * math.sin(q2) * dq1**2])
    gravity = np.array(
        [
            -(m1 * r1 + m2 * l1) * g * math.sin(q1) - m2 * r2 * g * math.sin(q1 + q2),
            -m2 * r2 * g * math.sin(q1 + q2),
        ]
    )
    friction = np.array(
        [b1 * dq1 + cf1 * math.atan(100 * dq1), b2 * dq2 + cf2 * math.atan(100 * dq2)]
    )
    return np.linalg.solve(mass, gravity + u - coriolis - friction)


@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_our_dynamics_on_the_preset_are_realaigyms(design: str) -> None:
    rng = np.random.default_rng(1)
    params = arm(design)
    for _ in range(50):
        x = rng.uniform([-np.pi, -np.pi, -8, -8], [np.pi, np.pi, 8, 8])
        u = rng.uniform(-6, 6, size=2)
        ours = forward_dynamics(params, from_realaigym_state(x)[:2], x[2:], u)
        np.testing.assert_allclose(ours, their_accelerations(design, x, u), rtol=1e-10, atol=1e-10)


def test_preset_values_and_conventions() -> None:
    params = arm()
    # centre-of-mass inertias by the parallel-axis theorem (published: 0.01095, 0.00997)
    assert params.I1 == pytest.approx(0.010948790382272026, rel=1e-12)
    assert params.I2 == pytest.approx(0.009970894693799519, rel=1e-12)
    assert params.friction1 == params.friction2 == 0.0 and params.gravity == 9.81
    x = np.array([0.3, -0.2, 1.0, 2.0])
    np.testing.assert_allclose(to_realaigym_state(from_realaigym_state(x)), x, atol=1e-15)
    assert from_realaigym_state([0.0, 0, 0, 0])[0] == pytest.approx(-math.pi / 2)  # hanging
    with pytest.raises(ValueError, match="design must be one of"):
        arm("C.0/3.1")


def test_identified_model_has_motors_and_friction() -> None:
    # design C.1 / model 1.0 (model_parameters.yml): the boards' model 1.1 plus the motors
    full, board = arm("C.1/1.0"), arm("C.1/1.1")
    assert (full.rotor_inertia, full.gear_ratio) == (6.287203962819607e-05, 6.0)
    assert (full.friction1, full.friction2, full.coulomb1, full.coulomb2) == (
        0.001,
        0.001,
        0.16,
        0.12,
    )
    assert (
        full.replace(rotor_inertia=0.0, friction1=0.0, friction2=0.0, coulomb1=0.0, coulomb2=0.0)
        == board
    )
    # the rotors weigh: (gr² + 1) Ir = 2.3e-3 kg m² on joint 1, 7 % of I1 about the joint
    x = np.array([0.4, -1.0, 2.0, -3.0])
    ours = forward_dynamics(full, from_realaigym_state(x)[:2], x[2:], [0.0, 1.0])
    without = forward_dynamics(board, from_realaigym_state(x)[:2], x[2:], [0.0, 1.0])
    assert np.max(np.abs(ours - without)) > 0.1
