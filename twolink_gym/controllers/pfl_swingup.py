r"""Energy swing-ups of the underactuated arms: collocated PFL, energy pumping, LQR catch.

Collocated partial feedback linearisation (Spong 1994)
------------------------------------------------------
With a motor at joint ``a`` only (the passive joint ``p`` has no torque),
the passive row of ``M q̈ + h = τ`` (``h = C q̇ + G + F q̇``, the package's
:func:`~twolink_gym.dynamics.inverse_dynamics` at ``q̈ = 0``) gives
``q̈_p = -(M_pa q̈_a + h_p) / M_pp``. Substituted into the motor row, the torque
that makes the motor joint accelerate at a commanded ``v`` is

.. math::  τ_a = \bar M_{aa} v + \bar h_a, \qquad
           \bar M_{aa} = M_{aa} - M_{ap} M_{pa} / M_{pp}, \quad
           \bar h_a = h_a - M_{ap} h_p / M_{pp}

(:func:`collocated_pfl_torque`); the motor joint's friction is compensated
there, the passive joint's cannot be.

Swing-up law (the same for both arms)
-------------------------------------
The commanded acceleration of the motor joint is a PD law towards its pose in
the upright, plus an energy pump::

    v = kp · wrap(q_a* - q_a) - kd · q̇_a + ka · tanh(ke · (E* - E) · q̇_a)

with ``E`` the total energy (:func:`~twolink_gym.dynamics.total_energy`) and
``E* = V(upright)``. The arm's energy changes at ``dE/dt = τ_a q̇_a - q̇ᵀ F q̇``
and the pump's share of ``τ_a q̇_a`` is ``M̄_aa ka tanh(ke (E* - E) q̇_a) q̇_a``,
which has the sign of ``E* - E`` (``M̄_aa > 0``): energy is added while it is
missing and removed when there is too much; the PD part keeps the motor
joint near its upright pose (``q1* = π/2`` for the pendubot's link 1,
``q2* = 0``, a straight arm, for the acrobot).

Braking (optional)
------------------
The pump's commanded acceleration is bounded (``ka``) and the PD part fights
it, so an arm left far above the upright's energy (a push, a fall that spins
the arm) sheds its excess slowly; the acrobot's PD holds the elbow nearly
still, and ``τ_2 q̇_2`` then removes almost nothing. With ``brake_level`` set,
a row whose excess energy ``E - E*`` exceeds ``brake_level`` switches to a
braking law: the motor damps its own joint, ``τ_a = -brake_gain · q̇_a``
(saturated by the motor's limit), and nothing else, so the motor joint moves
freely and ``dE/dt = τ_a q̇_a - q̇ᵀ F q̇ = -brake_gain q̇_a² - q̇ᵀ F q̇ ≤ 0``
(while unsaturated; saturated, ``-|τ_max| |q̇_a|``): energy only decreases.
The row returns to the swing-up law once ``E - E*`` is below ``brake_exit``
(hysteresis). The catch, when it takes a row, overrides the brake.

Catch
-----
A discrete LQR about the upright designed on the one-input linearisation
(:func:`~twolink_gym.controllers.lqr.design_upright_lqr`) takes over when its
predicted cost ``dxᵀ P dx`` falls below ``catch_level``, a level set inside
its region of attraction under the torque limits estimated by simulation
(``python benchmarks/swingup_lqr_roa.py``; docs/controllers.md), and keeps the
arm until the cost exceeds ``release_level`` (hysteresis). The LQR's own
trajectories from the level set may leave it on their way in (the cost is not
a Lyapunov function of the saturated, sampled, nonlinear loop); a stateless
switch would hand them back to the swing-up law.

With ``catch_horizon > 0`` the catch also looks ahead: a state outside the
level set whose cost is below ``release_level`` is handed to the LQR if the
saturated LQR, simulated on the controller's model (RK4 with the
environments' default :data:`~twolink_gym.simulation.DEFAULT_SUBSTEPS`
sub-steps and speed limit :data:`~twolink_gym.simulation.DEFAULT_MAX_SPEED`)
for ``catch_horizon`` seconds, brings it into the level set. That is a membership test of the
LQR's region of attraction by simulation, the way the level set itself was
estimated, at the state where it is needed: the acrobot's level set is thin,
and most of the states its swing-up passes close to the upright lie outside
it but inside the region. Which law drives each row is the
controller's state, returned by :meth:`predict` in SB3's recurrent-state slot
(shape ``(n, 1)``: 0.0 swing-up law, 1.0 caught, 2.0 braking) and reset to 0
where ``episode_start`` is true; with ``state=None`` the controller uses the
state it returned last.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym._arrays import positive_number
from twolink_gym.codec import ACTUATIONS, DecodedObservation
from twolink_gym.controllers.base import UPRIGHT, Array, Controller
from twolink_gym.controllers.lqr import design_upright_lqr
from twolink_gym.dynamics import inverse_dynamics, mass_matrix, potential_energy, total_energy
from twolink_gym.env_config import DEFAULT_MAX_SPEED, DEFAULT_SUBSTEPS
from twolink_gym.integrators import step
from twolink_gym.kinematics import wrap_angle
from twolink_gym.params import ArmParams
from twolink_gym.tasks import SwingupTask, Task

__all__ = [
    "ACROBOT_CATCH_HORIZON",
    "ACROBOT_CATCH_LEVEL",
    "ACROBOT_CATCH_Q",
    "ACROBOT_CATCH_R",
    "ACROBOT_RELEASE_LEVEL",
    "PENDUBOT_CATCH_LEVEL",
    "PENDUBOT_RELEASE_LEVEL",
    "AcrobotSwingupController",
    "PFLSwingupController",
    "PendubotSwingupController",
    "collocated_pfl_torque",
]

#: Default catch level of the pendubot's LQR under its swing-up limits (30 N·m at
#: the shoulder): the LQR alone balances every state with ``dxᵀ P dx < 86.5`` on
#: 408 rays (``python benchmarks/swingup_lqr_roa.py``), rounded down.
PENDUBOT_CATCH_LEVEL = 80.0
#: Default release level of the pendubot's catch (5x the catch level).
PENDUBOT_RELEASE_LEVEL = 400.0
#: The acrobot's catch LQR weights: ``Q = diag(2.3, 0.48, 0.65, 2.4)``, ``R = 0.085``
#: (found by a random search over weights, gains and levels whose catch level lay
#: inside the LQR's estimated region of attraction; docs/controllers.md). With the
#: balance controller's weights the acrobot's region is too thin to catch it.
ACROBOT_CATCH_Q = (2.3, 0.48, 0.65, 2.4)
ACROBOT_CATCH_R = (0.085,)
#: Default catch level of the acrobot's LQR (10 N·m at the elbow, weights
#: :data:`ACROBOT_CATCH_Q`, :data:`ACROBOT_CATCH_R`): inside its level-set
#: region-of-attraction estimate (``python benchmarks/swingup_lqr_roa.py``).
ACROBOT_CATCH_LEVEL = 23.0
#: Default release level of the acrobot's catch.
ACROBOT_RELEASE_LEVEL = 1500.0
#: Look-ahead of the acrobot's catch [s] (``catch_horizon``).
ACROBOT_CATCH_HORIZON = 1.0


def collocated_pfl_torque(
    params: ArmParams, state: ArrayLike, accel: ArrayLike, active: int
) -> Array:
    """Motor torque that gives the motor joint the acceleration ``accel`` (collocated PFL).

    Parameters
    ----------
    params : ArmParams
        The model.
    state : array_like, shape (n, 4)
        ``[q1, q2, dq1, dq2]`` [rad, rad/s].
    accel : array_like, shape (n,)
        Commanded acceleration of the motor joint [rad/s²].
    active : {0, 1}
        The motor joint (0: shoulder, a pendubot; 1: elbow, an acrobot).

    Returns
    -------
    ndarray, shape (n, 2)
        Joint torques [N·m]: ``M̄_aa v + h̄_a`` at the motor joint, 0 at the
        passive one. With them the forward dynamics give ``q̈_a = accel``.

    Raises
    ------
    ValueError
        If ``active`` is not 0 or 1.
    """
    if active not in (0, 1):
        raise ValueError(f"active must be 0 (shoulder) or 1 (elbow), got {active!r}")
    x = np.atleast_2d(np.asarray(state, dtype=np.float64))
    q, dq = x[:, :2], x[:, 2:]
    m = mass_matrix(params, q)
    h = inverse_dynamics(params, q, dq, np.zeros_like(q))
    a, p = active, 1 - active
    ratio = m[:, a, p] / m[:, p, p]
    tau = np.zeros_like(q)
    tau[:, a] = (m[:, a, a] - ratio * m[:, p, a]) * np.asarray(accel) + h[:, a] - ratio * h[:, p]
    return tau


class PFLSwingupController(Controller):
    """Energy pumping through collocated PFL of the one motor, and an LQR catch at the top.

    The shared law of :class:`AcrobotSwingupController` and
    :class:`PendubotSwingupController` (module notes); a subclass fixes the
    actuation, the motor joint's upright pose and the default gains.

    Parameters
    ----------
    task, params, dt, max_torque, actuation
        See :class:`~twolink_gym.controllers.base.Controller`; ``params`` is
        the model (PFL, energy and the LQR's linearisation).
    kp, kd : float
        PD gains of the motor joint's commanded acceleration [1/s²], [1/s], >= 0.
    pump : float
        ``ka``, the energy pump's largest commanded acceleration [rad/s²], > 0.
    pump_gain : float
        ``ke``, the pump's slope [s/(J·rad)] (``tanh(ke (E* - E) q̇_a)``), > 0.
    catch_level : float
        The LQR takes over where ``dxᵀ P dx < catch_level``, > 0.
    release_level : float
        A caught arm is handed back to the swing-up law where
        ``dxᵀ P dx > release_level`` (>= ``catch_level``).
    catch_horizon : float
        Look-ahead of the catch [s], >= 0 (0: off): a state with
        ``catch_level <= dxᵀ P dx <= release_level`` is also caught if the LQR,
        simulated on the model for this long, brings it below ``catch_level``
        (module notes).
    brake_level : float
        Excess energy ``E - E*`` [J] above which a row brakes (module notes),
        > 0; ``inf`` (default): never.
    brake_exit : float
        Excess energy [J] below which a braking row returns to the swing-up
        law, ``<= brake_level`` (default: ``brake_level / 2``).
    brake_gain : float
        Damping of the braking law [N·m·s/rad], ``τ_a = -brake_gain · q̇_a``
        before saturation, > 0 (default 1).
    Q, R : array_like, optional
        The catch LQR's weights (default: the subclass's ``default_weights``,
        else those of :class:`~twolink_gym.controllers.lqr.LQRController`).

    Attributes
    ----------
    design : LQRDesign
        The catch LQR (one input).
    target_energy : float
        ``E*``, the energy of the upright at rest [J].
    active : int
        The motor joint (0 shoulder, 1 elbow).

    Raises
    ------
    ValueError
        Naming the argument: a gain that is negative, zero where it must be
        positive, or not finite; a release level below the catch level; an
        actuation the controller cannot drive.
    """

    task_types = (SwingupTask,)
    #: The motor joint's angle in the upright [rad].
    motor_target: ClassVar[float]
    default_gains: ClassVar[dict[str, float]]
    #: The catch LQR's default ``(Q, R)``; ``None``: the balance controller's.
    default_weights: ClassVar[tuple[tuple[float, ...], tuple[float, ...]] | None] = None

    def __init__(
        self,
        task: Task | str = "swingup",
        params: ArmParams | Mapping[str, Any] | None = None,
        dt: float = 0.02,
        max_torque: ArrayLike | None = None,
        actuation: str | None = None,
        *,
        kp: float | None = None,
        kd: float | None = None,
        pump: float | None = None,
        pump_gain: float | None = None,
        catch_level: float | None = None,
        release_level: float | None = None,
        catch_horizon: float | None = None,
        brake_level: float = math.inf,
        brake_exit: float | None = None,
        brake_gain: float = 1.0,
        Q: ArrayLike | None = None,
        R: ArrayLike | None = None,
    ) -> None:
        super().__init__(task, params, dt, max_torque, actuation or self.actuations[0])
        given = {
            "kp": kp,
            "kd": kd,
            "pump": pump,
            "pump_gain": pump_gain,
            "catch_level": catch_level,
            "release_level": release_level,
            "catch_horizon": catch_horizon,
        }
        gains = {k: (self.default_gains[k] if v is None else v) for k, v in given.items()}
        self.kp = _non_negative(gains["kp"], "kp")
        self.kd = _non_negative(gains["kd"], "kd")
        self.pump = positive_number(gains["pump"], "pump")
        self.pump_gain = positive_number(gains["pump_gain"], "pump_gain")
        self.catch_level = positive_number(gains["catch_level"], "catch_level")
        self.release_level = positive_number(gains["release_level"], "release_level")
        self.catch_horizon = _non_negative(gains["catch_horizon"], "catch_horizon")
        if self.release_level < self.catch_level:
            raise ValueError(
                f"release_level must be >= catch_level ({self.catch_level}), "
                f"got {self.release_level}"
            )
        self.brake_level = _positive_or_inf(brake_level, "brake_level")
        self.brake_exit = (
            self.brake_level / 2 if brake_exit is None else _non_negative(brake_exit, "brake_exit")
        )
        if self.brake_exit > self.brake_level:
            raise ValueError(
                f"brake_exit must be <= brake_level ({self.brake_level}), got {brake_exit!r}"
            )
        self.brake_gain = positive_number(brake_gain, "brake_gain")
        (self.active,) = ACTUATIONS[self.actuation]
        if self.default_weights is not None:
            Q = self.default_weights[0] if Q is None else Q
            R = self.default_weights[1] if R is None else R
        self.design = design_upright_lqr(
            self.params, self.dt, self.max_torque, self.actuated, Q=Q, R=R
        )
        self.target_energy = float(potential_energy(self.params, UPRIGHT[:2]))
        self._memory: Array | None = None

    def in_catch_region(self, state: ArrayLike) -> NDArray[np.bool_]:
        """Whether the LQR acts at ``state`` ``(n, 4)``: ``dxᵀ P dx < catch_level``, ``(n,)``."""
        return np.asarray(self.design.cost_to_go(state) < self.catch_level)

    def commanded_acceleration(self, state: ArrayLike) -> Array:
        """The swing-up law's acceleration of the motor joint [rad/s²], ``(n,)``."""
        x = np.atleast_2d(np.asarray(state, dtype=np.float64))
        q_a, dq_a = x[:, self.active], x[:, 2 + self.active]
        missing = -self.excess_energy(x)
        return (
            self.kp * wrap_angle(self.motor_target - q_a)
            - self.kd * dq_a
            + self.pump * np.tanh(self.pump_gain * missing * dq_a)
        )

    def swing_torque(self, state: ArrayLike) -> Array:
        """The swing-up law's torques [N·m] (before saturation; 0 at the passive joint), ``(n, 2)``."""
        x = np.atleast_2d(np.asarray(state, dtype=np.float64))
        return collocated_pfl_torque(self.params, x, self.commanded_acceleration(x), self.active)

    def excess_energy(self, state: ArrayLike) -> Array:
        """``E - E*`` [J] of states ``(n, 4)``, ``(n,)``."""
        x = np.atleast_2d(np.asarray(state, dtype=np.float64))
        return np.asarray(total_energy(self.params, x) - self.target_energy)

    def braking(self, state: ArrayLike, braking_before: ArrayLike) -> NDArray[np.bool_]:
        """Which rows the braking law drives now (before the catch), ``(n,)``.

        Parameters
        ----------
        state : array_like, shape (n, 4)
            Arm states.
        braking_before : array_like of bool, shape (n,)
            Which rows braked at the previous step.
        """
        excess = self.excess_energy(state)
        before = np.asarray(braking_before, dtype=bool)
        return np.asarray((excess > self.brake_level) | (before & (excess > self.brake_exit)))

    def brake_torque(self, state: ArrayLike) -> Array:
        """The braking law's torques [N·m], ``-brake_gain · q̇_a`` at the motor (0 at the passive joint), ``(n, 2)``."""
        x = np.atleast_2d(np.asarray(state, dtype=np.float64))
        tau = np.zeros((x.shape[0], 2))
        tau[:, self.active] = -self.brake_gain * x[:, 2 + self.active]
        return tau

    def caught(self, state_x: ArrayLike, caught_before: ArrayLike) -> NDArray[np.bool_]:
        """Which rows the LQR drives now, ``(n,)``.

        Parameters
        ----------
        state_x : array_like, shape (n, 4)
            Arm states.
        caught_before : array_like of bool, shape (n,)
            Which rows the LQR drove at the previous step.
        """
        x = np.atleast_2d(np.asarray(state_x, dtype=np.float64))
        cost = self.design.cost_to_go(x)
        catch = np.asarray(
            (np.asarray(caught_before, dtype=bool) & (cost <= self.release_level))
            | (cost < self.catch_level)
        )
        if self.catch_horizon > 0.0:
            ahead = ~catch & (cost <= self.release_level)
            if ahead.any():
                catch[ahead] = self.lqr_arrives(x[ahead])
        return catch

    def lqr_arrives(self, state: ArrayLike) -> NDArray[np.bool_]:
        """Whether the catch LQR brings each state into its level set within ``catch_horizon``.

        The saturated LQR is simulated on the controller's model (module notes).

        Parameters
        ----------
        state : array_like, shape (n, 4)
            Arm states.

        Returns
        -------
        ndarray of bool, shape (n,)
            ``dxᵀ P dx < catch_level`` after ``round(catch_horizon / dt)`` steps.
        """
        y = np.array(np.atleast_2d(state), dtype=np.float64)
        for _ in range(round(self.catch_horizon / self.dt)):
            tau = np.clip(self.design.torque(y), -self.max_torque, self.max_torque)
            y = step(self.params, y, tau, self.dt, DEFAULT_SUBSTEPS)
            np.clip(y[:, 2:], -DEFAULT_MAX_SPEED, DEFAULT_MAX_SPEED, out=y[:, 2:])
        return np.asarray(self.design.cost_to_go(y) < self.catch_level)

    def _previous(self, state: Any, episode_start: NDArray[np.bool_], n: int) -> Array:
        """The modes of the previous step (0 swing-up, 1 caught, 2 braking; 0 at an episode start), ``(n,)``."""
        if state is None and self._memory is not None and self._memory.shape == (n, 1):
            state = self._memory
        if state is None:
            return np.zeros(n)
        flags = np.asarray(state, dtype=np.float64)
        if flags.shape != (n, 1) or not np.all(np.isin(flags, (0.0, 1.0, 2.0))):
            raise ValueError(
                f"state must be the modes of shape ({n}, 1) (0.0, 1.0 or 2.0) returned by "
                f"{type(self).__name__}.predict, got shape {flags.shape}"
            )
        return np.where(episode_start, 0.0, flags[:, 0])

    def _torque(
        self, decoded: DecodedObservation, state: Any, episode_start: NDArray[np.bool_]
    ) -> tuple[Array, Array]:
        x = decoded.state
        before = self._previous(state, episode_start, x.shape[0])
        catch = self.caught(x, before == 1.0)
        tau = self.swing_torque(x)
        brake = np.zeros_like(catch)
        if not math.isinf(self.brake_level):
            brake = self.braking(x, before == 2.0) & ~catch
            if brake.any():
                tau[brake] = self.brake_torque(x[brake])
        if catch.any():
            tau[catch] = self.design.torque(x[catch])
        flags = (catch.astype(np.float64) + 2.0 * brake)[:, None]
        self._memory = flags.copy()
        return tau, flags

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(actuation={self.actuation!r}, kp={self.kp}, kd={self.kd}, "
            f"pump={self.pump}, pump_gain={self.pump_gain}, catch_level={self.catch_level}, "
            f"release_level={self.release_level}, catch_horizon={self.catch_horizon}, "
            f"brake_level={self.brake_level}, brake_exit={self.brake_exit}, brake_gain={self.brake_gain}, "
            f"max_torque={self.max_torque.tolist()})"
        )


def _non_negative(value: Any, name: str) -> float:
    """``value`` as a float if it is a finite number >= 0, else a ValueError naming ``name``."""
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}") from exc
    if isinstance(value, bool) or not math.isfinite(number) or number < 0.0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return number


def _positive_or_inf(value: Any, name: str) -> float:
    """``value`` as a float if it is a number > 0 (``inf`` allowed), else a ValueError naming ``name``."""
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number > 0 (inf: off), got {value!r}") from exc
    if isinstance(value, bool) or math.isnan(number) or number <= 0.0:
        raise ValueError(f"{name} must be a number > 0 (inf: off), got {value!r}")
    return number


class PendubotSwingupController(PFLSwingupController):
    """The pendubot's swing-up (shoulder motor): link 1 held up by PFL, energy pumped, LQR catch.

    The shoulder's commanded acceleration drives link 1 towards the upright
    (``q1* = π/2``) while the pump swings it to and fro in phase with its
    speed until the arm has the upright's energy; link 2, free, is flung
    up and the LQR catches the arm. Default gains ``kp = 15 /s²``,
    ``kd = 15 /s``, ``pump = 80 rad/s²``, ``pump_gain = 0.3 s/(J·rad)``,
    ``catch_level =`` :data:`PENDUBOT_CATCH_LEVEL`, ``release_level =``
    :data:`PENDUBOT_RELEASE_LEVEL` (results: docs/controllers.md).
    See :class:`PFLSwingupController` for the parameters.
    """

    actuations = ("pendubot",)
    motor_target = math.pi / 2
    default_gains: ClassVar[dict[str, float]] = {
        "kp": 15.0,
        "kd": 15.0,
        "pump": 80.0,
        "pump_gain": 0.3,
        "catch_level": PENDUBOT_CATCH_LEVEL,
        "release_level": PENDUBOT_RELEASE_LEVEL,
        "catch_horizon": 0.0,
    }


class AcrobotSwingupController(PFLSwingupController):
    """The acrobot's swing-up (elbow motor): the arm kept near straight by PFL, energy pumped, LQR catch.

    The elbow's commanded acceleration drives the arm towards straight
    (``q2* = 0``) while the pump bends it in phase with its speed until the
    arm has the upright's energy. Default gains ``kp = 39 /s²``,
    ``kd = 3.9 /s``, ``pump = 300 rad/s²``, ``pump_gain = 0.073 s/(J·rad)``;
    the catch LQR has its own weights (:data:`ACROBOT_CATCH_Q`,
    :data:`ACROBOT_CATCH_R`), ``catch_level =`` :data:`ACROBOT_CATCH_LEVEL`,
    ``release_level =`` :data:`ACROBOT_RELEASE_LEVEL` and a look-ahead of
    :data:`ACROBOT_CATCH_HORIZON` (``catch_horizon``): its level set is too
    thin to catch most passes near the upright. It swings up 98 % of the
    evaluation episodes (docs/controllers.md). See
    :class:`PFLSwingupController` for the parameters.
    """

    actuations = ("acrobot",)
    motor_target = 0.0
    default_gains: ClassVar[dict[str, float]] = {
        "kp": 39.0,
        "kd": 3.9,
        "pump": 300.0,
        "pump_gain": 0.073,
        "catch_level": ACROBOT_CATCH_LEVEL,
        "release_level": ACROBOT_RELEASE_LEVEL,
        "catch_horizon": ACROBOT_CATCH_HORIZON,
    }
    default_weights = (ACROBOT_CATCH_Q, ACROBOT_CATCH_R)
