"""``swingup``: swing the arm up from hanging, catch it upright and hold it there."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar, NamedTuple

import numpy as np

from twolink_gym.kinematics import tip_from_trig
from twolink_gym.params import ArmParams
from twolink_gym.tasks.balance import upright_items, upright_terms
from twolink_gym.tasks.base import (
    DEFAULT_MAX_TORQUE,
    HANGING,
    UPRIGHT,
    Array,
    Outcome,
    RenderItem,
    Task,
    perturbed_state,
    task_kernel,
)
from twolink_gym.tasks.push import push, push_target, push_turns, wound
from twolink_gym.tasks.rewards import control_factor

__all__ = [
    "HANGING",
    "SWINGUP_MAX_TORQUE",
    "SWINGUP_UNDERACTUATED_MAX_TORQUE",
    "TURNS_LIMIT",
    "SwingupMemory",
    "SwingupTask",
    "SwingupTerms",
    "swingup_kernel",
]

#: The swing-up task's default torque limits [N·m] for the full arm (see :class:`SwingupTask`).
SWINGUP_MAX_TORQUE = (8.0, 4.0)
#: Its default limits [N·m] for the acrobot and the pendubot: the arm's ordinary
#: motors (:data:`~twolink_gym.tasks.base.DEFAULT_MAX_TORQUE`), of which each
#: uses one (see :class:`SwingupTask`).
SWINGUP_UNDERACTUATED_MAX_TORQUE = DEFAULT_MAX_TORQUE
#: The largest turns ``|q| / 2π`` the ``observe_turns`` extras show (beyond it they are clipped).
TURNS_LIMIT = 16.0


class SwingupTerms(NamedTuple):
    """The swing-up reward's factors (see :class:`SwingupTask`)."""

    reward_height: float
    reward_upright: float
    reward_still: float
    reward_ctrl: float
    reward_smooth: float
    reward_line: float


class SwingupMemory(NamedTuple):
    """What a swing-up episode remembers (zero at its start)."""

    was_up: float  # 1 once both links have been within fall_angle of the vertical, else 0
    a1: float  # the previous step's normalised action (0 before the first step)
    a2: float


@task_kernel
def swingup_kernel(
    arm: Any, options: Any, x: Any, goal: Array, memory: SwingupMemory, extras: Array
) -> tuple[Outcome, SwingupTerms, SwingupMemory]:
    """The swing-up task's step: the bounded reward, its factors and success (a task kernel).

    Terminates only with ``fall_angle > 0``: when a link tilts more than
    ``fall_angle`` from the vertical after both were within it at an earlier step.
    With ``observe_turns``, writes the extras ``q / 2π`` (clipped to ±:data:`TURNS_LIMIT`).
    """
    upright, still, dist, success = upright_terms(x, options)
    inside = dist <= options.fall_angle
    fell = options.fall_angle > 0.0 and memory.was_up > 0.0 and not inside
    was_up = 1.0 if inside else memory.was_up
    # cos(tilt) = sin(absolute angle); (1 + sin)/2 is 1 upright, 1/2 level, 0 hanging;
    # the geometric mean of the two links' heights (quadratic, not quartic, near hanging)
    # s12 = s1 c2 + c1 s2 may round below -1 near hanging: clamp at 0 (not NaN)
    height = 0.5 * math.sqrt(max((1.0 + x.s1) * (1.0 + x.s12), 0.0))
    ctrl = control_factor(x.a1, x.a2, options.ctrl_weight)
    # |Δa|² is at most 8 (2 per joint squared): a quarter of the weight bounds it like ctrl
    smooth = control_factor(x.a1 - memory.a1, x.a2 - memory.a2, 0.25 * options.smooth_weight)
    # the tip's height above the shoulder against the line (a fraction of the reach)
    _, tip_height = tip_from_trig(arm, x.c1, x.s1, x.c12, x.s12)
    line = 1.0 if tip_height > options.line_height * (arm.l1 + arm.l2) else 0.0
    is_wound = wound(x.q1, x.q2)
    line *= 1.0 - options.wound_weight * is_wound
    w = options.height_weight
    lw = options.line_weight
    terms = SwingupTerms(
        reward_height=height,
        reward_upright=upright,
        reward_still=still,
        reward_ctrl=ctrl,
        reward_smooth=smooth,
        reward_line=line,
    )
    shaped = w * height + (1.0 - w) * upright * still
    shaped *= 1.0 - options.wound_shaped_weight * is_wound
    reward = ctrl * smooth * ((1.0 - lw) * shaped + lw * line)
    memory = SwingupMemory(was_up=was_up, a1=x.a1, a2=x.a2)
    if options.observe_turns:
        extras[0] = min(max(x.q1 / (2.0 * math.pi), -TURNS_LIMIT), TURNS_LIMIT)
        extras[1] = min(max(x.q2 / (2.0 * math.pi), -TURNS_LIMIT), TURNS_LIMIT)
    return Outcome(reward, fell, success, dist), terms, memory


@dataclasses.dataclass(frozen=True)
class SwingupTask(Task):
    """Swing the arm up from hanging and hold it upright (``q = [pi/2, 0]``).

    Episodes start at the hanging equilibrium ``[-pi/2, 0, 0, 0]`` with each
    angle perturbed uniformly by up to ``init_angle_noise`` and each speed by up
    to ``init_speed_noise``, and last ``episode_seconds`` (15 s); they never
    terminate early. Success is the balance task's: at the end of the episode
    both links lie within ``success_angle`` of the vertical and both joint
    speeds are below ``success_speed``. The time of the first arrival in that
    band is a metric of the evaluation (``swingup_time``), not part of success.
    With ``fall_angle`` set (for training), an episode ends when the arm, once
    up (both links within ``fall_angle`` of the vertical), falls out of it again.

    The reward is bounded in ``[0, 1]``::

        height  = sqrt((1 + sin q1)/2 · (1 + sin(q1 + q2))/2)  # 0 hanging, 1 upright
        upright = exp(-(tilt1² + tilt2²) / (2 upright_sigma²))
        still   = 1 - speed_weight · (1 - exp(-|dq|² / (2 still_sigma²)))
        ctrl    = 1 - ctrl_weight · |a|² / 2
        smooth  = 1 - smooth_weight · |a - a_prev|² / 8    # a_prev: last step's action (0 at first)
        line    = 1 if tip height above the shoulder > line_height · (l1 + l2), else 0,
                  times 1 - wound_weight if the arm is wound (a v3 push would turn it back)
        shaped  = height_weight · height + (1 - height_weight) · upright · still,
                  times 1 - wound_shaped_weight if the arm is wound
        reward  = ctrl · smooth · ((1 - line_weight) · shaped + line_weight · line)

    ``height`` is a smooth guide from anywhere: the geometric mean of the two
    links' heights, so that one link up and one down earns nothing, while a
    straight arm swinging by ``θ`` from hanging earns ``(1 - cos θ)/2 ≈ θ²/4``
    (the plain product, ``θ⁴/16``, gave almost no signal to small swings, and
    one seed of five never left the bottom). ``upright · still`` is the
    balance task's sharp, still upright, which is what success asks for. An
    arm that spins through the upright at speed earns about
    ``height_weight / 2`` on average, one held upright earns 1.

    Default torque limits (:data:`SWINGUP_MAX_TORQUE`, (8, 4) N·m, used when
    the env is made without ``max_torque``): too weak to lift the arm through
    its poses quasi-statically, so it must pump energy. With the elbow holding
    at most ``τ2``, the smallest shoulder torque that holds link 1 horizontal is
    ``g1 - min(τ2, g2)`` (link 2 hanging back as far as the elbow can hold it),
    where ``g1 = (m1 lc1 + m2 l1) g`` and ``g2 = m2 lc2 g``: 14.715 − 4 = 10.7 N·m
    for the default arm, above the 8 N·m available (docs/environments/swingup.md).

    The acrobot and the pendubot keep the arm's ordinary motors
    (:data:`SWINGUP_UNDERACTUATED_MAX_TORQUE`, (30, 10) N·m: 10 N·m at the
    acrobot's elbow, 30 N·m at the pendubot's shoulder). Whatever its one
    motor's limit, an underactuated arm cannot be lifted quasi-statically (its
    passive joint cannot be held), so it must pump energy anyway; under these
    limits the upright LQR's region of attraction is large enough to catch the
    arm (docs/controllers.md, energy control and the catch).
    :meth:`~twolink_gym.tasks.base.Task.default_max_torque_for` maps the
    actuation to these defaults.

    Parameters
    ----------
    success_angle : float
        Tilt of each link below which the arm counts as upright [rad].
    success_speed : float
        Joint speed below which the arm counts as still [rad/s].
    upright_sigma : float
        Width of the Gaussian upright factor in each tilt [rad].
    still_sigma : float
        Width of the stillness factor in the joint speeds [rad/s].
    height_weight, ctrl_weight, speed_weight : float
        In ``[0, 1]``: the share of the height guide, and the strength of the
        control and speed factors.
    smooth_weight : float
        In ``[0, 1]``: the strength of the smoothness factor, which pays
        ``1 - smooth_weight`` for a full reversal of both torques from one step
        to the next and 1 for a held torque (for training agents whose torque
        must change little between decisions, as RealAIGym's score asks; the
        policy does not observe its previous action). 0 (the default): off.
    line_weight : float
        In ``[0, 1]``: the share of the line term, 1 while the tip is above
        ``line_height`` of the reach (RealAIGym v3's score counts the time the
        tip spends above 0.9 of the reach, the default ``line_height``; for
        training agents that get back above it fast from wherever they are).
        0 (the default): off.
    line_height : float
        In ``[-1, 1]``: the line's height above the shoulder as a fraction of
        the reach ``l1 + l2``.
    wound_weight : float
        In ``[0, 1]``: the share of the line term withheld while the arm is
        wound (:func:`twolink_gym.tasks.push.wound`: a joint's nearest upright
        lies outside the range of v3's push targets, so that a push would turn
        it back through whole turns and hand it back spinning; for training
        agents that come up unwound). 0 (the default): off.
    wound_shaped_weight : float
        In ``[0, 1]``: the share of the shaped half (the height guide and the
        upright, still factor) withheld while the arm is wound, so that an arm
        spinning a joint through whole turns is not paid for passing the
        upright (with ``wound_weight`` 1 as well, a wound arm earns nothing).
        0 (the default): off.
    init_angle_noise, init_speed_noise : float
        Half-widths of the uniform perturbation of the hanging start [rad], [rad/s].
    explore_fraction : float
        In ``[0, 1]``: the share of episodes that start anywhere instead
        ("exploring starts", for training): both angles uniform over the
        whole circle, each speed uniform within ``±explore_speed``. The rest
        start near hanging as above, so that a policy trained on the mixture
        still meets the arm at rest at the bottom. 0 (the default) draws
        exactly the hanging starts.
    explore_speed : float
        Half-width of the exploring starts' joint speeds [rad/s].
    catch_fraction : float
        In ``[0, 1]``, at most ``1 - explore_fraction``: the share of episodes
        that start near upright instead ("catch starts", for training: the
        states where an arm swung up must be caught, rare in a policy's own
        samples), each angle within ``±catch_angle`` of upright and each speed
        within ``±catch_speed``. 0 (the default) draws none.
    catch_angle, catch_speed : float
        Half-widths of the catch starts' perturbation of upright [rad], [rad/s].
    push_fraction : float
        In ``[0, 1]``, at most ``1 - explore_fraction - catch_fraction``: the
        share of episodes that start where a RealAIGym v3 push leaves the arm
        ("push starts", for training agents that recover from pushes): from a
        catch start (above), with the shoulder a turn lower on half of them
        (an arm that came up the other way) and the elbow wound ``k`` turns,
        ``k`` uniform over ``-push_turns … push_turns``, one push of 0.2 s
        towards angles uniform over the circle
        (:func:`twolink_gym.tasks.push.push`; v3 does not wrap the angles, so
        an arm wound a turn is pushed a turn back, and spins). 0 (the default)
        draws none.
    push_turns : int
        The most turns the elbow of a push start is wound (``>= 0``).
    observe_turns : bool
        If true, the observation has two extras: each joint's angle in turns,
        ``q1 / 2π`` and ``q2 / 2π``, clipped to ``±TURNS_LIMIT`` (16); the
        sines and cosines do not show whole turns, which RealAIGym v3's pushes
        act on (see ``wound_weight``). False (the default): no extras.
    fall_angle : float
        If positive, the episode terminates when either link tilts more than
        this from the vertical [rad] after both links were within it at an
        earlier step (a swing-up that reached the top, or a catch start): the
        balance task's fall, for training an agent to hold the arm once up (a
        fall then costs the rest of the episode's reward). 0 (the default)
        never terminates.
    """

    name: ClassVar[str] = "swingup"
    episode_seconds: ClassVar[float] = 15.0
    default_max_torque: ClassVar[tuple[float, float]] = SWINGUP_MAX_TORQUE
    actuation_max_torque: ClassVar[Mapping[str, tuple[float, float]]] = MappingProxyType(
        {
            "acrobot": SWINGUP_UNDERACTUATED_MAX_TORQUE,
            "pendubot": SWINGUP_UNDERACTUATED_MAX_TORQUE,
        }
    )
    distance_unit: ClassVar[str] = "rad"
    tolerance_option: ClassVar[str | None] = "success_angle"
    distance_log_axis: ClassVar[bool] = False
    Terms: ClassVar[type] = SwingupTerms
    Memory: ClassVar[type] = SwingupMemory
    episode_option_names: ClassVar[tuple[str, ...]] = (
        *Task.episode_option_names,
        "explore_fraction",
        "explore_speed",
        "catch_fraction",
        "catch_angle",
        "catch_speed",
        "push_fraction",
        "push_turns",
    )
    kernel: ClassVar[Any] = staticmethod(swingup_kernel)

    success_angle: float = 0.1
    success_speed: float = 0.5
    upright_sigma: float = 0.15
    still_sigma: float = 0.5
    height_weight: float = 0.2
    ctrl_weight: float = 0.1
    smooth_weight: float = 0.0
    speed_weight: float = 0.5
    line_weight: float = 0.0
    line_height: float = 0.9
    wound_weight: float = 0.0
    wound_shaped_weight: float = 0.0
    init_angle_noise: float = 0.05
    init_speed_noise: float = 0.05
    explore_fraction: float = 0.0
    explore_speed: float = 1.0
    catch_fraction: float = 0.0
    catch_angle: float = 0.3
    catch_speed: float = 1.0
    push_fraction: float = 0.0
    push_turns: int = 2
    observe_turns: bool = False
    fall_angle: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        self.check_positive("success_angle", "success_speed", "upright_sigma", "still_sigma")
        self.check_in_range(
            (
                "height_weight",
                "ctrl_weight",
                "smooth_weight",
                "speed_weight",
                "line_weight",
                "wound_weight",
                "wound_shaped_weight",
                "explore_fraction",
                "catch_fraction",
                "push_fraction",
            ),
            0.0,
            1.0,
        )
        self.check_in_range(
            (
                "init_angle_noise",
                "init_speed_noise",
                "explore_speed",
                "catch_angle",
                "catch_speed",
                "fall_angle",
            ),
            0.0,
        )
        self.check_in_range(("line_height",), -1.0, 1.0)
        if isinstance(self.push_turns, bool) or not isinstance(self.push_turns, int):
            raise ValueError(
                f"swingup task option push_turns must be an integer >= 0, got {self.push_turns!r}"
            )
        self.check_in_range(("push_turns",), 0.0)
        # the per-instance extras (a class attribute of the other tasks)
        object.__setattr__(self, "extras_size", 2 if self.observe_turns else 0)
        if self.explore_fraction + self.catch_fraction + self.push_fraction > 1.0:
            raise ValueError(
                "swingup task options explore_fraction + catch_fraction + push_fraction must be "
                f"at most 1, got {self.explore_fraction} + {self.catch_fraction} + "
                f"{self.push_fraction}"
            )

    def sample_initial_state(self, rng: np.random.Generator, params: ArmParams) -> Array:
        """Hanging, uniformly perturbed; anywhere, near upright or pushed with their probabilities.

        Without exploring, catch or push starts (their fractions 0) one draw of 4
        uniforms, as for the other tasks; with any, one more uniform ``u`` first
        picks the kind of start: anywhere if ``u < explore_fraction``, near
        upright if ``u < explore_fraction + catch_fraction``, pushed if below
        that plus ``push_fraction`` (a catch start's 4 uniforms, then 4 more: the
        shoulder a turn lower if the first is below 0.5, the elbow's turns
        ``floor(w (2 push_turns + 1)) - push_turns`` from the second, the push's
        target from the other two), else hanging.
        """
        explore, catch = self.explore_fraction, self.catch_fraction
        if explore > 0.0 or catch > 0.0 or self.push_fraction > 0.0:
            u = rng.uniform()
            if u < explore:
                return perturbed_state(rng, HANGING, math.pi, self.explore_speed)
            if u < explore + catch:
                return perturbed_state(rng, UPRIGHT, self.catch_angle, self.catch_speed)
            if u < explore + catch + self.push_fraction:
                held = perturbed_state(rng, UPRIGHT, self.catch_angle, self.catch_speed)
                turn, wound, *draws = rng.uniform(size=4)
                held[0] -= 2.0 * math.pi if turn < 0.5 else 0.0
                held[1] += 2.0 * math.pi * push_turns(wound, self.push_turns)
                return push(params, held, push_target(draws))
        return perturbed_state(rng, HANGING, self.init_angle_noise, self.init_speed_noise)

    def extras_bounds(self, params: ArmParams) -> tuple[Array, Array]:
        """With ``observe_turns``: the turns, within ``±TURNS_LIMIT``; else empty."""
        high = np.full(self.extras_size, TURNS_LIMIT)
        return -high, high

    def extras_names(self) -> tuple[str, ...]:
        """With ``observe_turns``: ``[q1_turns, q2_turns]`` (``q / 2π``); else none."""
        return ("q1_turns", "q2_turns") if self.observe_turns else ()

    def render_items(
        self, params: ArmParams, state: Array, goal: Array, time: float
    ) -> list[RenderItem]:
        """The success band, the upright line and the allowed tilts if ``fall_angle`` is set."""
        return upright_items(params, state, self.success_angle, self.fall_angle or None)
