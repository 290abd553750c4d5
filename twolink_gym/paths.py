r"""Time-parameterised tip references for trajectory tracking.

A path gives the tip's desired position ``p(t)`` [m], velocity [m/s] and
acceleration [m/s²] in the arm's base frame (x to the right, y up, angles
counter-clockwise from +x, as in :mod:`twolink_gym.kinematics`). Every method
is vectorised over the times: ``t`` of shape ``(...)`` [s] gives arrays of
shape ``(..., 2)``.

- :class:`Circle`, :class:`Lissajous` (and :func:`figure_eight`) and
  :class:`LoopingPath` are periodic and analytic (exact derivatives);
  ``duration`` is their period.
- :class:`SampledPath` interpolates given points with a cubic spline
  (:class:`scipy.interpolate.CubicSpline`); its derivatives are the spline's.

:func:`check_in_workspace` checks that a path stays inside the reachable
annulus, :func:`sample_path` draws random paths that do, and :func:`make_path`
builds a path from a name, a mapping or an array.
:func:`joint_reference` turns a path into joint angles, velocities and
accelerations by inverse kinematics on one elbow branch.
"""

from __future__ import annotations

import abc
import dataclasses
import math
import numbers
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym.kinematics import (
    ElbowBranch,
    inverse_kinematics,
    jacobian,
    jacobian_derivative,
    wrap_angle,
)
from twolink_gym.params import ArmParams

if TYPE_CHECKING:
    from scipy.interpolate import CubicSpline

__all__ = [
    "FAMILIES",
    "MIN_ABS_SIN_Q2",
    "PATH_NAMES",
    "Circle",
    "Lissajous",
    "LoopingPath",
    "SampledPath",
    "TipPath",
    "check_in_workspace",
    "figure_eight",
    "joint_rates",
    "joint_reference",
    "joint_states_on_branch",
    "make_path",
    "sample_path",
]

Array = NDArray[np.float64]

#: Smallest ``|sin q2|`` at which joint rates are computed from tip rates (the
#: Jacobian's determinant is ``l1 l2 sin q2``): nearer the stretched or folded
#: arm, :func:`joint_reference` refuses a path and :func:`joint_states_on_branch`
#: gives zero rates.
MIN_ABS_SIN_Q2 = 1e-3


# -- validation helpers --------------------------------------------------------------


def _number(owner: str, name: str, value: Any, *, positive: bool = False) -> float:
    """``value`` as a finite float (``> 0`` if ``positive``), else a ValueError naming it."""
    bound = " > 0" if positive else ""
    message = f"path {owner}: {name} must be a finite number{bound}, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(message)
    number = float(value)
    if not math.isfinite(number) or (positive and number <= 0.0):
        raise ValueError(message)
    return number


def _integer(owner: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"path {owner}: {name} must be an integer >= 1, got {value!r}")
    return int(value)


def _point(owner: str, name: str, value: Any) -> tuple[float, float]:
    arr = np.asarray(value)
    if arr.shape != (2,) or arr.dtype.kind not in "iuf" or not np.all(np.isfinite(arr)):
        raise ValueError(f"path {owner}: {name} must be 2 finite numbers [m], got {value!r}")
    return float(arr[0]), float(arr[1])


def _times(t: ArrayLike) -> Array:
    arr = np.asarray(t, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError("t must be finite times [s]")
    return arr


# -- the paths -----------------------------------------------------------------------


class TipPath(abc.ABC):
    """A tip reference ``p(t)`` with its first two time derivatives.

    Subclasses are frozen dataclasses; their methods take times ``t`` of shape
    ``(...)`` [s] and return arrays of shape ``(..., 2)``.
    """

    @property
    @abc.abstractmethod
    def duration(self) -> float:
        """Length of the path in time [s] (the period of a periodic path)."""

    @property
    def time_span(self) -> tuple[float, float]:
        """First and last time of one pass along the path [s]."""
        return 0.0, self.duration

    @abc.abstractmethod
    def _derivative(self, t: ArrayLike, order: int) -> Array:
        """``d^order p / dt^order`` at the times ``t`` (order 0, 1 or 2), shape ``(..., 2)``."""

    def position(self, t: ArrayLike) -> Array:
        """Tip position [m], shape ``(..., 2)``."""
        return self._derivative(t, 0)

    def velocity(self, t: ArrayLike) -> Array:
        """Tip velocity [m/s], shape ``(..., 2)``."""
        return self._derivative(t, 1)

    def acceleration(self, t: ArrayLike) -> Array:
        """Tip acceleration [m/s²], shape ``(..., 2)``."""
        return self._derivative(t, 2)

    def sample_times(self, samples: int) -> Array:
        """``samples`` evenly spaced times covering :attr:`time_span` [s], shape ``(samples,)``."""
        start, end = self.time_span
        return np.linspace(start, end, samples)


def _phasor_sum(
    t: ArrayLike,
    centre: tuple[float, float],
    terms: Sequence[tuple[float, float, float]],
    order: int,
) -> Array:
    """``d^order/dt^order`` of ``centre + sum_k A_k exp(i (w_k t + phi_k))`` as ``(..., 2)``.

    ``terms`` holds ``(A_k [m], w_k [rad/s], phi_k [rad])``.
    """
    tt = _times(t)
    z = np.zeros(tt.shape, dtype=np.complex128)
    for amplitude, omega, phase in terms:
        z = z + amplitude * (1j * omega) ** order * np.exp(1j * (omega * tt + phase))
    out = np.stack([z.real, z.imag], -1)
    if order == 0:
        out = out + np.asarray(centre)
    return out


@dataclasses.dataclass(frozen=True)
class Circle(TipPath):
    """A circle travelled at constant speed.

    ``p(t) = centre + radius (cos θ, sin θ)`` with
    ``θ = phase + direction · 2π t / period``.

    Parameters
    ----------
    centre : pair of float
        Centre [m].
    radius : float
        Radius [m], > 0.
    period : float
        Time of one revolution [s], > 0 (the :attr:`duration`).
    direction : {1, -1}
        1 counter-clockwise, -1 clockwise.
    phase : float
        Angle of the starting point from +x [rad].

    Raises
    ------
    ValueError
        On an invalid field (the message names ``path``, the class and the field).
    """

    centre: tuple[float, float] = (0.0, 0.0)
    radius: float = 0.5
    period: float = 10.0
    direction: int = 1
    phase: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "centre", _point("Circle", "centre", self.centre))
        object.__setattr__(self, "radius", _number("Circle", "radius", self.radius, positive=True))
        object.__setattr__(self, "period", _number("Circle", "period", self.period, positive=True))
        if self.direction not in (1, -1) or isinstance(self.direction, bool):
            raise ValueError(f"path Circle: direction must be 1 or -1, got {self.direction!r}")
        object.__setattr__(self, "direction", int(self.direction))
        object.__setattr__(self, "phase", _number("Circle", "phase", self.phase))

    @property
    def duration(self) -> float:
        """The period [s]."""
        return self.period

    @property
    def speed(self) -> float:
        """Tip speed ``2π radius / period`` [m/s]."""
        return 2.0 * math.pi * self.radius / self.period

    def _terms(self) -> list[tuple[float, float, float]]:
        return [(self.radius, self.direction * 2.0 * math.pi / self.period, self.phase)]

    def _derivative(self, t: ArrayLike, order: int) -> Array:
        return _phasor_sum(t, self.centre, self._terms(), order)


@dataclasses.dataclass(frozen=True)
class Lissajous(TipPath):
    """A Lissajous curve ``x = cx + ax sin(fx ω t + phase)``, ``y = cy + ay sin(fy ω t)``.

    ``ω = 2π / period``; with integer frequencies the curve closes after one
    period. ``fx = 1, fy = 2`` is a figure-eight (:func:`figure_eight`).

    Parameters
    ----------
    centre : pair of float
        Centre [m].
    ax, ay : float
        Amplitudes [m], > 0.
    fx, fy : int
        Frequencies (cycles per period), >= 1.
    phase : float
        Phase of the x component [rad].
    period : float
        [s], > 0 (the :attr:`duration`).

    Raises
    ------
    ValueError
        On an invalid field (the message names ``path``, the class and the field).
    """

    centre: tuple[float, float] = (0.0, 0.0)
    ax: float = 0.3
    ay: float = 0.2
    fx: int = 1
    fy: int = 2
    phase: float = 0.0
    period: float = 10.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "centre", _point("Lissajous", "centre", self.centre))
        for name in ("ax", "ay", "period"):
            value = _number("Lissajous", name, getattr(self, name), positive=True)
            object.__setattr__(self, name, value)
        for name in ("fx", "fy"):
            object.__setattr__(self, name, _integer("Lissajous", name, getattr(self, name)))
        object.__setattr__(self, "phase", _number("Lissajous", "phase", self.phase))

    @property
    def duration(self) -> float:
        """The period [s]."""
        return self.period

    def _derivative(self, t: ArrayLike, order: int) -> Array:
        tt = _times(t)
        omega = 2.0 * math.pi / self.period
        out = []
        for amp, freq, phase in ((self.ax, self.fx, self.phase), (self.ay, self.fy, 0.0)):
            w = freq * omega
            # d^k/dt^k sin(w t + phase) = w^k sin(w t + phase + k π/2)
            out.append(amp * w**order * np.sin(w * tt + phase + order * math.pi / 2))
        result = np.stack(out, -1)
        return result + np.asarray(self.centre) if order == 0 else result


def figure_eight(
    centre: ArrayLike = (0.0, 0.0),
    width: float = 0.6,
    height: float = 0.4,
    period: float = 10.0,
    phase: float = 0.0,
) -> Lissajous:
    """A horizontal figure-eight: :class:`Lissajous` with ``fx = 1, fy = 2``.

    Parameters
    ----------
    centre : pair of float
        Crossing point [m] (the tip is there at ``t = 0`` when ``phase = 0``).
    width, height : float
        Extent along x and y [m] (the amplitudes are half of them).
    period : float
        Time of one figure-eight [s].
    phase : float
        Phase of the x component [rad].
    """
    if isinstance(width, bool) or not isinstance(width, numbers.Real):
        raise ValueError(f"path figure_eight: width must be a finite number > 0, got {width!r}")
    if isinstance(height, bool) or not isinstance(height, numbers.Real):
        raise ValueError(f"path figure_eight: height must be a finite number > 0, got {height!r}")
    return Lissajous(
        centre=_point("figure_eight", "centre", centre),
        ax=width / 2.0,
        ay=height / 2.0,
        fx=1,
        fy=2,
        phase=phase,
        period=period,
    )


@dataclasses.dataclass(frozen=True)
class LoopingPath(TipPath):
    r"""A big circle with small loops superposed (the classic looping-path exercise).

    Parameterised as the exercise does: the big circle starts at the
    angle ``start_angle`` (π/2: the top) and is travelled once,
    counter-clockwise, at constant angular speed ``ω = 2π / period``; a point
    at the loop angle ``a = loop_phase + loops · ω t`` (``loop_phase = π/2``)
    is added in the circle's moving frame,
    ``loop_radius (cos a · T + sin a · N)``, with ``T`` the unit tangent (the
    direction of travel) and ``N`` the tangent turned by +90° (pointing to the
    centre). The exercise builds ``T`` by finite differences of 2000 sampled
    points; here it is exact. As a sum of two phasors,

    .. math:: p(t) = c + R\,e^{i(\varphi_0 + \omega t)}
              + r\,e^{i(\varphi_0 + a_0 + \pi/2 + (n + 1)\,\omega t)},

    so each loop turns at ``(loops + 1) ω`` in the base frame. The distance
    from the centre stays in ``[R - r, R + r]``. Defaults: ``R = 0.79`` m,
    ``r = 0.2`` m, 13 loops, 60 s, centred on the base.

    Parameters
    ----------
    centre : pair of float
        Centre of the big circle [m].
    radius : float
        Big-circle radius ``R`` [m], > 0.
    loop_radius : float
        Loop radius ``r`` [m], > 0.
    loops : int
        Number of loops per revolution, >= 1.
    period : float
        Time of one revolution [s], > 0 (the :attr:`duration`).
    start_angle : float
        ``φ0`` [rad].
    loop_phase : float
        ``a0`` [rad].

    Raises
    ------
    ValueError
        On an invalid field (the message names ``path``, the class and the field).
    """

    centre: tuple[float, float] = (0.0, 0.0)
    radius: float = 0.79
    loop_radius: float = 0.2
    loops: int = 13
    period: float = 60.0
    start_angle: float = math.pi / 2
    loop_phase: float = math.pi / 2

    def __post_init__(self) -> None:
        object.__setattr__(self, "centre", _point("LoopingPath", "centre", self.centre))
        for name in ("radius", "loop_radius", "period"):
            value = _number("LoopingPath", name, getattr(self, name), positive=True)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "loops", _integer("LoopingPath", "loops", self.loops))
        for name in ("start_angle", "loop_phase"):
            object.__setattr__(self, name, _number("LoopingPath", name, getattr(self, name)))

    @property
    def duration(self) -> float:
        """The period [s]."""
        return self.period

    def _terms(self) -> list[tuple[float, float, float]]:
        omega = 2.0 * math.pi / self.period
        loop_start = self.start_angle + self.loop_phase + math.pi / 2
        return [
            (self.radius, omega, self.start_angle),
            (self.loop_radius, (self.loops + 1) * omega, loop_start),
        ]

    def _derivative(self, t: ArrayLike, order: int) -> Array:
        return _phasor_sum(t, self.centre, self._terms(), order)


@dataclasses.dataclass(frozen=True, repr=False, eq=False)
class SampledPath(TipPath):
    """Points at given times, interpolated by a cubic spline.

    Parameters
    ----------
    times : array_like, shape (T,)
        Strictly increasing, finite [s], ``T >= 4``.
    points : array_like, shape (T, 2)
        Finite tip positions [m].
    bc_type : str
        Boundary condition of :class:`scipy.interpolate.CubicSpline`:
        ``"not-a-knot"`` (default), ``"natural"``, ``"clamped"`` or
        ``"periodic"`` (the first and last points must then coincide; times
        outside the span wrap around).

    Notes
    -----
    Velocities and accelerations are the spline's first and second
    derivatives. Times outside ``[times[0], times[-1]]`` raise a ValueError
    (except with ``bc_type="periodic"``).

    Raises
    ------
    ValueError
        If the arrays have the wrong shape, are not finite, or the times do
        not increase strictly (the message names ``path``).
    """

    times: Array
    points: Array
    bc_type: str = "not-a-knot"
    _spline: CubicSpline = dataclasses.field(init=False, repr=False, compare=False)

    BC_TYPES: ClassVar[tuple[str, ...]] = ("not-a-knot", "natural", "clamped", "periodic")

    def __post_init__(self) -> None:
        times = np.array(self.times, dtype=np.float64)
        points = np.array(self.points, dtype=np.float64)
        if points.ndim != 2 or points.shape[1] != 2 or points.shape[0] < 4:
            raise ValueError(
                f"path SampledPath: points must have shape (T, 2) with T >= 4, got {points.shape}"
            )
        if times.shape != (points.shape[0],):
            raise ValueError(
                f"path SampledPath: times must have shape ({points.shape[0]},) to match "
                f"points {points.shape}, got {times.shape}"
            )
        if not (np.all(np.isfinite(points)) and np.all(np.isfinite(times))):
            raise ValueError("path SampledPath: times and points must be finite")
        steps = np.diff(times)
        if np.any(steps <= 0.0):
            bad = int(np.argmax(steps <= 0.0))
            raise ValueError(
                "path SampledPath: times must increase strictly, got "
                f"times[{bad}] = {float(times[bad])!r} and times[{bad + 1}] = {float(times[bad + 1])!r}"
            )
        if self.bc_type not in self.BC_TYPES:
            raise ValueError(
                f"path SampledPath: bc_type must be one of {list(self.BC_TYPES)}, got {self.bc_type!r}"
            )
        if self.bc_type == "periodic" and not np.allclose(points[0], points[-1]):
            raise ValueError(
                "path SampledPath: bc_type='periodic' needs the first and last points to coincide"
            )
        times.setflags(write=False)
        points.setflags(write=False)
        object.__setattr__(self, "times", times)
        object.__setattr__(self, "points", points)
        # imported here: scipy.interpolate takes ~0.35 s, paid only when a sampled path is built
        from scipy.interpolate import CubicSpline

        object.__setattr__(self, "_spline", CubicSpline(times, points, bc_type=self.bc_type))

    def __repr__(self) -> str:
        return (
            f"SampledPath(T={self.times.shape[0]}, times=[{self.times[0]:g}, "
            f"{self.times[-1]:g}] s, bc_type={self.bc_type!r})"
        )

    @property
    def duration(self) -> float:
        """``times[-1] - times[0]`` [s]."""
        return float(self.times[-1] - self.times[0])

    @property
    def time_span(self) -> tuple[float, float]:
        """``(times[0], times[-1])`` [s]."""
        return float(self.times[0]), float(self.times[-1])

    def _derivative(self, t: ArrayLike, order: int) -> Array:
        tt = _times(t)
        start, end = self.time_span
        if self.bc_type == "periodic":
            tt = start + np.mod(tt - start, end - start)
        elif tt.size and (tt.min() < start - 1e-9 or tt.max() > end + 1e-9):
            raise ValueError(
                f"t must lie in [{start:g}, {end:g}] s for {self!r}, got values in "
                f"[{tt.min():g}, {tt.max():g}]"
            )
        out: Array = self._spline(np.clip(tt, start, end), order)
        return out


# -- workspace -----------------------------------------------------------------------


def _annulus(params: ArmParams, margin: float) -> tuple[float, float]:
    margin = float(margin)
    if not (math.isfinite(margin) and margin >= 0.0):
        raise ValueError(f"margin must be a finite number >= 0 [m], got {margin!r}")
    inner, outer = params.inner_radius + margin, params.reach - margin
    if inner >= outer:
        raise ValueError(
            f"margin {margin!r} m leaves no workspace: the annulus is "
            f"[{params.inner_radius}, {params.reach}] m"
        )
    return inner, outer


def _radii(path: TipPath, samples: int) -> tuple[Array, Array]:
    """``samples`` times over the path's span [s] and the tip's distance from the base there [m]."""
    t = path.sample_times(samples)
    return t, np.hypot(*path.position(t).T)


def check_in_workspace(
    path: TipPath, params: ArmParams, margin: float = 0.005, samples: int = 2001
) -> None:
    """Check that ``path`` stays inside the reachable annulus, shrunk by ``margin``.

    The path is evaluated at ``samples`` evenly spaced times over its
    :attr:`~TipPath.time_span`; every point must lie at a distance from the
    base in ``[|l1 - l2| + margin, l1 + l2 - margin]``.

    Parameters
    ----------
    path : TipPath
    params : ArmParams
    margin : float
        [m], >= 0. The default leaves the seed's looping path (1 cm from the
        outer rim of its arm) inside.
    samples : int
        Number of times checked, >= 2.

    Raises
    ------
    ValueError
        Naming the path, the first time [s] at which it leaves the annulus,
        the distance there and the annulus.
    """
    inner, outer = _annulus(params, margin)
    if isinstance(samples, bool) or not isinstance(samples, numbers.Integral) or samples < 2:
        raise ValueError(f"samples must be an integer >= 2, got {samples!r}")
    t, r = _radii(path, int(samples))
    outside = (r < inner) | (r > outer)
    if outside.any():
        k = int(np.argmax(outside))
        raise ValueError(
            f"path {path!r} leaves the reachable annulus [{inner:.6g}, {outer:.6g}] m "
            f"(margin {margin:g} m) at t = {t[k]:.6g} s: distance {r[k]:.6g} m from the base"
        )


# -- random paths --------------------------------------------------------------------

#: Families :func:`sample_path` draws from.
FAMILIES = ("circle", "figure_eight", "lissajous", "looping")

#: Frequency pairs of the random Lissajous curves (coprime, not both 1).
_LISSAJOUS_FREQUENCIES = ((1, 2), (2, 1), (1, 3), (3, 1), (2, 3), (3, 2))


def _arc_length(path: TipPath, samples: int = 512) -> float:
    p = path.position(path.sample_times(samples))
    return float(np.sum(np.hypot(*np.diff(p, axis=0).T)))


def _inside(path: TipPath, inner: float, outer: float, samples: int = 512) -> bool:
    _, r = _radii(path, samples)
    return bool(np.all((r >= inner) & (r <= outer)))


def _draw(rng: np.random.Generator, family: str, reach: float, speed: float) -> TipPath:
    """One candidate of ``family`` (not yet checked against the workspace)."""
    # a centre drawn uniformly in the disc of radius ``reach``
    rho = reach * math.sqrt(rng.uniform())
    angle = rng.uniform(-math.pi, math.pi)
    centre = (rho * math.cos(angle), rho * math.sin(angle))
    path: TipPath
    if family == "circle":
        radius = rng.uniform(0.05, 0.5) * reach
        path = Circle(
            centre=centre,
            radius=radius,
            period=2.0 * math.pi * radius / speed,
            direction=int(rng.choice([-1, 1])),
            phase=rng.uniform(-math.pi, math.pi),
        )
        return path
    if family == "looping":
        radius = rng.uniform(0.2, 0.45) * reach
        looping = LoopingPath(
            centre=centre,
            radius=radius,
            loop_radius=rng.uniform(0.1, 0.3) * radius,
            loops=int(rng.integers(6, 14)),
            period=1.0,
            start_angle=rng.uniform(-math.pi, math.pi),
        )
        return dataclasses.replace(looping, period=_arc_length(looping, 4096) / speed)
    if family == "figure_eight":
        ax, ay = rng.uniform(0.05, 0.25, size=2) * reach
        shape = Lissajous(centre=centre, ax=ax, ay=ay, fx=1, fy=2, period=1.0)
    else:
        fx, fy = _LISSAJOUS_FREQUENCIES[int(rng.integers(len(_LISSAJOUS_FREQUENCIES)))]
        ax, ay = rng.uniform(0.05, 0.25, size=2) * reach
        phase = rng.uniform(-math.pi, math.pi)
        shape = Lissajous(centre=centre, ax=ax, ay=ay, fx=fx, fy=fy, phase=phase, period=1.0)
    # a period that gives the mean tip speed ``speed``
    return dataclasses.replace(shape, period=_arc_length(shape) / speed)


def sample_path(
    rng: np.random.Generator,
    params: ArmParams,
    families: Sequence[str] = FAMILIES,
    *,
    margin: float = 0.05,
    speed: tuple[float, float] = (0.1, 0.5),
    max_tries: int = 1000,
) -> TipPath:
    """Draw a random periodic path that stays inside the workspace.

    The family is drawn uniformly from ``families``; then a centre (uniform
    in the disc of radius ``l1 + l2``), a size (circle radius 5-50 % of the
    reach, Lissajous amplitudes 5-25 %; a looping path's big circle 20-45 %
    of the reach with 6-13 loops of 10-30 % of its radius), a direction,
    phase or start angle, and a mean tip
    speed (uniform in ``speed``, which sets the period) are drawn until the
    path lies inside the annulus ``[|l1 - l2| + margin, l1 + l2 - margin]``
    (rejection sampling, checked at 512 instants). Every number comes from
    ``rng``, so a seeded generator gives the same path.

    Parameters
    ----------
    rng : numpy.random.Generator
    params : ArmParams
    families : sequence of str
        Any of :data:`FAMILIES` (``"lissajous"`` uses the frequency pairs
        (1, 2), (2, 1), (1, 3), (3, 1), (2, 3), (3, 2) and a random phase).
    margin : float
        Clearance from the rims of the workspace [m].
    speed : pair of float
        Range of the mean tip speed [m/s].
    max_tries : int
        Candidates drawn before giving up.

    Returns
    -------
    TipPath

    Raises
    ------
    ValueError
        On an unknown family (naming ``families`` and the allowed names), an
        invalid speed range or margin, or if no candidate fits.
    """
    if isinstance(families, str) or not families:
        raise ValueError(
            f"families must be a non-empty sequence of {list(FAMILIES)}, got {families!r}"
        )
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        raise ValueError(f"families: unknown {unknown}; allowed names are {list(FAMILIES)}")
    low, high = (float(v) for v in speed)
    if not 0.0 < low <= high:
        raise ValueError(f"speed must satisfy 0 < low <= high [m/s], got {speed!r}")
    inner, outer = _annulus(params, margin)
    for _ in range(max_tries):
        family = families[int(rng.integers(len(families)))]
        candidate = _draw(rng, family, params.reach, rng.uniform(low, high))
        if _inside(candidate, inner, outer):
            return candidate
    raise ValueError(
        f"no {list(families)} path fitted the annulus [{inner:g}, {outer:g}] m in {max_tries} tries"
    )


# -- construction from a spec --------------------------------------------------------

_CLASSES: dict[str, type[TipPath]] = {
    "circle": Circle,
    "lissajous": Lissajous,
    "looping": LoopingPath,
}

#: Names :func:`make_path` knows, with the path each gives.
PATH_NAMES: dict[str, TipPath] = {
    "looping": LoopingPath(),
    "circle": Circle(centre=(0.5, 0.0), radius=0.3, period=10.0),
    "figure_eight": figure_eight(centre=(0.55, 0.0), width=0.6, height=0.4, period=10.0),
}


def make_path(spec: Any) -> TipPath:
    """Build a path from a spec.

    Parameters
    ----------
    spec : TipPath, str, mapping or array
        - a :class:`TipPath`: returned as is;
        - a name of :data:`PATH_NAMES`: ``"looping"`` (the seed's looping
          circle, :class:`LoopingPath` defaults), ``"circle"`` (radius 0.3 m
          about (0.5, 0) m, 10 s) or ``"figure_eight"`` (0.6 m × 0.4 m about
          (0.55, 0) m, 10 s); all fit any arm with ``l1 + l2 >= 1`` m and
          ``|l1 - l2| <= 0.2`` m;
        - a mapping ``{"type": name, **fields}`` with ``type`` one of
          ``"circle"``, ``"lissajous"``, ``"looping"``, ``"figure_eight"``
          (fields of the class, or the arguments of :func:`figure_eight`);
        - an array of shape ``(T, 3)`` with columns ``[t, x, y]``, or a pair
          ``(times, points)`` of shapes ``(T,)`` and ``(T, 2)``: a
          :class:`SampledPath`.

    Returns
    -------
    TipPath

    Raises
    ------
    ValueError
        Naming ``path`` and the allowed names, on anything else.
    """
    allowed = sorted(PATH_NAMES)
    if isinstance(spec, TipPath):
        return spec
    if isinstance(spec, str):
        if spec in PATH_NAMES:
            return PATH_NAMES[spec]
        raise ValueError(
            f"path must be one of {allowed}, a mapping with a 'type', a (T, 3) array of "
            f"[t, x, y] rows or a (times, points) pair; got the unknown name {spec!r}"
        )
    if isinstance(spec, Mapping):
        fields = dict(spec)
        kind = fields.pop("type", None)
        if kind == "figure_eight":
            return figure_eight(**fields)
        if kind not in _CLASSES:
            raise ValueError(
                f"path mapping needs 'type' in {sorted([*_CLASSES, 'figure_eight'])}, got {kind!r}"
            )
        try:
            return _CLASSES[kind](**fields)
        except TypeError as exc:
            raise ValueError(f"path {kind!r}: {exc}") from None
    if isinstance(spec, tuple) and len(spec) == 2:
        return SampledPath(*spec)
    arr = np.asarray(spec) if isinstance(spec, (list, np.ndarray)) else None
    if arr is not None and arr.ndim == 2 and arr.shape[1] == 3:
        return SampledPath(arr[:, 0], arr[:, 1:])
    shape = f" of shape {arr.shape}" if arr is not None else ""
    raise ValueError(
        f"path must be one of {allowed}, a mapping with a 'type', a (T, 3) array of "
        f"[t, x, y] rows or a (times, points) pair; got {type(spec).__name__}{shape}"
    )


# -- joint-space reference -----------------------------------------------------------


def joint_reference(
    params: ArmParams,
    path: TipPath,
    t: ArrayLike,
    q0: ArrayLike | None = None,
    *,
    elbow: ElbowBranch | None = None,
    min_abs_sin_q2: float = MIN_ABS_SIN_Q2,
) -> tuple[Array, Array, Array]:
    """Joint angles, velocities and accelerations that make the tip follow ``path``.

    The elbow branch is chosen once and kept for the whole path (the sign of
    ``q2`` never changes): ``elbow`` if given, else the branch whose solution
    at ``t[0]`` is nearest (wrapped joint distance) to ``q0``, else
    ``"down"`` (``q2 >= 0``, the branch the exercise seeds with). ``q1``
    is unwrapped continuously along ``t`` (so ``t`` should be sorted and dense
    enough that ``q1`` moves by less than π between samples) and shifted by a
    multiple of 2π to start next to ``q0`` (if given). The derivatives are
    analytic: ``dq = J⁻¹ v`` and ``ddq = J⁻¹ (a - J̇ dq)``, with the package's
    :func:`~twolink_gym.kinematics.jacobian` and
    :func:`~twolink_gym.kinematics.jacobian_derivative`.

    Parameters
    ----------
    params : ArmParams
    path : TipPath
    t : array_like, shape (n,)
        Times [s].
    q0 : array_like, shape (2,), optional
        Joint angles [rad] near which to start.
    elbow : {"up", "down"}, optional
        Force a branch (``"up"``: ``q2 <= 0``).
    min_abs_sin_q2 : float
        Smallest ``|sin q2|`` accepted (the Jacobian's determinant is
        ``l1 l2 sin q2``).

    Returns
    -------
    q, dq, ddq : ndarray, shape (n, 2)
        [rad], [rad/s], [rad/s²].

    Raises
    ------
    ValueError
        If the path leaves the workspace, or comes within ``min_abs_sin_q2``
        of a singularity (arm straight or folded), at one of the times (the
        message names the path and the first such time); on an invalid
        ``elbow`` or ``q0``.
    """
    tt = np.atleast_1d(_times(t))
    if tt.ndim != 1:
        raise ValueError(f"t must have shape (n,), got {tt.shape}")
    p, v, a = path.position(tt), path.velocity(tt), path.acceleration(tt)
    r = np.hypot(*p.T)
    outside = (r < params.inner_radius) | (r > params.reach)
    if outside.any():
        k = int(np.argmax(outside))
        raise ValueError(
            f"path {path!r} leaves the reachable annulus [{params.inner_radius:g}, "
            f"{params.reach:g}] m at t = {tt[k]:.6g} s (distance {r[k]:.6g} m)"
        )
    start: Array | None = None
    if q0 is not None:
        start = np.asarray(q0, dtype=np.float64)
        if start.shape != (2,) or not np.all(np.isfinite(start)):
            raise ValueError(f"q0 must be 2 finite joint angles [rad], got {q0!r}")
    branch: ElbowBranch
    if elbow is not None:
        if elbow not in ("up", "down"):
            raise ValueError(f"elbow must be 'up' or 'down', got {elbow!r}")
        branch = elbow
    elif start is None:
        branch = "down"
    else:
        down = wrap_angle(inverse_kinematics(params, p[0], "down", clip=True) - start)
        up = wrap_angle(inverse_kinematics(params, p[0], "up", clip=True) - start)
        branch = "up" if np.sum(up**2) < np.sum(down**2) else "down"
    q: Array = inverse_kinematics(params, p, branch, clip=True)
    sin_q2 = np.abs(np.sin(q[:, 1]))
    near = sin_q2 < min_abs_sin_q2
    if near.any():
        k = int(np.argmax(near))
        raise ValueError(
            f"path {path!r} comes within |sin q2| = {sin_q2[k]:.3g} < {min_abs_sin_q2:g} of a "
            f"singularity (arm straight or folded) at t = {tt[k]:.6g} s"
        )
    q[:, 0] = np.unwrap(q[:, 0])
    if start is not None:
        q[:, 0] += 2.0 * np.pi * np.round((start[0] - q[0, 0]) / (2.0 * np.pi))
    dq, ddq = joint_rates(params, q, v, a)
    return q, dq, ddq


def joint_states_on_branch(
    params: ArmParams,
    position: ArrayLike,
    velocity: ArrayLike,
    acceleration: ArrayLike,
    down: ArrayLike,
) -> tuple[Array, Array, Array]:
    """Joint angles and rates that put the tip at points moving as given, on chosen elbow branches.

    Pointwise (no path, no continuity): inverse kinematics of each point on its
    branch (a point outside the workspace is projected onto it), then
    :func:`joint_rates`, with zero rates where ``|sin q2| <`` :data:`MIN_ABS_SIN_Q2`.
    The track task's episode start and the tracking controllers' joint
    reference.

    Parameters
    ----------
    params : ArmParams
    position, velocity, acceleration : array_like, shape (n, 2)
        Tip position [m], velocity [m/s] and acceleration [m/s²].
    down : array_like of bool, shape (n,)
        True: the elbow-down branch (``q2 >= 0``); False: elbow up (``q2 <= 0``).

    Returns
    -------
    q, dq, ddq : ndarray, shape (n, 2)
        [rad], [rad/s], [rad/s²].
    """
    p = np.asarray(position, dtype=np.float64)
    v = np.asarray(velocity, dtype=np.float64)
    a = np.asarray(acceleration, dtype=np.float64)
    q = np.where(
        np.asarray(down, dtype=bool)[:, None],
        inverse_kinematics(params, p, "down", clip=True),
        inverse_kinematics(params, p, "up", clip=True),
    )
    dq = np.zeros_like(q)
    ddq = np.zeros_like(q)
    ok = np.abs(np.sin(q[:, 1])) >= MIN_ABS_SIN_Q2
    if ok.any():
        dq[ok], ddq[ok] = joint_rates(params, q[ok], v[ok], a[ok])
    return q, dq, ddq


def joint_rates(params: ArmParams, q: ArrayLike, v: ArrayLike, a: ArrayLike) -> tuple[Array, Array]:
    """Joint velocities and accelerations that give the tip velocity ``v`` and acceleration ``a``.

    ``dq = J⁻¹ v`` and ``ddq = J⁻¹ (a - J̇ dq)`` at the angles ``q``, with the
    package's :func:`~twolink_gym.kinematics.jacobian` and
    :func:`~twolink_gym.kinematics.jacobian_derivative` (the Jacobian must be
    invertible: ``sin q2 != 0``).

    Parameters
    ----------
    params : ArmParams
    q : array_like, shape (..., 2)
        Joint angles [rad].
    v, a : array_like, shape (..., 2)
        Tip velocity [m/s] and acceleration [m/s²].

    Returns
    -------
    dq, ddq : ndarray, shape (..., 2)
        [rad/s], [rad/s²].
    """
    q = np.asarray(q, dtype=np.float64)
    jac = jacobian(params, q)
    dq = np.asarray(np.linalg.solve(jac, np.asarray(v, dtype=np.float64)[..., None])[..., 0])
    rhs = np.asarray(a, dtype=np.float64) - np.einsum(
        "...ij,...j->...i", jacobian_derivative(params, q, dq), dq
    )
    ddq = np.asarray(np.linalg.solve(jac, rhs[..., None])[..., 0], dtype=np.float64)
    return dq, ddq
