r"""The track task's reference paths as pure JAX functions.

The twin of :mod:`twolink_gym.paths` and of the reference table of
:mod:`twolink_gym.tasks.track`, written on ``jax.numpy`` so that it runs under
``jit`` and ``vmap``:

- an analytic path (:class:`~twolink_gym.paths.Circle`,
  :class:`~twolink_gym.paths.Lissajous` and figure-eights,
  :class:`~twolink_gym.paths.LoopingPath`) is a *path vector* of
  :data:`PATH_SIZE` floats (:func:`path_vector` encodes one on the host);
  :func:`path_rows` evaluates it, :func:`tabulate` turns it into a track goal;
- :func:`reference_at` and :func:`reference_position` read a track goal (the
  table of rows ``(x, y, vx, vy, ax, ay)`` every :data:`TABLE_DT` seconds, see
  :mod:`twolink_gym.tasks.track`) at a time ``t``, as the compiled kernel does;
  a :class:`~twolink_gym.paths.SampledPath` reaches the twin this way, as the
  goal the compiled task tabulates (:func:`goal_of_path`);
- :func:`sample_path` draws a random path with :mod:`jax.random`, from the
  distribution :func:`twolink_gym.paths.sample_path` documents.

Path vector layout (:data:`PATH_SIZE` entries)::

    [0]    kind: 0 a sum of two phasors, 1 a Lissajous curve
    [1:3]  centre (cx, cy) [m]
    [3:6]  first term (A1 [m], w1 [rad/s], phi1 [rad])
    [6:9]  second term (A2 [m], w2 [rad/s], phi2 [rad])

A phasor sum is ``c + A1 e^{i(w1 t + phi1)} + A2 e^{i(w2 t + phi2)}`` (a circle
has ``A2 = 0``; a looping path's second term is its loops); a Lissajous curve
is ``x = cx + A1 sin(w1 t + phi1)``, ``y = cy + A2 sin(w2 t + phi2)``. The
derivatives are exact and follow the numpy classes' arithmetic operation by
operation, so under ``jax_enable_x64`` the two agree to the last bits of
``sin``/``cos`` (the tests hold them to 1e-12).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from twolink_gym.paths import FAMILIES, Circle, Lissajous, LoopingPath, TipPath
from twolink_gym.tasks.track import HEADER_SIZE, ROW_SIZE, TABLE_DT

__all__ = [
    "KIND_LISSAJOUS",
    "KIND_PHASORS",
    "PATH_SIZE",
    "goal_of_path",
    "path_derivative",
    "path_rows",
    "path_vector",
    "reference_at",
    "reference_position",
    "sample_path",
    "tabulate",
]

Array = jax.Array

#: Entries of a path vector (see the module notes).
PATH_SIZE = 9
#: Path kinds (entry 0 of a path vector).
KIND_PHASORS = 0
KIND_LISSAJOUS = 1

#: Frequency pairs of the random Lissajous curves (as :func:`twolink_gym.paths.sample_path`).
LISSAJOUS_FREQUENCIES = ((1, 2), (2, 1), (1, 3), (3, 1), (2, 3), (3, 2))
#: Points of the trapezoid rule for a drawn path's arc length (which sets its period).
ARC_SAMPLES = 256
#: Instants of the workspace check of a drawn path (as :func:`twolink_gym.paths.sample_path`).
INSIDE_SAMPLES = 512
#: Uniforms one candidate path takes (:func:`_candidate`).
CANDIDATE_DRAWS = 10


# -- analytic paths -----------------------------------------------------------------


def path_vector(path: TipPath) -> np.ndarray:
    """The path vector ``(PATH_SIZE,)`` float64 of an analytic path (host side, exact).

    Raises
    ------
    ValueError
        If ``path`` is not a :class:`~twolink_gym.paths.Circle`,
        :class:`~twolink_gym.paths.Lissajous` or
        :class:`~twolink_gym.paths.LoopingPath` (naming ``path``; a sampled
        path reaches the twin as a goal, :func:`goal_of_path`).
    """
    if isinstance(path, Circle):
        omega = path.direction * 2.0 * math.pi / path.period
        terms = [(path.radius, omega, path.phase), (0.0, 0.0, 0.0)]
        kind = KIND_PHASORS
    elif isinstance(path, LoopingPath):
        terms = path._terms()
        kind = KIND_PHASORS
    elif isinstance(path, Lissajous):
        omega = 2.0 * math.pi / path.period
        terms = [(path.ax, path.fx * omega, path.phase), (path.ay, path.fy * omega, 0.0)]
        kind = KIND_LISSAJOUS
    else:
        raise ValueError(
            f"path must be a Circle, Lissajous or LoopingPath to be a path vector, got "
            f"{type(path).__name__} (pass a sampled path as a goal: goal_of_path)"
        )
    return np.array([kind, *path.centre, *terms[0], *terms[1]], dtype=np.float64)


def _phasor(
    amplitude: Array, omega: Array, phase: Array, t: Array, order: int
) -> tuple[Array, Array]:
    """Real and imaginary part of ``d^order/dt^order A e^{i(w t + phi)}``.

    As numpy computes ``A (i w)^order exp(i (w t + phi))``: the coefficient
    ``A (i w)^order`` first, then one complex product.
    """
    theta = omega * t + phase
    cos, sin = jnp.cos(theta), jnp.sin(theta)
    if order == 1:  # a coefficient i A w: (0 cos - A w sin, 0 sin + A w cos)
        ci = amplitude * omega
        return -(ci * sin), ci * cos
    # a real coefficient: A, or -A w² for order 2
    cr = amplitude if order == 0 else amplitude * -(omega * omega)
    return cr * cos, cr * sin


def path_derivative(path: Array, t: Array, order: int) -> Array:
    """``d^order p / dt^order`` of a path vector at times ``t``.

    Parameters
    ----------
    path : Array, shape (PATH_SIZE,)
    t : Array, shape (...)
        Times [s].
    order : {0, 1, 2}
        Position [m], velocity [m/s] or acceleration [m/s²].

    Returns
    -------
    Array, shape (..., 2)
    """
    t = jnp.asarray(t)
    cx, cy = path[1], path[2]
    a1, w1, p1, a2, w2, p2 = (path[k] for k in range(3, 9))
    # a sum of two phasors (circle, looping path)
    r1, i1 = _phasor(a1, w1, p1, t, order)
    r2, i2 = _phasor(a2, w2, p2, t, order)
    px, py = r1 + r2, i1 + i2
    # a Lissajous curve: A w^k sin(w t + phi + k π/2) per axis
    shift = order * math.pi / 2
    lx = (a1 * w1**order) * jnp.sin(w1 * t + p1 + shift)
    ly = (a2 * w2**order) * jnp.sin(w2 * t + p2 + shift)
    lissajous = path[0] == KIND_LISSAJOUS
    x = jnp.where(lissajous, lx, px)
    y = jnp.where(lissajous, ly, py)
    if order == 0:
        x, y = x + cx, y + cy
    return jnp.stack([x, y], -1)


def path_rows(path: Array, t: Array) -> Array:
    """Rows ``(x, y, vx, vy, ax, ay)`` of a path vector at times ``t`` ``(...)``: ``(..., 6)``."""
    return jnp.concatenate([path_derivative(path, t, k) for k in range(3)], -1)


def tabulate(path: Array, rows: int) -> Array:
    """The track goal ``(HEADER_SIZE + ROW_SIZE · rows,)`` of a path vector.

    The layout of :meth:`twolink_gym.tasks.track.TrackTask.tabulate`: the spacing
    :data:`TABLE_DT`, the number of rows, then the rows at ``t = 0, h, 2h, ...``.
    ``rows`` is static (``TrackTask.table_rows``). The numpy version's check of
    the peak speed and acceleration is not made here.
    """
    t = TABLE_DT * jnp.arange(rows, dtype=path.dtype)
    header = jnp.array([TABLE_DT, rows], dtype=path.dtype)
    return jnp.concatenate([header, path_rows(path, t).reshape(-1)])


def goal_of_path(task: Any, spec: Any) -> np.ndarray:
    """The goal vector ``(goal_size,)`` float64 the compiled track ``task`` makes of a path spec.

    Host side (not jittable): :func:`twolink_gym.paths.make_path` and
    :meth:`~twolink_gym.tasks.track.TrackTask.tabulate`, so a sampled path or
    a name gives the same table as the compiled env's ``reset(options={"path": spec})``.
    """
    from twolink_gym.paths import make_path

    try:
        return np.asarray(task.tabulate(make_path(spec)), dtype=np.float64)
    except ValueError as exc:
        raise ValueError(f"options['path']: {exc}") from None


# -- the table --------------------------------------------------------------------


def _interpolation(goal: Array, t: Array) -> tuple[Array, Array]:
    """The goal index of the row before ``t`` and the fraction on (as the compiled kernel)."""
    rows = goal[1]
    k = t / goal[0]
    i = jnp.floor(jnp.maximum(k, 0.0))
    last = i >= rows - 1.0
    base = jnp.where(last, rows - 2.0, i)
    f = jnp.where(k <= 0.0, 0.0, jnp.where(last, 1.0, k - i))
    index = HEADER_SIZE + ROW_SIZE * jnp.where(k <= 0.0, 0.0, base).astype(jnp.int32)
    return index, f


def reference_at(goal: Array, t: Array) -> Array:
    """The reference ``(x, y, vx, vy, ax, ay)`` at time ``t`` [s], shape ``(6,)``.

    Linear interpolation between the table's rows, held at the last row after
    the table ends (:func:`twolink_gym.tasks.track.reference_at`).

    Parameters
    ----------
    goal : Array, shape (goal_size,)
        A track goal.
    t : Array, shape ()
        Episode time [s].
    """
    index, f = _interpolation(goal, t)
    pair = jax.lax.dynamic_slice(goal, (index,), (2 * ROW_SIZE,))
    return (1.0 - f) * pair[:ROW_SIZE] + f * pair[ROW_SIZE:]


def reference_position(goal: Array, t: Array) -> Array:
    """The reference position ``(x, y)`` [m] at time ``t`` [s], shape ``(2,)``."""
    index, f = _interpolation(goal, t)
    a = jax.lax.dynamic_slice(goal, (index,), (2,))
    b = jax.lax.dynamic_slice(goal, (index + ROW_SIZE,), (2,))
    return (1.0 - f) * a + f * b


# -- random paths -------------------------------------------------------------------


def _arc_length(unit: Array) -> Array:
    """Length of one period of a one-second path [m]: its mean speed, by the trapezoid rule.

    The speed of every path drawn here is periodic and analytic, so the rule
    on :data:`ARC_SAMPLES` points is exact to rounding.
    """
    t = jnp.arange(ARC_SAMPLES, dtype=unit.dtype) / ARC_SAMPLES
    v = path_derivative(unit, t, 1)
    return jnp.mean(jnp.hypot(v[:, 0], v[:, 1]))


def _candidate(u: Array, family: Array, reach: Array) -> Array:
    """One path of ``family`` (an index of :data:`~twolink_gym.paths.FAMILIES`), travelled in 1 s.

    ``u``: :data:`CANDIDATE_DRAWS` uniforms in ``[0, 1)`` (one draw of the key),
    mapped onto each family's ranges.
    """
    dtype = u.dtype

    def uniform(k: int, low: float, high: float) -> Array:
        return low + (high - low) * u[k]

    def integer(k: int, low: int, high: int) -> Array:
        """Uniform in ``low, ..., high - 1``."""
        return jnp.minimum(jnp.floor(low + (high - low) * u[k]), high - 1)

    rho = reach * jnp.sqrt(u[0])
    angle = uniform(1, -math.pi, math.pi)
    cx, cy = rho * jnp.cos(angle), rho * jnp.sin(angle)
    two_pi = jnp.asarray(2.0 * math.pi, dtype)
    zero = jnp.zeros((), dtype)
    one = jnp.ones((), dtype)
    phase = uniform(4, -math.pi, math.pi)  # circle phase, looping start angle, Lissajous phase
    # circle: radius 5-50 % of the reach, a direction, a phase
    radius = uniform(2, 0.05, 0.5) * reach
    direction = jnp.where(u[3] < 0.5, one, -one)
    circle = jnp.stack([zero, cx, cy, radius, direction * two_pi, phase, zero, zero, zero])
    # looping: big circle 20-45 % of the reach, 6-13 loops of 10-30 % of its radius,
    # loop phase π/2
    big = uniform(5, 0.2, 0.45) * reach
    loops = integer(6, 6, 14)
    small = uniform(7, 0.1, 0.3) * big
    looping = jnp.stack(
        [zero, cx, cy, big, two_pi, phase, small, (loops + 1.0) * two_pi, phase + math.pi]
    )
    # figure-eight (fx = 1, fy = 2, phase 0) and Lissajous: amplitudes 5-25 % of the reach
    ax = uniform(8, 0.05, 0.25) * reach
    ay = uniform(9, 0.05, 0.25) * reach
    pairs = jnp.asarray(LISSAJOUS_FREQUENCIES, dtype)
    pair = pairs[integer(6, 0, len(LISSAJOUS_FREQUENCIES)).astype(jnp.int32)]
    eight = jnp.stack([one, cx, cy, ax, two_pi, zero, ay, 2.0 * two_pi, zero])
    lissajous = jnp.stack([one, cx, cy, ax, pair[0] * two_pi, phase, ay, pair[1] * two_pi, zero])
    # in the order of FAMILIES: circle, figure_eight, lissajous, looping
    return jnp.stack([circle, eight, lissajous, looping])[family]


def _with_period(unit: Array, period: Array) -> Array:
    """The one-second path vector ``unit`` travelled in ``period`` [s] (angular speeds divided)."""
    return unit.at[4].divide(period).at[7].divide(period)


def _inside(unit: Array, inner: Array, outer: Array) -> Array:
    """Whether a one-second path lies in the annulus ``[inner, outer]`` at 512 instants of it."""
    p = path_derivative(unit, jnp.linspace(0.0, 1.0, INSIDE_SAMPLES, dtype=unit.dtype), 0)
    r = jnp.hypot(p[:, 0], p[:, 1])
    return jnp.all((r >= inner) & (r <= outer))


def sample_path(
    key: Array,
    l1: Array,
    l2: Array,
    families: Sequence[str] = FAMILIES,
    margin: Array | float = 0.05,
    speed: tuple[float, float] = (0.1, 0.5),
    max_tries: int = 1000,
) -> Array:
    """Draw a random periodic path inside the workspace: a path vector ``(PATH_SIZE,)``.

    The distribution of :func:`twolink_gym.paths.sample_path`: a family
    uniform in ``families``, a mean tip speed uniform in ``speed`` (which sets
    the period through the path's arc length), a centre uniform in the disc of
    radius ``l1 + l2``, a size (circle radius 5-50 % of the reach, Lissajous
    amplitudes 5-25 %, a looping path's big circle 20-45 % with 6-13 loops of
    10-30 % of its radius), a direction, phase or start angle (Lissajous
    frequency pairs (1, 2), (2, 1), (1, 3), (3, 1), (2, 3), (3, 2)), redrawn
    until the path lies in ``[|l1 - l2| + margin, l1 + l2 - margin]`` at 512
    instants (rejection sampling in a ``lax.while_loop``). The period is the
    arc length over the speed, with the exact arc length (the trapezoid rule
    on the periodic speed) where numpy's takes a polyline of 512 or 4096
    points (a relative difference below 1e-4). The draws come from
    :mod:`jax.random`, so they are not numpy's draws for the same seed. After
    ``max_tries`` misses the last candidate is returned (the numpy version
    raises; with the tasks' margins a miss that long has probability < 1e-100).

    Parameters
    ----------
    key : PRNG key
    l1, l2 : Array, shape ()
        The episode's link lengths [m].
    families : sequence of str
        Static: names of :data:`~twolink_gym.paths.FAMILIES`.
    margin : float
        Clearance from the workspace's rims [m].
    speed : pair of float
        Range of the mean tip speed [m/s].
    max_tries : int
        Static bound on the candidates drawn.

    Raises
    ------
    ValueError
        On an unknown family (naming ``families`` and the allowed names).
    """
    unknown = [f for f in families if f not in FAMILIES]
    if isinstance(families, str) or not families or unknown:
        raise ValueError(f"families must be a non-empty list of {list(FAMILIES)}, got {families!r}")
    dtype = jnp.result_type(float)
    l1 = jnp.asarray(l1, dtype)
    l2 = jnp.asarray(l2, dtype)
    reach = l1 + l2
    inner = jnp.abs(l1 - l2) + margin
    outer = reach - margin
    codes = jnp.array([FAMILIES.index(f) for f in families])
    low, high = (jnp.asarray(v, dtype) for v in speed)
    Carry = tuple[Array, Array, Array, Array, Array]

    def searching(carry: Carry) -> Array:
        _, _, _, inside, tries = carry
        return ~inside & (tries < max_tries)

    def draw(carry: Carry) -> Carry:
        k, _, _, _, tries = carry
        k, sub = jax.random.split(k)
        # the family, the speed, then the family's numbers: one draw of uniforms
        u = jax.random.uniform(sub, (CANDIDATE_DRAWS + 2,), dtype)
        family = codes[jnp.minimum(jnp.floor(u[0] * len(families)), len(families) - 1).astype(int)]
        unit = _candidate(u[2:], family, reach)
        return k, unit, low + (high - low) * u[1], _inside(unit, inner, outer), tries + 1

    empty = jnp.zeros(PATH_SIZE, dtype)
    start = (key, empty, low, jnp.zeros((), bool), jnp.zeros((), jnp.int32))
    _, unit, v, _, _ = jax.lax.while_loop(searching, draw, start)
    # the period that gives the mean tip speed v
    return _with_period(unit, _arc_length(unit) / v)
