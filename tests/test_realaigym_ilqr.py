"""The compiled iLQR of the v3 MPC (twolink_gym.realaigym.ilqr), checked against RealAIGym's own plant.

The reference is RealAIGym's equations of motion written out here from their
formulas (their angles: ``q1`` from hanging down), integrated by a plain numpy
RK4 — not our dynamics module.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from twolink_gym.dynamics import arm_vector
from twolink_gym.realaigym.arm import arm
from twolink_gym.realaigym.ilqr import lqr_catches, lqr_guess, rollout, solve

M1, M2 = 0.5234602302310271, 0.6255677234174437
L1, L2 = 0.2, 0.3
R1, R2 = 0.2, 0.25569305436052964
I1, I2 = 0.031887199591513114, 0.05086984812807257
G = 9.81
MOTOR = {"pendubot": 0, "acrobot": 1}
# cost weights (w_tip, w_elbow, w_speed, w_torque) and the terminal (w_tip, w_elbow, w_speed)
W_RUN = np.array([10.0, 0.5, 0.01, 0.01])
W_END = np.array([200.0, 10.0, 2.0])


def their_rhs(x: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``ẋ (4,)`` of RealAIGym's plant, their angles, torques ``u (2,)``."""
    q1, q2, dq1, dq2 = x
    c2, s2 = math.cos(q2), math.sin(q2)
    m11 = I1 + I2 + M2 * L1**2 + 2 * M2 * L1 * R2 * c2
    m12 = I2 + M2 * L1 * R2 * c2
    m22 = I2
    h = M2 * L1 * R2 * s2
    cq1 = -2 * h * dq2 * dq1 - h * dq2 * dq2
    cq2 = h * dq1 * dq1
    g1 = -M1 * G * R1 * math.sin(q1) - M2 * G * (L1 * math.sin(q1) + R2 * math.sin(q1 + q2))
    g2 = -M2 * G * R2 * math.sin(q1 + q2)
    b1, b2 = u[0] + g1 - cq1, u[1] + g2 - cq2
    det = m11 * m22 - m12 * m12
    return np.array([dq1, dq2, (m22 * b1 - m12 * b2) / det, (m11 * b2 - m12 * b1) / det])


def their_rk4(x: np.ndarray, u: np.ndarray, dt: float) -> np.ndarray:
    k1 = their_rhs(x, u)
    k2 = their_rhs(x + 0.5 * dt * k1, u)
    k3 = their_rhs(x + 0.5 * dt * k2, u)
    k4 = their_rhs(x + dt * k3, u)
    return x + dt * (k1 + 2 * (k2 + k3) + k4) / 6


def ours(x_theirs: np.ndarray) -> np.ndarray:
    return np.asarray(x_theirs, dtype=float) + np.array([-math.pi / 2, 0.0, 0.0, 0.0])


def tip_height(x_theirs: np.ndarray) -> float:
    return -L1 * math.cos(x_theirs[0]) - L2 * math.cos(x_theirs[0] + x_theirs[1])


def upright_lqr(motor: int) -> np.ndarray:
    """LQR gain ``(4,)`` at the top of their plant (finite-difference linearisation)."""
    from scipy.linalg import solve_continuous_are

    top, eps = np.array([math.pi, 0.0, 0.0, 0.0]), 1e-6
    a = np.empty((4, 4))
    for j in range(4):
        d = np.zeros(4)
        d[j] = eps
        a[:, j] = (their_rhs(top + d, np.zeros(2)) - their_rhs(top - d, np.zeros(2))) / (2 * eps)
    du = np.zeros(2)
    du[motor] = eps
    b = ((their_rhs(top, du) - their_rhs(top, -du)) / (2 * eps))[:, None]
    p = solve_continuous_are(a, b, np.diag([10.0, 10.0, 1.0, 1.0]), np.eye(1))
    return (b.T @ p)[0]


def their_cost(xs_theirs: np.ndarray, us: np.ndarray, h: float) -> float:
    """The module's cost, written from its notes in their angles (the top is ``q1 = π``)."""

    def state(x: np.ndarray, w: np.ndarray, scale: float) -> float:
        tip_drop = (L1 + L2) - tip_height(x)
        elbow = 1 - math.cos(x[1])
        return scale * (w[0] * tip_drop + w[1] * elbow + 0.5 * w[2] * (x[2] ** 2 + x[3] ** 2))

    run = sum(
        state(x, W_RUN, h) + 0.5 * h * W_RUN[3] * u * u
        for x, u in zip(xs_theirs[:-1], us, strict=True)
    )
    return run + state(xs_theirs[-1], W_END, 1.0)


@pytest.mark.parametrize("robot", ["pendubot", "acrobot"])
def test_rollout_is_their_plant_and_the_cost_is_the_documented_one(robot: str) -> None:
    motor = MOTOR[robot]
    rng = np.random.default_rng(3)
    x0_theirs = np.array([2.5, -1.0, 3.0, -4.0])
    us = rng.uniform(-6, 6, 40)
    xs = np.empty((41, 4))
    cost = rollout(arm_vector(arm()), ours(x0_theirs), us, motor, 0.02, 4, W_RUN, W_END, xs)
    x = x0_theirs.copy()
    ref = [x]
    for u in us:
        torque = np.zeros(2)
        torque[motor] = u
        for _ in range(4):
            x = their_rk4(x, torque, 0.005)
        ref.append(x)
    ref_arr = np.array(ref)
    np.testing.assert_allclose(xs, ours(ref_arr), atol=1e-9)
    assert cost == pytest.approx(their_cost(ref_arr, us, 0.02), rel=1e-9)


def test_solve_swings_the_pendubot_up_from_hanging_in_their_plant() -> None:
    """The optimised torques, replayed at 2 ms in their plant, lift the tip above 0.45 m within 1 s."""
    n, h = 75, 0.02
    us = 4.0 * np.sin(2 * np.pi * np.arange(n) * h / 1.0)
    xs, gains = np.empty((n + 1, 4)), np.empty((n, 4))
    start = np.zeros(4)  # hanging at rest, their angles
    first = rollout(arm_vector(arm()), ours(start), us.copy(), 0, h, 4, W_RUN, W_END, xs)
    cost = solve(arm_vector(arm()), ours(start), us, 0, h, 4, 6.0, W_RUN, W_END, 60, xs, gains)
    assert cost < 0.5 * first
    assert np.all(np.abs(us) <= 6.0)
    x = start.copy()
    heights = []
    for u in us:
        for _ in range(10):  # the torque held over the stage, 2 ms steps
            x = their_rk4(x, np.array([u, 0.0]), 0.002)
            heights.append(tip_height(x))
    up = np.flatnonzero(np.array(heights) > 0.45)
    assert up.size and (up[0] + 1) * 0.002 <= 1.0


@pytest.mark.parametrize("robot", ["pendubot", "acrobot"])
def test_lqr_catches_agrees_with_their_plant(robot: str) -> None:
    motor = MOTOR[robot]
    gain = upright_lqr(motor)
    starts = [
        np.array([math.pi + 0.05, -0.05, 0.1, -0.1]),  # close: caught
        np.array([math.pi + 0.3, 0.6, 2.0, -3.0]),
        np.array([math.pi - 1.5, 1.0, 0.0, 0.0]),  # far: falls
    ]
    verdicts = []
    for start in starts:
        x = start.copy()
        for _ in range(1500):
            e = x - np.array([math.pi, 0.0, 0.0, 0.0])
            e[:2] = (e[:2] + math.pi) % (2 * math.pi) - math.pi
            torque = np.zeros(2)
            torque[motor] = float(np.clip(-gain @ e, -6.0, 6.0))
            x = their_rk4(x, torque, 0.002)
        e = x - np.array([math.pi, 0.0, 0.0, 0.0])
        e[:2] = (e[:2] + math.pi) % (2 * math.pi) - math.pi
        theirs = bool(np.max(np.abs(e)) < 0.05)
        verdicts.append(theirs)
        mine = lqr_catches(arm_vector(arm()), ours(start), gain, motor, 0.002, 1500, 6.0, 0.05)
        assert mine == theirs
    assert verdicts[0] and not verdicts[-1]


def test_lqr_guess_starts_with_the_clipped_lqr_torque() -> None:
    gain = upright_lqr(0)
    start = np.array([math.pi + 0.02 + 2 * math.pi, -0.01, 0.0, 0.0])  # a whole turn on
    us = np.empty(5)
    lqr_guess(arm_vector(arm()), ours(start), gain, 0, 0.02, 4, 6.0, us)
    assert us[0] == pytest.approx(-(gain[0] * 0.02 - gain[1] * 0.01), rel=1e-9)
    far = np.array([0.5, 2.0, 9.0, -9.0])
    lqr_guess(arm_vector(arm()), ours(far), gain, 0, 0.02, 4, 6.0, us)
    assert np.all(np.abs(us) <= 6.0) and abs(us[0]) == 6.0
