"""The JAX v3 run (:mod:`twolink_gym.jax.realaigym_v3`) against the compiled one.

The reference is :func:`twolink_gym.realaigym.v3.run_v3`, which
tests/test_realaigym_v3.py holds to the publisher's run and to an RK4 of
RealAIGym's own equations: the same protocol, computed by other code (numba
kernels and a Python supervisor step by step, not a JAX scan), under
``jax.enable_x64``. The pendubot's first push is at 3.806 s, the acrobot's at
4.373 s (the published schedules).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

from twolink_gym.jax import realaigym_v3 as jv3  # noqa: E402
from twolink_gym.realaigym.protocol import PolicyRunner, make_policy_env  # noqa: E402
from twolink_gym.realaigym.v3 import STEPS, run_v3, schedule, score_v3  # noqa: E402

#: The damping gain of the test policy: normalised action per rad/s of the motor joint.
GAIN = 0.05


class Damping:
    """A predictor that damps its motor joint: action ``-GAIN · q̇`` (float32 observations)."""

    def __init__(self, joint: int) -> None:
        self.speed = 4 + joint  # obs = [cos q1, sin q1, cos q2, sin q2, dq1, dq2]

    def predict(self, obs, state=None, episode_start=None, deterministic=True):
        return (np.float32(-GAIN) * obs[:, self.speed : self.speed + 1]), state


def jax_damping(robot: str) -> Any:
    """The same policy on the state in JAX: its float32 product, as the runner's."""
    joint = 0 if robot == "pendubot" else 1

    def policy(x: Any) -> Any:
        a = (jnp.float32(-GAIN) * x[2 + joint].astype(jnp.float32)).astype(x.dtype)
        torque = jnp.clip(a, -1.0, 1.0) * 6.0
        return jnp.zeros(2, x.dtype).at[joint].set(torque)

    return policy


def one(pushes: jv3.Pushes, i: int = 0) -> jv3.Pushes:
    return jax.tree.map(lambda a: a[i], pushes)


@pytest.mark.parametrize("robot", ["pendubot", "acrobot"])
def test_no_torque_run_equals_the_compiled_run(robot: str) -> None:
    # a free double pendulum between pushes is chaotic: the two runs agree to 1e-9 over the
    # first 10 s (two pushes), and exactly in their times and push steps over the whole run
    with jax.enable_x64(True):
        record = jax.jit(lambda s: jv3.run(lambda x: jnp.zeros(2, x.dtype), s))(
            one(jv3.pushes(robot))
        )
        reference = run_v3(None, robot)
        tr = reference.trajectory
        assert record.x.dtype == jnp.float64
        np.testing.assert_array_equal(np.asarray(record.t), tr.t)
        np.testing.assert_array_equal(np.asarray(record.pushed), reference.pushed)
        assert int(np.sum(np.diff(reference.pushed.astype(int)) == 1)) == 15
        np.testing.assert_allclose(np.asarray(record.x)[:5000], tr.x[:5000], rtol=0, atol=1e-9)
        np.testing.assert_allclose(np.asarray(record.u)[:5000], tr.u[:5000], rtol=0, atol=1e-9)
        # the uptime of the same record is the scorer's
        same = jv3.Record(
            jnp.asarray(tr.t), jnp.asarray(tr.x), jnp.asarray(tr.u), jnp.asarray(reference.pushed)
        )
        assert float(jv3.uptime(same)) == pytest.approx(score_v3(tr).uptime, abs=1e-9)
        assert float(jv3.score(same)) == pytest.approx(score_v3(tr).score, abs=1e-12)


@pytest.mark.parametrize("robot", ["pendubot", "acrobot"])
def test_a_policy_deciding_every_fifth_step_runs_as_the_runner(robot: str) -> None:
    # the board's pushes and a held-out seed's, as one vmapped call. The runner's observation
    # is float32: a state 1e-12 off can round to a neighbouring float32 speed, a torque 1e-8
    # off; a damped arm does not amplify it, so the whole 60 s agree to 1e-6 (measured:
    # 2e-7 at most), with the push steps exactly
    joint = 0 if robot == "pendubot" else 1
    runner = PolicyRunner(Damping(joint), make_policy_env(robot).sim, 5)
    with jax.enable_x64(True):
        stacked = jv3.pushes(robot, [None, 7])
        run = jax.jit(jax.vmap(lambda s: jv3.run(jax_damping(robot), s, decision_steps=5)))
        records = run(stacked)
        for i, seed in enumerate([None, 7]):
            reference = run_v3(runner, robot, pushes_seed=seed)
            tr = reference.trajectory
            record = one(records, i)
            np.testing.assert_array_equal(np.asarray(record.pushed), reference.pushed)
            np.testing.assert_allclose(np.asarray(record.x), tr.x, rtol=0, atol=1e-6)
            # the push PID's derivative divides a state difference by 1 ms
            pushed, u = reference.pushed, np.asarray(record.u)
            np.testing.assert_allclose(u[~pushed], tr.u[~pushed], rtol=0, atol=1e-6)
            np.testing.assert_allclose(u[pushed], tr.u[pushed], rtol=0, atol=1e-3)
            np.testing.assert_allclose(np.asarray(record.t), tr.t, rtol=0, atol=0)
        # the policy held its command between decisions: outside the pushes, the motor's
        # torque changes only every fifth step it drives (the filter ν + 1.0 (u - ν) may move
        # it by a rounding in between)
        free = ~np.asarray(one(records).pushed)
        u = np.asarray(one(records).u)[free, joint][:4000]
        changes = np.flatnonzero(np.abs(np.diff(u)) > 1e-12) + 1
        assert len(changes) > 100 and np.all(changes % 5 == 0)


def test_run_with_memory_returns_what_a_stateful_policy_gathered() -> None:
    # a policy that writes down each state it is asked at: it is asked on every fifth step the
    # push does not drive, counted from the record's own push flags, at the states the record
    # holds there (RealAIGym's angles in the record, ours for the policy: q1 - π/2)
    size = 600
    plain = jax_damping("pendubot")

    def policy(x: Any, memory: Any) -> Any:
        count, states = memory
        return plain(x), (count + 1, states.at[jnp.minimum(count, size - 1)].set(x))

    with jax.enable_x64(True):
        start = (jnp.asarray(0), jnp.zeros((size, 4)))
        schedule = one(jv3.pushes("pendubot"))
        record, (count, states) = jv3.run_with_memory(
            policy, schedule, decision_steps=5, steps=2500, memory=start
        )
        again = jv3.run(policy, schedule, decision_steps=5, steps=2500, memory=start)
    free = np.flatnonzero(~np.asarray(record.pushed))
    asked = free[::5]
    assert np.asarray(record.pushed).any() and int(count) == len(asked) < size
    expected = np.asarray(record.x)[asked] - np.array([np.pi / 2, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(np.asarray(states)[: len(asked)], expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(np.asarray(again.x), np.asarray(record.x))


def test_pushes_are_the_schedules_of_the_seeds() -> None:
    # each push drives the steps from the first at or after its time, for 100 or 101 steps
    # (its timer passes 0.2 s), towards its target; the steps between pushes are the policy's
    stacked = jv3.pushes("acrobot", [None, 1, 2])
    assert stacked.pushed.shape == (3, STEPS) and stacked.targets.shape == (3, STEPS, 2)
    t = np.arange(STEPS) * 0.002
    for i, seed in enumerate([None, 1, 2]):
        drawn = schedule("acrobot", seed)
        pushed = np.asarray(stacked.pushed[i])
        targets = np.asarray(stacked.targets[i])
        edges = np.diff(np.concatenate([[0], pushed.astype(int), [0]]))
        starts, stops = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
        assert len(starts) == 15
        for n, (a, b) in enumerate(zip(starts, stops, strict=True)):
            assert b - a in (100, 101)
            assert t[a] >= drawn.times[n] - 1e-9 and t[a - 1] < drawn.times[n] + 1e-9
            np.testing.assert_allclose(targets[a:b], np.tile(drawn.targets[n, :2], (b - a, 1)))


def test_float32_run_keeps_the_schedule() -> None:
    # training evaluates in float32: each push starts at the float64 run's step (a float32 sum
    # of 0.002 s would be 3 steps late by 56 s) and lasts as long (a float32 timer ends the
    # first pendubot push a step early); the damped arm's states stay close all run long
    runner = PolicyRunner(Damping(0), make_policy_env("pendubot").sim, 5)
    reference = run_v3(runner, "pendubot")
    record = jax.jit(lambda s: jv3.run(jax_damping("pendubot"), s, decision_steps=5))(
        one(jv3.pushes("pendubot", dtype=jnp.float32))
    )
    assert record.x.dtype == jnp.float32 and record.x.shape == (STEPS, 4)
    starts = np.flatnonzero(np.diff(np.asarray(record.pushed).astype(int)) == 1)
    expected = np.flatnonzero(np.diff(reference.pushed.astype(int)) == 1)
    np.testing.assert_array_equal(starts, expected)
    assert len(starts) == 15
    # and end there: the push steps are the float64 run's, not a float32 timer's
    np.testing.assert_array_equal(np.asarray(record.pushed), reference.pushed)
    # float32 rounding only: measured 7e-3 at most, at speeds up to 17 rad/s
    np.testing.assert_allclose(np.asarray(record.x), reference.trajectory.x, rtol=0, atol=0.02)


def test_bad_arguments_are_named() -> None:
    pushes = one(jv3.pushes("pendubot"))
    with pytest.raises(ValueError, match="decision_steps"):
        jv3.run(lambda x: x[:2], pushes, decision_steps=0)
    with pytest.raises(ValueError, match="steps"):
        jv3.run(lambda x: x[:2], pushes, steps=STEPS + 1)


def test_gravity_torque_is_the_gradient_of_the_potential_energy() -> None:
    # the push's gravity compensation: dV/dq by central differences of the potential energy
    from twolink_gym.dynamics import potential_energy
    from twolink_gym.jax.dynamics import gravity_torque
    from twolink_gym.jax.params import arm_of
    from twolink_gym.realaigym.arm import arm

    params = arm()
    rng = np.random.default_rng(5)
    q = rng.uniform(-np.pi, np.pi, (20, 2))
    h = 1e-6
    expected = np.column_stack(
        [
            (potential_energy(params, q + h * e) - potential_energy(params, q - h * e)) / (2 * h)
            for e in np.eye(2)
        ]
    )
    with jax.enable_x64(True):
        g1, g2 = gravity_torque(
            arm_of(params, jnp.float64), jnp.asarray(q[:, 0]), jnp.asarray(q[:, 1])
        )
        np.testing.assert_allclose(np.column_stack([g1, g2]), expected, rtol=0, atol=1e-8)
        assert np.abs(expected).max() > 0.5
