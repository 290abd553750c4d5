r"""Rigid-body dynamics of the planar two-link arm (pure, batched numpy).

Conventions (see ``docs/physics.md``): the state is ``x = [q1, q2, dq1, dq2]`` in
``[rad, rad, rad/s, rad/s]``; ``q1`` is link 1's angle from the +x axis,
counter-clockwise positive, ``q2`` is link 2's angle relative to link 1;
gravity acts along -y. The equations of motion are

.. math::  M(q)\ddot q + C(q,\dot q)\dot q + G(q) + F\dot q = \tau .

Every function is batched over leading axes: ``q`` and ``dq`` have shape
``(2,)`` or ``(..., 2)``, ``state`` has shape ``(4,)`` or ``(..., 4)``, and the
outputs have the matching leading shape. Parameters are shared by the batch.

The equations are written exactly once, component-wise, in the private
``_accelerations`` function; the trigonometric functions are passed in, so the
same code runs on numpy arrays (batched) and on Python floats (the scalar fast
path of the single environment).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym._arrays import as_vectors
from twolink_gym.params import ArmParams

__all__ = [
    "Coefficients",
    "Equilibrium",
    "coefficients",
    "coriolis_forces",
    "coriolis_matrix",
    "energy",
    "equilibria",
    "forward_dynamics",
    "friction_torque",
    "gravity_jacobian",
    "gravity_torque",
    "inverse_dynamics",
    "kinetic_energy",
    "linearize",
    "mass_matrix",
    "potential_energy",
    "state_derivative",
    "total_energy",
]

Array = NDArray[Any]


@dataclasses.dataclass(frozen=True)
class Coefficients:
    """Lumped constants of the equations of motion (derived from :class:`ArmParams`).

    With ``c2 = cos q2``: ``M11 = a + 2 b c2``, ``M12 = d + b c2``, ``M22 = d``;
    ``h = -b sin q2``; ``G1 = g1 cos q1 + g2 cos(q1 + q2)``, ``G2 = g2 cos(q1 + q2)``.

    Attributes
    ----------
    a : float
        ``m1 lc1² + m2 (l1² + lc2²) + I1 + I2`` [kg·m²].
    b : float
        ``m2 l1 lc2`` [kg·m²].
    d : float
        ``m2 lc2² + I2`` [kg·m²].
    g1 : float
        ``(m1 lc1 + m2 l1) g`` [N·m].
    g2 : float
        ``m2 lc2 g`` [N·m].
    f1, f2 : float
        Viscous friction coefficients [N·m·s/rad].
    """

    a: float
    b: float
    d: float
    g1: float
    g2: float
    f1: float
    f2: float


@functools.lru_cache(maxsize=256)
def coefficients(params: ArmParams) -> Coefficients:
    """Return the lumped constants of ``params`` (cached; params are immutable)."""
    p = params
    return Coefficients(
        a=p.m1 * p.lc1**2 + p.m2 * (p.l1**2 + p.lc2**2) + p.I1 + p.I2,
        b=p.m2 * p.l1 * p.lc2,
        d=p.m2 * p.lc2**2 + p.I2,
        g1=(p.m1 * p.lc1 + p.m2 * p.l1) * p.gravity,
        g2=p.m2 * p.lc2 * p.gravity,
        f1=p.friction1,
        f2=p.friction2,
    )


def _accelerations(
    k: Coefficients,
    q1: Any,
    q2: Any,
    dq1: Any,
    dq2: Any,
    tau1: Any,
    tau2: Any,
    cos: Callable[[Any], Any],
    sin: Callable[[Any], Any],
) -> tuple[Any, Any]:
    """Joint accelerations, component-wise; the one copy of the equations of motion.

    Works on Python floats (``cos=math.cos``) and on numpy arrays
    (``cos=np.cos``) alike. The 2x2 solve is done in closed form.
    """
    c2 = cos(q2)
    h = -k.b * sin(q2)
    c12 = cos(q1 + q2)
    m11 = k.a + 2.0 * k.b * c2
    m12 = k.d + k.b * c2
    m22 = k.d
    # right-hand side: tau - C dq - G - F dq
    r1 = tau1 - h * (2.0 * dq1 * dq2 + dq2 * dq2) - k.g1 * cos(q1) - k.g2 * c12 - k.f1 * dq1
    r2 = tau2 + h * dq1 * dq1 - k.g2 * c12 - k.f2 * dq2
    det = m11 * m22 - m12 * m12
    return (m22 * r1 - m12 * r2) / det, (m11 * r2 - m12 * r1) / det


def _split2(value: ArrayLike, name: str) -> tuple[Array, Array]:
    arr = as_vectors(value, 2, name)
    return arr[..., 0], arr[..., 1]


def mass_matrix(params: ArmParams, q: ArrayLike) -> Array:
    """Joint-space inertia matrix ``M(q)``.

    Parameters
    ----------
    params : ArmParams
    q : array_like, shape (..., 2)
        Joint angles [rad].

    Returns
    -------
    ndarray, shape (..., 2, 2)
        Symmetric positive definite [kg·m²].
    """
    k = coefficients(params)
    _, q2 = _split2(q, "q")
    c2 = np.cos(q2)
    m11 = k.a + 2.0 * k.b * c2
    m12 = k.d + k.b * c2
    m22 = np.broadcast_to(k.d, np.shape(c2)).astype(m11.dtype)
    return np.stack([np.stack([m11, m12], -1), np.stack([m12, m22], -1)], -2)


def coriolis_matrix(params: ArmParams, q: ArrayLike, dq: ArrayLike) -> Array:
    """Coriolis and centrifugal matrix ``C(q, dq)`` in Christoffel form.

    With ``h = -m2 l1 lc2 sin q2``: ``C = [[h dq2, h (dq1 + dq2)], [-h dq1, 0]]``,
    so that ``dM/dt = C + Cᵀ`` (``dM/dt - 2C`` is skew-symmetric).

    Parameters
    ----------
    params : ArmParams
    q, dq : array_like, shape (..., 2)
        Joint angles [rad] and velocities [rad/s].

    Returns
    -------
    ndarray, shape (..., 2, 2)
        [kg·m²/s]; ``C @ dq`` is the velocity-product torque [N·m].
    """
    k = coefficients(params)
    _, q2 = _split2(q, "q")
    dq1, dq2 = _split2(dq, "dq")
    h = -k.b * np.sin(q2)
    c11 = h * dq2
    c12 = h * (dq1 + dq2)
    c21 = -h * dq1
    c11, c12, c21 = np.broadcast_arrays(c11, c12, c21)
    c22 = np.zeros_like(c11)
    return np.stack([np.stack([c11, c12], -1), np.stack([c21, c22], -1)], -2)


def coriolis_forces(params: ArmParams, q: ArrayLike, dq: ArrayLike) -> Array:
    """Velocity-product torques ``C(q, dq) dq`` [N·m], shape ``(..., 2)``."""
    k = coefficients(params)
    _, q2 = _split2(q, "q")
    dq1, dq2 = _split2(dq, "dq")
    h = -k.b * np.sin(q2)
    return np.stack(np.broadcast_arrays(h * (2.0 * dq1 * dq2 + dq2**2), -h * dq1**2), -1)


def gravity_torque(params: ArmParams, q: ArrayLike) -> Array:
    """Gravity torques ``G(q) = dV/dq`` [N·m], shape ``(..., 2)``."""
    k = coefficients(params)
    q1, q2 = _split2(q, "q")
    g2 = k.g2 * np.cos(q1 + q2)
    return np.stack([k.g1 * np.cos(q1) + g2, g2], -1)


def gravity_jacobian(params: ArmParams, q: ArrayLike) -> Array:
    """Jacobian ``dG/dq`` (the Hessian of the potential energy) [N·m/rad].

    Returns
    -------
    ndarray, shape (..., 2, 2)
        Symmetric.
    """
    k = coefficients(params)
    q1, q2 = _split2(q, "q")
    s12 = -k.g2 * np.sin(q1 + q2)
    s11 = -k.g1 * np.sin(q1) + s12
    return np.stack([np.stack([s11, s12], -1), np.stack([s12, s12], -1)], -2)


def friction_torque(params: ArmParams, dq: ArrayLike) -> Array:
    """Viscous friction torques ``F dq`` [N·m], shape ``(..., 2)``."""
    dq = as_vectors(dq, 2, "dq")
    return dq * np.array([params.friction1, params.friction2])


def forward_dynamics(params: ArmParams, q: ArrayLike, dq: ArrayLike, tau: ArrayLike) -> Array:
    """Joint accelerations ``ddq = M⁻¹ (tau - C dq - G - F dq)``.

    Parameters
    ----------
    params : ArmParams
    q, dq : array_like, shape (..., 2)
        Joint angles [rad] and velocities [rad/s].
    tau : array_like, shape (..., 2)
        Joint torques [N·m].

    Returns
    -------
    ndarray, shape (..., 2)
        Joint accelerations [rad/s²] (leading axes broadcast).
    """
    q1, q2 = _split2(q, "q")
    dq1, dq2 = _split2(dq, "dq")
    t1, t2 = _split2(tau, "tau")
    a1, a2 = _accelerations(coefficients(params), q1, q2, dq1, dq2, t1, t2, np.cos, np.sin)
    return np.stack(np.broadcast_arrays(a1, a2), -1)


def inverse_dynamics(params: ArmParams, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike) -> Array:
    """Joint torques ``tau = M ddq + C dq + G + F dq`` [N·m], shape ``(..., 2)``.

    Parameters
    ----------
    params : ArmParams
    q, dq, ddq : array_like, shape (..., 2)
        Joint angles [rad], velocities [rad/s] and accelerations [rad/s²].
    """
    ddq = as_vectors(ddq, 2, "ddq")
    m = mass_matrix(params, q)
    return (
        np.einsum("...ij,...j->...i", m, ddq)
        + coriolis_forces(params, q, dq)
        + gravity_torque(params, q)
        + friction_torque(params, dq)
    )


def state_derivative(params: ArmParams, state: ArrayLike, tau: ArrayLike) -> Array:
    """The vector field ``f(x, tau) = [dq, ddq]`` of ``dx/dt = f(x, tau)``.

    Parameters
    ----------
    params : ArmParams
    state : array_like, shape (..., 4)
        ``[q1, q2, dq1, dq2]`` [rad, rad, rad/s, rad/s].
    tau : array_like, shape (..., 2)
        Joint torques [N·m].

    Returns
    -------
    ndarray, shape (..., 4)
        ``[dq1, dq2, ddq1, ddq2]``.
    """
    x = as_vectors(state, 4, "state")
    t1, t2 = _split2(tau, "tau")
    a1, a2 = _accelerations(
        coefficients(params), x[..., 0], x[..., 1], x[..., 2], x[..., 3], t1, t2, np.cos, np.sin
    )
    return np.stack(np.broadcast_arrays(x[..., 2], x[..., 3], a1, a2), -1)


def kinetic_energy(params: ArmParams, q: ArrayLike, dq: ArrayLike) -> Array:
    """Kinetic energy ``½ dqᵀ M(q) dq`` [J], shape ``(...)``."""
    k = coefficients(params)
    _, q2 = _split2(q, "q")
    dq1, dq2 = _split2(dq, "dq")
    c2 = np.cos(q2)
    m11 = k.a + 2.0 * k.b * c2
    m12 = k.d + k.b * c2
    return 0.5 * (m11 * dq1**2 + 2.0 * m12 * dq1 * dq2 + k.d * dq2**2)


def potential_energy(params: ArmParams, q: ArrayLike) -> Array:
    """Gravitational potential energy [J], zero at the height of the base, shape ``(...)``.

    ``V = m1 g lc1 sin q1 + m2 g (l1 sin q1 + lc2 sin(q1 + q2))``.
    """
    k = coefficients(params)
    q1, q2 = _split2(q, "q")
    return k.g1 * np.sin(q1) + k.g2 * np.sin(q1 + q2)


def energy(params: ArmParams, q: ArrayLike, dq: ArrayLike) -> tuple[Array, Array]:
    """Kinetic and potential energy ``(K, V)`` [J], each of shape ``(...)``."""
    kin, pot = kinetic_energy(params, q, dq), potential_energy(params, q)
    if np.shape(pot) != np.shape(kin):
        # V depends on q only; give it the leading shape of q and dq broadcast, like K
        pot = np.broadcast_to(pot, np.shape(kin)).copy()
    return kin, pot


def total_energy(params: ArmParams, state: ArrayLike) -> Array:
    """Total mechanical energy ``K + V`` [J] of ``state`` (shape ``(..., 4)``), shape ``(...)``."""
    x = as_vectors(state, 4, "state")
    kin, pot = energy(params, x[..., :2], x[..., 2:])
    return kin + pot


def linearize(
    params: ArmParams,
    state_eq: ArrayLike,
    tau_eq: ArrayLike | None = None,
    *,
    step: float = 1e-20,
) -> tuple[Array, Array]:
    """Linearise the continuous-time system ``dx/dt = f(x, tau)`` about a point.

    Uses complex-step differentiation of :func:`state_derivative`, which is
    exact to machine precision (no subtractive cancellation).

    Parameters
    ----------
    params : ArmParams
    state_eq : array_like, shape (..., 4)
        Operating state ``[q1, q2, dq1, dq2]``.
    tau_eq : array_like, shape (..., 2), optional
        Operating torque [N·m]; defaults to the gravity torque ``G(q)`` (the
        holding torque, which makes a still state an equilibrium).
    step : float
        Complex step size.

    Returns
    -------
    A : ndarray, shape (..., 4, 4)
        ``df/dx``.
    B : ndarray, shape (..., 4, 2)
        ``df/dtau``.
    """
    x0 = as_vectors(state_eq, 4, "state_eq").astype(np.float64)
    if tau_eq is None:
        u0 = gravity_torque(params, x0[..., :2])
    else:
        u0 = as_vectors(tau_eq, 2, "tau_eq").astype(np.float64)
    batch = np.broadcast_shapes(x0.shape[:-1], u0.shape[:-1])
    x0 = np.broadcast_to(x0, (*batch, 4))
    u0 = np.broadcast_to(u0, (*batch, 2))
    eye4 = np.eye(4) * (1j * step)
    eye2 = np.eye(2) * (1j * step)
    fx = state_derivative(params, x0[..., None, :] + eye4, u0[..., None, :])
    fu = state_derivative(params, x0[..., None, :], u0[..., None, :] + eye2)
    a = np.swapaxes(fx.imag / step, -1, -2)
    b = np.swapaxes(fu.imag / step, -1, -2)
    return a, b


@dataclasses.dataclass(frozen=True)
class Equilibrium:
    """A zero-torque equilibrium of the arm.

    Attributes
    ----------
    name : str
        ``"down"``, ``"up"``, ``"up_folded"`` or ``"down_folded"``.
    state : ndarray, shape (4,)
        ``[q1, q2, 0, 0]``.
    unstable_modes : int
        Number of directions in which the potential energy decreases (negative
        eigenvalues of its Hessian ``dG/dq``); each gives a real positive
        eigenvalue of the linearisation.
    description : str
        The pose in words.
    """

    name: str
    state: Array
    unstable_modes: int
    description: str

    @property
    def stable(self) -> bool:
        """Whether the equilibrium is stable (a strict minimum of the potential energy)."""
        return self.unstable_modes == 0


_EQUILIBRIUM_POSES = (
    ("down", -math.pi / 2, 0.0, "hanging straight down"),
    ("up", math.pi / 2, 0.0, "upright, straight"),
    ("up_folded", math.pi / 2, math.pi, "link 1 up, link 2 folded down"),
    ("down_folded", -math.pi / 2, math.pi, "link 1 down, link 2 up"),
)


def equilibria(params: ArmParams) -> list[Equilibrium]:
    """The four zero-torque equilibria, where ``cos q1 = cos(q1 + q2) = 0``.

    Stability follows from the Hessian of the potential energy at each pose
    (Lagrange–Dirichlet): only the hanging pose is a strict minimum.

    Raises
    ------
    ValueError
        If ``params.gravity == 0``: then every still pose is an equilibrium.
    """
    if params.gravity == 0.0:
        raise ValueError("with params.gravity == 0 every still pose is an equilibrium")
    result = []
    for name, q1, q2, text in _EQUILIBRIUM_POSES:
        hessian = gravity_jacobian(params, [q1, q2])
        modes = int(np.sum(np.linalg.eigvalsh(hessian) < 0.0))
        result.append(Equilibrium(name, np.array([q1, q2, 0.0, 0.0]), modes, text))
    return result
