r"""Discrete-time LQR about the upright equilibrium (the balance task).

Design
------
The package's own :func:`~twolink_gym.dynamics.linearize` gives the
continuous-time linearisation ``dx/dt = A dx + B dtau`` about
``x* = [pi/2, 0, 0, 0]`` (friction included). The env holds each action for one
control period ``dt`` (zero-order hold) and observes the state only at the
sampling instants, so the plant the controller actually drives is the
*discrete* system

.. math::  dx_{k+1} = A_d\,dx_k + B_d\,dtau_k, \qquad
           A_d = e^{A\,dt},\quad B_d = \int_0^{dt} e^{A s}\,ds\;B,

computed exactly with one matrix exponential. The gain minimises
``sum_k dx_kᵀ Q dx_k + dtau_kᵀ R dtau_k`` for that system (discrete algebraic
Riccati equation, :func:`scipy.linalg.solve_discrete_are`). With it the
predicted cost ``dx_0ᵀ P dx_0`` is exact for the linearised sampled loop, and
stability is judged on the loop the env runs. A continuous-time design
(``solve_continuous_are``) ignores the hold and the sampling; with the default
weights it places a closed-loop pole at -178 rad/s, beyond the 157 rad/s
Nyquist rate of 50 Hz sampling, and in the env that gain does not balance the
arm at all (``benchmarks/bench_controllers.py``).

Default weights (Bryson's rule, on the env's scales)::

    Q = diag(1/0.3², 1/0.3², 1/1², 1/1²)     # 0.3 rad, 1 rad/s
    R = diag(1/max_torque1², 1/max_torque2²)  # i.e. identity on the normalised action

Underactuated arms (``actuation="acrobot"`` or ``"pendubot"``) get the same
design on the one-input linearisation, ``B``'s column of the motor joint
(``R = 1/max_torque_j²``). Both are controllable at the upright; the design
checks the rank of the controllability matrix and says so if it is not.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike, NDArray

from twolink_gym.codec import DecodedObservation
from twolink_gym.controllers.base import UPRIGHT, Array, Controller
from twolink_gym.dynamics import gravity_torque, linearize
from twolink_gym.kinematics import wrap_angle
from twolink_gym.params import ArmParams
from twolink_gym.tasks import BalanceTask, Task

__all__ = [
    "DEFAULT_Q_DIAG",
    "LQRController",
    "LQRDesign",
    "design_lqr",
    "design_upright_lqr",
    "discrete_lqr",
    "discretize",
]

#: Default state weights on ``[q1, q2, dq1, dq2]`` errors [1/rad², 1/rad², s²/rad², s²/rad²].
DEFAULT_Q_DIAG = (1 / 0.3**2, 1 / 0.3**2, 1.0, 1.0)


def discretize(a: ArrayLike, b: ArrayLike, dt: float) -> tuple[Array, Array]:
    """Exact zero-order-hold discretisation of ``dx/dt = A x + B u``.

    Parameters
    ----------
    a : array_like, shape (n, n)
    b : array_like, shape (n, m)
    dt : float
        Sampling period [s].

    Returns
    -------
    a_d : ndarray, shape (n, n)
        ``exp(A dt)``.
    b_d : ndarray, shape (n, m)
        ``∫_0^dt exp(A s) ds B``.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    n, m = b.shape
    block = np.zeros((n + m, n + m))
    block[:n, :n] = a
    block[:n, n:] = b
    e = scipy.linalg.expm(block * dt)
    return e[:n, :n], e[:n, n:]


def _weight_matrix(value: ArrayLike, size: int, name: str, *, definite: bool) -> Array:
    """A symmetric positive (semi-)definite ``(size, size)`` weight, or its diagonal."""
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape == (size,):
        arr = np.diag(arr)
    if arr.shape != (size, size):
        raise ValueError(
            f"{name} must have shape ({size}, {size}) (or ({size},) for a diagonal), got {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    if not np.allclose(arr, arr.T, rtol=1e-10, atol=1e-12):
        raise ValueError(f"{name} must be symmetric")
    smallest = float(np.min(np.linalg.eigvalsh(arr)))
    scale = max(1.0, float(np.max(np.abs(arr))))
    if definite and smallest <= 0.0:
        raise ValueError(
            f"{name} must be positive definite, its smallest eigenvalue is {smallest:.3g}"
        )
    if not definite and smallest < -1e-12 * scale:
        raise ValueError(
            f"{name} must be positive semi-definite, its smallest eigenvalue is {smallest:.3g}"
        )
    return arr


def discrete_lqr(
    a_d: ArrayLike, b_d: ArrayLike, q: ArrayLike, r: ArrayLike
) -> tuple[Array, Array, NDArray[np.complex128]]:
    """Infinite-horizon discrete LQR: ``u_k = -K x_k`` minimising ``Σ x_kᵀ Q x_k + u_kᵀ R u_k``.

    Parameters
    ----------
    a_d : array_like, shape (n, n)
    b_d : array_like, shape (n, m)
    q : array_like, shape (n, n)
        Positive semi-definite.
    r : array_like, shape (m, m)
        Positive definite.

    Returns
    -------
    k : ndarray, shape (m, n)
        The gain ``(R + BᵀPB)⁻¹ BᵀPA``.
    p : ndarray, shape (n, n)
        The Riccati solution; ``x_0ᵀ P x_0`` is the optimal cost from ``x_0``.
    eigenvalues : ndarray of complex, shape (n,)
        Of the closed loop ``A - B K`` (all inside the unit circle).

    Raises
    ------
    ValueError
        If ``(A, B)`` is not controllable, the Riccati equation has no
        stabilising solution, or the resulting loop is not stable.
    """
    a_d = np.asarray(a_d, dtype=np.float64)
    b_d = np.asarray(b_d, dtype=np.float64)
    n = a_d.shape[0]
    q = _weight_matrix(q, n, "Q", definite=False)
    r = _weight_matrix(r, b_d.shape[1], "R", definite=True)
    ctrb = np.hstack([np.linalg.matrix_power(a_d, i) @ b_d for i in range(n)])
    sv = np.linalg.svd(ctrb, compute_uv=False)
    rank = int(np.sum(sv > sv[0] * 1e-10))
    if rank < n:
        raise ValueError(
            f"LQR design failed: the linearised system is not controllable "
            f"(controllability matrix rank {rank} < {n})"
        )
    try:
        p = scipy.linalg.solve_discrete_are(a_d, b_d, q, r)
    except (np.linalg.LinAlgError, ValueError) as exc:
        raise ValueError(f"LQR design failed: the discrete Riccati equation: {exc}") from exc
    k = np.linalg.solve(r + b_d.T @ p @ b_d, b_d.T @ p @ a_d)
    eigenvalues = np.linalg.eigvals(a_d - b_d @ k)
    radius = float(np.max(np.abs(eigenvalues)))
    if not np.all(np.isfinite(p)) or radius >= 1.0:
        raise ValueError(
            f"LQR design failed: the closed loop is not stable (spectral radius {radius:.6g} >= 1)"
        )
    return k, p, eigenvalues


@dataclasses.dataclass(frozen=True)
class LQRDesign:
    """A discrete LQR design about an equilibrium, with everything needed to check it.

    Attributes
    ----------
    state_eq : ndarray, shape (4,)
        The operating point ``[q1, q2, dq1, dq2]``.
    tau_eq : ndarray, shape (2,)
        The holding torque ``G(q_eq)`` [N·m] (zero at the upright).
    a, b : ndarray, shapes (4, 4) and (4, m)
        Continuous-time linearisation, ``b`` restricted to the ``m`` actuated joints.
    a_d, b_d : ndarray, shapes (4, 4) and (4, m)
        Its zero-order-hold discretisation at ``dt``.
    q, r : ndarray, shapes (4, 4) and (m, m)
        Weights on the state error and the torque deviation [N·m].
    p : ndarray, shape (4, 4)
        Riccati solution: ``dxᵀ P dx`` is the predicted cost from ``dx``.
    k : ndarray, shape (m, 4)
        Feedback gain: ``tau[actuated] = tau_eq[actuated] - K dx``.
    eigenvalues : ndarray of complex, shape (4,)
        Closed-loop eigenvalues of ``A_d - B_d K`` (inside the unit circle).
    dt : float
        Control period [s].
    actuated : tuple of int
        The joints with a motor (``(0, 1)``, or ``(1,)``/``(0,)`` for an acrobot/pendubot).
    """

    state_eq: Array
    tau_eq: Array
    a: Array
    b: Array
    a_d: Array
    b_d: Array
    q: Array
    r: Array
    p: Array
    k: Array
    eigenvalues: NDArray[np.complex128]
    dt: float
    actuated: tuple[int, ...] = (0, 1)

    def torque(self, state: ArrayLike) -> Array:
        """Both joints' torques ``tau_eq - K dx`` [N·m] (0 at a joint without a motor), ``(n, 2)``."""
        dx = self.error(np.atleast_2d(state))
        tau = np.zeros((dx.shape[0], 2))
        tau[:, self.actuated] = self.tau_eq[list(self.actuated)] - dx @ self.k.T
        return tau

    def error(self, state: ArrayLike) -> Array:
        """State error ``dx`` from the operating point, angles wrapped, shape ``(..., 4)``."""
        x = np.asarray(state, dtype=np.float64)
        dx = x - self.state_eq
        dx[..., :2] = wrap_angle(dx[..., :2])
        return dx

    def cost_to_go(self, state: ArrayLike) -> Array:
        """Predicted infinite-horizon cost ``dxᵀ P dx`` from ``state``, shape ``(...)``."""
        dx = self.error(state)
        return np.einsum("...i,ij,...j->...", dx, self.p, dx)


def design_lqr(
    params: ArmParams,
    dt: float,
    q: ArrayLike,
    r: ArrayLike,
    state_eq: ArrayLike = UPRIGHT,
    actuated: tuple[int, ...] = (0, 1),
) -> LQRDesign:
    """Linearise the arm about ``state_eq`` and design the discrete LQR at period ``dt``.

    Parameters
    ----------
    params : ArmParams
        The model.
    dt : float
        Control period [s].
    q : array_like, shape (4, 4) or (4,)
        State weight (or its diagonal).
    r : array_like, shape (m, m) or (m,)
        Torque weight [1/(N·m)²] (or its diagonal), ``m = len(actuated)``.
    state_eq : array_like, shape (4,)
        Operating point (default the upright).
    actuated : tuple of int
        The joints with a motor (default both; ``(1,)`` acrobot, ``(0,)`` pendubot).

    Raises
    ------
    ValueError
        On bad weights or a failed design (see :func:`discrete_lqr`).
    """
    x_eq = np.asarray(state_eq, dtype=np.float64).copy()
    tau_eq = gravity_torque(params, x_eq[:2])
    a, b = linearize(params, x_eq, tau_eq)
    b = np.ascontiguousarray(b[:, list(actuated)])
    a_d, b_d = discretize(a, b, dt)
    q_m = _weight_matrix(q, 4, "Q", definite=False)
    r_m = _weight_matrix(r, len(actuated), "R", definite=True)
    k, p, eigenvalues = discrete_lqr(a_d, b_d, q_m, r_m)
    return LQRDesign(
        x_eq, tau_eq, a, b, a_d, b_d, q_m, r_m, p, k, eigenvalues, float(dt), tuple(actuated)
    )


def design_upright_lqr(
    params: ArmParams,
    dt: float,
    max_torque: Array,
    actuated: tuple[int, ...] = (0, 1),
    Q: ArrayLike | None = None,
    R: ArrayLike | None = None,
) -> LQRDesign:
    """The LQR about the upright with the default weights of :class:`LQRController`.

    ``Q`` defaults to :data:`DEFAULT_Q_DIAG`, ``R`` to ``diag(1/max_torque²)`` of
    the ``actuated`` joints (the identity on the normalised action); the balance
    controller and the swing-up's catch both use it.

    Parameters
    ----------
    params : ArmParams
    dt : float
        Control period [s].
    max_torque : ndarray, shape (2,)
        Torque limits [N·m].
    actuated : tuple of int
        The joints with a motor.
    Q, R : array_like, optional
        Weights overriding the defaults (see :func:`design_lqr`).
    """
    q = DEFAULT_Q_DIAG if Q is None else Q
    r = 1.0 / max_torque[list(actuated)] ** 2 if R is None else R
    return design_lqr(params, dt, q, r, actuated=actuated)


class LQRController(Controller):
    """Discrete-time LQR that balances the arm upright: ``tau = -K dx``.

    Parameters
    ----------
    task, params, dt, max_torque, actuation
        See :class:`~twolink_gym.controllers.base.Controller`; ``params`` is the
        model that is linearised. All three actuations: an underactuated arm
        gets the design on its one-input linearisation.
    Q : array_like, shape (4, 4) or (4,), optional
        Weight on the state error ``[q1, q2, dq1, dq2] - [pi/2, 0, 0, 0]`` (angles
        wrapped); default :data:`DEFAULT_Q_DIAG`.
    R : array_like, shape (m, m) or (m,), optional
        Weight on the torque of the ``m`` motors [1/(N·m)²]; default
        ``diag(1/max_torque²)`` of those joints, the identity on the normalised action.

    Attributes
    ----------
    design : LQRDesign
        Linearisation, Riccati solution ``P``, gain ``K`` and closed-loop
        eigenvalues.

    Raises
    ------
    ValueError
        On a task other than balance, weights of the wrong shape or
        definiteness, or a failed design.
    """

    task_types = (BalanceTask,)
    actuations = ("full", "acrobot", "pendubot")

    def __init__(
        self,
        task: Task | str = "balance",
        params: ArmParams | Mapping[str, Any] | None = None,
        dt: float = 0.02,
        max_torque: ArrayLike | None = None,
        actuation: str = "full",
        *,
        Q: ArrayLike | None = None,
        R: ArrayLike | None = None,
    ) -> None:
        super().__init__(task, params, dt, max_torque, actuation)
        self.design = design_upright_lqr(
            self.params, self.dt, self.max_torque, self.actuated, Q=Q, R=R
        )

    def _torque(
        self, decoded: DecodedObservation, state: Any, episode_start: NDArray[np.bool_]
    ) -> tuple[Array, None]:
        return self.design.torque(decoded.state), None
