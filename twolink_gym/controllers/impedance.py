r"""Cartesian impedance control: a spring and damper at the tip, plus gravity compensation.

.. math::  \tau = J(q)^\top \big(K\,(x_{target} - x_{tip}) - D\,\dot x_{tip}\big) + G(q),
           \qquad \dot x_{tip} = J(q)\,\dot q .

This is the "spring" controller of ``002_424582939a6fd15d.txt`` done right: the
virtual force ``F`` at the tip maps to joint torques by ``Jᵀ F`` (virtual work),
with the relative link angle ``q2`` and gravity included. With exact gravity
compensation, ``½ q̇ᵀ M q̇ + ½ |x_target - x_tip|²_K`` is a Lyapunov function.

The tip error ``x_target - x_tip`` is the observation's ``to_target`` entry,
measured in the task space; the Jacobian and the gravity torque come from the
controller's model (so a wrong length in the model scales and skews the spring
but does not move its rest point). Near the stretched or folded arm
(``sin q2 = 0``) the Jacobian loses rank: the spring cannot push along the arm
and ``D`` does not damp the joint motion that leaves the tip in place; the
optional ``joint_damping`` adds ``-Dq q̇`` for that (off by default: measured,
it changes nothing on reach, whose episodes leave the hanging pose at once).

*track*: the spring pulls towards the moving reference ``r`` and the damper
acts on the velocity error, with the reference's feed-forward in place of the
gravity compensation,

.. math::  \tau = J^\top \big(K\,(r - x_{tip}) + D\,(\dot r - \dot x_{tip})\big)
           + M(q)\,\ddot q_{ff} + C(q,\dot q)\dot q + G(q) + F\dot q,
           \qquad \ddot q_{ff} = J^{-1}(\ddot r - \dot J \dot q),

so that with an exact model the tip error ``e = r - x_tip`` obeys
``Λ(q) ë + D ė + K e = 0``, ``Λ = (J M⁻¹ Jᵀ)⁻¹`` the tip's apparent mass: a
mass-spring-damper (``ẍ - r̈ = J (q̈ - q̈_ff) = Λ⁻¹ (K e + D ė)``). Within
``|sin q2| < 1e-3`` of a singularity ``q̈_ff = 0``.

Gains: ``K = 100 N/m`` and ``D = 16 N·s/m`` (isotropic). A stiffer spring
settles faster and shrinks the static error of a wrong gravity model
(``|ΔG| / K`` at the tip), but a stiffer spring or damper destabilises the
sampled loop where the effective inertia is small: with ``K = 150``,
``D = 25`` the loop linearised at some target poses has spectral radius 1.24
when the model's lengths are 20 % long. The defaults keep it below 0.99 at
every target pose for the exact model and for ±20 % lengths.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym.codec import DecodedObservation
from twolink_gym.controllers.base import Array, Controller, gain_vector
from twolink_gym.dynamics import gravity_torque, inverse_dynamics
from twolink_gym.kinematics import jacobian, jacobian_derivative
from twolink_gym.params import ArmParams
from twolink_gym.paths import MIN_ABS_SIN_Q2
from twolink_gym.tasks import ReachTask, Task, TrackTask

__all__ = ["ImpedanceController"]


def _stiffness_matrix(value: ArrayLike, name: str) -> Array:
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape == (2, 2):
        if not np.allclose(arr, arr.T) or np.min(np.linalg.eigvalsh(arr)) < 0.0:
            raise ValueError(f"{name} must be symmetric positive semi-definite, got {arr.tolist()}")
        return arr
    return np.diag(gain_vector(value, name))


class ImpedanceController(Controller):
    """A Cartesian spring-damper at the tip with gravity compensation (reach) or feed-forward (track).

    Parameters
    ----------
    task, params, dt, max_torque
        See :class:`~twolink_gym.controllers.base.Controller`; ``params`` is the
        model for the Jacobian and the gravity torque.
    stiffness : float, pair of floats or (2, 2) array
        ``K`` [N/m] (a number means an isotropic spring).
    damping : float, pair of floats or (2, 2) array
        ``D`` [N·s/m].
    joint_damping : float or pair of floats
        Extra joint damping ``-Dq q̇`` [N·m·s/rad] (0 gives the textbook law).
    """

    task_types = (ReachTask, TrackTask)

    def __init__(
        self,
        task: Task | str = "reach",
        params: ArmParams | Mapping[str, Any] | None = None,
        dt: float = 0.02,
        max_torque: ArrayLike | None = None,
        *,
        stiffness: ArrayLike = 100.0,
        damping: ArrayLike = 16.0,
        joint_damping: ArrayLike = 0.0,
    ) -> None:
        super().__init__(task, params, dt, max_torque)
        self.stiffness = _stiffness_matrix(stiffness, "stiffness")
        self.damping = _stiffness_matrix(damping, "damping")
        self.joint_damping = gain_vector(joint_damping, "joint_damping")
        self._tracking = isinstance(self.task, TrackTask)
        error_name = "to_reference_x" if self._tracking else "to_target_x"
        self._error_index = self.task.extras_names().index(error_name)

    def _torque(
        self, decoded: DecodedObservation, state: Any, episode_start: NDArray[np.bool_]
    ) -> tuple[Array, None]:
        q, dq = decoded.state[:, :2], decoded.state[:, 2:]
        error = decoded.extras[:, self._error_index : self._error_index + 2]
        jac = jacobian(self.params, q)
        tip_velocity = np.einsum("nij,nj->ni", jac, dq)
        if not self._tracking:
            force = error @ self.stiffness.T - tip_velocity @ self.damping.T
            tau = np.einsum("nji,nj->ni", jac, force) - self.joint_damping * dq
            return tau + gravity_torque(self.params, q), None
        reference_velocity = decoded.extras[:, 2:4]
        reference_acceleration = decoded.extras[:, 4:6]
        force = error @ self.stiffness.T + (reference_velocity - tip_velocity) @ self.damping.T
        tau = np.einsum("nji,nj->ni", jac, force) - self.joint_damping * dq
        # feed-forward: the joint acceleration that gives the reference's acceleration
        rhs = reference_acceleration - np.einsum(
            "nij,nj->ni", jacobian_derivative(self.params, q, dq), dq
        )
        ddq = np.zeros_like(q)
        ok = np.abs(np.sin(q[:, 1])) >= MIN_ABS_SIN_Q2
        ddq[ok] = np.linalg.solve(jac[ok], rhs[ok][..., None])[..., 0]
        return tau + inverse_dynamics(self.params, q, dq, ddq), None
