"""RealAIGym's simulation protocol, run on our environment: any policy, exactly their set-up.

The protocol of the simulation boards: the arm of :func:`~twolink_gym.realaigym.arm.arm`,
classic RK4 at ``dt = 2 ms`` for ``T = 10 s`` (5000 steps) from rest hanging
straight down (``(0, 0, 0, 0)`` in RealAIGym's angles), torque limits (0, 6) N·m
for the acrobot and (6, 0) N·m for the pendubot. Each 2 ms step:

1. *measure*: the true state, or (robustness) the true state ``delay`` steps
   earlier (the start state until that history exists), with Gaussian noise of
   std ``velocity_noise`` on both velocities;
2. the policy acts on the measurement, as it acts in our env: it sees the
   observation our swing-up env would give for the measured state
   (:meth:`~twolink_gym.simulation.Simulation.observe`, float32 encoding) and
   returns a normalised action, scaled by its own env's ``max_torque``. A
   policy with ``decision_steps = m > 1`` is asked every ``m`` steps and its
   command is held in between;
3. the *applied* torque: the responsiveness filter
   ``u = u_prev + k (u_cmd - u_prev)`` (``u_prev`` the last applied torque, 0 at
   the start; skipped at ``k = 1``), Gaussian noise of std ``torque_noise`` on
   the motor joint, then clipping to the board's limits (the passive joint gets
   0);
4. torque pulses (robustness), added after clipping to the *motor* joint's
   torque only: RealAIGym's plant multiplies the torque by its actuation matrix
   (``B = diag(0, 1)`` for the acrobot, ``diag(1, 0)`` for the pendubot), which
   drops the pulses drawn for the passive joint. Step ``k`` takes the profile's
   sample ``int(t_k / dt)`` (``t_k`` accumulated by float addition), which is
   sample ``k - 1`` for most steps from ``k = 1007`` on;
5. one RK4 step of our vector env (:class:`~twolink_gym.vector_env.TwoLinkVectorEnv`,
   one sub-step, zero-order hold) with that torque; ``t += dt`` by float addition.

Recorded (``record=True``): row ``k`` = ``(t_k, x_k, u_k)`` with ``x_k`` the
true state at ``t_k`` in RealAIGym's angles and ``u_k`` the torque acting on
``[t_k, t_k + dt)`` — the layout of their v2 ``sim_swingup.csv`` files (5000
rows, ``t = 0 … 9.998``; the final state at ``t = 10`` s is returned apart).

The world env runs the full arm with ``max_torque = 64`` N·m per joint, so an
applied torque ``u`` is passed as the action ``u / 64`` and multiplied back
exactly (64 is a power of two); the board's limits are applied in step 3. Its
speed limit is set far above anything the arm reaches (:data:`WORLD_MAX_SPEED`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym.codec import ACTUATIONS
from twolink_gym.params import ArmParams
from twolink_gym.realaigym.arm import TORQUE_LIMITS, arm, from_realaigym_state, to_realaigym_state
from twolink_gym.realaigym.observer import VelocityObserver
from twolink_gym.realaigym.scoring import Trajectory
from twolink_gym.simulation import Simulation
from twolink_gym.tasks import SwingupTask

__all__ = [
    "DT",
    "START",
    "STEPS",
    "SWINGUP_TASK_OPTIONS",
    "WORLD_MAX_SPEED",
    "WORLD_MAX_TORQUE",
    "Conditions",
    "PolicyRunner",
    "Runs",
    "check_robot",
    "decision_steps",
    "final_state_success",
    "make_policy_env",
    "perturbation_profile",
    "run",
]

#: Step of the integrator and of the controller [s].
DT = 0.002
#: Steps of one run (10 s).
STEPS = 5000
#: The start state ``(q1, q2, q̇1, q̇2)`` in RealAIGym's angles: hanging at rest.
START = (0.0, 0.0, 0.0, 0.0)
#: Torque scale of the world env [N·m]: a power of two, so ``u / 64 * 64 == u`` exactly.
WORLD_MAX_TORQUE = 64.0
#: Speed limit of the world env [rad/s]: never reached (RealAIGym has none).
WORLD_MAX_SPEED = 1.0e6
#: The swing-up task without start noise (the start is set by ``reset(options=...)``).
SWINGUP_TASK_OPTIONS = {"init_angle_noise": 0.0, "init_speed_noise": 0.0}
#: The final-state box of the robustness boards (v2): ``|q1 - π|``, ``|q2|``, ``|q̇1|``, ``|q̇2|``.
SUCCESS_BOX = (0.35, 0.35, 1.0, 1.0)


def check_robot(robot: str) -> str:
    """``robot`` if it is ``"acrobot"`` or ``"pendubot"``, else a ValueError naming the argument."""
    if robot not in TORQUE_LIMITS:
        raise ValueError(f"robot must be one of {sorted(TORQUE_LIMITS)}, got {robot!r}")
    return robot


def decision_steps(dt: float) -> int:
    """Steps of :data:`DT` in one decision of a policy asked every ``dt`` seconds.

    Parameters
    ----------
    dt : float
        The policy's decision period [s]; a positive multiple of :data:`DT`
        (to within 1e-9 of a step).

    Returns
    -------
    int
        ``dt / DT``, the steps the command is held for.

    Raises
    ------
    ValueError
        If ``dt`` is not a positive multiple of :data:`DT`.
    """
    steps = dt / DT
    if not (steps >= 0.5 and abs(steps - round(steps)) <= 1e-9):
        raise ValueError(f"dt must be a positive multiple of {DT} s, got {dt!r}")
    return round(steps)


def make_policy_env(
    robot: str,
    dt: float = DT,
    max_torque: float | Sequence[float] = 6.0,
    params: ArmParams | None = None,
    num_envs: int = 1,
) -> Any:
    """The env a policy for the board acts in: our swing-up env on the RealAIGym arm.

    Parameters
    ----------
    robot : {"acrobot", "pendubot"}
        The actuation.
    dt : float
        The policy's decision period [s] (a positive multiple of :data:`DT`).
    max_torque : float or pair of float
        Torque at action ±1 [N·m] (the board's limit, 6, by default).
    params : ArmParams, optional
        The arm (default: RealAIGym's C.1/1.1).
    num_envs : int
        Copies (controllers built from it act on batches of any size).

    Returns
    -------
    TwoLinkVectorEnv
        One RK4 sub-step per step, no start noise, no speed limit in practice.
    """
    from twolink_gym.vector_env import TwoLinkVectorEnv

    return TwoLinkVectorEnv(
        num_envs,
        task="swingup",
        params=arm() if params is None else params,
        dt=dt,
        substeps=decision_steps(dt),
        max_torque=max_torque,
        max_speed=WORLD_MAX_SPEED,
        task_options=SWINGUP_TASK_OPTIONS,
        actuation=check_robot(robot),
        max_episode_steps=-1,
    )


@dataclasses.dataclass
class PolicyRunner:
    """A policy with SB3's ``predict`` and the env it acts in.

    Attributes
    ----------
    predictor : object
        ``predict(obs, state, episode_start, deterministic) -> (action, state)``.
    sim : Simulation
        Its env's simulation: the observation encoding (:meth:`Simulation.observe`),
        the actuation and the ``max_torque`` that scales its actions.
    decision_steps : int
        2 ms steps between its decisions (its command is held in between).
    observer : VelocityObserver, optional
        Estimates the state from each measurement before the policy sees it
        (:mod:`twolink_gym.realaigym.observer`); restarted at an episode start.
    """

    predictor: Any
    sim: Simulation
    decision_steps: int = 1
    observer: VelocityObserver | None = None

    def __post_init__(self) -> None:
        if self.sim.observation_kind != "state":
            raise ValueError(
                "the policy's env must observe the full state (observation='state'), got "
                f"{self.sim.observation_kind!r}"
            )
        if not isinstance(self.sim.task, SwingupTask):
            raise ValueError(f"the policy's task must be the swing-up, got {self.sim.task.name!r}")
        if int(self.decision_steps) != self.decision_steps or self.decision_steps < 1:
            raise ValueError(f"decision_steps must be an integer >= 1, got {self.decision_steps!r}")

    def command(self, measured: NDArray[np.float64], state: Any, start: bool) -> tuple[Any, Any]:
        """Joint torques ``(n, 2)`` [N·m] for measured states ``(n, 4)`` (our angles)."""
        n = measured.shape[0]
        if self.observer is not None:
            if start:
                self.observer.reset()
            measured = self.observer.estimate(
                measured, self.decision_steps * DT, self.decision_steps
            )
        obs = self.sim.observe(measured, np.zeros((n, 0)))
        starts = np.full(n, start)
        action, state = self.predictor.predict(
            obs, state=state, episode_start=starts, deterministic=True
        )
        a = np.asarray(action, dtype=np.float64).reshape(n, self.sim.action_size)
        torque = self.sim.expand_action(np.clip(a, -1.0, 1.0)) * self.sim.max_torque
        if self.observer is not None:
            self.observer.hold(torque)
        return torque, state


@dataclasses.dataclass(frozen=True)
class Conditions:
    """The simulated world of ``n`` runs (RealAIGym's robustness families); defaults: nominal.

    Attributes
    ----------
    params : tuple of ArmParams, optional
        The plant of each run (``None``: the RealAIGym arm for all).
    velocity_noise : ndarray, shape (n,)
        Std of the Gaussian noise on both measured velocities [rad/s].
    torque_noise : ndarray, shape (n,)
        Std of the Gaussian noise on the motor joint's torque [N·m].
    responsiveness : ndarray, shape (n,)
        ``k`` of the filter ``u = u_prev + k (u_cmd - u_prev)``.
    delay : ndarray of int, shape (n,)
        Measurement delay [steps of 2 ms].
    perturbation : ndarray, shape (n, STEPS, 2), optional
        Torque pulses [N·m] per joint at the step times ``k · dt``, added after
        clipping to the motor joint (the passive joint's column has no effect,
        as in RealAIGym's plant; module notes, step 4).
    """

    params: tuple[ArmParams, ...] | None = None
    velocity_noise: NDArray[np.float64] = dataclasses.field(default_factory=lambda: np.zeros(1))
    torque_noise: NDArray[np.float64] = dataclasses.field(default_factory=lambda: np.zeros(1))
    responsiveness: NDArray[np.float64] = dataclasses.field(default_factory=lambda: np.ones(1))
    delay: NDArray[np.int64] = dataclasses.field(default_factory=lambda: np.zeros(1, np.int64))
    perturbation: NDArray[np.float64] | None = None

    @classmethod
    def nominal(cls, n: int = 1) -> Conditions:
        """``n`` runs of the performance board's world."""
        return cls.create(n)

    @classmethod
    def create(
        cls,
        n: int,
        params: Sequence[ArmParams] | None = None,
        velocity_noise: ArrayLike = 0.0,
        torque_noise: ArrayLike = 0.0,
        responsiveness: ArrayLike = 1.0,
        delay: ArrayLike = 0,
        perturbation: ArrayLike | None = None,
    ) -> Conditions:
        """``n`` runs; each argument a value for all runs or one per run.

        Raises
        ------
        ValueError
            Naming the argument: a wrong length, a negative std or delay, a
            non-positive ``k``, a non-integer delay.
        """

        def per_run(value: ArrayLike, name: str) -> NDArray[np.float64]:
            arr = np.asarray(value, dtype=np.float64)
            if arr.ndim > 1 or (arr.ndim == 1 and arr.shape[0] != n):
                raise ValueError(f"{name} must be a number or {n} numbers, got shape {arr.shape}")
            arr = np.broadcast_to(arr, (n,)).copy()
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{name} must be finite, got {arr.tolist()}")
            return arr

        vn, tn = per_run(velocity_noise, "velocity_noise"), per_run(torque_noise, "torque_noise")
        k, d = per_run(responsiveness, "responsiveness"), per_run(delay, "delay")
        if np.any(vn < 0) or np.any(tn < 0):
            raise ValueError("velocity_noise and torque_noise must be >= 0")
        if np.any(k <= 0):
            raise ValueError(f"responsiveness must be > 0, got {k.tolist()}")
        if np.any(d < 0) or np.any(d != np.round(d)):
            raise ValueError(f"delay must be whole steps >= 0, got {d.tolist()}")
        arms = None
        if params is not None:
            arms = tuple(params)
            if len(arms) != n:
                raise ValueError(f"params must have one arm per run ({n}), got {len(arms)}")
        pulses = None
        if perturbation is not None:
            pulses = np.asarray(perturbation, dtype=np.float64)
            if pulses.shape != (n, STEPS, 2):
                raise ValueError(
                    f"perturbation must have shape ({n}, {STEPS}, 2), got {pulses.shape}"
                )
        return cls(arms, vn, tn, k, d.astype(np.int64), pulses)

    @property
    def n(self) -> int:
        """Number of runs."""
        return int(self.velocity_noise.shape[0])


@dataclasses.dataclass(frozen=True)
class Runs:
    """The outcome of :func:`run` (states in RealAIGym's angles).

    Attributes
    ----------
    t : ndarray, shape (STEPS,)
        Sample times [s] (``0, 0.002, … 9.998``, accumulated by addition).
    x : ndarray, shape (n, STEPS, 4), or None
        True states at ``t`` (``record=True``).
    u : ndarray, shape (n, STEPS, 2), or None
        Torques acting on ``[t_k, t_k + dt)`` [N·m] (``record=True``).
    final : ndarray, shape (n, 4)
        True states at ``t = 10`` s.
    """

    t: NDArray[np.float64]
    x: NDArray[np.float64] | None
    u: NDArray[np.float64] | None
    final: NDArray[np.float64]

    def trajectory(self, i: int = 0) -> Trajectory:
        """Run ``i`` as a :class:`~twolink_gym.realaigym.scoring.Trajectory` (``record=True`` only)."""
        if self.x is None or self.u is None:
            raise ValueError("the runs were not recorded: run(..., record=True)")
        return Trajectory(t=self.t.copy(), x=self.x[i].copy(), u=self.u[i].copy())


def final_state_success(final: ArrayLike) -> NDArray[np.bool_]:
    """The robustness boards' success of runs ending in ``final`` ``(n, 4)`` (RealAIGym's angles).

    ``q1 mod 2π`` and ``q2`` wrapped to ``[-π, π)``; success iff ``|q1 - π| < 0.35``,
    ``|q2| < 0.35``, ``|q̇1| < 1`` and ``|q̇2| < 1`` (all strict).
    """
    x = np.atleast_2d(np.asarray(final, dtype=np.float64))
    q1 = np.mod(x[:, 0], 2 * math.pi)
    q2 = np.mod(x[:, 1] + math.pi, 2 * math.pi) - math.pi
    box = SUCCESS_BOX
    return np.asarray(
        (np.abs(q1 - math.pi) < box[0])
        & (np.abs(q2) < box[1])
        & (np.abs(x[:, 2]) < box[2])
        & (np.abs(x[:, 3]) < box[3])
    )


def perturbation_profile(rng: np.random.Generator) -> NDArray[np.float64]:
    """One random profile of torque pulses ``(STEPS, 2)`` [N·m] at the step times.

    Six pulses ``A exp(-(t - μ)² / (2 σ²))``, three on each joint: centres drawn
    in sequence (``μ1 = 1 + 0.5 U``, ``μ_{j+1} = μ_j + 1 + 0.5 U``, ``U ~ U(0, 1)``)
    then shuffled over the joints; ``σ ~ U(0.05, 0.1)`` s; ``|A| ~ U(0.5, 5)`` N·m
    with a random sign. :func:`run` applies only the motor joint's column.
    """
    centres = np.empty(6)
    mu = 0.0
    for j in range(6):
        mu = (1.0 if j == 0 else mu + 1.0) + 0.5 * rng.uniform()
        centres[j] = mu
    rng.shuffle(centres)
    widths = rng.uniform(0.05, 0.1, size=6)
    amplitudes = rng.uniform(0.5, 5.0, size=6) * rng.choice((-1.0, 1.0), size=6)
    t = np.arange(STEPS) * DT
    out = np.zeros((STEPS, 2))
    for j in range(6):
        out[:, j // 3] += amplitudes[j] * np.exp(-((t - centres[j]) ** 2) / (2 * widths[j] ** 2))
    return out


def run(
    policy: PolicyRunner,
    robot: str,
    conditions: Conditions | None = None,
    *,
    rng: np.random.Generator | None = None,
    record: bool = False,
    progress: Callable[[int], None] | None = None,
) -> Runs:
    """Run ``policy`` through RealAIGym's protocol (module notes) under ``conditions``.

    Parameters
    ----------
    policy : PolicyRunner
    robot : {"acrobot", "pendubot"}
        Fixes the torque limits (:data:`~twolink_gym.realaigym.arm.TORQUE_LIMITS`).
    conditions : Conditions, optional
        The world of each run (default: one nominal run).
    rng : numpy.random.Generator, optional
        For the velocity and torque noise (default: a fresh unseeded one).
    record : bool
        Keep every run's states and torques (``n × 5000 × 6`` floats).
    progress : callable, optional
        Called with the number of steps done after each step.

    Returns
    -------
    Runs
    """
    from twolink_gym.vector_env import TwoLinkVectorEnv

    limits = np.asarray(TORQUE_LIMITS[check_robot(robot)])
    if policy.sim.actuation != robot:
        raise ValueError(
            f"the policy drives actuation {policy.sim.actuation!r}, the board robot {robot!r}"
        )
    world = Conditions.nominal() if conditions is None else conditions
    rng = np.random.default_rng() if rng is None else rng
    n = world.n
    (active,) = ACTUATIONS[robot]
    env = TwoLinkVectorEnv(
        n,
        task="swingup",
        params=list(world.params) if world.params is not None else arm(),
        dt=DT,
        substeps=1,
        max_torque=WORLD_MAX_TORQUE,
        max_speed=WORLD_MAX_SPEED,
        task_options=SWINGUP_TASK_OPTIONS,
        actuation="full",
        max_episode_steps=-1,
    )
    start = from_realaigym_state(np.broadcast_to(np.asarray(START), (n, 4)))
    env.reset(options={"state": start})
    max_delay = int(world.delay.max())
    history = np.broadcast_to(start, (max_delay + 1, n, 4)).copy()  # history[j]: state j steps ago
    filtered = not np.all(world.responsiveness == 1.0)
    noisy_torque = bool(np.any(world.torque_noise > 0))
    noisy_speed = bool(np.any(world.velocity_noise > 0))
    rows = np.arange(n)
    times = np.empty(STEPS)
    xs = np.empty((n, STEPS, 4)) if record else None
    us = np.empty((n, STEPS, 2)) if record else None
    applied = np.zeros((n, 2))
    command = np.zeros((n, 2))
    state: Any = None
    t = 0.0
    x = env.state
    for k in range(STEPS):
        times[k] = t
        if max_delay:
            history[1:] = history[:-1].copy()
            history[0] = x
            measured = history[world.delay, rows].copy()
        else:
            measured = x.copy()
        if noisy_speed:
            measured[:, 2:] += world.velocity_noise[:, None] * rng.standard_normal((n, 2))
        if k % policy.decision_steps == 0:
            command, state = policy.command(measured, state, k == 0)
        u = command.copy()
        if filtered:
            u = np.where(
                (world.responsiveness == 1.0)[:, None],
                u,
                applied + world.responsiveness[:, None] * (u - applied),
            )
        if noisy_torque:
            u[:, active] += world.torque_noise * rng.standard_normal(n)
        u = np.clip(u, -limits, limits)
        u[:, 1 - active] = 0.0
        applied = u
        if world.perturbation is not None:
            u = u.copy()
            u[:, active] += world.perturbation[:, int(t / DT), active]
        if record:
            assert xs is not None and us is not None
            xs[:, k] = x
            us[:, k] = u
        env.step(u / WORLD_MAX_TORQUE)
        x = env.state
        t += DT
        if progress is not None:
            progress(k + 1)
    env.close()
    if record:
        assert xs is not None
        xs = to_realaigym_state(xs)
    return Runs(t=times, x=xs, u=us, final=to_realaigym_state(x))
