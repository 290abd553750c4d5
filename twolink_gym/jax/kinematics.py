"""The arm's tip position in JAX (the twin of :func:`twolink_gym.kinematics.tip_from_trig`).

The same formula, in the same order of operations, as the compiled kernels'
:func:`twolink_gym.kinematics.tip_from_trig`, on the named arm
(:class:`twolink_gym.kernel.Arm`) and JAX scalars or arrays: jittable and
vmappable. The env's ``tip``, the swing-up task's height and the track task's
error all take the tip from here.
"""

from __future__ import annotations

from typing import Any

import jax

__all__ = ["tip_from_trig"]


def tip_from_trig(
    arm: Any, c1: jax.Array, s1: jax.Array, c12: jax.Array, s12: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """Tip position ``(x, y)`` [m] from ``cos q1, sin q1, cos(q1+q2), sin(q1+q2)``.

    Parameters
    ----------
    arm : twolink_gym.kernel.Arm
        The arm; its link lengths ``l1``, ``l2`` [m] are used.
    c1, s1, c12, s12 : jax.Array
        Cosine and sine of ``q1`` and of ``q1 + q2``, any one shape.

    Returns
    -------
    tuple of jax.Array
        ``x = l1 cos q1 + l2 cos(q1+q2)`` and ``y = l1 sin q1 + l2 sin(q1+q2)`` [m], the
        inputs' shape.
    """
    return arm.l1 * c1 + arm.l2 * c12, arm.l1 * s1 + arm.l2 * s12
