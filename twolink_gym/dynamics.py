r"""Rigid-body dynamics of the planar two-link arm (pure: compiled per-arm kernels, batched numpy API).

Conventions (see ``docs/physics.md``): the state is ``x = [q1, q2, dq1, dq2]`` in
``[rad, rad, rad/s, rad/s]``; ``q1`` is link 1's angle from the +x axis,
counter-clockwise positive, ``q2`` is link 2's angle relative to link 1;
gravity acts along -y. The equations of motion are

.. math::  M(q)\ddot q + C(q,\dot q)\dot q + G(q) + F(\dot q) = \tau ,

with the friction ``F_i = friction_i dq_i + coulomb_i atan(100 dq_i)`` and the
motors' rotor inertia inside ``M`` (:class:`~twolink_gym.params.ArmParams`).

Every function is batched over leading axes: ``q`` and ``dq`` have shape
``(2,)`` or ``(..., 2)``, ``state`` has shape ``(4,)`` or ``(..., 4)``, and the
outputs have the matching leading shape. Parameters are shared by the batch.

The equations are written exactly once, component-wise, in the compiled
kernels :func:`mass_matrix_entries`, :func:`bias_torques`,
:func:`accelerations` and :func:`energies` (numba; see
:mod:`twolink_gym._jit`); they take the arm as an *arm vector*
(:data:`ARM_VECTOR_FIELDS`), so a batch of arms with different parameters runs
in one compiled loop. The bias torques and the accelerations are written with
a flag, a constant at each call site, that leaves the Coulomb terms out: the
integrators compile the same source twice, with and without them, and run the
second for an arm whose Coulomb coefficients are 0 (:func:`has_coulomb`),
where the terms would add exact zeros at the cost of a branch and a call per
evaluation. The step kernel of the environments calls them per arm,
and the batched functions of this module run them in compiled loops over
flattened arrays.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym._arrays import as_vectors
from twolink_gym._jit import kernel, python_source, sincos
from twolink_gym.params import ArmParams

__all__ = [
    "ARM_VECTOR_FIELDS",
    "COULOMB_SHARPNESS",
    "Equilibrium",
    "accelerations",
    "arm_vector",
    "arm_vectors",
    "coriolis_forces",
    "coriolis_matrix",
    "energies",
    "energy",
    "equilibria",
    "forward_dynamics",
    "friction_torque",
    "gravity_jacobian",
    "gravity_torque",
    "has_coulomb",
    "inverse_dynamics",
    "kinetic_energy",
    "linearize",
    "mass_matrix",
    "mass_matrix_entries",
    "potential_energy",
    "state_derivative",
    "total_energy",
]

Array = NDArray[Any]

#: The entries of an arm vector, the compiled kernels' form of :class:`ArmParams`.
#: With ``c2 = cos q2``: ``M11 = a + 2 b c2``, ``M12 = e + b c2``, ``M22 = d``;
#: ``h = -b sin q2``; ``G1 = g1 cos q1 + g2 cos(q1 + q2)``, ``G2 = g2 cos(q1 + q2)``;
#: the friction torque of joint ``i`` is ``fi dqi + cfi atan(100 dqi)`` (viscous and
#: Coulomb); ``l1``, ``l2`` are the link lengths (for the kinematics). ``Ir`` is
#: the rotor inertia and ``gr`` the gear ratio (:class:`ArmParams`); with
#: ``Ir = 0``, ``e = d``.
#:
#: ========  =====================================================  ========
#: entry     value                                                  unit
#: ========  =====================================================  ========
#: ``a``     ``m1 lc1² + m2 (l1² + lc2²) + I1 + I2 + (gr² + 1) Ir``  kg·m²
#: ``b``     ``m2 l1 lc2``                                          kg·m²
#: ``d``     ``m2 lc2² + I2 + gr² Ir``                              kg·m²
#: ``g1``    ``(m1 lc1 + m2 l1) g``                                 N·m
#: ``g2``    ``m2 lc2 g``                                           N·m
#: ``f1``    ``friction1``                                          N·m·s/rad
#: ``f2``    ``friction2``                                          N·m·s/rad
#: ``l1``    ``l1``                                                 m
#: ``l2``    ``l2``                                                 m
#: ``e``     ``m2 lc2² + I2 - gr Ir``                               kg·m²
#: ``cf1``   ``coulomb1``                                           N·m
#: ``cf2``   ``coulomb2``                                           N·m
#: ========  =====================================================  ========
ARM_VECTOR_FIELDS = ("a", "b", "d", "g1", "g2", "f1", "f2", "l1", "l2", "e", "cf1", "cf2")
# indices into an arm vector (compile-time constants in the kernels)
_A, _B, _D, _G1, _G2, _F1, _F2, L1, L2, _E, _CF1, _CF2 = range(len(ARM_VECTOR_FIELDS))
#: Sharpness of the smooth Coulomb friction ``cf · atan(COULOMB_SHARPNESS · dq)`` [s/rad]
#: (RealAIGym's 100).
COULOMB_SHARPNESS = 100.0


@functools.lru_cache(maxsize=256)
def _arm_vector(params: ArmParams) -> Array:
    p = params
    ir, gr = p.rotor_inertia, p.gear_ratio
    # the rotor terms are exact zeros without a rotor: a + 0.0 == a bit for bit
    vec = np.array(
        [
            p.m1 * p.lc1**2 + p.m2 * (p.l1**2 + p.lc2**2) + p.I1 + p.I2 + (gr**2 + 1.0) * ir,
            p.m2 * p.l1 * p.lc2,
            p.m2 * p.lc2**2 + p.I2 + gr**2 * ir,
            (p.m1 * p.lc1 + p.m2 * p.l1) * p.gravity,
            p.m2 * p.lc2 * p.gravity,
            p.friction1,
            p.friction2,
            p.l1,
            p.l2,
            p.m2 * p.lc2**2 + p.I2 - gr * ir,
            p.coulomb1,
            p.coulomb2,
        ]
    )
    vec.flags.writeable = False
    return vec


def arm_vector(params: ArmParams) -> Array:
    """The arm vector of ``params`` (see :data:`ARM_VECTOR_FIELDS`), shape ``(12,)``, read-only."""
    return _arm_vector(params)


def arm_vectors(params: ArmParams | Sequence[ArmParams], n: int) -> Array:
    """Arm vectors of ``n`` copies, shape ``(n, 12)`` (C-contiguous, writeable).

    Parameters
    ----------
    params : ArmParams or sequence of ArmParams
        One arm for every copy, or one per copy.
    n : int
        Number of copies.

    Raises
    ------
    ValueError
        If a sequence does not have ``n`` entries.
    """
    if isinstance(params, ArmParams):
        return np.tile(_arm_vector(params), (n, 1))
    if len(params) != n:
        raise ValueError(f"params must be one ArmParams or a sequence of {n}, got {len(params)}")
    return np.array([_arm_vector(p) for p in params])


# -- kernels: the equations of motion, written once, component-wise -------------
@kernel()
def mass_matrix_entries(arm: Array, c2: Any) -> tuple[Any, Any, Any]:
    """``(M11, M12, M22)`` of the inertia matrix [kg·m²] at ``c2 = cos q2``."""
    return arm[_A] + 2.0 * arm[_B] * c2, arm[_E] + arm[_B] * c2, arm[_D] + 0.0 * c2


@kernel(inline=True)
def _bias_torques(
    arm: Array, c1: Any, c12: Any, s2: Any, dq1: Any, dq2: Any, coulomb: bool
) -> tuple[Any, Any]:
    """:func:`bias_torques`, with the Coulomb terms only if ``coulomb``.

    ``coulomb`` is a constant at every call site (numba inlines this function
    into its callers, so the compiler removes the branch): ``False`` gives the
    same numbers as ``True`` for an arm whose Coulomb coefficients are 0.
    """
    h = -arm[_B] * s2
    g12 = arm[_G2] * c12
    b1 = h * (2.0 * dq1 * dq2 + dq2 * dq2) + arm[_G1] * c1 + g12 + arm[_F1] * dq1
    b2 = -h * dq1 * dq1 + g12 + arm[_F2] * dq2
    if coulomb:
        if arm[_CF1] != 0.0:
            b1 = b1 + arm[_CF1] * np.arctan(COULOMB_SHARPNESS * dq1)
        if arm[_CF2] != 0.0:
            b2 = b2 + arm[_CF2] * np.arctan(COULOMB_SHARPNESS * dq2)
    return b1, b2


@kernel()
def bias_torques(arm: Array, c1: Any, c12: Any, s2: Any, dq1: Any, dq2: Any) -> tuple[Any, Any]:
    """``C(q, dq) dq + G(q) + F(dq)`` [N·m], from ``cos q1``, ``cos(q1 + q2)``, ``sin q2``.

    ``F(dq)_i = fi dqi + cfi atan(100 dqi)``; the Coulomb term is skipped when
    ``cfi == 0`` (it would add an exact zero).
    """
    return _bias_torques(arm, c1, c12, s2, dq1, dq2, True)


@kernel()
def has_coulomb(arm: Array) -> bool:
    """Whether an arm vector has a nonzero Coulomb coefficient (``cf1`` or ``cf2``)."""
    return arm[_CF1] != 0.0 or arm[_CF2] != 0.0


@kernel(inline=True)
def _accelerations(
    arm: Array,
    q1: Any,
    q2: Any,
    dq1: Any,
    dq2: Any,
    tau1: Any,
    tau2: Any,
    coulomb: bool,
) -> tuple[Any, Any]:
    """:func:`accelerations`, with the Coulomb terms only if ``coulomb`` (a call-site constant).

    ``coulomb=False`` is the same model for an arm without Coulomb friction
    (:func:`has_coulomb` false), compiled without the Coulomb terms' branches:
    :func:`twolink_gym.integrators.rk4` picks it once per arm and step.
    """
    s1, c1 = sincos(q1)
    s2, c2 = sincos(q2)
    c12 = c1 * c2 - s1 * s2
    m11, m12, m22 = mass_matrix_entries(arm, c2)
    b1, b2 = _bias_torques(arm, c1, c12, s2, dq1, dq2, coulomb)
    r1 = tau1 - b1
    r2 = tau2 - b2
    det = m11 * m22 - m12 * m12
    return (m22 * r1 - m12 * r2) / det, (m11 * r2 - m12 * r1) / det


@kernel()
def accelerations(
    arm: Array, q1: Any, q2: Any, dq1: Any, dq2: Any, tau1: Any, tau2: Any
) -> tuple[Any, Any]:
    """Joint accelerations ``M⁻¹ (tau - C dq - G - F(dq))`` [rad/s²] of one arm.

    The one copy of the equations of motion (written in :func:`_accelerations`,
    which the integrators call directly): the step kernel, the integrators
    and the batched functions of this module all run it. Float or complex
    scalars (complex for :func:`linearize`'s complex step); the 2x2 system is
    solved in closed form.

    Parameters
    ----------
    arm : ndarray, shape (12,)
        The arm vector (:func:`arm_vector`).
    q1, q2, dq1, dq2 : float
        State [rad, rad, rad/s, rad/s].
    tau1, tau2 : float
        Joint torques [N·m].
    """
    return _accelerations(arm, q1, q2, dq1, dq2, tau1, tau2, True)


@kernel()
def energies(arm: Array, q1: Any, q2: Any, dq1: Any, dq2: Any) -> tuple[Any, Any]:
    """Kinetic and potential energy ``(K, V)`` [J] of one arm (V = 0 at the base's height)."""
    s1, c1 = sincos(q1)
    s2, c2 = sincos(q2)
    s12 = s1 * c2 + c1 * s2
    m11, m12, m22 = mass_matrix_entries(arm, c2)
    kin = 0.5 * (m11 * dq1 * dq1 + 2.0 * m12 * dq1 * dq2 + m22 * dq2 * dq2)
    return kin, arm[_G1] * s1 + arm[_G2] * s12


# -- compiled loops of the kernels over flat arrays (the batched functions) --------
@kernel()
def _accelerations_loop(
    arm: Array, q1: Array, q2: Array, dq1: Array, dq2: Array, t1: Array, t2: Array, out: Array
) -> None:
    for i in range(q1.shape[0]):
        out[i, 0], out[i, 1] = accelerations(arm, q1[i], q2[i], dq1[i], dq2[i], t1[i], t2[i])


@kernel()
def _energies_loop(arm: Array, q1: Array, q2: Array, dq1: Array, dq2: Array, out: Array) -> None:
    for i in range(q1.shape[0]):
        out[i, 0], out[i, 1] = energies(arm, q1[i], q2[i], dq1[i], dq2[i])


@kernel()
def _inverse_dynamics_loop(
    arm: Array, q1: Array, q2: Array, dq1: Array, dq2: Array, a1: Array, a2: Array, out: Array
) -> None:
    for i in range(q1.shape[0]):
        s1, c1 = sincos(q1[i])
        s2, c2 = sincos(q2[i])
        m11, m12, m22 = mass_matrix_entries(arm, c2)
        b1, b2 = _bias_torques(arm, c1, c1 * c2 - s1 * s2, s2, dq1[i], dq2[i], True)
        out[i, 0] = m11 * a1[i] + m12 * a2[i] + b1
        out[i, 1] = m12 * a1[i] + m22 * a2[i] + b2


def _flat_components(*arrays: Array) -> tuple[tuple[int, ...], list[Array]]:
    """Broadcast ``(..., k)`` arrays and split them into contiguous flat components.

    Returns the broadcast leading shape and, for each array, its ``k`` components
    as C-contiguous 1-D arrays (all float64, or all complex128 if any is complex).
    """
    lead = np.broadcast_shapes(*(a.shape[:-1] for a in arrays))
    dtype = np.complex128 if any(a.dtype.kind == "c" for a in arrays) else np.float64
    parts: list[Array] = []
    for a in arrays:
        full = np.broadcast_to(a, (*lead, a.shape[-1]))
        parts.extend(
            np.ascontiguousarray(full[..., j], dtype=dtype).reshape(-1) for j in range(a.shape[-1])
        )
    return lead, parts


def _split2(value: ArrayLike, name: str) -> tuple[Array, Array]:
    arr = as_vectors(value, 2, name)
    return arr[..., 0], arr[..., 1]


def mass_matrix(params: ArmParams, q: ArrayLike) -> Array:
    """Joint-space inertia matrix ``M(q)`` (from :func:`mass_matrix_entries`).

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
    _, q2 = _split2(q, "q")
    m11, m12, m22 = python_source(mass_matrix_entries)(arm_vector(params), np.cos(q2))
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
    _, q2 = _split2(q, "q")
    dq1, dq2 = _split2(dq, "dq")
    h = -arm_vector(params)[_B] * np.sin(q2)
    c11 = h * dq2
    c12 = h * (dq1 + dq2)
    c21 = -h * dq1
    c11, c12, c21 = np.broadcast_arrays(c11, c12, c21)
    c22 = np.zeros_like(c11)
    return np.stack([np.stack([c11, c12], -1), np.stack([c21, c22], -1)], -2)


def coriolis_forces(params: ArmParams, q: ArrayLike, dq: ArrayLike) -> Array:
    """Velocity-product torques ``C(q, dq) dq`` [N·m], shape ``(..., 2)``."""
    _, q2 = _split2(q, "q")
    dq1, dq2 = _split2(dq, "dq")
    h = -arm_vector(params)[_B] * np.sin(q2)
    return np.stack(np.broadcast_arrays(h * (2.0 * dq1 * dq2 + dq2**2), -h * dq1**2), -1)


def gravity_torque(params: ArmParams, q: ArrayLike) -> Array:
    """Gravity torques ``G(q) = dV/dq`` [N·m], shape ``(..., 2)`` (:func:`bias_torques` at rest)."""
    q1, q2 = _split2(q, "q")
    zero = np.zeros_like(q1)
    g1, g2 = python_source(_bias_torques)(
        arm_vector(params), np.cos(q1), np.cos(q1 + q2), zero, zero, zero, True
    )
    return np.stack([g1, g2], -1)


def gravity_jacobian(params: ArmParams, q: ArrayLike) -> Array:
    """Jacobian ``dG/dq`` (the Hessian of the potential energy) [N·m/rad].

    Returns
    -------
    ndarray, shape (..., 2, 2)
        Symmetric.
    """
    arm = arm_vector(params)
    q1, q2 = _split2(q, "q")
    s12 = -arm[_G2] * np.sin(q1 + q2)
    s11 = -arm[_G1] * np.sin(q1) + s12
    return np.stack([np.stack([s11, s12], -1), np.stack([s12, s12], -1)], -2)


def friction_torque(params: ArmParams, dq: ArrayLike) -> Array:
    """Joint friction torques ``F(dq)`` [N·m], shape ``(..., 2)``.

    ``F_i = friction_i · dq_i + coulomb_i · atan(100 dq_i)``: viscous and
    (RealAIGym's smooth) Coulomb friction, as in :func:`bias_torques`.
    """
    dq = as_vectors(dq, 2, "dq")
    viscous = dq * np.array([params.friction1, params.friction2])
    if params.coulomb1 == 0.0 and params.coulomb2 == 0.0:
        return viscous
    coulomb = np.array([params.coulomb1, params.coulomb2])
    return viscous + coulomb * np.arctan(COULOMB_SHARPNESS * dq)


def forward_dynamics(params: ArmParams, q: ArrayLike, dq: ArrayLike, tau: ArrayLike) -> Array:
    """Joint accelerations ``ddq = M⁻¹ (tau - C dq - G - F(dq))`` (:func:`accelerations`).

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
        Joint accelerations [rad/s²] (leading axes broadcast; complex for
        complex inputs).
    """
    arrays = (as_vectors(q, 2, "q"), as_vectors(dq, 2, "dq"), as_vectors(tau, 2, "tau"))
    lead, parts = _flat_components(*arrays)
    out = np.empty((parts[0].shape[0], 2), dtype=parts[0].dtype)
    _accelerations_loop(arm_vector(params), *parts[:6], out)  # type: ignore[call-arg]
    return out.reshape(*lead, 2)


def inverse_dynamics(params: ArmParams, q: ArrayLike, dq: ArrayLike, ddq: ArrayLike) -> Array:
    """Joint torques ``tau = M ddq + C dq + G + F(dq)`` [N·m], shape ``(..., 2)``.

    Parameters
    ----------
    params : ArmParams
    q, dq, ddq : array_like, shape (..., 2)
        Joint angles [rad], velocities [rad/s] and accelerations [rad/s²].
    """
    arrays = (as_vectors(q, 2, "q"), as_vectors(dq, 2, "dq"), as_vectors(ddq, 2, "ddq"))
    lead, parts = _flat_components(*arrays)
    out = np.empty((parts[0].shape[0], 2), dtype=parts[0].dtype)
    _inverse_dynamics_loop(arm_vector(params), *parts[:6], out)  # type: ignore[call-arg]
    return out.reshape(*lead, 2)


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
    ddq = forward_dynamics(params, x[..., :2], x[..., 2:], tau)
    return np.concatenate(np.broadcast_arrays(x[..., 2:], ddq), -1)


def energy(params: ArmParams, q: ArrayLike, dq: ArrayLike) -> tuple[Array, Array]:
    """Kinetic and potential energy ``(K, V)`` [J] (:func:`energies`), each of shape ``(...)``."""
    lead, parts = _flat_components(as_vectors(q, 2, "q"), as_vectors(dq, 2, "dq"))
    out = np.empty((parts[0].shape[0], 2), dtype=parts[0].dtype)
    _energies_loop(arm_vector(params), *parts[:4], out)  # type: ignore[call-arg]
    return out[:, 0].reshape(lead), out[:, 1].reshape(lead)


def kinetic_energy(params: ArmParams, q: ArrayLike, dq: ArrayLike) -> Array:
    """Kinetic energy ``½ dqᵀ M(q) dq`` [J], shape ``(...)``."""
    return energy(params, q, dq)[0]


def potential_energy(params: ArmParams, q: ArrayLike) -> Array:
    """Gravitational potential energy [J], zero at the height of the base, shape ``(...)``.

    ``V = m1 g lc1 sin q1 + m2 g (l1 sin q1 + lc2 sin(q1 + q2))``.
    """
    q = as_vectors(q, 2, "q")
    return energy(params, q, np.zeros_like(q))[1]


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
