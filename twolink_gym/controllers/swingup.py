r"""Energy-based swing-up with an LQR catch (the swing-up task, full arm).

Swing-up (Åström & Furuta's energy control, on the shoulder)
-------------------------------------------------------------
The total energy ``E = K + V`` (:func:`~twolink_gym.dynamics.total_energy`)
is ``E* = V(upright)`` on the upright equilibrium, and the motors change it at
the rate ``dE/dt = τ·dq - friction``. The shoulder pumps::

    τ1 = k_energy · (E* - E) · tanh(dq1 / speed_scale) + f1 · dq1

(in phase with the shoulder's speed while energy is missing, against it when
there is too much; friction compensated), while the elbow holds the arm
straight with a PD law and link 2's gravity torque::

    τ2 = -elbow_stiffness · wrap(q2) - elbow_damping · dq2 + G2(q)

A straight arm at energy ``E*`` follows the homoclinic orbit of a rigid
pendulum into the upright. Both torques are saturated at ``max_torque`` by the
env, so under the swing-up task's default limits the energy rises over several
swings.

Catch
-----
A discrete LQR about the upright (:func:`~twolink_gym.controllers.lqr.design_lqr`,
the balance controller's weights) takes over whenever the predicted cost
``dxᵀ P dx`` is below ``catch_level``: a level set inside the LQR's region of
attraction under the torque limits, estimated by simulation with
``benchmarks/bench_controllers.py`` (docs/controllers.md). The switch is
stateless: outside the level set the swing-up law acts again.

The underactuated arms are not covered: the energy laws for the acrobot
(Spong's partial feedback linearisation) and the pendubot did not reach the
upright reliably under the task's torque limits (docs/controllers.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym._arrays import positive_number
from twolink_gym.codec import DecodedObservation
from twolink_gym.controllers.base import UPRIGHT, Array, Controller, gain_vector
from twolink_gym.controllers.lqr import design_upright_lqr
from twolink_gym.dynamics import gravity_torque, potential_energy, total_energy
from twolink_gym.kinematics import wrap_angle
from twolink_gym.params import ArmParams
from twolink_gym.tasks import SwingupTask, Task

__all__ = ["SWINGUP_CATCH_LEVEL", "EnergySwingupController"]

#: Default catch level ``c`` of the LQR's ``dxᵀ P dx`` under the swing-up task's
#: default torque limits (8, 4) N·m: the level-set estimate of the LQR's region
#: of attraction there, 54.9 (every state with a smaller cost on 108 rays was
#: balanced; ``python benchmarks/swingup_lqr_roa.py``), rounded down.
SWINGUP_CATCH_LEVEL = 50.0


class EnergySwingupController(Controller):
    """Energy pumping on the shoulder, a straight elbow, and an LQR catch at the top.

    Parameters
    ----------
    task, params, dt, max_torque
        See :class:`~twolink_gym.controllers.base.Controller`; ``params`` is the
        model (energy, gravity, friction and the LQR's linearisation).
    k_energy : float
        Energy gain [N·m/J] of the shoulder's pumping law.
    speed_scale : float
        Shoulder speed [rad/s] over which the pumping torque changes sign
        (``tanh(dq1 / speed_scale)``); at ``dq1 = 0`` it pushes positive, so a
        start at rest is kicked off.
    elbow_stiffness, elbow_damping : float
        PD gains holding the elbow straight [N·m/rad], [N·m·s/rad].
    catch_level : float
        The LQR takes over where ``dxᵀ P dx < catch_level`` (default
        :data:`SWINGUP_CATCH_LEVEL`).
    Q, R : array_like, optional
        The catch LQR's weights (default those of
        :class:`~twolink_gym.controllers.lqr.LQRController`).

    Attributes
    ----------
    design : LQRDesign
        The catch LQR.
    target_energy : float
        ``E*``, the energy of the upright at rest [J].
    """

    task_types = (SwingupTask,)
    actuations = ("full",)

    def __init__(
        self,
        task: Task | str = "swingup",
        params: ArmParams | Mapping[str, Any] | None = None,
        dt: float = 0.02,
        max_torque: ArrayLike | None = None,
        actuation: str = "full",
        *,
        k_energy: float = 2.0,
        speed_scale: float = 0.1,
        elbow_stiffness: float = 10.0,
        elbow_damping: float = 2.0,
        catch_level: float = SWINGUP_CATCH_LEVEL,
        Q: ArrayLike | None = None,
        R: ArrayLike | None = None,
    ) -> None:
        super().__init__(task, params, dt, max_torque, actuation)
        self.k_energy = positive_number(k_energy, "k_energy")
        self.speed_scale = positive_number(speed_scale, "speed_scale")
        self.elbow_gains = gain_vector([elbow_stiffness, elbow_damping], "elbow gains")
        self.catch_level = positive_number(catch_level, "catch_level")
        self.design = design_upright_lqr(self.params, self.dt, self.max_torque, Q=Q, R=R)
        self.target_energy = float(potential_energy(self.params, UPRIGHT[:2]))

    def in_catch_region(self, state: ArrayLike) -> NDArray[np.bool_]:
        """Whether the LQR acts at ``state`` ``(n, 4)``: ``dxᵀ P dx < catch_level``, ``(n,)``."""
        return np.asarray(self.design.cost_to_go(state) < self.catch_level)

    def swing_torque(self, state: ArrayLike) -> Array:
        """The swing-up law's torques [N·m] (before saturation), ``(n, 2)``."""
        x = np.atleast_2d(np.asarray(state, dtype=np.float64))
        q, dq = x[:, :2], x[:, 2:]
        missing = self.target_energy - total_energy(self.params, x)
        direction = np.where(dq[:, 0] == 0.0, 1.0, np.tanh(dq[:, 0] / self.speed_scale))
        kp, kd = self.elbow_gains
        tau = np.empty_like(q)
        tau[:, 0] = self.k_energy * missing * direction + self.params.friction1 * dq[:, 0]
        tau[:, 1] = -kp * wrap_angle(q[:, 1]) - kd * dq[:, 1] + gravity_torque(self.params, q)[:, 1]
        return tau

    def _torque(
        self, decoded: DecodedObservation, state: Any, episode_start: NDArray[np.bool_]
    ) -> tuple[Array, None]:
        x = decoded.state
        catch = self.in_catch_region(x)
        tau = self.swing_torque(x)
        if catch.any():
            tau[catch] = self.design.torque(x[catch])
        return tau, None
