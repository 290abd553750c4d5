"""Reward primitives shared by the task kernels (compiled, on floats).

Bounded factors in ``[0, 1]`` that are 1 where the task wants the arm, after
dm_control's ``utils/rewards.py``:

- :func:`tolerance`: 1 inside ``[lower, upper]``, a Gaussian decay outside it
  that has fallen to ``value_at_margin`` at ``margin`` from the bounds;
- :func:`gaussian`: the Gaussian factor ``exp(-d² / (2 sigma²))`` of a
  distance, from its square (1 at ``d = 0``, ``exp(-1/2) ≈ 0.61`` at
  ``d = sigma``): ``tolerance(d, 0, 0, margin=sigma, value_at_margin=exp(-1/2))``
  up to rounding;
- :func:`control_factor`: ``1 - weight · |a|² / 2`` of a normalised action.

All are compiled kernels (:func:`twolink_gym._jit.kernel`, inlined into the
task kernels) and run as plain Python with ``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

import math

from twolink_gym._jit import kernel

__all__ = ["control_factor", "gaussian", "tolerance"]


@kernel(inline=True)
def tolerance(
    x: float, lower: float, upper: float, margin: float = 0.0, value_at_margin: float = 0.1
) -> float:
    """dm_control's ``tolerance(x, bounds=(lower, upper), margin, sigmoid="gaussian")``.

    Parameters
    ----------
    x : float
    lower, upper : float
        The bounds, ``lower <= upper``.
    margin : float
        Width of the decay outside the bounds, ``>= 0`` (same unit as ``x``).
    value_at_margin : float
        The value at ``margin`` from the bounds, in ``(0, 1)``.

    Returns
    -------
    float
        1 for ``lower <= x <= upper`` (at the bounds included). Outside, with
        ``margin == 0``: 0; with ``margin > 0``: ``exp(-(d·s)² / 2)`` where
        ``d = (distance of x from the nearer bound) / margin`` and
        ``s = sqrt(-2 ln value_at_margin)``, so exactly ``value_at_margin``
        at ``d = 1`` (``margin`` from the bounds), decaying towards 0 beyond.
    """
    if lower <= x <= upper:
        return 1.0
    if margin <= 0.0:
        return 0.0
    d = (lower - x if x < lower else x - upper) / margin
    scale = math.sqrt(-2.0 * math.log(value_at_margin))
    return math.exp(-0.5 * (d * scale) ** 2)


@kernel(inline=True)
def gaussian(sq_distance: float, sigma: float) -> float:
    """The Gaussian factor ``exp(-sq_distance / (2 sigma²))`` of a squared distance.

    Parameters
    ----------
    sq_distance : float
        ``d²``, the squared distance (a sum of squares for several coordinates).
    sigma : float
        The width, ``> 0``, in the unit of ``d``.

    Returns
    -------
    float
        1 at ``d = 0``, ``exp(-1/2) ≈ 0.607`` at ``d = sigma``, ``exp(-2) ≈ 0.135``
        at ``d = 2 sigma``; in ``(0, 1]``.
    """
    return math.exp(-sq_distance / (2.0 * (sigma * sigma)))


@kernel(inline=True)
def control_factor(a1: float, a2: float, weight: float) -> float:
    """The control factor ``1 - weight · (a1² + a2²) / 2`` of a normalised action.

    Returns
    -------
    float
        1 at zero action, ``1 - weight`` at full action on both joints
        (``|a1| = |a2| = 1``); in ``[1 - weight, 1]`` for actions in ``[-1, 1]``.
    """
    return 1.0 - 0.5 * weight * (a1 * a1 + a2 * a2)
