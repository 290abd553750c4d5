r"""Computed torque (inverse dynamics + PD) for reach, balance and track.

.. math::  \tau = M(q)\,(\ddot q_{ref} + K_p e + K_d \dot e) + C(q,\dot q)\dot q + G(q) + F\dot q,
           \qquad e = \operatorname{wrap}(q_{ref} - q),

evaluated with the package's :func:`~twolink_gym.dynamics.inverse_dynamics` on
the controller's model. With an exact model every joint error obeys
``ë + Kd ė + Kp e = 0``.

Reference
---------
*balance*: the upright ``q = [pi/2, 0]`` at rest.

*reach*: at the first step of an episode the controller plans a quintic joint
trajectory from the observed pose and velocity to the inverse-kinematics
solution of the target nearest to that pose (:func:`~twolink_gym.controllers.base.nearest_ik`),
lasting the shortest duration (in steps of 0.1 s, between ``min_duration`` and
``max_duration``) whose feed-forward torque stays within
``torque_margin · max_torque``; the PD loop then only corrects small errors, so
the torques stay inside the limits.

*track*: the joint reference of the observed tip reference on the elbow
branch the episode starts on (:func:`~twolink_gym.controllers.tracking.track_reference`;
the state is the branch, shape ``(n, 1)``).

The reach plan is the controller's state, shape ``(n, 10)``: start angles and
velocities, goal angles, target, duration, elapsed time. It is returned by
:meth:`predict` (SB3's recurrent-state slot), which is how ``evaluate_policy``
runs it. A row is re-planned where ``episode_start`` is True, where the
observed target has moved by more than ``replan_distance`` from the planned
one, or where there is no plan. If ``state=None`` is passed, the controller
uses the plan it returned last (when the batch size matches), so a plain loop
``action, _ = controller.predict(obs)`` works too; to drive several
environments with one controller, pass the returned state back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym.codec import DecodedObservation
from twolink_gym.controllers.base import UPRIGHT, Array, Controller, gain_vector, nearest_ik
from twolink_gym.controllers.tracking import TrackReference, track_reference
from twolink_gym.controllers.trajectory import fastest_feasible_duration, quintic
from twolink_gym.dynamics import inverse_dynamics
from twolink_gym.kinematics import wrap_angle
from twolink_gym.params import ArmParams
from twolink_gym.tasks import BalanceTask, ReachTask, Task, TrackTask

__all__ = ["PLAN_SIZE", "ComputedTorqueController", "computed_torque_law"]

#: Columns of the reach plan: q_start (2), dq_start (2), q_goal (2), target (2), duration, elapsed.
PLAN_SIZE = 10


def computed_torque_law(
    model: ArmParams,
    q: ArrayLike,
    dq: ArrayLike,
    q_ref: ArrayLike,
    dq_ref: ArrayLike,
    ddq_ref: ArrayLike,
    kp: ArrayLike,
    kd: ArrayLike,
) -> Array:
    """Computed torque towards a joint reference (the module's law), before any torque limit.

    ``inverse_dynamics(model, q, dq, ddq_ref + Kp e + Kd (dq_ref - dq))`` with
    ``e = wrap(q_ref - q)``: ``M(q)(q̈_ref + Kp e + Kd ė) + C q̇ + G + F q̇`` of the model.

    Parameters
    ----------
    model : ArmParams
        The controller's model of the arm.
    q, dq : array_like, shape (..., 2)
        Measured angles [rad] and velocities [rad/s].
    q_ref, dq_ref, ddq_ref : array_like, shape (..., 2)
        Reference angles [rad], velocities [rad/s] and accelerations [rad/s²].
    kp, kd : float or array_like, shape (2,)
        Gains [1/s²] and [1/s].

    Returns
    -------
    ndarray, shape (..., 2)
        Joint torques [N·m].
    """
    e = wrap_angle(np.asarray(q_ref) - np.asarray(q))
    command = (
        np.asarray(ddq_ref)
        + np.asarray(kp) * e
        + np.asarray(kd) * (np.asarray(dq_ref) - np.asarray(dq))
    )
    return inverse_dynamics(model, q, dq, command)


class ComputedTorqueController(Controller):
    """Inverse dynamics plus PD on the joint error, tracking a smooth reference.

    Parameters
    ----------
    task, params, dt, max_torque
        See :class:`~twolink_gym.controllers.base.Controller`; ``params`` is the
        model whose inverse dynamics is used.
    natural_frequency : float or pair of floats
        ``ωn`` of the error dynamics [rad/s]: ``Kp = ωn²`` [1/s²].
    damping_ratio : float or pair of floats
        ``ζ``: ``Kd = 2 ζ ωn`` [1/s].
    torque_margin : float
        Fraction of ``max_torque`` the planned feed-forward torque may use (reach).
    min_duration, max_duration : float, optional
        Range of trajectory durations [s] (reach); ``max_duration`` defaults to
        60 % of the episode.
    replan_distance : float
        Target displacement [m] that triggers a new plan (reach).

    Raises
    ------
    ValueError
        On a task it does not apply to or an invalid gain or duration.
    """

    task_types = (ReachTask, BalanceTask, TrackTask)

    def __init__(
        self,
        task: Task | str = "reach",
        params: ArmParams | Mapping[str, Any] | None = None,
        dt: float = 0.02,
        max_torque: ArrayLike | None = None,
        *,
        natural_frequency: ArrayLike = 10.0,
        damping_ratio: ArrayLike = 1.0,
        torque_margin: float = 0.8,
        min_duration: float = 0.5,
        max_duration: float | None = None,
        replan_distance: float = 0.02,
    ) -> None:
        super().__init__(task, params, dt, max_torque)
        omega = gain_vector(natural_frequency, "natural_frequency")
        zeta = gain_vector(damping_ratio, "damping_ratio")
        if not np.all(omega > 0):
            raise ValueError(f"natural_frequency must be > 0, got {omega.tolist()}")
        self.kp = omega**2
        self.kd = 2.0 * zeta * omega
        if not 0.0 < torque_margin <= 1.0:
            raise ValueError(f"torque_margin must lie in (0, 1], got {torque_margin!r}")
        if max_duration is None:
            max_duration = 0.6 * self.task.episode_seconds
        if not 0.0 < min_duration <= max_duration:
            raise ValueError(
                "durations must satisfy 0 < min_duration <= max_duration, got "
                f"{min_duration!r} and {max_duration!r}"
            )
        if not replan_distance > 0.0:
            raise ValueError(f"replan_distance must be > 0 (metres), got {replan_distance!r}")
        self.torque_margin = float(torque_margin)
        self.durations = np.arange(min_duration, max_duration + 1e-9, 0.1)
        self.replan_distance = float(replan_distance)
        self._memory: Array | None = None
        self._track = TrackReference()

    # -- reference ---------------------------------------------------------
    def _plan(
        self, decoded: DecodedObservation, state: Any, episode_start: NDArray[np.bool_]
    ) -> Array:
        """The reach plans ``(n, PLAN_SIZE)`` for this step (re-planned rows filled in)."""
        x, goal = decoded.state, decoded.goal
        n = x.shape[0]
        if state is None and self._memory is not None and self._memory.shape == (n, PLAN_SIZE):
            state = self._memory
        if state is None:
            plan = np.zeros((n, PLAN_SIZE))
            replan = np.ones(n, dtype=bool)
        else:
            plan = np.array(state, dtype=np.float64)
            if plan.shape != (n, PLAN_SIZE) or not np.all(np.isfinite(plan)):
                raise ValueError(
                    f"state must be the finite plan of shape ({n}, {PLAN_SIZE}) returned by "
                    f"{type(self).__name__}.predict, got shape {plan.shape}"
                )
            moved = np.hypot(*(goal - plan[:, 6:8]).T) > self.replan_distance
            replan = episode_start | moved
        if replan.any():
            q0, v0 = x[replan, :2], x[replan, 2:]
            qf = nearest_ik(self.params, goal[replan], q0)
            plan[replan, 0:2] = q0
            plan[replan, 2:4] = v0
            plan[replan, 4:6] = qf
            plan[replan, 6:8] = goal[replan]
            plan[replan, 8] = fastest_feasible_duration(
                self.params, q0, v0, qf, self.durations, self.torque_margin * self.max_torque
            )
            plan[replan, 9] = 0.0
        return plan

    def _torque(
        self, decoded: DecodedObservation, state: Any, episode_start: NDArray[np.bool_]
    ) -> tuple[Array, Array | None]:
        x = decoded.state
        q, dq = x[:, :2], x[:, 2:]
        new_state: Array | None
        if isinstance(self.task, BalanceTask):
            q_ref = np.broadcast_to(UPRIGHT[:2], q.shape)
            dq_ref = ddq_ref = np.zeros_like(q)
            new_state = None
        elif isinstance(self.task, TrackTask):
            new_state = self._track.branches(q, state, episode_start)
            q_ref, dq_ref, ddq_ref = track_reference(self.params, decoded.extras, new_state)
        else:
            plan = self._plan(decoded, state, episode_start)
            q_ref, dq_ref, ddq_ref = quintic(
                plan[:, 0:2], plan[:, 2:4], plan[:, 4:6], plan[:, 8], plan[:, 9]
            )
            plan[:, 9] += self.dt
            self._memory = plan.copy()
            new_state = plan
        tau = computed_torque_law(self.params, q, dq, q_ref, dq_ref, ddq_ref, self.kp, self.kd)
        return tau, new_state
