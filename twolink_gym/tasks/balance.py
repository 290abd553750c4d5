"""``balance``: keep the arm upright at ``q = [pi/2, 0]`` from a perturbed start."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar, NamedTuple

import numpy as np

from twolink_gym._jit import kernel, python_source
from twolink_gym.kinematics import forward_kinematics
from twolink_gym.params import ArmParams
from twolink_gym.tasks.base import (
    UPRIGHT,
    Array,
    Outcome,
    RenderItem,
    Task,
    UprightLine,
    Wedge,
    perturbed_state,
    task_kernel,
)
from twolink_gym.tasks.rewards import control_factor, gaussian

__all__ = [
    "BalanceTask",
    "BalanceTerms",
    "balance_kernel",
    "link_tilts",
    "tilt_from_vertical",
    "upright_items",
    "upright_terms",
]


class BalanceTerms(NamedTuple):
    """The balance reward's factors (see :class:`BalanceTask`)."""

    reward_upright: float
    reward_ctrl: float
    reward_still: float


@kernel()
def tilt_from_vertical(angle: Any) -> Any:
    """An absolute link angle's tilt from the upward vertical, wrapped to ``[-pi, pi)`` [rad].

    ``%`` is a floored modulo on floats in compiled code, in Python and on numpy
    arrays alike, so this source also runs on arrays (:func:`link_tilts`).
    """
    return (angle - math.pi / 2 + math.pi) % (2.0 * math.pi) - math.pi


def link_tilts(state: Array) -> tuple[Array, Array]:
    """Absolute angles of link 1 and link 2 from the upward vertical [rad], each ``(n,)``.

    Both are wrapped to ``[-pi, pi)``; both are 0 at the upright pose.
    """
    tilt = python_source(tilt_from_vertical)
    return tilt(state[:, 0]), tilt(state[:, 0] + state[:, 1])


@kernel(inline=True)
def upright_terms(x: Any, options: Any) -> tuple[float, float, float, bool]:
    """The upright pose's reward factors, distance and success (balance and swing-up).

    Reads the step ``x`` (``q1, q2, dq1, dq2``) and the options ``upright_sigma``,
    ``still_sigma``, ``speed_weight``, ``success_angle``, ``success_speed`` by name.

    Returns
    -------
    upright : float
        ``exp(-(tilt1² + tilt2²) / (2 upright_sigma²))``, in ``(0, 1]``.
    still : float
        ``1 - speed_weight · (1 - exp(-|dq|² / (2 still_sigma²)))``, in ``[1 - speed_weight, 1]``.
    distance : float
        The larger absolute link tilt from the vertical [rad].
    success : bool
        Both tilts within ``success_angle`` and both joint speeds within ``success_speed``.
    """
    tilt1 = tilt_from_vertical(x.q1)
    tilt2 = tilt_from_vertical(x.q1 + x.q2)
    dist = max(abs(tilt1), abs(tilt2))
    upright = gaussian(tilt1 * tilt1 + tilt2 * tilt2, options.upright_sigma)
    speed2 = x.dq1 * x.dq1 + x.dq2 * x.dq2
    still = 1.0 - options.speed_weight * (1.0 - gaussian(speed2, options.still_sigma))
    limit = options.success_speed
    success = dist <= options.success_angle and abs(x.dq1) <= limit and abs(x.dq2) <= limit
    return upright, still, dist, success


@task_kernel
def balance_kernel(
    arm: Any, options: Any, x: Any, goal: Array, memory: Any, extras: Array
) -> tuple[Outcome, BalanceTerms, Any]:
    """The balance task's step: the bounded reward, its factors, fall and success (a task kernel)."""
    upright, still, dist, success = upright_terms(x, options)
    ctrl = control_factor(x.a1, x.a2, options.ctrl_weight)
    terms = BalanceTerms(reward_upright=upright, reward_ctrl=ctrl, reward_still=still)
    outcome = Outcome(upright * ctrl * still, dist > options.fall_angle, success, dist)
    return outcome, terms, memory


def upright_items(
    params: ArmParams, state: Array, success_angle: float, fall_angle: float | None = None
) -> list[RenderItem]:
    """What balance and swing-up draw: the allowed tilts, the success band, the upright line.

    The wedge of tilts within ``fall_angle`` (if given) about the base, the
    success band of ``±success_angle`` about the vertical at the base (where
    link 1 must be) and at the elbow (where link 2 must be), and the dashed
    upright reference over the arm.
    """
    reach = params.reach
    items: list[RenderItem] = []
    if fall_angle is not None and 0 < fall_angle < math.pi:
        items.append(Wedge((0.0, 0.0), reach, fall_angle, "zone"))
    if 0 < success_angle < math.pi:
        elbow, _ = forward_kinematics(params, state[:2])
        items.append(Wedge((0.0, 0.0), reach, success_angle, "band"))
        items.append(Wedge((float(elbow[0]), float(elbow[1])), params.l2, success_angle, "band"))
    items.append(UprightLine(reach))
    return items


@dataclasses.dataclass(frozen=True)
class BalanceTask(Task):
    """Balance the arm upright (the unstable equilibrium ``q = [pi/2, 0]``).

    The episode starts at the upright pose with each angle perturbed uniformly
    by up to ``init_angle_noise`` and each speed by up to ``init_speed_noise``.
    The reward is bounded in ``[0, 1]`` (multiplicative, like dm_control's
    cartpole)::

        upright = exp(-(tilt1² + tilt2²) / (2 upright_sigma²))
        ctrl    = 1 - ctrl_weight · |a|² / 2
        still   = 1 - speed_weight · (1 - exp(-|dq|² / (2 still_sigma²)))
        reward  = upright · ctrl · still

    where ``tilt1``, ``tilt2`` are the absolute link angles from the vertical.
    The upright factor is a Gaussian in each tilt: its maximum is the upright
    pose itself and it is sharp across the success band (0.71 per link at a
    tilt of 0.1 rad with the default ``upright_sigma`` of 0.12 rad), so a pose
    held off vertical costs a visible share of the reward. (Version 0 used
    ``(1 + cos tilt)/2`` per link, which is 0.9975 at 0.1 rad: agents learned to
    hold a pose just outside the success band.) The stillness factor is sharp
    on the scale of ``success_speed`` likewise (``still_sigma`` 0.5 rad/s: 0.80
    at 0.5 rad/s), so that a policy that chatters around the upright (a
    period-2 bang-bang cycle at 1–2 rad/s, which a sharp upright factor alone
    invited) loses half of its reward; version 0 divided by 10 rad²/s² (0.99 at
    0.5 rad/s).
    The episode terminates when either link tilts more than ``fall_angle`` from
    the vertical. Success: both tilts below ``success_angle`` and both joint
    speeds below ``success_speed`` (at the end of a full episode).

    Parameters
    ----------
    fall_angle : float
        Tilt of either link from the vertical that ends the episode [rad].
    success_angle : float
        Tilt below which the arm counts as upright [rad].
    success_speed : float
        Joint speed below which the arm counts as still [rad/s].
    upright_sigma : float
        Width of the Gaussian upright factor in each tilt [rad].
    still_sigma : float
        Width of the stillness factor in the joint speeds [rad/s].
    ctrl_weight, speed_weight : float
        Strength of the control and speed factors, in ``[0, 1]``.
    init_angle_noise, init_speed_noise : float
        Half-widths of the uniform initial perturbation [rad], [rad/s].
    """

    name: ClassVar[str] = "balance"
    episode_seconds: ClassVar[float] = 10.0
    distance_unit: ClassVar[str] = "rad"
    tolerance_option: ClassVar[str | None] = "success_angle"
    Terms: ClassVar[type] = BalanceTerms
    kernel: ClassVar[Any] = staticmethod(balance_kernel)

    fall_angle: float = math.pi / 3
    success_angle: float = 0.1
    success_speed: float = 0.5
    upright_sigma: float = 0.12
    still_sigma: float = 0.5
    ctrl_weight: float = 0.2
    speed_weight: float = 0.5
    init_angle_noise: float = 0.1
    init_speed_noise: float = 0.1

    def __post_init__(self) -> None:
        super().__post_init__()
        self.check_positive(
            "fall_angle", "success_angle", "success_speed", "upright_sigma", "still_sigma"
        )
        self.check_in_range(("ctrl_weight", "speed_weight"), 0.0, 1.0)
        self.check_in_range(("init_angle_noise", "init_speed_noise"), 0.0)

    def sample_initial_state(self, rng: np.random.Generator, params: ArmParams) -> Array:
        """Upright, uniformly perturbed."""
        return perturbed_state(rng, UPRIGHT, self.init_angle_noise, self.init_speed_noise)

    def render_items(
        self, params: ArmParams, state: Array, goal: Array, time: float
    ) -> list[RenderItem]:
        """The wedge of allowed tilts, the success band and the upright line."""
        return upright_items(params, state, self.success_angle, self.fall_angle)
