"""``track``: follow a moving reference ``r(t)`` with the tip.

The episode's goal is its reference, tabulated: the step kernel reads the
reference at the episode time ``t`` it is given, so one task kernel serves
the single env, the vector env and :meth:`Task.evaluate`, for any path
(:mod:`twolink_gym.paths`: circles, Lissajous curves and figure-eights,
looping paths, or sampled points).

Goal vector (``goal_size = HEADER_SIZE + ROW_SIZE · rows``), read only::

    [0]  table spacing h [s]                 (TABLE_DT)
    [1]  number of rows
    [2:] rows (x, y, vx, vy, ax, ay) of the reference at t = 0, h, 2h, ... [m, m/s, m/s²]

Between rows the reference is interpolated linearly (exact at the rows, so at
every control step when ``dt`` is a multiple of ``h``); after the last row it
stays at the last row. The episode's running error statistics live in the
task's per-episode memory (:class:`TrackMemory`), not in the goal.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple

import numpy as np

from twolink_gym._jit import kernel
from twolink_gym.kinematics import tip_from_trig
from twolink_gym.params import ArmParams
from twolink_gym.paths import (
    FAMILIES,
    SampledPath,
    TipPath,
    check_in_workspace,
    joint_states_on_branch,
    make_path,
    sample_path,
)
from twolink_gym.tasks.base import (
    DEFAULT_MAX_TORQUE,
    Array,
    Dots,
    Outcome,
    Polyline,
    RenderItem,
    Target,
    Task,
    perturbed_state,
    task_kernel,
)
from twolink_gym.tasks.rewards import control_factor, gaussian

__all__ = [
    "HEADER_SIZE",
    "MAX_REFERENCE_ACCELERATION",
    "MAX_REFERENCE_SPEED",
    "ROW_SIZE",
    "TABLE_DT",
    "TrackMemory",
    "TrackTask",
    "TrackTerms",
    "reference_at",
    "reference_position",
    "track_kernel",
]

#: Spacing of the reference table [s] (a divisor of the default control period).
TABLE_DT = 0.01
#: Entries before the table in the goal vector (see the module notes).
HEADER_SIZE = 2
#: Entries per table row: position, velocity, acceleration (x, y each).
ROW_SIZE = 6
#: Largest reference speed [m/s] and acceleration [m/s²] a path may have (the
#: observation's bounds).
MAX_REFERENCE_SPEED = 5.0
MAX_REFERENCE_ACCELERATION = 50.0

# entries of the goal's header
_H = 0
_ROWS = 1


class TrackTerms(NamedTuple):
    """The track reward's factors and the episode's error statistics [m] (see :class:`TrackTask`)."""

    reward_near: float
    reward_coarse: float
    reward_ctrl: float
    rms_error: float
    max_error: float


class TrackMemory(NamedTuple):
    """The running statistics of an episode's tracking error (zero at its start)."""

    sum_sq: float  # sum of squared tracking errors [m²]
    samples: float  # number of samples
    max_error: float  # largest tracking error [m]


@kernel(inline=True)
def _interpolation(goal: Array, t: float) -> tuple[int, float]:
    """Where time ``t`` falls in the table: the index of its row before ``t`` and the fraction on.

    Returns ``(base, f)``: the goal index of that row's first entry, and the
    fraction ``f`` in ``[0, 1]`` of the way to the next row (clamped at both ends).
    """
    rows = int(goal[_ROWS])
    k = t / goal[_H]
    if k <= 0.0:
        return HEADER_SIZE, 0.0
    i = int(k)
    if i >= rows - 1:
        return HEADER_SIZE + ROW_SIZE * (rows - 2), 1.0
    return HEADER_SIZE + ROW_SIZE * i, k - i


@kernel(inline=True)
def _interpolated(goal: Array, base: int, f: float, j: int) -> float:
    """Column ``j`` of the table, interpolated linearly at ``(base, f)`` (:func:`_interpolation`)."""
    return (1.0 - f) * goal[base + j] + f * goal[base + ROW_SIZE + j]


@kernel()
def reference_at(goal: Array, t: float, out: Array) -> None:
    """The reference at time ``t`` [s]: writes ``(x, y, vx, vy, ax, ay)`` into ``out[:6]``.

    Parameters
    ----------
    goal : ndarray, shape (goal_size,)
        A track goal (see the module notes).
    t : float
        Episode time [s].
    out : ndarray, shape (>= 6,)
        Position [m], velocity [m/s], acceleration [m/s²].
    """
    base, f = _interpolation(goal, t)
    for j in range(ROW_SIZE):
        out[j] = _interpolated(goal, base, f, j)


@kernel()
def reference_position(goal: Array, t: float) -> tuple[float, float]:
    """The reference position ``(x, y)`` [m] at time ``t`` [s] (see :func:`reference_at`)."""
    base, f = _interpolation(goal, t)
    return _interpolated(goal, base, f, 0), _interpolated(goal, base, f, 1)


@task_kernel
def track_kernel(
    arm: Any, options: Any, x: Any, goal: Array, memory: TrackMemory, extras: Array
) -> tuple[Outcome, TrackTerms, TrackMemory]:
    """The track task's step: reference, tracking error, reward, RMS success (a task kernel).

    Adds the step's error to the episode's running statistics (``memory``).
    """
    t = x.t
    reference_at(goal, t, extras)
    tip_x, tip_y = tip_from_trig(arm, x.c1, x.s1, x.c12, x.s12)
    ex = extras[0] - tip_x
    ey = extras[1] - tip_y
    extras[6] = ex
    extras[7] = ey
    for k in range(options.preview):
        px, py = reference_position(goal, t + (k + 1) * options.preview_dt)
        extras[8 + 2 * k] = px - tip_x
        extras[9 + 2 * k] = py - tip_y
    e2 = ex * ex + ey * ey
    err = math.sqrt(e2)
    memory = TrackMemory(
        sum_sq=memory.sum_sq + e2,
        samples=memory.samples + 1.0,
        max_error=max(memory.max_error, err),
    )
    rms = math.sqrt(memory.sum_sq / memory.samples)
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
    lost = options.lost_distance > 0.0 and err > options.lost_distance
    return Outcome(reward, lost, rms <= options.tolerance and not lost, err), terms, memory


@dataclasses.dataclass(frozen=True)
class TrackTask(Task):
    """Follow a time-parameterised reference ``r(t)`` with the tip.

    Each episode draws a path from ``families`` (:func:`~twolink_gym.paths.sample_path`:
    circles of random centre, radius, direction and phase; figure-eights;
    Lissajous curves; looping paths) that stays inside the annulus
    ``[|l1 - l2| + m, l1 + l2 - m]``, ``m = workspace_margin · (l1 + l2)``,
    with a mean tip speed drawn in ``[min_path_speed, max_path_speed]``. The arm
    starts on the path: the inverse kinematics of ``r(0)`` on an elbow branch
    drawn at random, moving with the reference (``dq = J⁻¹ ṙ(0)``), each angle
    perturbed uniformly by up to ``init_angle_noise`` and each speed by up to
    ``init_speed_noise``. ``reset(options={"path": spec})`` replays a given
    path instead (a name of :data:`~twolink_gym.paths.PATH_NAMES`, a mapping,
    a :class:`~twolink_gym.paths.TipPath`, a ``(T, 3)`` array of ``[t, x, y]``
    rows or a ``(times, points)`` pair; see :func:`~twolink_gym.paths.make_path`),
    the same path for every copy of a vector env; the episode follows it from
    the start of its time span.

    Observation extras (all in the arm's base frame)::

        [r_x, r_y, ṙ_x, ṙ_y, r̈_x, r̈_y,          reference now [m, m/s, m/s²]
         r_x - tip_x, r_y - tip_y,               tracking error [m]
         r(t + k·preview_dt) - tip, k = 1..preview]  preview [m]

    Reward, bounded in ``[0, 1]`` with ``e = |r(t) - tip|``::

        reward = ctrl · (coarse_weight · exp(-e² / (2 coarse_sigma²))
                         + (1 - coarse_weight) · exp(-e² / (2 sigma²)))
        ctrl   = 1 - ctrl_weight · |a|² / 2

    The wide Gaussian guides from anywhere in the workspace, the narrow one
    pays for precision (1 at zero error, 0.61 at ``e = sigma``).

    Success: the RMS tracking error over the episode's states (the start
    included) is at most ``tolerance``; ``info`` reports the running
    ``rms_error`` and ``max_error`` [m] and ``distance``, the current error.
    Track never terminates early, unless ``lost_distance`` is set: then an
    episode whose tracking error exceeds it terminates, unsuccessful (for
    training: losing the path ends the rewards).

    Parameters
    ----------
    tolerance : float
        RMS error that counts as success [m].
    sigma, coarse_sigma : float
        Widths of the narrow and the wide Gaussian [m].
    coarse_weight : float
        Share of the wide Gaussian, in ``[0, 1]``.
    ctrl_weight : float
        Weight of the squared normalised action.
    lost_distance : float
        Tracking error above which the episode terminates [m]; 0 (the
        default): never.
    preview : int
        Number of preview points, >= 1.
    preview_dt : float
        Time between preview points [s].
    seconds : float
        Episode length [s] (``episode_seconds``; the reference is tabulated
        over it and the preview beyond it).
    families : sequence of str
        Path families the episodes draw from (:data:`~twolink_gym.paths.FAMILIES`).
    min_path_speed, max_path_speed : float
        Range of the paths' mean tip speed [m/s].
    workspace_margin : float
        Clearance of drawn paths from the workspace's rims, a fraction of
        ``l1 + l2`` in ``[0, 0.5)``.
    init_angle_noise, init_speed_noise : float
        Half-widths of the uniform perturbation of the start [rad], [rad/s].
    """

    name: ClassVar[str] = "track"
    episode_seconds: ClassVar[float] = 10.0
    default_max_torque: ClassVar[tuple[float, float]] = DEFAULT_MAX_TORQUE
    goal_size: ClassVar[int] = 0  # set per instance in __post_init__ (depends on the options)
    extras_size: ClassVar[int] = 0  # set per instance in __post_init__
    goal_option: ClassVar[str | None] = "path"
    distance_unit: ClassVar[str] = "m"
    tolerance_option: ClassVar[str | None] = "tolerance"
    success_over_episode: ClassVar[bool] = True
    Terms: ClassVar[type] = TrackTerms
    Memory: ClassVar[type] = TrackMemory
    episode_option_names: ClassVar[tuple[str, ...]] = (
        *Task.episode_option_names,
        "families",
        "min_path_speed",
        "max_path_speed",
        "workspace_margin",
    )
    kernel: ClassVar[Any] = staticmethod(track_kernel)

    tolerance: float = 0.02
    sigma: float = 0.02
    coarse_sigma: float = 0.2
    coarse_weight: float = 0.5
    ctrl_weight: float = 0.05
    lost_distance: float = 0.0
    preview: int = 5
    preview_dt: float = 0.1
    seconds: float = 10.0
    families: tuple[str, ...] = FAMILIES
    min_path_speed: float = 0.1
    max_path_speed: float = 0.4
    workspace_margin: float = 0.1
    init_angle_noise: float = 0.01
    init_speed_noise: float = 0.02

    def __post_init__(self) -> None:
        super().__post_init__()
        self.check_positive(
            "tolerance", "sigma", "coarse_sigma", "preview_dt", "seconds", "min_path_speed"
        )
        self.check_in_range(("coarse_weight",), 0.0, 1.0)
        self.check_in_range(
            ("ctrl_weight", "lost_distance", "init_angle_noise", "init_speed_noise"), 0.0
        )
        self.check_in_range(("workspace_margin",), 0.0, 0.499)
        if not self.min_path_speed <= self.max_path_speed:
            raise ValueError(
                "track task options must satisfy min_path_speed <= max_path_speed, got "
                f"{self.min_path_speed!r} and {self.max_path_speed!r}"
            )
        if (
            isinstance(self.preview, bool)
            or not isinstance(self.preview, numbers.Integral)
            or self.preview < 1
        ):
            raise ValueError(
                f"track task option preview must be a positive integer, got {self.preview!r}"
            )
        object.__setattr__(self, "preview", int(self.preview))
        families = self.families
        if isinstance(families, str) or not isinstance(families, Sequence) or not families:
            raise ValueError(
                f"track task option families must be a non-empty list of {list(FAMILIES)}, "
                f"got {families!r}"
            )
        unknown = [f for f in families if f not in FAMILIES]
        if unknown:
            raise ValueError(
                f"track task option families: unknown {unknown}; allowed names are {list(FAMILIES)}"
            )
        object.__setattr__(self, "families", tuple(families))
        # the per-instance sizes and episode length (class attributes of the other tasks)
        object.__setattr__(self, "episode_seconds", self.seconds)
        object.__setattr__(self, "goal_size", HEADER_SIZE + ROW_SIZE * self.table_rows)
        object.__setattr__(self, "extras_size", 8 + 2 * self.preview)

    @property
    def table_rows(self) -> int:
        """Rows of the reference table: the episode and the preview beyond it, plus a margin."""
        span = self.seconds + self.preview * self.preview_dt
        return math.ceil(span / TABLE_DT - 1e-9) + 2

    # -- the reference ---------------------------------------------------
    def tabulate(self, path: TipPath) -> Array:
        """The goal vector ``(goal_size,)`` of an episode that follows ``path``.

        The table starts at the path's first time (``time_span[0]``); a sampled
        path that ends before the table does stays at its last point, at rest.

        Raises
        ------
        ValueError
            If the path is faster than :data:`MAX_REFERENCE_SPEED` or accelerates
            harder than :data:`MAX_REFERENCE_ACCELERATION` (naming ``path``).
        """
        start, end = path.time_span
        t = start + TABLE_DT * np.arange(self.table_rows)
        ended = np.zeros(t.shape, dtype=bool)
        if isinstance(path, SampledPath) and path.bc_type != "periodic":
            ended = t > end
        tt = np.minimum(t, end) if ended.any() else t
        rows = np.concatenate([path.position(tt), path.velocity(tt), path.acceleration(tt)], 1)
        rows[ended, 2:] = 0.0
        speed = float(np.max(np.hypot(rows[:, 2], rows[:, 3])))
        accel = float(np.max(np.hypot(rows[:, 4], rows[:, 5])))
        if speed > MAX_REFERENCE_SPEED or accel > MAX_REFERENCE_ACCELERATION:
            raise ValueError(
                f"path {path!r} is too fast for the track task: peak speed {speed:.3g} m/s "
                f"(at most {MAX_REFERENCE_SPEED:g}) and acceleration {accel:.3g} m/s² "
                f"(at most {MAX_REFERENCE_ACCELERATION:g}) over the episode"
            )
        goal = np.zeros(self.goal_size)
        goal[_H] = TABLE_DT
        goal[_ROWS] = self.table_rows
        goal[HEADER_SIZE:] = rows.reshape(-1)
        return goal

    def reference_rows(self, goal: Array) -> Array:
        """The reference table of a goal vector: ``(rows, 6)`` rows ``(x, y, vx, vy, ax, ay)``."""
        return np.asarray(goal[HEADER_SIZE:]).reshape(-1, ROW_SIZE)

    # -- episodes --------------------------------------------------------
    def sample_initial_state(self, rng: np.random.Generator, params: ArmParams) -> Array:
        """On the start of a freshly drawn path (see :meth:`sample_episode`)."""
        return self.sample_episode(rng, params)[0]

    def sample_goal(self, rng: np.random.Generator, params: ArmParams) -> Array:
        """The tabulated reference of a path drawn from :attr:`families`."""
        path = sample_path(
            rng,
            params,
            self.families,
            margin=self.workspace_margin * params.reach,
            speed=(self.min_path_speed, self.max_path_speed),
        )
        return self.tabulate(path)

    def sample_episode(
        self, rng: np.random.Generator, params: ArmParams, goal: Array | None = None
    ) -> tuple[Array, Array]:
        """A reference (drawn, or ``goal``) and a start on it: the path first, then the state.

        The start: the inverse kinematics of ``r(0)`` on an elbow branch drawn
        with equal odds, the joint velocities ``J⁻¹ ṙ(0)``
        (:func:`~twolink_gym.paths.joint_states_on_branch`), then the uniform
        perturbation.
        """
        if goal is None:
            goal = self.sample_goal(rng, params)
        else:
            goal = np.asarray(goal, dtype=np.float64)
        row = self.reference_rows(goal)[:1]
        down = np.array([rng.uniform() >= 0.5])  # elbow down with odds 1/2
        q, dq, _ = joint_states_on_branch(params, row[:, 0:2], row[:, 2:4], row[:, 4:6], down)
        state = perturbed_state(
            rng, np.concatenate([q[0], dq[0]]), self.init_angle_noise, self.init_speed_noise
        )
        return state, goal

    def validate_goal(self, params: ArmParams, goal: Array) -> None:
        """Reject goals ``(n, goal_size)`` that are not track tables or leave the workspace.

        Raises
        ------
        ValueError
            If the header is not this task's (spacing, rows), or a reference
            point lies outside ``[|l1 - l2|, l1 + l2]`` from the base.
        """
        for row in np.asarray(goal, dtype=np.float64).reshape(-1, self.goal_size):
            if row[_H] != TABLE_DT or row[_ROWS] != self.table_rows:
                raise ValueError(
                    f"options['goal'] is not a reference table of this track task (spacing "
                    f"{row[_H]!r} s and {row[_ROWS]!r} rows, expected {TABLE_DT} s and "
                    f"{self.table_rows}): pass a goal as env.goal returns it"
                )
            points = self.reference_rows(row)[:, :2]
            r = np.hypot(points[:, 0], points[:, 1])
            bad = (r > params.reach + 1e-9) | (r < params.inner_radius - 1e-9)
            if bad.any():
                k = int(np.argmax(bad))
                raise ValueError(
                    f"options['goal']: the reference leaves the workspace at t = "
                    f"{k * TABLE_DT:.6g} s (distance {r[k]:.6g} m from the base; it must "
                    f"lie in [{params.inner_radius}, {params.reach}] m)"
                )

    def goals_from_option(self, value: Any, n: int, params: Sequence[ArmParams]) -> Array:
        """Goals ``(n, goal_size)`` of ``n`` episodes that all follow the path ``value``.

        Raises
        ------
        ValueError
            If ``value`` is not a path spec (:func:`~twolink_gym.paths.make_path`),
            the path leaves an arm's workspace, or is too fast (:meth:`tabulate`);
            the message names ``options['path']``.
        """
        try:
            path = make_path(value)
            for arm in dict.fromkeys(params):
                check_in_workspace(path, arm)
            goal = self.tabulate(path)
        except ValueError as exc:
            raise ValueError(f"options['path']: {exc}") from None
        return np.tile(goal, (n, 1))

    def goal_info(self, goal: Array, extras: Array) -> dict[str, Array]:
        """``{"reference": the current reference point (n, 2)}`` (not the whole table)."""
        return {"reference": extras[:, 0:2].copy()}

    def goal_from_extras(self, extras: Array) -> Array:
        """The current reference point ``(..., 2)`` [m]: what the observation shows of the goal."""
        return extras[..., 0:2]

    # -- observation -----------------------------------------------------
    def extras_bounds(self, params: ArmParams) -> tuple[Array, Array]:
        """Reference within ``R = l1 + l2`` of the base, errors and preview within ``2R``."""
        r = params.reach
        high = np.array(
            [r, r]
            + [MAX_REFERENCE_SPEED] * 2
            + [MAX_REFERENCE_ACCELERATION] * 2
            + [2.0 * r] * (2 + 2 * self.preview)
        )
        return -high, high

    def extras_names(self) -> tuple[str, ...]:
        """Reference, its velocity and acceleration, the error, the preview (see the class notes)."""
        names = [
            "reference_x",
            "reference_y",
            "reference_vx",
            "reference_vy",
            "reference_ax",
            "reference_ay",
            "to_reference_x",
            "to_reference_y",
        ]
        for k in range(1, self.preview + 1):
            names += [f"preview{k}_x", f"preview{k}_y"]
        return tuple(names)

    # -- drawing ---------------------------------------------------------
    def render_items(
        self, params: ArmParams, state: Array, goal: Array, time: float
    ) -> list[RenderItem]:
        """The path over the episode, the preview and the current reference ``r(time)``.

        The path: the table's positions up to ``seconds``; the preview:
        ``preview`` dots of radius ``tolerance / 2`` at ``r(time + k · preview_dt)``,
        the farthest first; the reference: a disc of radius ``tolerance``, green
        while the tip is within it (the step's error, not the episode's RMS).
        """
        rows = self.reference_rows(goal)
        count = min(len(rows), math.floor(self.seconds / float(goal[_H]) + 1e-9) + 1)
        preview = np.array(
            [
                reference_position(goal, time + k * self.preview_dt)
                for k in range(self.preview, 0, -1)
            ]
        )
        success = self.evaluate(params, state[None, :], goal[None, :], time=time).success[0]
        point = reference_position(goal, time)
        return [
            Polyline(rows[:count, :2]),
            Dots(preview, 0.5 * self.tolerance, min_pixels=2),
            Target((float(point[0]), float(point[1])), self.tolerance, bool(success), 3),
        ]

    def options(self) -> dict[str, Any]:
        """The task's options as a JSON-friendly dict (``families`` as a list)."""
        out = super().options()
        out["families"] = list(self.families)
        return out
