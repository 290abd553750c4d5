"""The RealAIGym v3 protocol in JAX: the twin of :func:`twolink_gym.realaigym.v3.run_v3`.

One pure function, :func:`run`, runs a JAX policy through the v3 protocol (60 s
at 2 ms, 15 pushes by the reset supervisor, RealAIGym's arm with both joints
clipped to ±6 N·m; :mod:`twolink_gym.realaigym.v3` states it in full) as a
``jax.lax.scan`` over the 30,000 steps: jittable, and ``jax.vmap``-able over
policies' parameters and over push schedules, so that many runs (seeds ×
held-out schedules) cost one compiled call. :func:`uptime` is the v3 score's
uptime of its record (:func:`twolink_gym.realaigym.v3.score_v3`).

The step is the compiled run's, in the same order of operations: the push
PID on the steps the supervisor gives it (:func:`pushes` runs the protocol's
own supervisor on the clock; its error history kept as a running sum and last
value, never cleared), the responsiveness filter at 1 and the clip, one
RK4 step of :func:`twolink_gym.jax.dynamics.rk4`, the times those of the
compiled run (accumulated by float64 addition). A policy is asked, as a
:class:`~twolink_gym.realaigym.protocol.PolicyRunner` is, on every
``decision_steps``-th of the steps it drives (pushes are not its steps), its
command held in between. ``tests/test_jax_realaigym_v3.py`` holds the two
runs equal under ``jax_enable_x64``; in float32 (a held-out evaluation
during training) the pushes drive the same steps, and the arm's path differs
by float32 rounding.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, cast

import jax
import jax.numpy as jnp
import numpy as np

from twolink_gym.dynamics import arm_vector, has_coulomb
from twolink_gym.jax.dynamics import gravity_torque, rk4
from twolink_gym.jax.params import arm_of
from twolink_gym.params import ArmParams
from twolink_gym.realaigym import v3 as protocol
from twolink_gym.realaigym.arm import arm as realaigym_arm
from twolink_gym.realaigym.protocol import DT
from twolink_gym.realaigym.scoring import HEIGHT_FRACTION
from twolink_gym.realaigym.v3 import LINKS, PID_DT, PID_GAINS, STEPS, T_MAX, TORQUE_LIMIT

__all__ = [
    "Policy",
    "Pushes",
    "Record",
    "StatefulPolicy",
    "pushes",
    "run",
    "run_with_memory",
    "score",
    "uptime",
]

#: A policy: the state ``(4,)`` in our angles [rad, rad/s] → joint torques ``(2,)`` [N·m].
Policy = Callable[[jax.Array], jax.Array]
#: A policy with a state of its own (a pytree): ``(x, memory) -> (torques (2,), memory)``.
StatefulPolicy = Callable[[jax.Array, Any], tuple[jax.Array, Any]]


class Pushes(NamedTuple):
    """The pushes of one run, step by step (a leading axis stacks several).

    Which steps the push drives depends on the clock and the schedule alone, not on
    the arm: :func:`pushes` takes it from the protocol's own
    :class:`~twolink_gym.realaigym.v3.ResetSupervisor`, in float64.

    Attributes
    ----------
    pushed : jax.Array of bool, shape (..., STEPS)
        Whether the push drives each step.
    targets : jax.Array, shape (..., STEPS, 2)
        The target angles [rad] of the push driving each step (RealAIGym's angles, 0:
        hanging; the last push's on the steps between pushes, where they are unused).
    """

    pushed: jax.Array
    targets: jax.Array


class Record(NamedTuple):
    """What a v3 run records, row ``k`` at the start of step ``k`` (as :class:`~twolink_gym.realaigym.v3.V3Run`).

    Attributes
    ----------
    t : jax.Array, shape (steps,)
        Times [s].
    x : jax.Array, shape (steps, 4)
        States, RealAIGym's angles [rad, rad/s].
    u : jax.Array, shape (steps, 2)
        Applied torques [N·m] of the step.
    pushed : jax.Array of bool, shape (steps,)
        Whether the push drove the step.
    """

    t: jax.Array
    x: jax.Array
    u: jax.Array
    pushed: jax.Array


class _Carry(NamedTuple):
    x: jax.Array  # (4,) our angles
    nu: jax.Array  # (2,) the last applied torque
    error_sum: jax.Array  # (2,) the push PID's errors summed over the run
    error: jax.Array  # (2,) its last error
    n_errors: jax.Array  # its errors so far
    calls: jax.Array  # steps the policy has driven
    command: jax.Array  # (2,) its held command
    memory: Any  # a stateful policy's own state (None for a plain policy)


def pushes(robot: str, seeds: Sequence[int | None] = (None,), dtype: Any = None) -> Pushes:
    """The push schedules of ``robot`` from ``seeds``, stacked: leading axis ``len(seeds)``.

    Parameters
    ----------
    robot : {"acrobot", "pendubot"}
    seeds : sequence of int or None
        ``None`` is the board's schedule; an integer a held-out one
        (:func:`twolink_gym.realaigym.v3.schedule`).
    dtype : optional
        The arrays' float type (default: JAX's default float).
    """
    clock = _clock(STEPS)
    pushed = np.zeros((len(seeds), STEPS), bool)
    targets = np.zeros((len(seeds), STEPS, 2))
    for i, seed in enumerate(seeds):
        supervisor = protocol.ResetSupervisor(protocol.schedule(robot, seed))
        for k, t in enumerate(clock):
            pushed[i, k] = supervisor.in_push(float(t))
            targets[i, k] = supervisor.pushes.targets[max(supervisor.counter - 1, 0), :2]
    return Pushes(jnp.asarray(pushed), jnp.asarray(targets, dtype))


def _clock(steps: int) -> np.ndarray:
    """The run's times ``(steps,)`` [s], as the compiled run's: ``t_{k+1} = fl(t_k + 0.002)``.

    In float64, summed in order (numpy's accumulate does not pair).
    """
    return np.add.accumulate(np.concatenate([[0.0], np.full(steps - 1, DT)]))


def run(
    policy: Policy | StatefulPolicy,
    schedule: Pushes,
    *,
    params: ArmParams | None = None,
    decision_steps: int = 1,
    steps: int = STEPS,
    memory: Any = None,
) -> Record:
    """One v3 run of ``policy`` with the pushes of ``schedule`` (module notes).

    :func:`run_with_memory` is the same run that also returns a stateful policy's
    state at the end.

    Parameters
    ----------
    policy : callable
        ``policy(x) -> (τ1, τ2)``: the state ``(4,)`` in our angles → joint
        torques ``(2,)`` [N·m], a pure JAX function (the plant clips them to
        ±6 N·m). With ``memory``: ``policy(x, memory) -> ((τ1, τ2), memory)``, a
        policy with a state of its own (:data:`StatefulPolicy`), called only on
        the steps where it decides.
    schedule : Pushes
        One run's pushes (no leading axis; :func:`pushes` and index, or vmap).
    params : ArmParams, optional
        The plant (default: RealAIGym's C.1/1.1 arm, the board's).
    decision_steps : int
        The policy is asked on every ``decision_steps``-th step it drives (from
        its first), its command held in between (5 for an agent deciding every
        10 ms).
    steps : int
        Steps to run (:data:`~twolink_gym.realaigym.v3.STEPS` for the protocol).
    memory : pytree, optional
        A stateful policy's state at the start (None: ``policy`` is a plain one).

    Returns
    -------
    Record
        In the dtype of ``schedule.targets``.
    """
    record, _ = run_with_memory(
        policy, schedule, params=params, decision_steps=decision_steps, steps=steps, memory=memory
    )
    return record


def run_with_memory(
    policy: Policy | StatefulPolicy,
    schedule: Pushes,
    *,
    params: ArmParams | None = None,
    decision_steps: int = 1,
    steps: int = STEPS,
    memory: Any = None,
) -> tuple[Record, Any]:
    """:func:`run`, and the policy's state after its last decision (``memory`` if plain: None).

    What a stateful policy gathered over the run comes back with it (the
    states it was asked at and what it answered, for learning from them).
    """
    if int(decision_steps) != decision_steps or decision_steps < 1:
        raise ValueError(f"decision_steps must be an integer >= 1, got {decision_steps!r}")
    if int(steps) != steps or not 1 <= steps <= STEPS:
        raise ValueError(f"steps must be an integer in [1, {STEPS}], got {steps!r}")
    dtype = schedule.targets.dtype
    plant_params = realaigym_arm() if params is None else params
    plant = arm_of(plant_params, dtype)
    coulomb = bool(has_coulomb(arm_vector(plant_params)))
    offset = jnp.asarray(math.pi / 2, dtype)
    kp, ki, kd = PID_GAINS
    limit = TORQUE_LIMIT
    dt = jnp.asarray(DT, dtype)
    # the compiled run's times, in the run's dtype: float32 rounds each time but does not drift
    clock = jnp.asarray(_clock(steps), dtype)
    zeros2 = jnp.zeros((2,), dtype)
    start = _Carry(
        x=jnp.asarray([-math.pi / 2, 0.0, 0.0, 0.0], dtype),
        nu=zeros2,
        error_sum=zeros2,
        error=zeros2,
        n_errors=jnp.zeros((), jnp.int32),
        calls=jnp.zeros((), jnp.int32),
        command=zeros2,
        memory=memory,
    )

    def step(c: _Carry, inputs: tuple[Any, ...]) -> tuple[_Carry, tuple[Any, ...]]:
        t, resetting, target = inputs
        x = c.x
        x_rg = jnp.stack([x[0] + offset, x[1], x[2], x[3]])
        # the push PID (PushPID.torque), its history advanced on push steps only
        e = target - x_rg[:2]
        error_sum = c.error_sum + e
        n_errors = c.n_errors + 1
        derivative = jnp.where(n_errors > 2, kd * (e - c.error) / PID_DT, zeros2)
        pid = jnp.clip(kp * e + ki * error_sum * PID_DT + derivative, -limit, limit)
        g1, g2 = gravity_torque(plant, x_rg[0] - offset, x_rg[1])
        push = pid + jnp.stack([g1, g2])
        # the policy, asked on its every decision_steps-th step
        asks = jnp.logical_not(resetting) & (c.calls % decision_steps == 0)
        if memory is None:
            plain = cast(Policy, policy)
            command = jnp.where(asks, jnp.asarray(plain(x), dtype).reshape(2), c.command)
            kept = c.memory
        else:

            def decide(_: Any) -> tuple[jax.Array, Any]:
                torque, after = cast(StatefulPolicy, policy)(x, c.memory)
                return jnp.asarray(torque, dtype).reshape(2), after

            command, kept = jax.lax.cond(asks, decide, lambda _: (c.command, c.memory), None)
        u = jnp.where(resetting, push, command)
        nu = jnp.clip(c.nu + 1.0 * (u - c.nu), -limit, limit)
        q1, q2, dq1, dq2 = rk4(plant, x[0], x[1], x[2], x[3], nu[0], nu[1], dt, 1, coulomb)
        carry = _Carry(
            x=jnp.stack([q1, q2, dq1, dq2]),
            nu=nu,
            error_sum=jnp.where(resetting, error_sum, c.error_sum),
            error=jnp.where(resetting, e, c.error),
            n_errors=jnp.where(resetting, n_errors, c.n_errors),
            calls=c.calls + jnp.logical_not(resetting).astype(jnp.int32),
            command=command,
            memory=kept,
        )
        return carry, (t, x_rg, nu, resetting)

    inputs = (clock, schedule.pushed[:steps], schedule.targets[:steps])
    end, (t, x, u, pushed) = jax.lax.scan(step, start, inputs)
    return Record(t=t, x=x, u=u, pushed=pushed), end.memory


def uptime(record: Record) -> jax.Array:
    """The v3 uptime [s] of ``record``: the time the tip is above 0.45 m (``score = uptime / 60``).

    ``Σ_k (t_k - t_{k-1}) [tip height_k > 0.9 (l1 + l2)]``, ``t_{-1} = 0``
    (:func:`twolink_gym.realaigym.v3.score_v3`); over the last axis of a
    stacked record's ``t``.
    """
    l1, l2 = LINKS
    q1, q2 = record.x[..., 0], record.x[..., 1]
    height = -l1 * jnp.cos(q1) - l2 * jnp.cos(q1 + q2)
    up = height > HEIGHT_FRACTION * (l1 + l2)
    previous = jnp.concatenate([jnp.zeros_like(record.t[..., :1]), record.t[..., :-1]], axis=-1)
    return jnp.sum(jnp.where(up, record.t - previous, 0.0), axis=-1)


def score(record: Record) -> jax.Array:
    """The v3 score of ``record``: :func:`uptime` / 60 s."""
    return uptime(record) / T_MAX
