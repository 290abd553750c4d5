"""The twin of :class:`twolink_gym.tasks.TrackTask` (:func:`~twolink_gym.tasks.track.track_kernel`).

The reference paths and the goal's table are :mod:`twolink_gym.jax.paths`.
Episodes draw a path with :func:`twolink_gym.jax.paths.sample_path` (the
compiled task's families and ranges, ``jax.random`` draws) and start on it
(:func:`start_on_path`); a goal given at reset (``"goal"``, a table as the
compiled env's ``env.goal``; or ``"path"``, any spec of
:func:`twolink_gym.paths.make_path`, tabulated on the host) gives the compiled
env's table, so the episode follows the same reference.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from twolink_gym.jax.kinematics import tip_from_trig
from twolink_gym.jax.paths import (
    goal_of_path,
    reference_at,
    reference_position,
    sample_path,
    tabulate,
)
from twolink_gym.jax.tasks import TaskTwin, register_twin
from twolink_gym.jax.tasks.common import control_factor, gaussian, perturbed_state
from twolink_gym.kernel import Outcome
from twolink_gym.paths import MIN_ABS_SIN_Q2
from twolink_gym.tasks import TrackTask
from twolink_gym.tasks.track import HEADER_SIZE, TrackMemory, TrackTerms

__all__ = ["TrackTwin", "joint_state_on_branch", "start_on_path"]


def _wrap_angle(angle: jax.Array) -> jax.Array:
    """Wrap to ``[-pi, pi)`` (:func:`twolink_gym.kinematics.wrap_angle`)."""
    wrapped = jnp.mod(angle + jnp.pi, 2.0 * jnp.pi) - jnp.pi
    return wrapped - 2.0 * jnp.pi * (wrapped >= jnp.pi)


def joint_state_on_branch(
    arm: Any, position: jax.Array, velocity: jax.Array, down: jax.Array
) -> jax.Array:
    """Joint state ``[q1, q2, dq1, dq2]`` that puts the tip at ``position`` moving at ``velocity``.

    The twin of :func:`twolink_gym.paths.joint_states_on_branch` for one point:
    the inverse kinematics on the elbow branch ``down`` (``q2 >= 0``; else up)
    of the point projected onto the workspace, and ``dq = J⁻¹ v`` (zero where
    ``|sin q2| <`` :data:`~twolink_gym.paths.MIN_ABS_SIN_Q2`).

    Parameters
    ----------
    arm : twolink_gym.kernel.Arm
    position, velocity : Array, shape (2,)
        [m], [m/s].
    down : Array of bool, shape ()
    """
    l1, l2 = arm.l1, arm.l2
    x, y = position[0], position[1]
    r = jnp.hypot(x, y)
    r_clipped = jnp.clip(r, jnp.abs(l1 - l2), l1 + l2)
    positive = r > 0.0
    safe = jnp.where(positive, r, 1.0)
    x = jnp.where(positive, x / safe, 1.0) * r_clipped
    y = jnp.where(positive, y / safe, 0.0) * r_clipped
    r2 = x**2 + y**2
    cos_q2 = (r2 - l1**2 - l2**2) / (2.0 * l1 * l2)
    q2 = jnp.arccos(jnp.clip(cos_q2, -1.0, 1.0))
    q2 = jnp.where(down, q2, -q2)
    q1 = _wrap_angle(jnp.arctan2(y, x) - jnp.arctan2(l2 * jnp.sin(q2), l1 + l2 * jnp.cos(q2)))
    # dq = J⁻¹ v (Cramer's rule on the 2 × 2 Jacobian)
    q12 = q1 + q2
    s1, c1 = l1 * jnp.sin(q1), l1 * jnp.cos(q1)
    s12, c12 = l2 * jnp.sin(q12), l2 * jnp.cos(q12)
    j11, j12, j21, j22 = -s1 - s12, -s12, c1 + c12, c12
    det = j11 * j22 - j12 * j21
    ok = jnp.abs(jnp.sin(q2)) >= MIN_ABS_SIN_Q2
    det = jnp.where(ok, det, 1.0)
    dq1 = jnp.where(ok, (j22 * velocity[0] - j12 * velocity[1]) / det, 0.0)
    dq2 = jnp.where(ok, (j11 * velocity[1] - j21 * velocity[0]) / det, 0.0)
    return jnp.stack([q1, q2, dq1, dq2])


def start_on_path(key: jax.Array, params: Any, arm: Any, goal: jax.Array) -> jax.Array:
    """The start state ``(4,)`` of an episode that follows ``goal`` (a track table).

    As :meth:`TrackTask.sample_episode <twolink_gym.tasks.TrackTask.sample_episode>`:
    the reference's first row, an elbow branch drawn with equal odds
    (:func:`joint_state_on_branch`), then the uniform perturbation of
    ``init_angle_noise`` and ``init_speed_noise``.
    """
    k_branch, k_noise = jax.random.split(key)
    row = goal[HEADER_SIZE : HEADER_SIZE + 4]
    down = jax.random.uniform(k_branch, (), goal.dtype) >= 0.5
    centre = joint_state_on_branch(arm, row[0:2], row[2:4], down)
    e = params.episode
    return perturbed_state(k_noise, centre, e["init_angle_noise"], e["init_speed_noise"])


@register_twin
class TrackTwin(TaskTwin):
    """Follow a moving reference with the tip (see :class:`~twolink_gym.tasks.TrackTask`).

    The path families and the preview length are static (the task's
    ``families`` and ``preview``: they set shapes); the other options are
    traced from the params.
    """

    task_class = TrackTask
    task: TrackTask

    def sample(self, key: jax.Array, params: Any, arm: Any) -> tuple[jax.Array, jax.Array]:
        """A path drawn from the task's families (:func:`~twolink_gym.jax.paths.sample_path`) and a start on it."""
        k_path, k_start = jax.random.split(key)
        e = params.episode
        path = sample_path(
            k_path,
            arm.l1,
            arm.l2,
            self.task.families,
            margin=e["workspace_margin"] * (arm.l1 + arm.l2),
            speed=(e["min_path_speed"], e["max_path_speed"]),
        )
        goal = tabulate(path, self.task.table_rows)
        return start_on_path(k_start, params, arm, goal), goal

    def sample_on(
        self, key: jax.Array, params: Any, arm: Any, goal: jax.Array
    ) -> tuple[jax.Array, jax.Array]:
        """A start on the given reference (the compiled task draws no path then either)."""
        return start_on_path(key, params, arm, goal), goal

    def goal_from_option(self, name: str, value: Any, params: Any) -> jax.Array:
        """A goal table (``"goal"``), or the table of a path spec (``"path"``, on the host).

        ``"path"`` takes what :func:`twolink_gym.paths.make_path` takes (a name,
        a mapping, a path, an array of points) and tabulates it with the
        compiled task, outside ``jit`` (a string is not a JAX value): call
        ``reset_env`` with it, or pass ``{"goal": goal_of_path(task, spec)}``
        to the jitted ``reset``.
        """
        if name == "path":
            value = goal_of_path(self.task, value)
        return super().goal_from_option("goal", value, params)

    def goal_info(self, goal: jax.Array, extras: jax.Array) -> dict[str, jax.Array]:
        """``{"reference": the current reference point (2,)}`` (not the whole table)."""
        return {"reference": extras[0:2]}

    def kernel(
        self, arm: Any, options: Any, x: Any, goal: jax.Array, memory: Any
    ) -> tuple[Outcome, TrackTerms, TrackMemory, jax.Array]:
        """Reference, tracking error, reward, running RMS, lost termination and success."""
        t = x.t
        reference = reference_at(goal, t)
        tip_x, tip_y = tip_from_trig(arm, x.c1, x.s1, x.c12, x.s12)
        ex = reference[0] - tip_x
        ey = reference[1] - tip_y
        preview = []
        for k in range(self.task.preview):
            point = reference_position(goal, t + (k + 1) * options.preview_dt)
            preview += [point[0] - tip_x, point[1] - tip_y]
        extras = jnp.concatenate([reference, jnp.stack([ex, ey, *preview])])
        e2 = ex * ex + ey * ey
        err: Any = jnp.sqrt(e2)
        memory = TrackMemory(
            sum_sq=memory.sum_sq + e2,
            samples=memory.samples + 1.0,
            max_error=jnp.maximum(memory.max_error, err),  # type: ignore[arg-type]
        )
        rms: Any = jnp.sqrt(memory.sum_sq / memory.samples)
        near = gaussian(e2, options.sigma)
        coarse = gaussian(e2, options.coarse_sigma)
        ctrl = control_factor(x.a1, x.a2, options.ctrl_weight)
        w = options.coarse_weight
        terms = TrackTerms(
            reward_near=near,
            reward_coarse=coarse,
            reward_ctrl=ctrl,
            rms_error=rms,
            max_error=memory.max_error,
        )
        reward = ctrl * (w * coarse + (1.0 - w) * near)
        lost = (options.lost_distance > 0.0) & (err > options.lost_distance)
        success = (rms <= options.tolerance) & ~lost
        return Outcome(reward, lost, success, err), terms, memory, extras
