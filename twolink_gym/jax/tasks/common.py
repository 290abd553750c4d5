"""Reward primitives and episode draws shared by the task twins (JAX, on scalars).

The twins of :mod:`twolink_gym.tasks.rewards`, of
:func:`twolink_gym.tasks.base.perturbed_state` and of the balance task's
:func:`~twolink_gym.tasks.balance.upright_terms` (used by balance and
swing-up), with ``jnp.where`` in place of the compiled kernels' branches.
"""

from __future__ import annotations

import math
from typing import Any, TypeVar, cast

import jax
import jax.numpy as jnp

__all__ = [
    "control_factor",
    "gaussian",
    "named",
    "perturbed_state",
    "tilt_from_vertical",
    "tolerance_box",
    "upright_terms",
]


T = TypeVar("T")


def named(cls: type[T], *args: Any, **kwargs: Any) -> T:
    """``cls(*args, **kwargs)``: a kernel named tuple (declared on floats) of JAX scalars."""
    return cast(Any, cls)(*args, **kwargs)


def gaussian(sq_distance: Any, sigma: Any) -> Any:
    """``exp(-sq_distance / (2 sigma²))`` (:func:`twolink_gym.tasks.rewards.gaussian`)."""
    return jnp.exp(-sq_distance / (2.0 * (sigma * sigma)))


def control_factor(a1: Any, a2: Any, weight: Any) -> Any:
    """``1 - weight · (a1² + a2²) / 2`` (:func:`twolink_gym.tasks.rewards.control_factor`)."""
    return 1.0 - 0.5 * weight * (a1 * a1 + a2 * a2)


def tolerance_box(x: Any, lower: Any, upper: Any) -> Any:
    """``tolerance(x, lower, upper)`` without a margin: 1 inside ``[lower, upper]``, else 0."""
    inside = jnp.logical_and(lower <= x, x <= upper)
    return jnp.where(inside, 1.0, 0.0).astype(jnp.result_type(x))


def tilt_from_vertical(angle: Any) -> Any:
    """A link angle's tilt from the upward vertical in ``[-pi, pi)`` [rad] (floored modulo)."""
    return jnp.mod(angle - math.pi / 2 + math.pi, 2.0 * math.pi) - math.pi


def upright_terms(x: Any, options: Any) -> tuple[Any, Any, Any, Any]:
    """``(upright, still, distance, success)`` of a step (:func:`twolink_gym.tasks.balance.upright_terms`)."""
    tilt1 = tilt_from_vertical(x.q1)
    tilt2 = tilt_from_vertical(x.q1 + x.q2)
    dist = jnp.maximum(jnp.abs(tilt1), jnp.abs(tilt2))
    upright = gaussian(tilt1 * tilt1 + tilt2 * tilt2, options.upright_sigma)
    speed2 = x.dq1 * x.dq1 + x.dq2 * x.dq2
    still = 1.0 - options.speed_weight * (1.0 - gaussian(speed2, options.still_sigma))
    limit = options.success_speed
    success = (
        (dist <= options.success_angle) & (jnp.abs(x.dq1) <= limit) & (jnp.abs(x.dq2) <= limit)
    )
    return upright, still, dist, success


def perturbed_state(key: jax.Array, centre: Any, angle_noise: Any, speed_noise: Any) -> jax.Array:
    """``centre`` plus U(±angle_noise) per angle and U(±speed_noise) per speed, shape ``(4,)``."""
    dtype = jnp.result_type(angle_noise)
    noise = jax.random.uniform(key, (4,), dtype, -1.0, 1.0)
    scale = jnp.stack([angle_noise, angle_noise, speed_noise, speed_noise])
    return jnp.asarray(centre, dtype) + noise * scale
