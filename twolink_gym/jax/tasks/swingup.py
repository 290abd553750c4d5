"""The twin of :class:`twolink_gym.tasks.SwingupTask` (:func:`~twolink_gym.tasks.swingup.swingup_kernel`)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from twolink_gym.jax.kinematics import tip_from_trig
from twolink_gym.jax.tasks import TaskTwin, register_twin
from twolink_gym.jax.tasks.common import control_factor, named, perturbed_state, upright_terms
from twolink_gym.jax.tasks.push import push, push_target, push_turns, wound
from twolink_gym.kernel import Outcome
from twolink_gym.tasks import SwingupTask
from twolink_gym.tasks.base import HANGING, UPRIGHT
from twolink_gym.tasks.swingup import TURNS_LIMIT, SwingupMemory, SwingupTerms

__all__ = ["SwingupTwin"]


@register_twin
class SwingupTwin(TaskTwin):
    """Swing up from hanging and hold upright (see :class:`~twolink_gym.tasks.SwingupTask`)."""

    task_class = SwingupTask

    def sample(self, key: jax.Array, params: Any, arm: Any) -> tuple[jax.Array, jax.Array]:
        """Hanging, perturbed; anywhere, near upright or pushed from there, by their fractions.

        ``explore_fraction``, ``catch_fraction``, ``push_fraction`` (the push is
        computed only when that is positive).
        """
        e = params.episode
        pick, draw = jax.random.split(key)
        u = jax.random.uniform(pick, (), e["explore_fraction"].dtype)
        hanging = perturbed_state(draw, HANGING, e["init_angle_noise"], e["init_speed_noise"])
        pi = jnp.asarray(jnp.pi, u.dtype)
        anywhere = perturbed_state(draw, HANGING, pi, e["explore_speed"])
        catch = perturbed_state(draw, UPRIGHT, e["catch_angle"], e["catch_speed"])

        def pushed(held: jax.Array) -> jax.Array:
            w = jax.random.uniform(jax.random.fold_in(draw, 1), (4,), u.dtype)
            held = held.at[0].add(jnp.where(w[0] < 0.5, -2.0 * pi, 0.0))
            held = held.at[1].add(2.0 * pi * push_turns(w[1], e["push_turns"]))
            return push(arm, held, push_target(w[2:]), params.coulomb)

        push_start = jax.lax.cond(e["push_fraction"] > 0.0, pushed, lambda held: held, catch)
        explore = u < e["explore_fraction"]
        caught = u < e["explore_fraction"] + e["catch_fraction"]
        knocked = u < e["explore_fraction"] + e["catch_fraction"] + e["push_fraction"]
        state = jnp.where(
            explore,
            anywhere,
            jnp.where(caught, catch, jnp.where(knocked, push_start, hanging)),
        )
        return state, jnp.zeros((0,), u.dtype)

    def kernel(
        self, arm: Any, options: Any, x: Any, goal: jax.Array, memory: SwingupMemory
    ) -> tuple[Outcome, SwingupTerms, SwingupMemory, jax.Array]:
        """The bounded reward, its factors, success, the fall once up (``fall_angle > 0``), the turns."""
        upright, still, dist, success = upright_terms(x, options)
        inside = dist <= options.fall_angle
        fell = (options.fall_angle > 0.0) & (memory.was_up > 0.0) & jnp.logical_not(inside)
        was_up = jnp.where(inside, jnp.ones_like(memory.was_up), memory.was_up)
        height = 0.5 * jnp.sqrt(jnp.maximum((1.0 + x.s1) * (1.0 + x.s12), 0.0))
        ctrl = control_factor(x.a1, x.a2, options.ctrl_weight)
        smooth = control_factor(x.a1 - memory.a1, x.a2 - memory.a2, 0.25 * options.smooth_weight)
        _, tip_height = tip_from_trig(arm, x.c1, x.s1, x.c12, x.s12)
        line = (tip_height > options.line_height * (arm.l1 + arm.l2)).astype(height.dtype)
        is_wound = wound(x.q1, x.q2)
        line = line * (1.0 - options.wound_weight * is_wound)
        w = options.height_weight
        lw = options.line_weight
        terms = named(
            SwingupTerms,
            reward_height=height,
            reward_upright=upright,
            reward_still=still,
            reward_ctrl=ctrl,
            reward_smooth=smooth,
            reward_line=line,
        )
        shaped = w * height + (1.0 - w) * upright * still
        shaped = shaped * (1.0 - options.wound_shaped_weight * is_wound)
        reward = ctrl * smooth * ((1.0 - lw) * shaped + lw * line)
        memory = named(SwingupMemory, was_up=was_up, a1=x.a1, a2=x.a2)
        if self.task.extras_size:  # observe_turns (static: the task object's)
            turns = jnp.stack([x.q1, x.q2]) / (2.0 * jnp.pi)
            extras = jnp.clip(turns, -TURNS_LIMIT, TURNS_LIMIT).astype(dist.dtype)
        else:
            extras = jnp.zeros((0,), dist.dtype)
        return named(Outcome, reward, fell, success, dist), terms, memory, extras
