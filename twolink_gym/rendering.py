"""``ArmRenderer``: draws the two-link arm with pygame.

The renderer reads only what it is given (the arm's parameters, the task, and
at each frame the state, goal, time, reward and torque); it never looks inside
an environment. The environments create one lazily in ``render()``.

Picture (y up, the base at the centre of the frame)
----------------------------------------------------
- the workspace, the annulus of radii ``|l1 - l2|`` and ``l1 + l2``, shaded;
- both links to scale: one metres-to-pixels scale, :attr:`ArmRenderer.scale`,
  chosen from ``l1 + l2`` so that any :class:`~twolink_gym.params.ArmParams`
  fits the frame;
- the base, the elbow and the tip;
- the goal, as the task describes it (:meth:`~twolink_gym.tasks.Task.render_items`):
  a :class:`~twolink_gym.tasks.base.Target` is a disc of the task's
  tolerance to scale (red, green while the task reports success; at least
  ``min_pixels``) with a ring and a cross-hair marker drawn over the arm, so
  the target shows at any scale (reach's target, track's current reference);
  a :class:`~twolink_gym.tasks.base.Polyline` a thin grey line (track's path
  over the episode); :class:`~twolink_gym.tasks.base.Dots` small light red
  discs (track's preview); a :class:`~twolink_gym.tasks.base.Wedge` a sector
  about the vertical (balance's allowed tilts, the success band of balance and
  swing-up at the base and at the elbow); an
  :class:`~twolink_gym.tasks.base.UprightLine` the dashed upright reference
  from the base, over the arm;
- a fading trail of the tip over the last ``trail_seconds``;
- torque indicators: an arc around each joint, counter-clockwise for positive
  torque, whose sweep is the fraction of ``max_torque`` applied; below
  :data:`TORQUE_MIN_FRACTION` of ``max_torque`` nothing is drawn;
- the joints: a motorised joint is a dark ring, a joint without a motor (the
  shoulder of an acrobot, the elbow of a pendubot) a light grey one, and the
  readout names the motors;
- a readout: task name, time, reward and the joint torques
  (:meth:`ArmRenderer.readout` gives its lines). Text is drawn at
  :data:`TEXT_SUPERSAMPLING` times its size and scaled down, so that its
  letters sit where the font's own spacing puts them: drawn directly, a small
  font's letters are snapped to whole pixels one by one, which opens uneven
  gaps between some of them ("sw ingup").

:meth:`ArmRenderer.world_to_pixel` is the one mapping from world metres to
pixel coordinates; use it to find where something is drawn in a frame.

pygame is imported when a renderer is created, not when this module is
imported, so the rest of the package works without it.
"""

from __future__ import annotations

import collections
import math
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.error import DependencyNotInstalled
from numpy.typing import ArrayLike, NDArray

from twolink_gym.dynamics import gravity_torque
from twolink_gym.kinematics import forward_kinematics
from twolink_gym.params import ArmParams
from twolink_gym.tasks import Task
from twolink_gym.tasks.base import Dots, Polyline, RenderItem, Target, UprightLine, Wedge

__all__ = ["RENDER_MODES", "TEXT_SUPERSAMPLING", "TORQUE_MIN_FRACTION", "ArmRenderer", "Colors"]

#: The render modes an :class:`ArmRenderer` supports.
RENDER_MODES = ("human", "rgb_array")
#: Torques below this fraction of ``max_torque`` get no indicator (no stray arrowheads).
TORQUE_MIN_FRACTION = 0.05
#: Length of each cross-hair arm of the target marker, as a fraction of the smaller frame side.
TARGET_MARK_FRACTION = 0.03
#: Text is drawn this many times larger, then scaled down to its size (even letter spacing).
TEXT_SUPERSAMPLING = 4
#: Most text lines kept drawn for reuse (the lines that do not change between frames).
_TEXT_CACHE_SIZE = 16

RGB = tuple[int, int, int]


class Colors:
    """The palette of the drawing (RGB, 0-255); tests look colours up here."""

    background: RGB = (250, 250, 247)
    workspace: RGB = (232, 238, 246)
    workspace_edge: RGB = (160, 175, 198)
    link1: RGB = (38, 84, 148)
    link2: RGB = (66, 132, 204)
    joint: RGB = (45, 45, 50)
    joint_fill: RGB = (236, 236, 236)
    passive_joint: RGB = (178, 178, 182)
    base: RGB = (95, 95, 100)
    tip: RGB = (20, 20, 20)
    target: RGB = (214, 39, 40)
    target_success: RGB = (44, 160, 44)
    reference_path: RGB = (128, 128, 140)
    reference_preview: RGB = (240, 150, 150)
    upright: RGB = (30, 110, 30)
    upright_zone: RGB = (220, 240, 220)
    success_band: RGB = (160, 214, 160)
    trail: RGB = (255, 127, 14)
    torque: RGB = (148, 52, 160)
    text: RGB = (30, 30, 30)


def _import_pygame() -> Any:
    """Import pygame, or raise ``DependencyNotInstalled`` saying how to get it."""
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    try:
        import pygame
        from pygame import gfxdraw  # noqa: F401 - checks the submodule is available
    except ImportError as exc:
        raise DependencyNotInstalled(
            "rendering needs pygame, which is not installed; install it with "
            '`pip install pygame` (or `pip install "twolink-gym"`, which depends on it)'
        ) from exc
    return pygame


class ArmRenderer:
    """Draw frames of a two-link arm with pygame.

    Parameters
    ----------
    params : ArmParams
        The arm; its link lengths set the drawing scale.
    task : Task
        The task; it decides how the goal is drawn (see the module docstring).
    render_mode : {"human", "rgb_array"}
        ``"human"`` opens a window and paces :meth:`draw` at ``fps``;
        ``"rgb_array"`` draws off-screen and returns frames (no window, no
        display needed).
    fps : int
        Frames per second of the ``"human"`` window (the env's control rate).
    size : (int, int)
        Frame width and height in pixels (default ``(500, 500)``).
    max_torque : array_like, shape (2,), optional
        Torques [N·m] at which a torque indicator sweeps its full arc; default:
        the gravity torques of the arm held horizontal (at least 1 N·m).
    trail_seconds : float
        Length of the tip trail [s] (``0`` for none).
    actuated : sequence of int
        The joints with a motor (default both; ``(1,)`` acrobot, ``(0,)`` pendubot).

    Raises
    ------
    ValueError
        On an unknown ``render_mode`` or an invalid size, fps, torque scale or
        ``actuated``.
    gymnasium.error.DependencyNotInstalled
        If pygame is not installed.

    Notes
    -----
    In ``"human"`` mode pygame has a single display: two human renderers share
    one window, and :meth:`close` closes pygame's display module (fonts and
    off-screen surfaces of other renderers keep working).
    """

    def __init__(
        self,
        params: ArmParams,
        task: Task,
        render_mode: str = "rgb_array",
        fps: int = 50,
        *,
        size: Sequence[int] = (500, 500),
        max_torque: ArrayLike | None = None,
        trail_seconds: float = 1.0,
        actuated: Sequence[int] = (0, 1),
    ) -> None:
        if render_mode not in RENDER_MODES:
            raise ValueError(
                f"render_mode must be one of {list(RENDER_MODES)}, got {render_mode!r}"
            )
        if isinstance(fps, bool) or not isinstance(fps, (int, np.integer)) or fps < 1:
            raise ValueError(f"fps must be an integer >= 1, got {fps!r}")
        try:
            width, height = (int(v) for v in size)
        except (TypeError, ValueError):
            width = height = 0
        if width < 64 or height < 64:
            raise ValueError(f"size must be a pair of integers >= 64 (pixels), got {size!r}")
        if max_torque is None:
            hold = np.abs(gravity_torque(params, np.zeros(2)))
            torque_scale = np.maximum(hold, 1.0)
        else:
            torque_scale = np.broadcast_to(np.asarray(max_torque, dtype=np.float64), (2,)).copy()
            if not np.all(np.isfinite(torque_scale) & (torque_scale > 0)):
                raise ValueError(
                    f"max_torque must be a number or a pair of numbers > 0, got {max_torque!r}"
                )
        motors = tuple(int(j) for j in actuated)
        if not motors or len(set(motors)) != len(motors) or not set(motors) <= {0, 1}:
            raise ValueError(
                f"actuated must list the joints with a motor, a non-empty subset of (0, 1), got {actuated!r}"
            )
        if not (math.isfinite(trail_seconds) and trail_seconds >= 0):
            raise ValueError(f"trail_seconds must be a finite number >= 0, got {trail_seconds!r}")

        self.params = params
        self.task = task
        self.render_mode = render_mode
        self.fps = int(fps)
        self.size = (width, height)
        self.max_torque = torque_scale
        #: The joints with a motor (0: shoulder, 1: elbow).
        self.actuated = motors
        #: Pixels per metre: ``l1 + l2`` spans 42 % of the smaller frame side.
        self.scale = 0.42 * min(width, height) / params.reach
        self._origin = np.array([width / 2.0, height / 2.0])
        self._trail: collections.deque[NDArray[np.float64]] = collections.deque(
            maxlen=max(round(trail_seconds * fps), 0)
        )
        self._last_time = -math.inf
        self._closed = False
        # the last polyline drawn, as (its points [m], their pixels), recomputed
        # only when the points change
        self._path_cache: tuple[NDArray[np.float64], list[tuple[float, float]]] | None = None

        pg = _import_pygame()
        self._pg = pg
        self._window: Any = None
        self._clock: Any = None
        if render_mode == "human":
            pg.display.init()
            self._window = pg.display.set_mode(self.size)
            pg.display.set_caption(f"twolink-gym: {task.name}")
            self._clock = pg.time.Clock()
        self._canvas = pg.Surface(self.size)
        self._font: Any = None
        self._text_cache: dict[str, Any] = {}
        try:
            pg.font.init()
            text_size = max(14, round(0.044 * min(width, height)))
            self._font = pg.font.Font(None, TEXT_SUPERSAMPLING * text_size)
        except (pg.error, OSError, ImportError, NotImplementedError):  # no fonts: no readout
            self._font = None

    # -- geometry ----------------------------------------------------------
    def world_to_pixel(self, xy: ArrayLike) -> NDArray[np.float64]:
        """Map world points [m] to pixel coordinates of the frame.

        Parameters
        ----------
        xy : array_like, shape (..., 2)
            Points in the base frame [m], y up.

        Returns
        -------
        ndarray, shape (..., 2)
            ``(column, row)`` pixel coordinates (floats); the point is drawn at
            ``frame[round(row), round(column)]``. The base is at the frame centre
            and y is flipped so that up is up.
        """
        p = np.asarray(xy, dtype=np.float64)
        if p.ndim == 0 or p.shape[-1] != 2:
            raise ValueError(f"xy must have shape (..., 2), got {p.shape}")
        return np.stack(
            [self._origin[0] + self.scale * p[..., 0], self._origin[1] - self.scale * p[..., 1]],
            -1,
        )

    def _px(self, xy: ArrayLike) -> tuple[int, int]:
        c, r = self.world_to_pixel(xy)
        return round(float(c)), round(float(r))

    def _radius(self, metres: float, minimum: int = 1) -> int:
        return max(minimum, round(metres * self.scale))

    # -- public drawing API ------------------------------------------------
    def reset_trail(self) -> None:
        """Forget the tip trail (call at the start of an episode)."""
        self._trail.clear()

    def draw(
        self,
        state: ArrayLike,
        goal: ArrayLike,
        *,
        time: float = 0.0,
        reward: float = 0.0,
        torque: ArrayLike = (0.0, 0.0),
    ) -> NDArray[np.uint8] | None:
        """Draw one frame.

        Parameters
        ----------
        state : array_like, shape (4,)
            ``[q1, q2, dq1, dq2]`` [rad, rad, rad/s, rad/s].
        goal : array_like, shape (task.goal_size,)
            The episode's goal (reach: target [m]; track: the reference table,
            see :mod:`twolink_gym.tasks.track`).
        time : float
            Time since the episode started [s]; a time earlier than the previous
            frame's starts a new trail (an episode restart). Track draws its
            reference at this time.
        reward : float
            The last reward, shown in the readout.
        torque : array_like, shape (2,)
            The joint torques being applied [N·m].

        Returns
        -------
        ndarray of uint8, shape (height, width, 3), or None
            The frame in ``"rgb_array"`` mode; ``None`` in ``"human"`` mode (the
            window is updated and the call waits to keep ``fps``).

        Raises
        ------
        RuntimeError
            If the renderer has been closed.
        ValueError
            On inputs of the wrong shape.
        """
        if self._closed:
            raise RuntimeError("this ArmRenderer is closed; create a new one to draw again")
        x = np.asarray(state, dtype=np.float64)
        g = np.asarray(goal, dtype=np.float64)
        tau = np.asarray(torque, dtype=np.float64)
        if x.shape != (4,):
            raise ValueError(f"state must have shape (4,), got {x.shape}")
        if g.shape != (self.task.goal_size,):
            raise ValueError(
                f"goal must have shape ({self.task.goal_size},) for task {self.task.name!r}, got {g.shape}"
            )
        if tau.shape != (2,):
            raise ValueError(f"torque must have shape (2,), got {tau.shape}")
        if time < self._last_time:
            self.reset_trail()
        self._last_time = float(time)

        elbow, tip = forward_kinematics(self.params, x[:2])
        if self._trail.maxlen:
            self._trail.append(tip.copy())

        surf = self._canvas
        surf.fill(Colors.background)
        self._draw_workspace(surf)
        items = self.task.render_items(self.params, x, g, float(time))
        for item in items:
            self._draw_under(surf, item)
        self._draw_trail(surf)
        self._draw_arm(surf, elbow, tip)
        for item in items:
            self._draw_over(surf, item)
        self._draw_torques(surf, x, tau)
        self._draw_readout(surf, float(time), float(reward), tau)

        pg = self._pg
        if self.render_mode == "human":
            self._window.blit(surf, (0, 0))
            pg.event.pump()
            pg.display.flip()
            self._clock.tick(self.fps)
            return None
        to_bytes = getattr(pg.image, "tobytes", None) or pg.image.tostring  # pygame < 2.1.3
        data = to_bytes(surf, "RGB")  # rows top to bottom: already (height, width, 3)
        return np.frombuffer(data, dtype=np.uint8).reshape(self.size[1], self.size[0], 3).copy()

    def close(self) -> None:
        """Close the window (``"human"``) and release the canvas; safe to call again."""
        if self._closed:
            return
        self._closed = True
        if self._window is not None:
            self._pg.display.quit()
            self._window = None
        self._canvas = None
        self._font = None

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._closed

    # -- layers --------------------------------------------------------------
    def _disc(self, surf: Any, center: tuple[int, int], radius: int, color: RGB) -> None:
        gfx = self._pg.gfxdraw
        gfx.filled_circle(surf, center[0], center[1], radius, color)
        gfx.aacircle(surf, center[0], center[1], radius, color)

    def _draw_workspace(self, surf: Any) -> None:
        center = self._px((0.0, 0.0))
        outer = self._radius(self.params.reach)
        self._disc(surf, center, outer, Colors.workspace)
        self._pg.gfxdraw.aacircle(surf, center[0], center[1], outer, Colors.workspace_edge)
        inner_m = self.params.inner_radius
        if inner_m * self.scale >= 1.0:
            inner = self._radius(inner_m)
            self._disc(surf, center, inner, Colors.background)
            self._pg.gfxdraw.aacircle(surf, center[0], center[1], inner, Colors.workspace_edge)

    def _draw_under(self, surf: Any, item: RenderItem) -> None:
        """The part of a task's render item drawn under the arm."""
        if isinstance(item, Target):
            self._disc(surf, self._px(item.point), self._target_radius(item), self._color(item))
        elif isinstance(item, Polyline):
            pixels = self._polyline_pixels(item.points)
            if len(pixels) >= 2:
                self._pg.draw.lines(surf, Colors.reference_path, False, pixels, 2)
        elif isinstance(item, Dots):
            radius = self._radius(item.radius, minimum=item.min_pixels)
            for point in item.points:
                self._disc(surf, self._px(point), radius, Colors.reference_preview)
        elif isinstance(item, Wedge):
            color = Colors.upright_zone if item.kind == "zone" else Colors.success_band
            self._wedge(surf, np.asarray(item.apex), item.radius, item.half_angle, color)

    def _draw_over(self, surf: Any, item: RenderItem) -> None:
        """The part of a task's render item drawn over the arm (so that it stays visible)."""
        if isinstance(item, Target):
            self._draw_target_marks(surf, item)
        elif isinstance(item, UprightLine):
            self._dashed_line(
                surf, (0.0, 0.0), (0.0, item.length), Colors.upright, dash=0.06 * item.length
            )

    def _target_radius(self, target: Target) -> int:
        return self._radius(target.radius, minimum=target.min_pixels)

    @staticmethod
    def _color(target: Target) -> RGB:
        return Colors.target_success if target.success else Colors.target

    def _draw_target_marks(self, surf: Any, target: Target) -> None:
        """Tolerance ring and cross-hair of a target, over the arm so they stay visible.

        The ring is the tolerance circle to scale; the four cross-hair arms start
        just outside it and are :data:`TARGET_MARK_FRACTION` of the frame long,
        so that the target shows however small the tolerance is drawn.
        """
        (cx, cy), radius, color = (
            self._px(target.point),
            self._target_radius(target),
            self._color(target),
        )
        for r in (radius, radius + 1):
            self._pg.gfxdraw.aacircle(surf, cx, cy, r, color)
        inner = radius + 3
        outer = inner + max(6, round(TARGET_MARK_FRACTION * min(self.size)))
        for sx, sy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            self._pg.draw.line(
                surf,
                color,
                (cx + sx * inner, cy + sy * inner),
                (cx + sx * outer, cy + sy * outer),
                3,
            )

    def _polyline_pixels(self, points: NDArray[np.float64]) -> list[tuple[float, float]]:
        """Pixels ``(column, row)`` of a polyline's points ``(k, 2)`` [m].

        Cached: recomputed only when the points change (the env passes a new
        view of its goal buffer at every frame and rewrites the buffer in place
        at a reset, so the content is the key, not the array's identity).
        """
        cached = self._path_cache
        if cached is not None and np.array_equal(cached[0], points):
            return cached[1]
        pixels = [(float(c), float(r)) for c, r in self.world_to_pixel(points)]
        self._path_cache = (np.array(points, dtype=np.float64), pixels)
        return pixels

    def _wedge(
        self, surf: Any, apex: NDArray[np.float64], radius: float, half_angle: float, color: RGB
    ) -> None:
        """Fill the circular sector of ``±half_angle`` about the upward vertical at ``apex``."""
        angles = np.linspace(math.pi / 2 - half_angle, math.pi / 2 + half_angle, 48)
        arc = apex + radius * np.stack([np.cos(angles), np.sin(angles)], -1)
        pts = np.vstack([apex, arc])
        poly = [tuple(p) for p in self.world_to_pixel(pts)]
        self._pg.gfxdraw.filled_polygon(surf, poly, color)
        self._pg.gfxdraw.aapolygon(surf, poly, color)

    def _dashed_line(
        self, surf: Any, start: Sequence[float], end: Sequence[float], color: RGB, dash: float
    ) -> None:
        a, b = np.asarray(start, float), np.asarray(end, float)
        length = float(np.hypot(*(b - a)))
        n = max(1, int(length / dash))
        for i in range(0, n, 2):
            p0 = a + (b - a) * (i / n)
            p1 = a + (b - a) * (min(i + 1, n) / n)
            self._pg.draw.line(surf, color, self._px(p0), self._px(p1), 2)

    def _draw_trail(self, surf: Any) -> None:
        if len(self._trail) < 2:
            return
        pts = self.world_to_pixel(np.asarray(self._trail))
        n = len(pts)
        bg = np.asarray(Colors.background, float)
        fg = np.asarray(Colors.trail, float)
        for i in range(1, n):
            w = i / (n - 1)  # older segments fade into the background
            color = tuple(int(c) for c in np.round(bg + (fg - bg) * (0.15 + 0.85 * w)))
            self._pg.draw.line(surf, color, tuple(pts[i - 1]), tuple(pts[i]), 3)

    def _link(self, surf: Any, a: NDArray[np.float64], b: NDArray[np.float64], color: RGB) -> None:
        width = 0.05 * self.params.reach * self.scale
        pa, pb = self.world_to_pixel(a), self.world_to_pixel(b)
        d = pb - pa
        norm = float(np.hypot(*d))
        if norm < 1e-9:
            return
        n = np.array([-d[1], d[0]]) / norm * (width / 2)
        poly = [tuple(pa + n), tuple(pb + n), tuple(pb - n), tuple(pa - n)]
        self._pg.gfxdraw.filled_polygon(surf, poly, color)
        self._pg.gfxdraw.aapolygon(surf, poly, color)
        self._disc(surf, self._px(b), max(1, round(width / 2)), color)

    def _draw_arm(self, surf: Any, elbow: NDArray[np.float64], tip: NDArray[np.float64]) -> None:
        base = np.zeros(2)
        r_joint = max(3, round(0.035 * self.params.reach * self.scale))
        # the base mount: a small trapezoid under the shoulder
        c = self._px(base)
        h = 2 * r_joint
        mount = [
            (c[0] - h, c[1] + h),
            (c[0] + h, c[1] + h),
            (c[0] + r_joint, c[1]),
            (c[0] - r_joint, c[1]),
        ]
        self._pg.gfxdraw.filled_polygon(surf, mount, Colors.base)
        self._pg.gfxdraw.aapolygon(surf, mount, Colors.base)
        self._link(surf, base, elbow, Colors.link1)
        self._link(surf, elbow, tip, Colors.link2)
        for joint, point in enumerate((base, elbow)):
            p = self._px(point)
            ring = Colors.joint if joint in self.actuated else Colors.passive_joint
            self._disc(surf, p, r_joint, ring)
            self._disc(surf, p, max(1, r_joint - 3), Colors.joint_fill)
        self._disc(surf, self._px(tip), max(2, r_joint // 2), Colors.tip)

    def _draw_torques(
        self, surf: Any, state: NDArray[np.float64], torque: NDArray[np.float64]
    ) -> None:
        elbow, _ = forward_kinematics(self.params, state[:2])
        joints = (np.zeros(2), elbow)
        headings = (state[0], state[0] + state[1])  # the link each motor drives
        radius_m = 0.11 * self.params.reach
        for point, heading, tau, limit in zip(
            joints, headings, torque, self.max_torque, strict=True
        ):
            frac = float(np.clip(abs(tau) / limit, 0.0, 1.0))
            if frac < TORQUE_MIN_FRACTION:
                continue
            sweep = math.copysign(frac * 1.5 * math.pi, tau)
            start = heading + math.pi / 2 * (1 if tau > 0 else -1) - sweep / 2
            angles = start + np.linspace(0.0, sweep, max(3, int(40 * frac)))
            arc = point + radius_m * np.stack([np.cos(angles), np.sin(angles)], -1)
            pts = [tuple(p) for p in self.world_to_pixel(arc)]
            self._pg.draw.lines(surf, Colors.torque, False, pts, 3)
            # arrow head at the end of the sweep, pointing along the rotation
            end = angles[-1]
            direction = math.copysign(1.0, tau)
            tangent = np.array([-math.sin(end), math.cos(end)]) * direction
            radial = np.array([math.cos(end), math.sin(end)])
            # the head is never longer than the arc it ends
            head_len = min(0.05 * self.params.reach, abs(sweep) * radius_m)
            tip_w = arc[-1] + tangent * head_len
            size = 0.6 * head_len
            head = [tip_w, arc[-1] + radial * size, arc[-1] - radial * size]
            poly = [tuple(p) for p in self.world_to_pixel(np.asarray(head))]
            self._pg.gfxdraw.filled_polygon(surf, poly, Colors.torque)
            self._pg.gfxdraw.aapolygon(surf, poly, Colors.torque)

    def readout(self, time: float, reward: float, torque: ArrayLike) -> tuple[list[str], list[str]]:
        """The readout's lines: ``(top_left, bottom_left)``, each top to bottom.

        Parameters
        ----------
        time : float
            Time into the episode [s].
        reward : float
            The last reward.
        torque : array_like, shape (2,)
            The joint torques being applied [N·m].
        """
        tau = np.asarray(torque, dtype=np.float64)
        top_left = [f"task: {self.task.name}", f"t = {time:.2f} s", f"reward = {reward:+.3f}"]
        bottom_left = [f"torque = ({tau[0]:+.1f}, {tau[1]:+.1f}) N m"]
        if self.actuated != (0, 1):
            names = {0: "shoulder", 1: "elbow"}
            bottom_left.insert(0, "motor: " + ", ".join(names[j] for j in self.actuated) + " only")
        return top_left, bottom_left

    def _text(self, line: str, cache: bool = False) -> Any:
        """``line`` drawn in the readout's font and colour: a surface with alpha.

        Drawn :data:`TEXT_SUPERSAMPLING` times larger and scaled down (see the
        module docstring); ``cache`` keeps it for the next frames.
        """
        if line in self._text_cache:
            return self._text_cache[line]
        big = self._font.render(line, True, Colors.text)
        k = TEXT_SUPERSAMPLING
        w, h = big.get_size()
        img = self._pg.transform.smoothscale(big, (max(1, round(w / k)), max(1, round(h / k))))
        if cache:
            if len(self._text_cache) >= _TEXT_CACHE_SIZE:
                self._text_cache.clear()
            self._text_cache[line] = img
        return img

    def _draw_readout(
        self, surf: Any, time: float, reward: float, torque: NDArray[np.float64]
    ) -> None:
        if self._font is None:
            return
        top_left, bottom_left = self.readout(time, reward, torque)
        static = {top_left[0], *bottom_left[:-1]}  # the task and motor lines
        pad = 8
        y = pad
        for line in top_left:
            img = self._text(line, cache=line in static)
            surf.blit(img, (pad, y))
            y += img.get_height() + 2
        y = self.size[1] - pad
        for line in reversed(bottom_left):
            img = self._text(line, cache=line in static)
            y -= img.get_height()
            surf.blit(img, (pad, y))
            y -= 2
