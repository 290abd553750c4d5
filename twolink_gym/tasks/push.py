"""A push of the arm, as RealAIGym v3 knocks it: the swing-up task's push starts.

RealAIGym's v3 protocol (ICRA 2025) takes the arm from the policy 15 times a
run and drives both joints for 0.2 s with a PID towards a random
configuration; the policy gets the arm back wherever that leaves it, often
spinning at tens of rad/s. :func:`push` is one such push on its own, from a
fresh PID: 100 classic RK4 steps of 2 ms (torque held over each), each joint's
torque ``clip(clip(Kp e + Ki Σe δ + Kd Δe / δ, ±6) + G(q), ±6)`` N·m with
``e = target - q`` (no angle wrapping), the integral over this push's steps,
the derivative 0 for its first two steps, ``δ = 1 ms`` the PID's own time step
and ``G`` the gravity torques: the protocol's push with a fresh history
(``tests/test_push.py`` holds it to the first push of a v3 run). The swing-up
task's ``push_fraction`` starts a share of its training episodes where a
:func:`push` leaves a held arm.

Since the push does not wrap the angles, an arm that came up a turn round is
pushed back through that turn and handed back spinning. :func:`wound` tells
such an arm (its nearest upright outside the targets' range) from one that came
up at a turn the targets lie in; the swing-up task's ``wound_weight`` withholds
its line term from the first.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym._jit import kernel
from twolink_gym.dynamics import arm_vector, gravity_torque
from twolink_gym.integrators import rk4
from twolink_gym.params import ArmParams

__all__ = [
    "PUSH_DT",
    "PUSH_GAINS",
    "PUSH_PID_DT",
    "PUSH_STEPS",
    "PUSH_TORQUE",
    "UNWOUND",
    "push",
    "push_target",
    "push_turns",
    "wound",
]

#: Steps of a push.
PUSH_STEPS = 100
#: Length of a push step [s].
PUSH_DT = 0.002
#: The PID's ``(Kp, Ki, Kd)`` [N·m/rad, N·m/(rad·s), N·m·s/rad] (the v3 protocol's,
#: :data:`twolink_gym.realaigym.v3.PID_GAINS`, is this).
PUSH_GAINS = (10.0, 0.1, 1.0)
#: The PID's own time step [s] (its integral and derivative use it).
PUSH_PID_DT = 0.001
#: Torque limit of each joint during a push [N·m].
PUSH_TORQUE = 6.0

#: The unwound angles ``((q1_low, q1_high), (q2_low, q2_high))`` [rad], ours: those whose
#: nearest upright (``q1 = π/2 + 2πk``, ``q2 = 2πk``) lies in the push targets' range
#: (:func:`push_target`: ``[-3π/2, π/2]`` and ``[-π, π]``), i.e. the shoulder's uprights
#: ``π/2`` and ``-3π/2`` and the elbow's ``0``, each with half a turn on either side.
UNWOUND = ((-2.5 * math.pi, 1.5 * math.pi), (-math.pi, math.pi))


def push_target(draws: ArrayLike) -> NDArray[np.float64]:
    """A push's target angles ``(2,)`` [rad], our angles, from two uniforms in [0, 1).

    v3's targets: each joint uniform over ``[-π, π)`` in RealAIGym's angles
    (0: hanging), i.e. the shoulder over ``[-3π/2, π/2)`` in ours.
    """
    u = np.asarray(draws, dtype=np.float64)
    return np.array([2.0 * math.pi * u[0] - 1.5 * math.pi, 2.0 * math.pi * u[1] - math.pi])


def push_turns(draw: float, most: int) -> int:
    """Whole turns ``k`` uniform over ``-most … most`` from a uniform ``draw`` in [0, 1)."""
    return math.floor(draw * (2 * most + 1)) - most


@kernel(inline=True)
def wound(q1: float, q2: float) -> float:
    """1.0 if a joint is outside :data:`UNWOUND` (``low <= q < high``), else 0.0.

    A wound arm held upright is pushed back through whole turns by a v3 push;
    an unwound one is not.

    Parameters
    ----------
    q1, q2 : float
        The joint angles [rad], ours, unwrapped.
    """
    (low1, high1), (low2, high2) = UNWOUND
    inside = low1 <= q1 < high1 and low2 <= q2 < high2
    return 0.0 if inside else 1.0


def push(params: ArmParams, state: ArrayLike, target: ArrayLike) -> NDArray[np.float64]:
    """The state ``(4,)`` after one push of the arm from ``state`` towards ``target``.

    Parameters
    ----------
    params : ArmParams
        The arm (its dynamics and its gravity, which the push compensates).
    state : array_like, shape (4,)
        ``(q1, q2, dq1, dq2)`` at the push's start [rad, rad/s].
    target : array_like, shape (2,)
        The angles pushed towards [rad], our angles (no wrapping: a target a turn
        away is pushed a turn).

    Returns
    -------
    ndarray, shape (4,)
        The state after :data:`PUSH_STEPS` steps of :data:`PUSH_DT`.
    """
    arm = arm_vector(params)
    q1, q2, dq1, dq2 = (float(v) for v in np.asarray(state, dtype=np.float64))
    goal = np.asarray(target, dtype=np.float64)
    kp, ki, kd = PUSH_GAINS
    total = np.zeros(2)
    previous = np.zeros(2)
    for k in range(PUSH_STEPS):
        e = goal - np.array([q1, q2])
        total = total + e
        derivative = kd * (e - previous) / PUSH_PID_DT if k >= 2 else np.zeros(2)
        pid = np.clip(kp * e + ki * total * PUSH_PID_DT + derivative, -PUSH_TORQUE, PUSH_TORQUE)
        tau = np.clip(pid + gravity_torque(params, np.array([q1, q2])), -PUSH_TORQUE, PUSH_TORQUE)
        q1, q2, dq1, dq2 = rk4(arm, q1, q2, dq1, dq2, float(tau[0]), float(tau[1]), PUSH_DT, 1)
        previous = e
    return np.array([q1, q2, dq1, dq2])
