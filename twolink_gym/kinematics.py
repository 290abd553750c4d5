"""Kinematics of the planar two-link arm (pure, batched numpy; one compiled kernel for the step).

The base is at the origin; ``elbow = l1 (cos q1, sin q1)`` and
``tip = elbow + l2 (cos(q1 + q2), sin(q1 + q2))``. The workspace is the
annulus of radii ``|l1 - l2|`` and ``l1 + l2``.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym._arrays import as_vectors
from twolink_gym._jit import kernel
from twolink_gym.dynamics import L1, L2
from twolink_gym.params import ArmParams

__all__ = [
    "ElbowBranch",
    "forward_kinematics",
    "inverse_kinematics",
    "jacobian",
    "jacobian_derivative",
    "project_to_workspace",
    "tip_from_trig",
    "tip_position",
    "tip_velocity",
    "wrap_angle",
]

Array = NDArray[Any]
ElbowBranch = Literal["up", "down"]


@kernel()
def tip_from_trig(arm: Array, c1: float, s1: float, c12: float, s12: float) -> tuple[float, float]:
    """Tip position ``(x, y)`` [m] of one arm from ``cos q1, sin q1, cos(q1+q2), sin(q1+q2)``.

    The compiled kernels' form of :func:`forward_kinematics` (``arm`` is the arm
    vector of :func:`twolink_gym.dynamics.arm_vector`).
    """
    return arm[L1] * c1 + arm[L2] * c12, arm[L1] * s1 + arm[L2] * s12


def wrap_angle(angle: ArrayLike) -> Array:
    """Wrap angles to ``[-pi, pi)`` [rad], elementwise."""
    wrapped = (np.asarray(angle) + np.pi) % (2.0 * np.pi) - np.pi
    # rounding gives exactly +pi for angles just below -pi (mod 2 pi): fold it to -pi
    return wrapped - 2.0 * np.pi * (wrapped >= np.pi)


def forward_kinematics(params: ArmParams, q: ArrayLike) -> tuple[Array, Array]:
    """Positions of the elbow and the tip.

    Parameters
    ----------
    params : ArmParams
    q : array_like, shape (..., 2)
        Joint angles [rad].

    Returns
    -------
    elbow_xy, tip_xy : ndarray, shape (..., 2)
        Cartesian positions [m] in the base frame (y up).
    """
    q = as_vectors(q, 2, "q")
    q1 = q[..., 0]
    q12 = q1 + q[..., 1]
    elbow = np.stack([params.l1 * np.cos(q1), params.l1 * np.sin(q1)], -1)
    tip = elbow + np.stack([params.l2 * np.cos(q12), params.l2 * np.sin(q12)], -1)
    return elbow, tip


def tip_position(params: ArmParams, q: ArrayLike) -> Array:
    """Tip position [m], shape ``(..., 2)`` (the second output of :func:`forward_kinematics`)."""
    return forward_kinematics(params, q)[1]


def jacobian(params: ArmParams, q: ArrayLike) -> Array:
    """Jacobian ``d tip / d q`` of the tip position.

    Parameters
    ----------
    params : ArmParams
    q : array_like, shape (..., 2)
        Joint angles [rad].

    Returns
    -------
    ndarray, shape (..., 2, 2)
        [m/rad]; singular when ``sin q2 = 0`` (arm straight or folded), with
        ``det J = l1 l2 sin q2``.
    """
    q = as_vectors(q, 2, "q")
    q1 = q[..., 0]
    q12 = q1 + q[..., 1]
    s1, c1 = params.l1 * np.sin(q1), params.l1 * np.cos(q1)
    s12, c12 = params.l2 * np.sin(q12), params.l2 * np.cos(q12)
    row_x = np.stack([-s1 - s12, -s12], -1)
    row_y = np.stack([c1 + c12, c12], -1)
    return np.stack([row_x, row_y], -2)


def jacobian_derivative(params: ArmParams, q: ArrayLike, dq: ArrayLike) -> Array:
    """Time derivative ``dJ/dt`` of the tip Jacobian along a motion.

    With ``tip acceleration = J ddq + (dJ/dt) dq``, this gives the joint
    accelerations of a Cartesian path: ``ddq = J⁻¹ (a - (dJ/dt) dq)``.

    Parameters
    ----------
    params : ArmParams
    q : array_like, shape (..., 2)
        Joint angles [rad].
    dq : array_like, shape (..., 2)
        Joint velocities [rad/s].

    Returns
    -------
    ndarray, shape (..., 2, 2)
        [m/(rad·s)] (leading axes of ``q`` and ``dq`` broadcast).
    """
    q = as_vectors(q, 2, "q")
    dq = as_vectors(dq, 2, "dq")
    q1 = q[..., 0]
    q12 = q1 + q[..., 1]
    w1 = dq[..., 0]
    w12 = w1 + dq[..., 1]
    c1, s1 = params.l1 * np.cos(q1) * w1, params.l1 * np.sin(q1) * w1
    c12, s12 = params.l2 * np.cos(q12) * w12, params.l2 * np.sin(q12) * w12
    row_x = np.stack(np.broadcast_arrays(-c1 - c12, -c12), -1)
    row_y = np.stack(np.broadcast_arrays(-s1 - s12, -s12), -1)
    return np.stack([row_x, row_y], -2)


def tip_velocity(params: ArmParams, q: ArrayLike, dq: ArrayLike) -> Array:
    """Tip velocity ``J(q) dq`` [m/s], shape ``(..., 2)``."""
    dq = as_vectors(dq, 2, "dq")
    return np.einsum("...ij,...j->...i", jacobian(params, q), dq)


def project_to_workspace(params: ArmParams, point_xy: ArrayLike) -> Array:
    """Nearest point of the workspace annulus to ``point_xy`` [m], shape ``(..., 2)``.

    A point at the origin of an arm with ``l1 != l2`` is projected along +x.
    """
    p = as_vectors(point_xy, 2, "point_xy").astype(np.float64)
    r = np.hypot(p[..., 0], p[..., 1])
    r_clipped = np.clip(r, params.inner_radius, params.reach)
    safe = np.where(r > 0.0, r, 1.0)
    direction = np.where((r > 0.0)[..., None], p / safe[..., None], np.array([1.0, 0.0]))
    return direction * r_clipped[..., None]


def inverse_kinematics(
    params: ArmParams,
    tip_xy: ArrayLike,
    elbow: ElbowBranch = "up",
    *,
    clip: bool = False,
) -> Array:
    """Joint angles that put the tip at ``tip_xy``.

    Parameters
    ----------
    params : ArmParams
    tip_xy : array_like, shape (..., 2)
        Target tip position [m].
    elbow : {"up", "down"}
        The branch. ``"up"`` is ``q2 <= 0``: the elbow lies counter-clockwise
        of the base-to-tip line (above it for a target to the right of the
        base); ``"down"`` is ``q2 >= 0``.
    clip : bool
        If True, targets outside the workspace are replaced by the nearest
        reachable point (:func:`project_to_workspace`) instead of raising.

    Returns
    -------
    ndarray, shape (..., 2)
        ``[q1, q2]`` [rad], with ``q1`` in ``[-pi, pi)`` and ``q2`` in
        ``[-pi, pi]``.

    Raises
    ------
    ValueError
        If ``elbow`` is not ``"up"`` or ``"down"``, or (without ``clip``) if a
        target lies outside the annulus ``|l1 - l2| <= r <= l1 + l2``.
    """
    if elbow not in ("up", "down"):
        raise ValueError(f"elbow must be 'up' or 'down', got {elbow!r}")
    p = as_vectors(tip_xy, 2, "tip_xy").astype(np.float64)
    if clip:
        p = project_to_workspace(params, p)
    x, y = p[..., 0], p[..., 1]
    r2 = x**2 + y**2
    l1, l2 = params.l1, params.l2
    cos_q2 = (r2 - l1**2 - l2**2) / (2.0 * l1 * l2)
    tol = 1e-12
    if not clip and np.any(np.abs(cos_q2) > 1.0 + tol):
        r = np.sqrt(r2)
        bad = np.abs(cos_q2) > 1.0 + tol
        worst = p[bad][0] if p.ndim > 1 else p
        raise ValueError(
            f"tip_xy {np.asarray(worst).tolist()} is outside the workspace: its distance "
            f"from the base must lie in [{params.inner_radius}, {params.reach}] m, "
            f"got {float(np.asarray(r)[bad].ravel()[0]):.6g} m "
            "(pass clip=True for the nearest reachable point)"
        )
    q2 = np.arccos(np.clip(cos_q2, -1.0, 1.0))
    if elbow == "up":
        q2 = -q2
    q1 = np.arctan2(y, x) - np.arctan2(l2 * np.sin(q2), l1 + l2 * np.cos(q2))
    return np.stack([wrap_angle(q1), q2], -1)
