"""The twin of :class:`twolink_gym.tasks.ReachTask` (:func:`~twolink_gym.tasks.reach.reach_kernel`)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from twolink_gym.jax.tasks import TaskTwin, register_twin
from twolink_gym.jax.tasks.common import gaussian, named, perturbed_state, tolerance_box
from twolink_gym.kernel import Outcome
from twolink_gym.tasks import ReachTask
from twolink_gym.tasks.base import HANGING
from twolink_gym.tasks.reach import ReachTerms

__all__ = ["ReachTwin"]


@register_twin
class ReachTwin(TaskTwin):
    """Reach a target with the tip and hold it (see :class:`~twolink_gym.tasks.ReachTask`)."""

    task_class = ReachTask

    def sample(self, key: jax.Array, params: Any, arm: Any) -> tuple[jax.Array, jax.Array]:
        """Near hanging, perturbed; a target uniform by area in the episode arm's annulus."""
        e = params.episode
        k_state, k_u, k_angle = jax.random.split(key, 3)
        state = perturbed_state(k_state, HANGING, e["init_angle_noise"], e["init_speed_noise"])
        dtype = state.dtype
        reach = arm.l1 + arm.l2
        r_min = jnp.maximum(e["min_target_radius_frac"] * reach, jnp.abs(arm.l1 - arm.l2))
        r_max = e["max_target_radius_frac"] * reach
        u = jax.random.uniform(k_u, (), dtype)
        angle = jax.random.uniform(k_angle, (), dtype, -jnp.pi, jnp.pi)
        r = jnp.sqrt(r_min**2 + u * (r_max**2 - r_min**2))
        return state, jnp.stack([r * jnp.cos(angle), r * jnp.sin(angle)])

    def kernel(
        self, arm: Any, options: Any, x: Any, goal: jax.Array, memory: Any
    ) -> tuple[Outcome, ReachTerms, Any, jax.Array]:
        """Dense or sparse reward, success, tip-to-target distance, extras ``[target, to target]``."""
        l1c1, l1s1 = arm.l1 * x.c1, arm.l1 * x.s1
        l2c12, l2s12 = arm.l2 * x.c12, arm.l2 * x.s12
        to_x = goal[0] - (l1c1 + l2c12)
        to_y = goal[1] - (l1s1 + l2s12)
        dist = jnp.sqrt(to_x * to_x + to_y * to_y)
        extras = jnp.stack([goal[0], goal[1], to_x, to_y])
        vx = (-l1s1 - l2s12) * x.dq1 + (-l2s12) * x.dq2
        vy = (l1c1 + l2c12) * x.dq1 + l2c12 * x.dq2
        speed = jnp.sqrt(vx * vx + vy * vy)
        reward_ctrl = -options.ctrl_weight * (x.a1 * x.a1 + x.a2 * x.a2)
        reward_speed = -options.speed_weight * speed * speed
        # reach_reward: the sparse and the dense reward, picked by the option
        hit = tolerance_box(dist, 0.0, options.tolerance)
        near = options.near_weight * gaussian(dist * dist, options.near_sigma)
        dense = -dist + near + reward_ctrl + reward_speed
        sparse = options.sparse != 0.0
        zero = jnp.zeros_like(dist)
        terms = named(
            ReachTerms,
            reward_dist=jnp.where(sparse, hit, -dist),
            reward_near=jnp.where(sparse, zero, near),
            reward_ctrl=jnp.where(sparse, zero, reward_ctrl),
            reward_speed=jnp.where(sparse, zero, reward_speed),
        )
        success = (dist <= options.tolerance) & (speed <= options.success_speed)
        outcome = named(Outcome, jnp.where(sparse, hit, dense), jnp.zeros((), bool), success, dist)
        return outcome, terms, memory, extras
