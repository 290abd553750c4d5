"""``reach``: bring the tip to a random target in the workspace and hold it there."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from twolink_gym.kinematics import forward_kinematics, tip_velocity
from twolink_gym.params import ArmParams
from twolink_gym.tasks.base import ArmFrame, Array, Ops, Outcome, Task

__all__ = ["ReachTask"]


def _total(terms: Mapping[str, Any]) -> Any:
    """The reward: the sum of its terms, in their order (floats or arrays of shape ``(n,)``)."""
    reward: Any = 0.0
    for value in terms.values():
        reward = reward + value
    return reward


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
    away. (Version 0 had only the cone: 4 cm or 6 cm from the target differed by
    0.02 a step, and SAC ended a median 4–6 cm off; see the README's version
    history.)

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
    extras_size: ClassVar[int] = 4

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
        for name in ("tolerance", "success_speed", "near_sigma"):
            if not getattr(self, name) > 0:
                raise ValueError(
                    f"reach task option {name} must be > 0, got {getattr(self, name)!r}"
                )
        for name in (
            "near_weight",
            "ctrl_weight",
            "speed_weight",
            "init_angle_noise",
            "init_speed_noise",
        ):
            if not getattr(self, name) >= 0:
                raise ValueError(
                    f"reach task option {name} must be >= 0, got {getattr(self, name)!r}"
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
        noise = rng.uniform(-1.0, 1.0, size=4)
        scale = np.array([self.init_angle_noise] * 2 + [self.init_speed_noise] * 2)
        return np.array([-math.pi / 2, 0.0, 0.0, 0.0]) + noise * scale

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
    def observation_extras(self, params: ArmParams, state: Array, goal: Array) -> Array:
        """``[target_x, target_y, target_x - tip_x, target_y - tip_y]`` [m]."""
        tip = forward_kinematics(params, state[:, :2])[1]
        return np.concatenate([goal, goal - tip], axis=1)

    def extras_bounds(self, params: ArmParams) -> tuple[Array, Array]:
        """Targets lie within ``R`` of the base, tip-to-target vectors within ``2R``."""
        r = params.reach
        high = np.array([r, r, 2 * r, 2 * r])
        return -high, high

    def extras_names(self) -> tuple[str, ...]:
        """Names of the extras."""
        return ("target_x", "target_y", "to_target_x", "to_target_y")

    # -- reward, termination, success -----------------------------------
    def distance(self, params: ArmParams, state: Array, goal: Array) -> Array:
        """Tip-to-target distance [m]."""
        tip = forward_kinematics(params, state[:, :2])[1]
        return np.hypot(goal[:, 0] - tip[:, 0], goal[:, 1] - tip[:, 1])

    def _tip_speed(self, params: ArmParams, state: Array) -> Array:
        v = tip_velocity(params, state[:, :2], state[:, 2:])
        return np.hypot(v[:, 0], v[:, 1])

    def reward(
        self, params: ArmParams, state: Array, goal: Array, action: Array
    ) -> tuple[Array, dict[str, Array]]:
        """Dense or sparse reward, with its terms."""
        dist = self.distance(params, state, goal)
        terms = {
            **self.distance_terms(dist),
            **self.goal_free_terms(np.sum(action**2, axis=1), self._tip_speed(params, state)),
        }
        return _total(terms), terms

    def goal_free_terms(self, action_sq: Any, tip_speed: Any) -> dict[str, Any]:
        """The reward terms that do not depend on the target (empty for the sparse reward).

        Parameters
        ----------
        action_sq : float or ndarray, shape (n,)
            ``|a|²`` of the applied normalised action.
        tip_speed : float or ndarray, shape (n,)
            Tip speed [m/s].

        Returns
        -------
        dict
            ``reward_ctrl`` and, with ``speed_weight > 0``, ``reward_speed``.
        """
        if self.sparse:
            return {}
        terms = {"reward_ctrl": -self.ctrl_weight * action_sq}
        if self.speed_weight:
            terms["reward_speed"] = -self.speed_weight * tip_speed * tip_speed
        return terms

    def distance_terms(self, dist: Any, exp: Callable[[Any], Any] = np.exp) -> dict[str, Any]:
        """The reward terms that depend on the tip-to-target distance ``dist`` [m].

        Parameters
        ----------
        dist : float or ndarray, shape (n,)
            Tip-to-target distance [m].
        exp : callable
            The exponential of ``dist``'s kind (the fast paths pass theirs).

        Returns
        -------
        dict
            Sparse: ``reward_dist`` (1 within ``tolerance``, else 0). Dense:
            ``reward_dist = -dist`` and ``reward_near``, the Gaussian term.
        """
        if self.sparse:
            return {"reward_dist": 1.0 * (dist <= self.tolerance)}
        near = self.near_weight * exp(-(dist * dist) / (2.0 * self.near_sigma**2))
        return {"reward_dist": -dist, "reward_near": near}

    def reward_at_distance(
        self, dist: Any, terms: Mapping[str, Any], exp: Callable[[Any], Any] = np.exp
    ) -> Any:
        """The reward for a tip ``dist`` [m] from the target, given :meth:`goal_free_terms`.

        Goal relabelling (``compute_reward`` of a goal-conditioned view, for HER)
        calls it. It is the sum the env's step takes: :meth:`distance_terms`
        and :meth:`goal_free_terms`, added in the same order by the same
        function, so a relabelled reward equals the env's to the last bit.
        Works on floats and on arrays of shape ``(n,)``.
        """
        return _total({**self.distance_terms(dist, exp), **terms})

    def is_success(self, params: ArmParams, state: Array, goal: Array) -> NDArray[np.bool_]:
        """Within ``tolerance`` of the target and slower than ``success_speed``."""
        return (self.distance(params, state, goal) <= self.tolerance) & (
            self._tip_speed(params, state) <= self.success_speed
        )

    def outcome(
        self,
        params: ArmParams,
        ops: Ops,
        frame: ArmFrame,
        goal: Sequence[Any],
        a1: Any,
        a2: Any,
    ) -> Outcome:
        """All of the task's per-step values in one pass (see :meth:`Task.outcome`)."""
        gx, gy = goal
        to_x = gx - frame.tip_x
        to_y = gy - frame.tip_y
        dist = ops.sqrt(to_x * to_x + to_y * to_y)
        extras = (gx, gy, to_x, to_y)
        # tip velocity J(q) dq, with the terms of kinematics.jacobian
        s1, c1 = params.l1 * frame.s1, params.l1 * frame.c1
        s12, c12 = params.l2 * frame.s12, params.l2 * frame.c12
        vx = (-s1 - s12) * frame.dq1 + (-s12) * frame.dq2
        vy = (c1 + c12) * frame.dq1 + c12 * frame.dq2
        speed = ops.sqrt(vx * vx + vy * vy)
        success = (dist <= self.tolerance) & (speed <= self.success_speed)
        terms = {
            **self.distance_terms(dist, ops.exp),
            **self.goal_free_terms(a1 * a1 + a2 * a2, speed),
        }
        return Outcome(_total(terms), terms, False, success, dist, extras)
