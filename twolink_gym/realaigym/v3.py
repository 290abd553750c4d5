"""RealAIGym v3 (the ICRA 2025 AI Olympics' simulation stage): 60 s with 15 pushes, scored by uptime.

The protocol, as the published runs were made:

plant
    The arm of :func:`~twolink_gym.realaigym.arm.arm` with **both** joints
    driven and clipped to ±6 N·m (:data:`TORQUE_LIMIT`): nothing but the
    submitted policy keeps the passive joint at zero torque.
integration
    Classic RK4 (:func:`twolink_gym.integrators.rk4`, our equations of motion),
    ``dt = 2 ms``, torque held over the step, 30,000 steps (:data:`STEPS`) from
    rest hanging down; the time accumulates by float addition, ``t_{k+1} =
    fl(t_k + 0.002)``.
draws
    ``numpy.random.RandomState(seed)`` with seed 333 for the acrobot and 777
    for the pendubot (:data:`SEEDS`): first the 15 push targets,
    ``uniform(0, 2π, (15, 4)) - π`` (velocity columns then ×4, never used),
    then the push times ``arange(3.75, 60, 3.75) + 2 (rand(15) - 0.5)``
    (:func:`schedule`).
pushes
    At the first step with ``t ≥`` the next push time the policy is set aside
    (and not asked) while a PID on both joints pushes towards the target's
    angles, :class:`ResetSupervisor`: ``e = target - q`` with no angle
    wrapping, ``P = 10 e``, ``I = 0.1 · 0.001 · Σ e`` over every push step of
    the run so far (never cleared), ``D = 1.0 (e_k - e_{k-1}) / 0.001`` (0 for
    the first two push steps of the run; the first step of a later push
    differences against the previous push's last error), clipped to ±6 N·m,
    plus gravity compensation on both joints. A timer adds ``t - t_last`` each
    push step and the policy gets the arm back at the first step with
    ``timer > 0.2`` s: a push lasts 100 or 101 steps.
applied torque
    ``ν_k = ν_{k-1} + 1.0 (u_k - ν_{k-1})`` (``ν_{-1} = 0``; the publisher's
    responsiveness filter at 1, which can differ from ``u_k`` by one rounding),
    then each joint clipped to ±6 N·m.
record
    Row ``k`` = ``(t_k, x_k, ν_k)``, RealAIGym's angles, ``k = 0 … 29999``
    (:func:`~twolink_gym.realaigym.scoring.write_csv` writes their
    ``sim_swingup.csv``); the state at 60 s is not written.
score
    :func:`score_v3`: uptime ``Σ_k (t_k - t_{k-1}) [tip height_k > 0.45 m]``
    (``t_{-1} = 0``), score ``uptime / 60``; #swingups counts rows that are up
    after a row that is not, at least 1 s after the last counted one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym.dynamics import arm_vector, gravity_torque
from twolink_gym.integrators import rk4
from twolink_gym.params import ArmParams
from twolink_gym.realaigym.arm import arm, from_realaigym_state
from twolink_gym.realaigym.protocol import DT, PolicyRunner, check_robot
from twolink_gym.realaigym.scoring import Trajectory, above_line
from twolink_gym.tasks.push import PUSH_GAINS, PUSH_PID_DT, PUSH_TORQUE

__all__ = [
    "LINKS",
    "N_RESETS",
    "PID_DT",
    "PID_GAINS",
    "RESET_LENGTH",
    "SEEDS",
    "STEPS",
    "TORQUE_LIMIT",
    "T_MAX",
    "PushPID",
    "ResetSupervisor",
    "Schedule",
    "V3Run",
    "V3Score",
    "check_pushes_seed",
    "run_v3",
    "schedule",
    "score_v3",
]

#: Seed of the draws of each robot (the published runs'; the leaderboard pages swap them).
SEEDS = {"acrobot": 333, "pendubot": 777}
#: Length of a run [s].
T_MAX = 60.0
#: Steps of a run (3000 animation frames × 10 steps of 2 ms).
STEPS = 30000
#: Pushes per run.
N_RESETS = 15
#: A push ends at the first step at which its timer exceeds this [s].
RESET_LENGTH = 0.2
#: The push PID's ``(Kp, Ki, Kd)`` [N·m/rad, N·m/(rad·s), N·m·s/rad].
PID_GAINS = PUSH_GAINS
#: The push PID's own time step [s] (its integral and derivative use it; the step is 2 ms).
PID_DT = PUSH_PID_DT
#: Torque limit of each joint in the simulated plant [N·m].
TORQUE_LIMIT = PUSH_TORQUE
#: Link lengths ``(l1, l2)`` [m] of the height test.
LINKS = (0.2, 0.3)


@dataclasses.dataclass(frozen=True)
class Schedule:
    """The pushes of one run.

    Attributes
    ----------
    targets : ndarray, shape (N_RESETS, 4)
        Push targets ``(q1, q2, q̇1, q̇2)`` in RealAIGym's angles [rad, rad/s];
        only the angles are used.
    times : ndarray, shape (N_RESETS,)
        Push times [s], increasing.
    """

    targets: NDArray[np.float64]
    times: NDArray[np.float64]


def check_pushes_seed(seed: object) -> int:
    """``seed`` as a seed of the pushes: an integer in ``[0, 2**32)`` (``RandomState``'s seeds).

    Raises
    ------
    ValueError
        ``seed`` is not such an integer (a bool is not).
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**32:
        raise ValueError(f"seed must be None or an integer in [0, 2**32), got {seed!r}")
    return int(seed)


def schedule(robot: str, seed: int | None = None) -> Schedule:
    """The pushes of ``robot``: the ICRA 2025 ones, or the same draws from another seed.

    Parameters
    ----------
    robot : {"acrobot", "pendubot"}
    seed : int, optional
        ``numpy.random.RandomState``'s seed, in ``[0, 2**32)``. None (the default) is the
        board's, :data:`SEEDS` of ``robot`` (module notes, *draws*); another seed draws
        other targets and times the same way: held-out runs, for choosing among models
        without looking at the board.

    Raises
    ------
    ValueError
        ``seed`` not an integer in ``[0, 2**32)``.
    """
    robot = check_robot(robot)
    rng = np.random.RandomState(SEEDS[robot] if seed is None else check_pushes_seed(seed))
    targets = rng.uniform(0.0, 2 * math.pi, (N_RESETS, 4))
    targets -= math.pi
    targets[:, 2:] *= 4.0
    gap = T_MAX / float(N_RESETS + 1)
    times = np.arange(gap, T_MAX, gap) + 2.0 * (rng.rand(N_RESETS) - 0.5)
    return Schedule(targets=targets, times=times)


class ResetSupervisor:
    """The v3 push supervisor: decides each step whether the policy or the push PID drives.

    Parameters
    ----------
    pushes : Schedule
    params : ArmParams, optional
        The arm whose gravity the push compensates (default: RealAIGym's).
    """

    def __init__(self, pushes: Schedule, params: ArmParams | None = None) -> None:
        self.pushes = pushes
        self.params = arm() if params is None else params
        self._times = np.append(pushes.times, math.inf)
        self.counter = 0
        self.resetting = False
        self.timer = 0.0
        self.last_t = 0.0
        # one PID for the whole run: its error history (integral, derivative) is never cleared
        self._pid = PushPID(np.zeros(2), self.params)

    def in_push(self, t: float) -> bool:
        """Advance the supervisor's clock to ``t`` [s]; True if the push drives this step.

        Call once per step, in order.
        """
        if t >= self._times[self.counter] and not self.resetting:
            self.resetting = True
            self._pid.target = self.pushes.targets[self.counter, :2].copy()
            self.counter += 1
            self.timer = 0.0
        if self.timer > RESET_LENGTH and self.resetting:
            self.resetting = False
        if self.resetting:
            self.timer += t - self.last_t
        self.last_t = t
        return self.resetting

    def push_torque(self, x: ArrayLike) -> NDArray[np.float64]:
        """The push's torque ``(2,)`` [N·m] at state ``x`` (RealAIGym's angles); one call per push step.

        The PID (clipped to ±6 N·m) plus the torque that holds the arm against gravity.
        """
        return self._pid.torque(x)


class PushPID:
    """The push's PID towards ``target`` plus gravity compensation, for one arm or a batch.

    Parameters
    ----------
    target : array_like, shape (..., 2)
        Joint angles to push towards [rad], RealAIGym's angles; settable between calls.
    params : ArmParams
        The arm whose gravity the push compensates.

    Notes
    -----
    Each :meth:`torque` call is one push step and appends its error to the history
    that the integral sums and the derivative differences; the history is kept for
    the object's life (the supervisor keeps one for the whole run, never cleared).
    """

    def __init__(self, target: ArrayLike, params: ArmParams) -> None:
        self.target = np.asarray(target, dtype=np.float64)
        self.params = params
        self._errors: list[NDArray[np.float64]] = []

    def torque(self, x: ArrayLike) -> NDArray[np.float64]:
        """The torque ``(..., 2)`` [N·m] at states ``x`` ``(..., 4)`` (RealAIGym's angles).

        ``clip(Kp e + Ki Σe PID_DT + Kd Δe / PID_DT, ±6) + g(q)`` with ``e = target - q``
        (no angle wrapping); the derivative is 0 for the first two steps of the history.
        """
        state = np.asarray(x, dtype=np.float64)
        kp, ki, kd = PID_GAINS
        e = self.target - state[..., :2]
        self._errors.append(e)
        integral = ki * np.sum(self._errors, axis=0) * PID_DT
        if len(self._errors) > 2:
            derivative = kd * (self._errors[-1] - self._errors[-2]) / PID_DT
        else:
            derivative = np.zeros_like(e)
        pid = np.clip(kp * e + integral + derivative, -TORQUE_LIMIT, TORQUE_LIMIT)
        q_ours = from_realaigym_state(state)[..., :2]
        return pid + gravity_torque(self.params, q_ours)


@dataclasses.dataclass(frozen=True)
class V3Run:
    """The outcome of :func:`run_v3`.

    Attributes
    ----------
    trajectory : Trajectory
        The 30,000 recorded rows (RealAIGym's angles).
    final : ndarray, shape (4,)
        The state at the end (``t`` ≈ 60 s), RealAIGym's angles.
    pushed : ndarray of bool, shape (STEPS,)
        Whether the push drove each step.
    """

    trajectory: Trajectory
    final: NDArray[np.float64]
    pushed: NDArray[np.bool_]


def _policy_function(
    policy: PolicyRunner | Callable[[NDArray[np.float64], float], ArrayLike] | None,
) -> Callable[[NDArray[np.float64], float], NDArray[np.float64]]:
    """``f(x_ours (4,), t) -> torque (2,)`` for a runner, a plain function or None (no torque)."""
    if policy is None:
        zero = np.zeros(2)
        return lambda x, t: zero
    if not isinstance(policy, PolicyRunner):
        fn = policy
        return lambda x, t: np.asarray(fn(x, t), dtype=np.float64).reshape(2)
    runner = policy
    memory: dict[str, Any] = {"calls": 0, "state": None, "command": np.zeros(2), "decided": 0.0}
    period = runner.decision_steps * DT

    def act(x: NDArray[np.float64], t: float) -> NDArray[np.float64]:
        calls = memory["calls"]
        if calls % runner.decision_steps == 0:
            if runner.observer is not None and calls and t - memory["decided"] > 1.5 * period:
                runner.observer.reset()  # a push came between: nothing to predict from
            command, memory["state"] = runner.command(x[None, :], memory["state"], calls == 0)
            memory["command"] = np.asarray(command, dtype=np.float64).reshape(2)
            memory["decided"] = t
        memory["calls"] = calls + 1
        return np.asarray(memory["command"], dtype=np.float64).copy()

    return act


def run_v3(
    policy: PolicyRunner | Callable[[NDArray[np.float64], float], ArrayLike] | None,
    robot: str,
    *,
    steps: int = STEPS,
    params: ArmParams | None = None,
    progress: Callable[[int], None] | None = None,
    pushes_seed: int | None = None,
) -> V3Run:
    """Run ``policy`` through the v3 protocol of ``robot`` (module notes).

    Parameters
    ----------
    policy : PolicyRunner, callable or None
        A :class:`~twolink_gym.realaigym.protocol.PolicyRunner` (asked with the
        true state, every ``decision_steps``-th of its own calls, the command
        held in between; pushes are not its calls, and its observer, if any, restarts
        after each push), a function
        ``f(x, t) -> (τ1, τ2)`` of the state in our angles and the time, or
        None (no torque outside the pushes).
    robot : {"acrobot", "pendubot"}
        The board's seed of the pushes (:data:`SEEDS`), unless ``pushes_seed`` is given.
    steps : int
        Steps to run (:data:`STEPS` for the protocol; fewer for a part of it).
    params : ArmParams, optional
        The plant (default: RealAIGym's C.1/1.1 arm).
    progress : callable, optional
        Called with the number of steps done after each step.
    pushes_seed : int, optional
        Draw the pushes from this seed instead of the board's (:func:`schedule`): a
        held-out run, not the ICRA 2025 board.

    Returns
    -------
    V3Run
    """
    if policy is not None and isinstance(policy, PolicyRunner):
        if policy.sim.actuation != robot:
            raise ValueError(
                f"the policy drives actuation {policy.sim.actuation!r}, the board robot {robot!r}"
            )
    if int(steps) != steps or not 1 <= steps <= STEPS:
        raise ValueError(f"steps must be an integer in [1, {STEPS}], got {steps!r}")
    plant = arm() if params is None else params
    vector = arm_vector(plant)
    supervisor = ResetSupervisor(schedule(robot, pushes_seed), plant)
    act = _policy_function(policy)
    offset = math.pi / 2
    times = np.empty(steps)
    xs = np.empty((steps, 4))
    us = np.empty((steps, 2))
    pushed = np.zeros(steps, dtype=bool)
    q1, q2, dq1, dq2 = -offset, 0.0, 0.0, 0.0  # hanging at rest, our angles
    nu1 = nu2 = 0.0  # the applied torque of the last step
    t = 0.0
    for k in range(steps):
        times[k] = t
        xs[k] = (q1 + offset, q2, dq1, dq2)
        if supervisor.in_push(t):
            u = supervisor.push_torque(xs[k])
            pushed[k] = True
        else:
            u = act(np.array([q1, q2, dq1, dq2]), t)
        nu1 = min(max(nu1 + 1.0 * (float(u[0]) - nu1), -TORQUE_LIMIT), TORQUE_LIMIT)
        nu2 = min(max(nu2 + 1.0 * (float(u[1]) - nu2), -TORQUE_LIMIT), TORQUE_LIMIT)
        us[k] = (nu1, nu2)
        q1, q2, dq1, dq2 = rk4(vector, q1, q2, dq1, dq2, nu1, nu2, DT, 1)
        t += DT
        if progress is not None:
            progress(k + 1)
    final = np.array([q1 + offset, q2, dq1, dq2])
    return V3Run(Trajectory(t=times, x=xs, u=us), final, pushed)


@dataclasses.dataclass(frozen=True)
class V3Score:
    """The v3 score of a trajectory.

    Attributes
    ----------
    n_swingups : int
        Rises above the line at least 1 s after the last counted one (shown, not scored).
    uptime : float
        [s] the time the tip is above ``0.9 (l1 + l2)``.
    score : float
        ``uptime / 60``, in [0, 1].
    """

    n_swingups: int
    uptime: float
    score: float

    def as_dict(self) -> dict[str, float]:
        """The numbers by name."""
        return dataclasses.asdict(self)


def score_v3(trajectory: Trajectory, deadtime: float = 1.0) -> V3Score:
    """RealAIGym's v3 numbers of ``trajectory`` (module notes, *score*).

    Parameters
    ----------
    trajectory : Trajectory
        Rows ``(t_k, x_k, u_k)`` in RealAIGym's angles (a v3 run has 30,000).
    deadtime : float
        [s] a rise counts as a swing-up only this long after the last counted one.
    """
    t, q = trajectory.t, trajectory.x[:, :2]
    up = above_line(q, LINKS)
    weights = np.diff(t, prepend=0.0)
    uptime = float(np.sum(weights[up]))
    rises = 0
    last_time = -deadtime
    before = False
    for k in range(len(t)):
        if up[k] and not before and t[k] - last_time > deadtime:
            rises += 1
            last_time = float(t[k])
        before = bool(up[k])
    return V3Score(n_swingups=rises, uptime=uptime, score=uptime / T_MAX)
