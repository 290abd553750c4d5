"""``reach``: bring the tip to a random target in the workspace and hold it there."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple

import numpy as np

from twolink_gym._jit import kernel
from twolink_gym.kernel import from_vector
from twolink_gym.params import ArmParams
from twolink_gym.tasks.base import (
    HANGING,
    Array,
    Outcome,
    RenderItem,
    Target,
    Task,
    perturbed_state,
    task_kernel,
)
from twolink_gym.tasks.rewards import gaussian, tolerance

__all__ = ["ReachTask", "ReachTerms", "reach_kernel", "reach_reward"]


class ReachTerms(NamedTuple):
    """The reach reward's terms (see :class:`ReachTask`)."""

    reward_dist: float
    reward_near: float
    reward_ctrl: float
    reward_speed: float


@kernel(inline=True)
def reach_reward(
    options: Any, dist: float, reward_ctrl: float, reward_speed: float
) -> tuple[float, ReachTerms]:
    """The reach reward and its terms at tip-to-target distance ``dist`` [m], given the goal-free terms.

    Returns the reward and :class:`ReachTerms` (all but ``reward_dist`` are 0
    for the sparse reward). The step's task kernel and goal relabelling
    (:meth:`ReachTask.reward_at_distance`, for HER) both call it, so a
    relabelled reward equals the env's to the last bit.
    """
    if options.sparse:
        hit = tolerance(dist, 0.0, options.tolerance)
        return hit, ReachTerms(reward_dist=hit, reward_near=0.0, reward_ctrl=0.0, reward_speed=0.0)
    near = options.near_weight * gaussian(dist * dist, options.near_sigma)
    terms = ReachTerms(
        reward_dist=-dist, reward_near=near, reward_ctrl=reward_ctrl, reward_speed=reward_speed
    )
    return -dist + near + reward_ctrl + reward_speed, terms


@task_kernel
def reach_kernel(
    arm: Any, options: Any, x: Any, goal: Array, memory: Any, extras: Array
) -> tuple[Outcome, ReachTerms, Any]:
    """The reach task's step: reward, success, tip-to-target distance, extras (a task kernel)."""
    l1c1, l1s1 = arm.l1 * x.c1, arm.l1 * x.s1
    l2c12, l2s12 = arm.l2 * x.c12, arm.l2 * x.s12
    to_x = goal[0] - (l1c1 + l2c12)
    to_y = goal[1] - (l1s1 + l2s12)
    dist = math.sqrt(to_x * to_x + to_y * to_y)
    extras[0] = goal[0]
    extras[1] = goal[1]
    extras[2] = to_x
    extras[3] = to_y
    # tip velocity J(q) dq, with the terms of kinematics.jacobian
    vx = (-l1s1 - l2s12) * x.dq1 + (-l2s12) * x.dq2
    vy = (l1c1 + l2c12) * x.dq1 + l2c12 * x.dq2
    speed = math.sqrt(vx * vx + vy * vy)
    reward, terms = reach_reward(
        options,
        dist,
        -options.ctrl_weight * (x.a1 * x.a1 + x.a2 * x.a2),
        -options.speed_weight * speed * speed,
    )
    success = dist <= options.tolerance and speed <= options.success_speed
    return Outcome(reward, False, success, dist), terms, memory


@kernel()
def _reward_at_distance_loop(
    options_vector: Array, dist: Array, reward_ctrl: Array, reward_speed: Array, out: Array
) -> None:
    options = from_vector(_OPTIONS, options_vector)
    for i in range(dist.shape[0]):
        out[i] = reach_reward(options, dist[i], reward_ctrl[i], reward_speed[i])[0]


@dataclasses.dataclass(frozen=True)
class ReachTask(Task):
    """Reach a target point with the tip and hold it there.

    The episode starts near the hanging pose ``q = [-pi/2, 0]`` (each angle
    perturbed uniformly by up to ``init_angle_noise``, each speed by up to
    ``init_speed_noise``). The target is drawn uniformly by area in the annulus
    ``min_target_radius_frac·R <= r <= max_target_radius_frac·R`` around the base
    (``R = l1 + l2``, also kept outside ``|l1 - l2|``), away from the base
    singularity and the fully stretched arm.

    Dense reward (default)::

        d      = |tip - target|                                   [m]
        reward = -d + near_weight·exp(-d² / (2 near_sigma²))
                 - ctrl_weight·|a|² - speed_weight·|tip velocity|²

    The cone ``-d`` (as in Gymnasium's Reacher) pulls the tip towards the target
    from anywhere in the workspace; the Gaussian ``reward_near`` (1 at the
    target, 0.61 at ``d = near_sigma``, the 5 cm success radius by default,
    0.14 at twice that) is sharp across the success disc, so that holding the
    tip still on the target pays visibly more than hovering a few centimetres
    away: with the cone alone, 4 cm and 6 cm from the target differ by only
    0.02 a step.

    Sparse reward (``sparse=True``, like dm_control's ``reacher``): 1 when the tip is
    within ``tolerance`` of the target, else 0, and no costs. Reach never
    terminates early. Success: the tip is within ``tolerance`` of the target and
    moves slower than ``success_speed``.

    Parameters
    ----------
    tolerance : float
        Success radius around the target [m].
    success_speed : float
        Tip speed below which the arm counts as holding the target [m/s].
    near_weight : float
        Weight of the Gaussian near-target term of the dense reward.
    near_sigma : float
        Width of the near-target term [m].
    ctrl_weight : float
        Weight of the squared normalised action in the dense reward.
    speed_weight : float
        Weight of the squared tip speed [per (m/s)²] in the dense reward.
    sparse : bool
        Use the sparse reward.
    init_angle_noise, init_speed_noise : float
        Half-widths of the uniform initial perturbation [rad], [rad/s].
    min_target_radius_frac, max_target_radius_frac : float
        Target radius range as fractions of ``l1 + l2``.
    """

    name: ClassVar[str] = "reach"
    episode_seconds: ClassVar[float] = 4.0
    goal_size: ClassVar[int] = 2
    goal_option: ClassVar[str | None] = "target"
    extras_size: ClassVar[int] = 4
    distance_unit: ClassVar[str] = "m"
    tolerance_option: ClassVar[str | None] = "tolerance"
    goal_conditioned: ClassVar[bool] = True
    Terms: ClassVar[type] = ReachTerms
    episode_option_names: ClassVar[tuple[str, ...]] = (
        *Task.episode_option_names,
        "min_target_radius_frac",
        "max_target_radius_frac",
    )
    kernel: ClassVar[Any] = staticmethod(reach_kernel)

    tolerance: float = 0.05
    success_speed: float = 0.1
    near_weight: float = 1.0
    near_sigma: float = 0.05
    ctrl_weight: float = 0.05
    speed_weight: float = 0.0
    sparse: bool = False
    init_angle_noise: float = 0.1
    init_speed_noise: float = 0.1
    min_target_radius_frac: float = 0.2
    max_target_radius_frac: float = 0.95

    def __post_init__(self) -> None:
        super().__post_init__()
        self.check_positive("tolerance", "success_speed", "near_sigma")
        self.check_in_range(
            ("near_weight", "ctrl_weight", "speed_weight", "init_angle_noise", "init_speed_noise"),
            0.0,
        )
        if not 0.0 <= self.min_target_radius_frac < self.max_target_radius_frac <= 1.0:
            raise ValueError(
                "reach task options must satisfy 0 <= min_target_radius_frac < "
                f"max_target_radius_frac <= 1, got {self.min_target_radius_frac!r} and "
                f"{self.max_target_radius_frac!r}"
            )

    # -- episodes --------------------------------------------------------
    def sample_initial_state(self, rng: np.random.Generator, params: ArmParams) -> Array:
        """Near hanging down, uniformly perturbed."""
        return perturbed_state(rng, HANGING, self.init_angle_noise, self.init_speed_noise)

    def target_radii(self, params: ArmParams) -> tuple[float, float]:
        """The range ``(r_min, r_max)`` [m] of target distances from the base."""
        r_min = max(self.min_target_radius_frac * params.reach, params.inner_radius)
        r_max = self.max_target_radius_frac * params.reach
        if r_min >= r_max:
            raise ValueError(
                f"reach targets have an empty radius range [{r_min}, {r_max}] m for {params}"
            )
        return r_min, r_max

    def sample_goal(self, rng: np.random.Generator, params: ArmParams) -> Array:
        """A target drawn uniformly by area in the target annulus."""
        r_min, r_max = self.target_radii(params)
        u, angle = rng.uniform(0.0, 1.0), rng.uniform(-math.pi, math.pi)
        r = math.sqrt(r_min**2 + u * (r_max**2 - r_min**2))
        return np.array([r * math.cos(angle), r * math.sin(angle)])

    def validate_goal(self, params: ArmParams, goal: Array) -> None:
        """Reject targets outside the arm's workspace."""
        r = np.hypot(goal[:, 0], goal[:, 1])
        bad = (r > params.reach + 1e-12) | (r < params.inner_radius - 1e-12)
        if np.any(bad):
            raise ValueError(
                f"options['target'] {goal[bad][0].tolist()} is outside the workspace "
                f"(distance from the base must lie in [{params.inner_radius}, {params.reach}] m)"
            )

    # -- observation -----------------------------------------------------
    def extras_bounds(self, params: ArmParams) -> tuple[Array, Array]:
        """Targets lie within ``R`` of the base, tip-to-target vectors within ``2R``."""
        r = params.reach
        high = np.array([r, r, 2 * r, 2 * r])
        return -high, high

    def extras_names(self) -> tuple[str, ...]:
        """``[target_x, target_y, target_x - tip_x, target_y - tip_y]`` [m]."""
        return ("target_x", "target_y", "to_target_x", "to_target_y")

    # -- reward ----------------------------------------------------------
    def reported_terms(self) -> tuple[str, ...]:
        """The reported terms: ``reward_dist``, and for the dense reward more.

        Dense: also ``reward_near``, ``reward_ctrl`` and, with ``speed_weight > 0``,
        ``reward_speed``.
        """
        if self.sparse:
            return ("reward_dist",)
        if self.speed_weight:
            return self.term_names
        return tuple(name for name in self.term_names if name != "reward_speed")

    def render_items(
        self, params: ArmParams, state: Array, goal: Array, time: float
    ) -> list[RenderItem]:
        """The target disc of radius ``tolerance``, green while the task reports success."""
        success = self.evaluate(params, state[None, :], goal[None, :], time=time).success[0]
        point = (float(goal[0]), float(goal[1]))
        return [Target(point, self.tolerance, bool(success))]

    def goal_free_term_names(self) -> tuple[str, ...]:
        """The reported terms that do not depend on the target (what HER must keep)."""
        return tuple(
            name for name in self.reported_terms() if name in ("reward_ctrl", "reward_speed")
        )

    def reward_at_distance(self, dist: Any, terms: Mapping[str, Any]) -> Any:
        """The reward for tips ``dist`` [m] from the target, given the goal-free terms.

        Goal relabelling (``compute_reward`` of a goal-conditioned view, for HER)
        calls it; it runs :func:`reach_reward`, the function the env's step runs.

        Parameters
        ----------
        dist : float or ndarray
            Tip-to-target distances [m].
        terms : mapping
            ``reward_ctrl`` and ``reward_speed`` of the transitions (as in their
            ``info``; a missing term counts as 0), broadcastable to ``dist``.

        Returns
        -------
        float or ndarray
            Of ``dist``'s shape.
        """
        d = np.asarray(dist, dtype=np.float64)
        flat = np.ascontiguousarray(d).reshape(-1)

        def term(name: str) -> Array:
            value = np.asarray(terms.get(name, 0.0), dtype=np.float64)
            return np.ascontiguousarray(np.broadcast_to(value, d.shape)).reshape(-1)

        out = np.empty_like(flat)
        _reward_at_distance_loop(
            self.kernel_options(), flat, term("reward_ctrl"), term("reward_speed"), out
        )
        return out.reshape(d.shape) if d.ndim else float(out[0])


# the options named tuple the relabelling loop reads (a compile-time constant there)
_OPTIONS = ReachTask.options_type()
