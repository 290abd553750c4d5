"""The arm's equations of motion and RK4 in JAX (the twin of :mod:`twolink_gym.dynamics`).

The same component-wise formulas as the compiled kernels
(:func:`twolink_gym.dynamics._accelerations`, :func:`twolink_gym.integrators._rk4`),
in the same order of operations, on JAX scalars: jittable, vmappable, and in
float64 under ``jax_enable_x64``. The arm is the named tuple
:class:`twolink_gym.kernel.Arm` of the arm vector's entries
(:data:`twolink_gym.dynamics.ARM_VECTOR_FIELDS`). With a Coulomb coefficient
of 0 the Coulomb terms add an exact zero, as the compiled kernels' branch
does; ``coulomb=False`` (a Python bool) leaves them out of the trace, the twin
of the compiled integrators' Coulomb-free variant for such an arm
(:func:`twolink_gym.dynamics.has_coulomb`). ``tests/test_jax_equivalence.py``
holds the two equal.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from twolink_gym.dynamics import COULOMB_SHARPNESS

__all__ = ["accelerations", "gravity_torque", "rk4"]


def accelerations(
    arm: Any,
    q1: Any,
    q2: Any,
    dq1: Any,
    dq2: Any,
    tau1: Any,
    tau2: Any,
    coulomb: bool = True,
) -> tuple[Any, Any]:
    """Joint accelerations ``M⁻¹ (tau - C dq - G - F(dq))`` [rad/s²] of one arm.

    Parameters
    ----------
    arm : twolink_gym.kernel.Arm
        The arm's entries (scalars).
    q1, q2, dq1, dq2 : scalar
        State [rad, rad, rad/s, rad/s].
    tau1, tau2 : scalar
        Joint torques [N·m].
    coulomb : bool
        Whether to add the Coulomb terms (static; ``False`` only for an arm
        whose ``cf1`` and ``cf2`` are 0, where they are exact zeros).
    """
    s1, c1 = jnp.sin(q1), jnp.cos(q1)
    s2, c2 = jnp.sin(q2), jnp.cos(q2)
    c12 = c1 * c2 - s1 * s2
    m11 = arm.a + 2.0 * arm.b * c2
    m12 = arm.e + arm.b * c2
    m22 = arm.d + 0.0 * c2
    h = -arm.b * s2
    g12 = arm.g2 * c12
    b1 = h * (2.0 * dq1 * dq2 + dq2 * dq2) + arm.g1 * c1 + g12 + arm.f1 * dq1
    b2 = -h * dq1 * dq1 + g12 + arm.f2 * dq2
    if coulomb:
        b1 = b1 + arm.cf1 * jnp.arctan(COULOMB_SHARPNESS * dq1)
        b2 = b2 + arm.cf2 * jnp.arctan(COULOMB_SHARPNESS * dq2)
    r1 = tau1 - b1
    r2 = tau2 - b2
    det = m11 * m22 - m12 * m12
    return (m22 * r1 - m12 * r2) / det, (m11 * r2 - m12 * r1) / det


def rk4(
    arm: Any,
    q1: Any,
    q2: Any,
    dq1: Any,
    dq2: Any,
    tau1: Any,
    tau2: Any,
    dt: Any,
    substeps: int,
    coulomb: bool = True,
) -> tuple[Any, Any, Any, Any]:
    """Advance one arm by ``substeps`` RK4 steps of ``dt / substeps`` (torques held).

    ``substeps`` is a Python int (unrolled when traced) and ``coulomb`` a
    Python bool (see :func:`accelerations`); the rest are JAX scalars.

    Returns
    -------
    tuple of 4 scalars
        ``(q1, q2, dq1, dq2)`` after ``dt`` [rad, rad, rad/s, rad/s].
    """
    h = dt / substeps
    half = 0.5 * h
    sixth = h / 6.0
    for _ in range(substeps):
        a1, b1 = accelerations(arm, q1, q2, dq1, dq2, tau1, tau2, coulomb)
        v1, w1 = dq1 + half * a1, dq2 + half * b1
        a2, b2 = accelerations(arm, q1 + half * dq1, q2 + half * dq2, v1, w1, tau1, tau2, coulomb)
        v2, w2 = dq1 + half * a2, dq2 + half * b2
        a3, b3 = accelerations(arm, q1 + half * v1, q2 + half * w1, v2, w2, tau1, tau2, coulomb)
        v3, w3 = dq1 + h * a3, dq2 + h * b3
        a4, b4 = accelerations(arm, q1 + h * v2, q2 + h * w2, v3, w3, tau1, tau2, coulomb)
        q1 = q1 + sixth * (dq1 + 2.0 * (v1 + v2) + v3)
        q2 = q2 + sixth * (dq2 + 2.0 * (w1 + w2) + w3)
        dq1 = dq1 + sixth * (a1 + 2.0 * (a2 + a3) + a4)
        dq2 = dq2 + sixth * (b1 + 2.0 * (b2 + b3) + b4)
    return q1, q2, dq1, dq2


def gravity_torque(arm: Any, q1: Any, q2: Any) -> tuple[Any, Any]:
    """Gravity torques ``G(q) = dV/dq`` [N·m] at ``(q1, q2)`` [rad] (:func:`twolink_gym.dynamics.gravity_torque`).

    The compiled bias torques at rest: ``(g1 cos q1 + g2 cos(q1 + q2), g2 cos(q1 + q2))``.
    """
    g12 = arm.g2 * jnp.cos(q1 + q2)
    return arm.g1 * jnp.cos(q1) + g12, g12
