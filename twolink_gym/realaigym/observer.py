"""A model-based observer of the joint velocities, for policies on RealAIGym's boards.

The robustness board's velocity-noise family adds Gaussian noise of up to 0.5 rad/s
to both measured velocities; the measured angles stay exact. RealAIGym's library lets
a controller filter its measurements (its low-pass, Kalman and unscented Kalman
filters); :class:`VelocityObserver` is such a filter for any policy of ours, placed
between the measurement and the policy by
:class:`~twolink_gym.realaigym.protocol.PolicyRunner` (``observer``). At each decision
``k`` (period ``h``, ``m`` steps of 2 ms) it

1. *predicts* the state from its last estimate ``x̂`` under the torque the policy
   commanded since: ``m`` RK4 steps of 2 ms of the policy's nominal arm
   (:func:`twolink_gym.integrators.step`, the boards' integrator);
2. takes the angles' innovation ``e = wrap(q_meas - q_pred)``
   (:func:`twolink_gym.kinematics.wrap_angle`);
3. keeps the measured angles and corrects the predicted velocities:
   ``q̇̂ = q̇_pred + velocity_gain · (q̇_meas - q̇_pred) + position_gain · e / h``.

With ``velocity_gain = 0`` the measured velocities are not used at all: the
velocities come from the exact angles and the model. On the nominal arm without
noise the prediction is the measurement (the same integrator, the same torque), so
the estimate equals the measured state to rounding. A row restarts from its
measurement at the first decision and wherever ``|e|`` exceeds ``gate`` [rad] on
either joint (the policy was not asked for a while, e.g. during a v3 push; the
prediction over one decision misses by far less); :func:`~twolink_gym.realaigym.v3.run_v3`
also restarts it after each push.

:data:`OBSERVER_GAINS` holds the gains the boards use, per robot (docs/realaigym.md,
"A velocity observer").
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym.integrators import step
from twolink_gym.kinematics import wrap_angle
from twolink_gym.params import ArmParams

__all__ = ["OBSERVER_GAINS", "VelocityObserver"]

#: ``(velocity_gain, position_gain)`` of :class:`VelocityObserver` per robot, chosen on the
#: robustness board with noise seed 11 (the board reports seed 3): the measured velocities
#: are left out on both (the angles are exact on the boards).
OBSERVER_GAINS: dict[str, tuple[float, float]] = {
    "acrobot": (0.0, 0.5),
    "pendubot": (0.0, 1.0),
}


class VelocityObserver:
    """Estimate the joint velocities of ``n`` arms from measured states (module notes).

    Parameters
    ----------
    params : ArmParams
        The nominal arm the prediction integrates.
    velocity_gain : float
        Weight of the measured velocities, in ``[0, 1]`` (1: the measurement alone).
    position_gain : float
        Gain of the angles' innovation on the velocities, in ``[0, 2]``.
    gate : float
        Angle innovation [rad], > 0, above which a row restarts from its measurement.
    """

    def __init__(
        self, params: ArmParams, velocity_gain: float, position_gain: float, gate: float = 0.1
    ) -> None:
        if not (isinstance(velocity_gain, int | float) and 0.0 <= velocity_gain <= 1.0):
            raise ValueError(f"velocity_gain must lie in [0, 1], got {velocity_gain!r}")
        if not (isinstance(position_gain, int | float) and 0.0 <= position_gain <= 2.0):
            raise ValueError(f"position_gain must lie in [0, 2], got {position_gain!r}")
        if not (isinstance(gate, int | float) and math.isfinite(gate) and gate > 0.0):
            raise ValueError(f"gate must be a finite number > 0 [rad], got {gate!r}")
        self.params = params
        self.velocity_gain = float(velocity_gain)
        self.position_gain = float(position_gain)
        self.gate = float(gate)
        self._estimate: NDArray[np.float64] | None = None
        self._torque: NDArray[np.float64] | None = None

    def settings(self) -> dict[str, float]:
        """Its gains and gate, as a results row records them."""
        return {
            "velocity_gain": self.velocity_gain,
            "position_gain": self.position_gain,
            "gate": self.gate,
        }

    def reset(self) -> None:
        """Forget the last estimate: the next one is the measurement."""
        self._estimate = None
        self._torque = None

    def estimate(self, measured: ArrayLike, period: float, substeps: int) -> NDArray[np.float64]:
        """The estimated states ``(n, 4)`` for measured states ``(n, 4)`` [rad, rad/s].

        Parameters
        ----------
        measured : array_like, shape (n, 4)
            ``(q1, q2, q̇1, q̇2)`` as measured, our angles.
        period : float
            Time since the last estimate [s] (the policy's decision period).
        substeps : int
            RK4 steps of the prediction over ``period``.
        """
        y = np.array(measured, dtype=np.float64, ndmin=2)
        last, torque = self._estimate, self._torque
        if last is None or torque is None or last.shape != y.shape:
            x = y.copy()
        else:
            predicted = step(self.params, last, torque, period, substeps)
            e = wrap_angle(y[:, :2] - predicted[:, :2])
            x = np.empty_like(y)
            x[:, :2] = y[:, :2]
            x[:, 2:] = (
                predicted[:, 2:]
                + self.velocity_gain * (y[:, 2:] - predicted[:, 2:])
                + self.position_gain * e / period
            )
            restart = np.abs(e).max(axis=1) > self.gate
            x[restart] = y[restart]
        self._estimate = x
        self._torque = None
        return x.copy()

    def hold(self, torque: ArrayLike) -> None:
        """Record the joint torques ``(n, 2)`` [N·m] commanded after the last estimate."""
        if self._estimate is None:
            raise RuntimeError("hold() needs an estimate() first")
        self._torque = np.array(torque, dtype=np.float64, ndmin=2).reshape(
            self._estimate.shape[0], 2
        )
