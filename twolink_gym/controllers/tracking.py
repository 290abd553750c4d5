r"""Joint references for the ``track`` task, and pure feed-forward along them.

A tracking controller sees the reference's position ``r``, velocity ``ṙ`` and
acceleration ``r̈`` in the observation (:class:`~twolink_gym.tasks.TrackTask`'s
extras) and turns them into a joint reference by inverse kinematics on one
elbow branch: ``q_ref = IK(r)``, ``q̇_ref = J⁻¹ ṙ``, ``q̈_ref = J⁻¹ (r̈ - J̇ q̇_ref)``
(:func:`~twolink_gym.paths.joint_states_on_branch`, over
:func:`~twolink_gym.paths.joint_rates`, the function
:func:`~twolink_gym.paths.joint_reference` uses). The branch is chosen at an
episode's first observation, the one the arm is on (the sign of ``q2``; the
episodes start on the path), and kept for the episode: it is the controller's
state, shape ``(n, 1)``, ``+1`` for ``q2 >= 0`` (``"down"``) and ``-1``
(``"up"``), returned by ``predict`` like :class:`ComputedTorqueController`'s plan.

:class:`FeedForwardController` applies the inverse-dynamics torques of that
reference and nothing else, ``τ = M(q_ref) q̈_ref + C(q_ref, q̇_ref) q̇_ref +
G(q_ref) + F q̇_ref``: the open loop of the looping-path exercise, which drifts
off the path because the hanging arm's open loop is unstable (the looping-path
experiment, docs/environments/track.md). The computed-torque and impedance
controllers add feedback to the same reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym.codec import DecodedObservation
from twolink_gym.controllers.base import Array, Controller
from twolink_gym.dynamics import inverse_dynamics
from twolink_gym.params import ArmParams
from twolink_gym.paths import joint_states_on_branch
from twolink_gym.tasks import Task, TrackTask

__all__ = ["FeedForwardController", "TrackReference", "track_reference"]

#: Columns of the reference in the track task's extras: position, velocity, acceleration.
_REFERENCE = slice(0, 6)


class TrackReference:
    """The elbow branch kept per episode, and the joint reference it gives (see the module notes)."""

    def __init__(self) -> None:
        self._memory: Array | None = None

    def branches(self, q: Array, state: Any, episode_start: NDArray[np.bool_]) -> Array:
        """The branch of each row ``(n, 1)``: kept from ``state``, or chosen where an episode starts.

        ``state=None`` uses the branches returned last (when the batch size
        matches), else chooses every row anew.

        Raises
        ------
        ValueError
            If ``state`` is not an ``(n, 1)`` array of ±1.
        """
        n = q.shape[0]
        if state is None and self._memory is not None and self._memory.shape == (n, 1):
            state = self._memory
        current = np.where(q[:, 1:2] >= 0.0, 1.0, -1.0)
        if state is None:
            branch = current
        else:
            branch = np.array(state, dtype=np.float64)
            if branch.shape != (n, 1) or not np.all(np.abs(branch) == 1.0):
                raise ValueError(
                    f"state must be the elbow branches of shape ({n}, 1) (+1 or -1) returned "
                    f"by predict, got shape {branch.shape}"
                )
            branch = np.where(episode_start[:, None], current, branch)
        self._memory = branch.copy()
        return branch


def track_reference(
    model: ArmParams, extras: ArrayLike, branch: ArrayLike
) -> tuple[Array, Array, Array]:
    """Joint reference of the track task's observed tip reference on the given elbow branches.

    Parameters
    ----------
    model : ArmParams
        The controller's model of the arm (its lengths set the inverse kinematics).
    extras : array_like, shape (n, extras_size)
        The track task's observation extras (reference position [m], velocity
        [m/s], acceleration [m/s²] first).
    branch : array_like, shape (n, 1)
        ``+1``: ``q2 >= 0`` ("down"), ``-1``: ``q2 <= 0`` ("up").

    Returns
    -------
    q_ref, dq_ref, ddq_ref : ndarray, shape (n, 2)
        [rad], [rad/s], [rad/s²] (:func:`~twolink_gym.paths.joint_states_on_branch`:
        the rates are 0 where ``|sin q2| < 1e-3``, a reference outside the
        model's workspace is projected onto it).
    """
    ref = np.asarray(extras, dtype=np.float64)[:, _REFERENCE]
    down = np.asarray(branch)[:, 0] > 0.0
    return joint_states_on_branch(model, ref[:, 0:2], ref[:, 2:4], ref[:, 4:6], down)


class FeedForwardController(Controller):
    """The inverse-dynamics torques of the reference alone, no feedback (track).

    Parameters
    ----------
    task, params, dt, max_torque
        See :class:`~twolink_gym.controllers.base.Controller`; ``params`` is the
        model whose inverse kinematics and dynamics are used.
    """

    task_types = (TrackTask,)

    def __init__(
        self,
        task: Task | str = "track",
        params: ArmParams | Mapping[str, Any] | None = None,
        dt: float = 0.02,
        max_torque: ArrayLike | None = None,
    ) -> None:
        super().__init__(task, params, dt, max_torque)
        self.reference = TrackReference()

    def _torque(
        self, decoded: DecodedObservation, state: Any, episode_start: NDArray[np.bool_]
    ) -> tuple[Array, Array]:
        branch = self.reference.branches(decoded.state[:, :2], state, episode_start)
        q_ref, dq_ref, ddq_ref = track_reference(self.params, decoded.extras, branch)
        return inverse_dynamics(self.params, q_ref, dq_ref, ddq_ref), branch
