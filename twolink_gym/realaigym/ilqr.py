"""Compiled iterative LQR (iLQR) on an underactuated arm: the solver of the v3 MPC.

One job: improve a torque sequence of the one motor of an acrobot or a pendubot
over a horizon of ``N`` stages of ``h`` seconds from a start state, by the
iLQR of Li & Todorov (2004) with a Levenberg–Marquardt term on ``Q_uu`` and a
backtracking line search. The stage model is :func:`twolink_gym.integrators._rk4`
(``substeps`` RK4 sub-steps, torque held over the stage); its Jacobians are
central finite differences. Torques are clipped to ``±u_max`` in the rollouts;
a stage whose torque sits on a bound and whose update would push it further
gets no update (the box-clamped variant of Tassa et al. 2014, simplified to one
control).

Cost (our angles, ``e1 = q1 - π/2`` and ``e2 = q2`` the errors from the
upright) of a stage, with weights ``w = (w_tip, w_elbow, w_speed, w_torque)``::

    l(x, u) = h [ w_tip (l1 (1 - cos e1) + l2 (1 - cos(e1 + e2)))
                  + w_elbow (1 - cos e2) + w_speed (q̇1² + q̇2²) / 2 + w_torque u² / 2 ]

``l1 (1 - cos e1) + l2 (1 - cos(e1 + e2))`` is the tip's distance below its
highest point [m], the quantity the v3 score thresholds. The terminal cost is
the same state terms with their own weights ``w_end`` (no ``h``). The Gauss–Newton Hessian
uses ``max(cos, 0)`` for the curvature of each ``1 - cos`` term, so it is
positive semi-definite.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from twolink_gym._jit import kernel
from twolink_gym.dynamics import L1, L2
from twolink_gym.integrators import _rk4

__all__ = ["rollout", "solve"]

HALF_PI = 0.5 * math.pi


@kernel()
def _stage(
    arm: Any, x: NDArray[np.float64], u: float, motor: int, h: float, substeps: int
) -> tuple[float, float, float, float]:
    """The state after one stage of ``h`` [s] with torque ``u`` on joint ``motor`` (0 or 1)."""
    t1 = u if motor == 0 else 0.0
    t2 = u if motor == 1 else 0.0
    return _rk4(arm, x[0], x[1], x[2], x[3], t1, t2, h, substeps, False)


@kernel(inline=True)
def _state_cost(arm: Any, x: NDArray[np.float64], w: NDArray[np.float64], scale: float) -> float:
    """``scale`` times the state terms of the cost at ``x``."""
    e1 = x[0] - HALF_PI
    e12 = e1 + x[1]
    tip = arm[L1] * (1.0 - math.cos(e1)) + arm[L2] * (1.0 - math.cos(e12))
    return scale * (
        w[0] * tip + w[1] * (1.0 - math.cos(x[1])) + 0.5 * w[2] * (x[2] * x[2] + x[3] * x[3])
    )


@kernel(inline=True)
def _state_derivatives(
    arm: Any,
    x: NDArray[np.float64],
    w: NDArray[np.float64],
    scale: float,
    lx: NDArray[np.float64],
    lxx: NDArray[np.float64],
) -> None:
    """Gradient ``lx (4,)`` and Gauss–Newton Hessian ``lxx (4, 4)`` of :func:`_state_cost`."""
    e1 = x[0] - HALF_PI
    e12 = e1 + x[1]
    l1, l2 = arm[L1], arm[L2]
    s1, c1 = math.sin(e1), math.cos(e1)
    s12, c12 = math.sin(e12), math.cos(e12)
    s2, c2 = math.sin(x[1]), math.cos(x[1])
    lx[0] = scale * w[0] * (l1 * s1 + l2 * s12)
    lx[1] = scale * (w[0] * l2 * s12 + w[1] * s2)
    lx[2] = scale * w[2] * x[2]
    lx[3] = scale * w[2] * x[3]
    for i in range(4):
        for j in range(4):
            lxx[i, j] = 0.0
    a = scale * w[0] * l1 * max(c1, 0.0)
    b = scale * w[0] * l2 * max(c12, 0.0)
    c = scale * w[1] * max(c2, 0.0)
    lxx[0, 0] = a + b
    lxx[0, 1] = b
    lxx[1, 0] = b
    lxx[1, 1] = b + c
    lxx[2, 2] = scale * w[2]
    lxx[3, 3] = scale * w[2]


@kernel()
def rollout(
    arm: Any,
    x0: NDArray[np.float64],
    us: NDArray[np.float64],
    motor: int,
    h: float,
    substeps: int,
    w: NDArray[np.float64],
    w_end: NDArray[np.float64],
    xs: NDArray[np.float64],
) -> float:
    """Simulate the torques ``us (N,)`` from ``x0 (4,)`` into ``xs (N+1, 4)``; returns the cost."""
    n = us.shape[0]
    xs[0, :] = x0
    cost = 0.0
    for k in range(n):
        cost += _state_cost(arm, xs[k], w, h) + 0.5 * h * w[3] * us[k] * us[k]
        r = _stage(arm, xs[k], us[k], motor, h, substeps)
        for i in range(4):
            xs[k + 1, i] = r[i]
    return cost + _state_cost(arm, xs[n], w_end, 1.0)


@kernel()
def solve(
    arm: Any,
    x0: NDArray[np.float64],
    us: NDArray[np.float64],
    motor: int,
    h: float,
    substeps: int,
    u_max: float,
    w: NDArray[np.float64],
    w_end: NDArray[np.float64],
    iterations: int,
    xs: NDArray[np.float64],
    gains: NDArray[np.float64],
) -> float:
    """Run ``iterations`` iLQR iterations on ``us (N,)`` in place (module notes).

    Parameters
    ----------
    arm : ndarray
        :func:`~twolink_gym.dynamics.arm_vector` of the model.
    x0 : ndarray, shape (4,)
        Start state, our angles [rad, rad/s].
    us : ndarray, shape (N,)
        Motor torques of the stages [N·m], improved in place.
    motor : int
        The driven joint: 0 (pendubot) or 1 (acrobot).
    h : float
        Stage length [s].
    substeps : int
        RK4 sub-steps per stage.
    u_max : float
        Torque bound [N·m].
    w : ndarray, shape (4,)
        Cost weights ``(w_tip, w_elbow, w_speed, w_torque)``.
    w_end : ndarray, shape (3,) or more
        Weights ``(w_tip, w_elbow, w_speed)`` of the terminal state cost (not times ``h``).
    iterations : int
        iLQR iterations (each: one backward pass, one line search).
    xs : ndarray, shape (N+1, 4)
        Out: the states of the returned torques.
    gains : ndarray, shape (N, 4)
        Out: the feedback gains ``K_k`` (``u = us_k + K_k (x - xs_k)``).

    Returns
    -------
    float
        The cost of the returned torques.
    """
    n = us.shape[0]
    cost = rollout(arm, x0, us, motor, h, substeps, w, w_end, xs)
    a_mat = np.empty((n, 4, 4))
    b_vec = np.empty((n, 4))
    kff = np.empty(n)
    kfb = np.zeros((n, 4))
    lx = np.empty(4)
    lxx = np.empty((4, 4))
    vx = np.empty(4)
    vxx = np.empty((4, 4))
    qx = np.empty(4)
    qxx = np.empty((4, 4))
    qux = np.empty(4)
    vb = np.empty(4)
    va = np.empty((4, 4))
    xt = np.empty(4)
    new_us = np.empty(n)
    new_xs = np.empty_like(xs)
    mu = 1e-6
    eps = 1e-6
    for _ in range(iterations):
        # Jacobians of every stage by central differences
        for k in range(n):
            for j in range(4):
                for i in range(4):
                    xt[i] = xs[k, i]
                xt[j] += eps
                p = _stage(arm, xt, us[k], motor, h, substeps)
                xt[j] -= 2.0 * eps
                m = _stage(arm, xt, us[k], motor, h, substeps)
                for i in range(4):
                    a_mat[k, i, j] = (p[i] - m[i]) / (2.0 * eps)
            p = _stage(arm, xs[k], us[k] + eps, motor, h, substeps)
            m = _stage(arm, xs[k], us[k] - eps, motor, h, substeps)
            for i in range(4):
                b_vec[k, i] = (p[i] - m[i]) / (2.0 * eps)
        # backward pass
        _state_derivatives(arm, xs[n], w_end, 1.0, vx, vxx)
        for k in range(n - 1, -1, -1):
            _state_derivatives(arm, xs[k], w, h, lx, lxx)
            a = a_mat[k]
            b = b_vec[k]
            for i in range(4):
                s = 0.0
                for j in range(4):
                    s += vxx[i, j] * b[j]
                vb[i] = s
            for i in range(4):
                for j in range(4):
                    s = 0.0
                    for m2 in range(4):
                        s += vxx[i, m2] * a[m2, j]
                    va[i, j] = s
            qu = h * w[3] * us[k]
            quu = h * w[3] + mu
            for i in range(4):
                qu += b[i] * vx[i]
                quu += b[i] * vb[i]
            for j in range(4):
                s = lx[j]
                t = 0.0
                for i in range(4):
                    s += a[i, j] * vx[i]
                    t += b[i] * va[i, j]
                qx[j] = s
                qux[j] = t
                for m2 in range(4):
                    s2 = lxx[j, m2]
                    for i in range(4):
                        s2 += a[i, j] * va[i, m2]
                    qxx[j, m2] = s2
            step = -qu / quu
            if (us[k] >= u_max and step > 0.0) or (us[k] <= -u_max and step < 0.0):
                kff[k] = 0.0
                for j in range(4):
                    kfb[k, j] = 0.0
            else:
                kff[k] = step
                for j in range(4):
                    kfb[k, j] = -qux[j] / quu
            for j in range(4):
                vx[j] = qx[j] + kfb[k, j] * quu * kff[k] + kfb[k, j] * qu + qux[j] * kff[k]
            for i in range(4):
                for j in range(4):
                    vxx[i, j] = (
                        qxx[i, j]
                        + kfb[k, i] * quu * kfb[k, j]
                        + kfb[k, i] * qux[j]
                        + qux[i] * kfb[k, j]
                    )
            for i in range(4):
                for j in range(i + 1, 4):
                    s = 0.5 * (vxx[i, j] + vxx[j, i])
                    vxx[i, j] = s
                    vxx[j, i] = s
        # line search
        accepted = False
        alpha = 1.0
        for _trial in range(6):
            new_xs[0, :] = x0
            new_cost = 0.0
            for k in range(n):
                u = us[k] + alpha * kff[k]
                for j in range(4):
                    u += kfb[k, j] * (new_xs[k, j] - xs[k, j])
                u = min(max(u, -u_max), u_max)
                new_us[k] = u
                new_cost += _state_cost(arm, new_xs[k], w, h) + 0.5 * h * w[3] * u * u
                r = _stage(arm, new_xs[k], u, motor, h, substeps)
                for i in range(4):
                    new_xs[k + 1, i] = r[i]
            new_cost += _state_cost(arm, new_xs[n], w_end, 1.0)
            if new_cost < cost:
                accepted = True
                break
            alpha *= 0.4
        if accepted:
            cost = new_cost
            us[:] = new_us
            xs[:, :] = new_xs
            gains[:, :] = kfb
            mu = max(mu * 0.5, 1e-6)
        else:
            gains[:, :] = kfb
            mu = min(mu * 10.0, 1e3)
    return cost


@kernel()
def lqr_guess(
    arm: Any,
    x0: NDArray[np.float64],
    gain: NDArray[np.float64],
    motor: int,
    h: float,
    substeps: int,
    u_max: float,
    us: NDArray[np.float64],
) -> None:
    """Fill ``us (N,)`` with the torques of the clipped upright LQR ``u = -gain · e`` from ``x0``.

    ``e`` is the state's error from the upright with both angles wrapped to
    ``[-π, π)``; the torque is held over each stage of ``h`` [s]. A start for
    :func:`solve` that is already right near the upright.
    """
    x = np.empty(4)
    x[:] = x0
    two_pi = 2.0 * math.pi
    for k in range(us.shape[0]):
        e1 = (x[0] - HALF_PI + math.pi) % two_pi - math.pi
        e2 = (x[1] + math.pi) % two_pi - math.pi
        u = -(gain[0] * e1 + gain[1] * e2 + gain[2] * x[2] + gain[3] * x[3])
        u = min(max(u, -u_max), u_max)
        us[k] = u
        r = _stage(arm, x, u, motor, h, substeps)
        for i in range(4):
            x[i] = r[i]


@kernel()
def lqr_catches(
    arm: Any,
    x0: NDArray[np.float64],
    gain: NDArray[np.float64],
    motor: int,
    dt: float,
    steps: int,
    u_max: float,
    tolerance: float,
) -> bool:
    """Whether the clipped upright LQR of :func:`lqr_guess` brings ``x0`` to the upright.

    Simulates ``steps`` steps of ``dt`` [s] (one RK4 step each, torque held) on
    the model and tests that every wrapped angle error and speed is within
    ``tolerance`` [rad, rad/s] at the end.
    """
    q1, q2, dq1, dq2 = x0[0], x0[1], x0[2], x0[3]
    two_pi = 2.0 * math.pi
    for _ in range(steps):
        e1 = (q1 - HALF_PI + math.pi) % two_pi - math.pi
        e2 = (q2 + math.pi) % two_pi - math.pi
        u = -(gain[0] * e1 + gain[1] * e2 + gain[2] * dq1 + gain[3] * dq2)
        u = min(max(u, -u_max), u_max)
        t1 = u if motor == 0 else 0.0
        t2 = u if motor == 1 else 0.0
        q1, q2, dq1, dq2 = _rk4(arm, q1, q2, dq1, dq2, t1, t2, dt, 1, False)
    e1 = (q1 - HALF_PI + math.pi) % two_pi - math.pi
    e2 = (q2 + math.pi) % two_pi - math.pi
    return max(abs(e1), abs(e2), abs(dq1), abs(dq2)) < tolerance
