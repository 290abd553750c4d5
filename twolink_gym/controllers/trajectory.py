"""Quintic joint trajectories, and their time scaling to the torque limits."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym.dynamics import inverse_dynamics
from twolink_gym.params import ArmParams

__all__ = ["fastest_feasible_duration", "quintic"]

Array = NDArray[np.float64]


def quintic(
    q0: ArrayLike, v0: ArrayLike, qf: ArrayLike, duration: ArrayLike, t: ArrayLike
) -> tuple[Array, Array, Array]:
    """Quintic polynomial from ``(q0, v0, 0)`` to ``(qf, 0, 0)`` (position, velocity, acceleration).

    Before ``t = 0`` the reference is the start, after ``duration`` it rests at ``qf``.

    Parameters
    ----------
    q0, v0, qf : array_like, shape (..., 2)
        Start angles [rad], start velocities [rad/s], end angles [rad].
    duration : array_like, shape (...)
        Duration [s], > 0.
    t : array_like, shape (...)
        Time since the start [s].

    Returns
    -------
    q, dq, ddq : ndarray, shape (..., 2)
        Reference angles [rad], velocities [rad/s] and accelerations [rad/s²].
    """
    q0, v0, qf = (np.asarray(v, dtype=np.float64) for v in (q0, v0, qf))
    big_t = np.asarray(duration, dtype=np.float64)[..., None]
    tau = np.clip(np.asarray(t, dtype=np.float64)[..., None], 0.0, big_t)
    h = qf - q0
    # coefficients of q(t) = q0 + v0 t + a3 t³ + a4 t⁴ + a5 t⁵ (zero start acceleration)
    a3 = (20.0 * h - 12.0 * v0 * big_t) / (2.0 * big_t**3)
    a4 = (-30.0 * h + 16.0 * v0 * big_t) / (2.0 * big_t**4)
    a5 = (12.0 * h - 6.0 * v0 * big_t) / (2.0 * big_t**5)
    q = q0 + tau * (v0 + tau**2 * (a3 + tau * (a4 + tau * a5)))
    dq = v0 + tau**2 * (3.0 * a3 + tau * (4.0 * a4 + tau * 5.0 * a5))
    ddq = tau * (6.0 * a3 + tau * (12.0 * a4 + tau * 20.0 * a5))
    # at and after the end the reference rests exactly (v0 only shapes the start)
    done = tau >= big_t
    dq = np.where(done, 0.0, dq)
    ddq = np.where(done, 0.0, ddq)
    return q, dq, ddq


def fastest_feasible_duration(
    params: ArmParams,
    q0: ArrayLike,
    v0: ArrayLike,
    qf: ArrayLike,
    candidates: ArrayLike,
    torque_limit: ArrayLike,
    samples: int = 41,
) -> Array:
    """The shortest candidate duration whose quintic needs no more than ``torque_limit``.

    The feed-forward torque ``inverse_dynamics(q_ref, dq_ref, ddq_ref)`` of each
    candidate trajectory is evaluated at ``samples`` evenly spaced instants.

    Parameters
    ----------
    params : ArmParams
        The model.
    q0, v0, qf : array_like, shape (n, 2)
        See :func:`quintic`.
    candidates : array_like, shape (k,)
        Durations to try [s], increasing.
    torque_limit : array_like, shape (2,)
        Allowed peak feed-forward torque per joint [N·m].
    samples : int
        Instants checked per trajectory.

    Returns
    -------
    ndarray, shape (n,)
        The first feasible candidate, or the last one if none is feasible.
    """
    cand = np.asarray(candidates, dtype=np.float64)
    q0, v0, qf = (np.asarray(v, dtype=np.float64)[:, None, None, :] for v in (q0, v0, qf))
    t = cand[:, None] * np.linspace(0.0, 1.0, samples)[None, :]
    q, dq, ddq = quintic(q0, v0, qf, cand[None, :, None], t[None])
    tau = inverse_dynamics(params, q, dq, ddq)
    peak = np.max(np.abs(tau) / np.asarray(torque_limit), axis=(2, 3))
    feasible = peak <= 1.0
    index = np.where(feasible.any(axis=1), np.argmax(feasible, axis=1), len(cand) - 1)
    return cand[index]
