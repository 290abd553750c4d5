"""The push of the swing-up task's push starts in JAX (the twin of :mod:`twolink_gym.tasks.push`).

The same steps in the same order of operations, on JAX scalars: a
``jax.lax.fori_loop`` over :data:`~twolink_gym.tasks.push.PUSH_STEPS` RK4 steps
of :func:`twolink_gym.jax.dynamics.rk4`, the PID and gravity compensation of
:func:`twolink_gym.tasks.push.push`, and :func:`twolink_gym.tasks.push.wound`.
``tests/test_push.py`` holds the two equal.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp

from twolink_gym.jax.dynamics import gravity_torque, rk4
from twolink_gym.tasks.push import (
    PUSH_DT,
    PUSH_GAINS,
    PUSH_PID_DT,
    PUSH_STEPS,
    PUSH_TORQUE,
    UNWOUND,
)

__all__ = ["push", "push_target", "push_turns", "wound"]


def push_target(draws: jax.Array) -> jax.Array:
    """A push's target angles ``(2,)`` [rad] from two uniforms (:func:`twolink_gym.tasks.push.push_target`)."""
    return jnp.stack([2.0 * math.pi * draws[0] - 1.5 * math.pi, 2.0 * math.pi * draws[1] - math.pi])


def push_turns(draw: jax.Array, most: jax.Array) -> jax.Array:
    """Whole turns uniform over ``-most … most`` from a uniform ``draw`` (:func:`twolink_gym.tasks.push.push_turns`), as a float."""
    return jnp.floor(draw * (2.0 * most + 1.0)) - most


def push(arm: Any, state: jax.Array, target: jax.Array, coulomb: bool = True) -> jax.Array:
    """The state ``(4,)`` after one push from ``state`` ``(4,)`` towards ``target`` ``(2,)``.

    ``arm`` is a :class:`twolink_gym.kernel.Arm` of JAX scalars; ``coulomb`` as
    in :func:`twolink_gym.jax.dynamics.rk4`.
    """
    kp, ki, kd = PUSH_GAINS
    dtype = state.dtype
    dt = jnp.asarray(PUSH_DT, dtype)

    def step(k: Any, carry: tuple[Any, ...]) -> tuple[Any, ...]:
        x, total, previous = carry
        e = target - x[:2]
        total = total + e
        derivative = jnp.where(k >= 2, kd * (e - previous) / PUSH_PID_DT, jnp.zeros_like(e))
        pid = jnp.clip(kp * e + ki * total * PUSH_PID_DT + derivative, -PUSH_TORQUE, PUSH_TORQUE)
        g1, g2 = gravity_torque(arm, x[0], x[1])
        tau = jnp.clip(pid + jnp.stack([g1, g2]), -PUSH_TORQUE, PUSH_TORQUE)
        q1, q2, dq1, dq2 = rk4(arm, x[0], x[1], x[2], x[3], tau[0], tau[1], dt, 1, coulomb)
        return jnp.stack([q1, q2, dq1, dq2]), total, e

    zeros = jnp.zeros(2, dtype)
    x, _, _ = jax.lax.fori_loop(0, PUSH_STEPS, step, (state, zeros, zeros))
    return x


def wound(q1: jax.Array, q2: jax.Array) -> jax.Array:
    """1 if a joint is outside :data:`~twolink_gym.tasks.push.UNWOUND`, else 0 (:func:`twolink_gym.tasks.push.wound`)."""
    (low1, high1), (low2, high2) = UNWOUND
    inside = (low1 <= q1) & (q1 < high1) & (low2 <= q2) & (q2 < high2)
    return jnp.where(inside, jnp.zeros_like(q1), jnp.ones_like(q1))
