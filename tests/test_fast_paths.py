"""The fast paths agree with the reference batched path.

Reference: ``integrators.step`` (batched numpy RK4) with the torque
``action * max_torque`` and speeds clipped to ``max_speed``, then the task's
batched methods (``reward``, ``terminated``, ``is_success``, ``distance``,
``observation_extras``) and ``kinematics.forward_kinematics``. The fast paths
(``Simulation.step_scalar`` on Python floats, ``Simulation.evaluate_and_observe``
and ``Simulation.step_batch`` on arrays, the single env's scalar ``step``) must
match it to round-off, and each other bit for bit.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from twolink_gym.env import TwoLinkEnv
from twolink_gym.integrators import step as rk4_step
from twolink_gym.kinematics import forward_kinematics
from twolink_gym.simulation import (
    ADVANCE_BLOCK,
    SCALAR_LOOP_MAX_ENVS,
    Simulation,
    encode_state,
)
from twolink_gym.tasks import BalanceTask, ReachTask, Task
from twolink_gym.vector_env import TwoLinkVectorEnv

TASKS = {
    "reach": ReachTask(),
    "reach_speed": ReachTask(speed_weight=0.3),
    "reach_sparse": ReachTask(sparse=True, tolerance=0.5),
    "balance": BalanceTask(),
}
RTOL, ATOL = 1e-12, 1e-12


def _numpy_trig_is_libm() -> bool:
    x = np.random.default_rng(0).uniform(-10, 10, 1000)
    return bool(
        np.array_equal(np.cos(x), [math.cos(v) for v in x.tolist()])
        and np.array_equal(np.sin(x), [math.sin(v) for v in x.tolist()])
    )


#: Scalar and numpy backends agree bit for bit when numpy's cos/sin are the C
#: library's (as on Linux x86-64); elsewhere to round-off.
BITWISE = _numpy_trig_is_libm()


def assert_same(actual, desired, err_msg=""):
    if BITWISE:
        np.testing.assert_array_equal(actual, desired, err_msg=err_msg)
    else:
        np.testing.assert_allclose(actual, desired, rtol=1e-6, atol=1e-6, err_msg=err_msg)


def reference(sim: Simulation, state, goal, action):
    """Next state, observation and outcome of the reference batched path."""
    nxt = rk4_step(sim.params, state, action * sim.max_torque, sim.dt, sim.substeps)
    nxt[:, 2:] = np.clip(nxt[:, 2:], -sim.max_speed, sim.max_speed)
    task, p = sim.task, sim.params
    reward, terms = task.reward(p, nxt, goal, action)
    obs = np.concatenate([encode_state(nxt), task.observation_extras(p, nxt, goal)], 1)
    return (
        nxt,
        obs.astype(np.float32),
        {
            "reward": reward,
            "terms": terms,
            "terminated": task.terminated(p, nxt, goal),
            "success": task.is_success(p, nxt, goal),
            "distance": task.distance(p, nxt, goal),
            "tip": forward_kinematics(p, nxt[:, :2])[1],
        },
    )


def random_batch(sim: Simulation, n: int, seed: int):
    """States all over the state space (speeds up to the limit) and goals in the workspace."""
    rng = np.random.default_rng(seed)
    state = np.column_stack(
        [
            rng.uniform(-4, 4, (n, 2)),
            rng.uniform(-sim.max_speed, sim.max_speed, (n, 2)),
        ]
    )
    if isinstance(sim.task, BalanceTask):  # also states near upright: success and no fall
        state[: n // 2] = np.array([math.pi / 2, 0, 0, 0]) + rng.uniform(-0.05, 0.05, (n // 2, 4))
    goal = np.array([sim.task.sample_goal(rng, sim.params) for _ in range(n)]).reshape(n, -1)
    if isinstance(sim.task, ReachTask):  # some targets at the tip: success
        tip = forward_kinematics(sim.params, state[: n // 4, :2])[1]
        goal[: n // 4] = tip
        state[: n // 4, 2:] = 0.0
    action = np.clip(rng.uniform(-1.3, 1.3, (n, 2)), -1, 1)
    return state, goal, action


def assert_outcome_close(outcome, ref, exact_flags=True):
    np.testing.assert_allclose(outcome.reward, ref["reward"], rtol=RTOL, atol=ATOL)
    assert outcome.terms.keys() == ref["terms"].keys()
    for key, value in ref["terms"].items():
        np.testing.assert_allclose(outcome.terms[key], value, rtol=RTOL, atol=ATOL, err_msg=key)
    np.testing.assert_allclose(outcome.distance, ref["distance"], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(outcome.tip, ref["tip"], rtol=RTOL, atol=ATOL)
    np.testing.assert_array_equal(outcome.terminated, ref["terminated"])
    np.testing.assert_array_equal(outcome.success, ref["success"])


@pytest.mark.parametrize("name", TASKS)
def test_every_builtin_task_has_a_fast_path(name):
    assert Simulation.create(task=TASKS[name]).has_fast_path


@pytest.mark.parametrize("name", TASKS)
def test_array_fast_path_matches_reference(name):
    sim = Simulation.create(task=TASKS[name])
    state, goal, action = random_batch(sim, 400, seed=1)
    nxt, obs, ref = reference(sim, state, goal, action)
    np.testing.assert_array_equal(sim.advance(state, action), nxt)  # same RK4 code, same order
    outcome, fast_obs = sim.evaluate_and_observe(nxt, goal, action)
    assert_outcome_close(outcome, ref)
    np.testing.assert_allclose(fast_obs, obs, rtol=1e-6, atol=1e-7)
    assert fast_obs.dtype == np.float32
    # the random batch does exercise both branches of the flags
    if name != "reach_speed":
        assert ref["success"].any() and not ref["success"].all()
    if name == "balance":
        assert ref["terminated"].any() and not ref["terminated"].all()


@pytest.mark.parametrize("name", TASKS)
def test_scalar_fast_path_matches_reference(name):
    sim = Simulation.create(task=TASKS[name])
    state, goal, action = random_batch(sim, 120, seed=2)
    nxt, obs, ref = reference(sim, state, goal, action)
    for i in range(len(state)):
        x, frame, out, fast_obs = sim.step_scalar(
            tuple(state[i].tolist()), tuple(goal[i].tolist()), *action[i].tolist()
        )
        assert all(type(v) is float for v in x)
        np.testing.assert_allclose(x, nxt[i], rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(fast_obs, obs[i], rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(out.reward, ref["reward"][i], rtol=RTOL, atol=ATOL)
        for key, value in ref["terms"].items():
            np.testing.assert_allclose(out.terms[key], value[i], rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(out.distance, ref["distance"][i], rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose((frame.tip_x, frame.tip_y), ref["tip"][i], rtol=RTOL, atol=ATOL)
        assert bool(out.terminated) == ref["terminated"][i]
        assert bool(out.success) == ref["success"][i]


@pytest.mark.parametrize("name", TASKS)
def test_scalar_loop_and_numpy_backends_are_bit_identical(name):
    sim = Simulation.create(task=TASKS[name])
    n = SCALAR_LOOP_MAX_ENVS
    state, goal, action = random_batch(sim, n, seed=3)
    nxt, outcome, obs = sim.step_batch(state, goal, action)  # the scalar loop
    ref_nxt = sim.advance(state, action)  # the numpy backend
    ref_outcome, ref_obs = sim.evaluate_and_observe(ref_nxt, goal, action)
    assert_same(nxt, ref_nxt)
    assert_same(obs, ref_obs)
    for field in dataclasses.fields(outcome):
        if field.name != "terms":
            assert_same(
                getattr(outcome, field.name), getattr(ref_outcome, field.name), err_msg=field.name
            )
    for key in ref_outcome.terms:
        assert_same(outcome.terms[key], ref_outcome.terms[key], err_msg=key)
    assert outcome.terminated.dtype == bool and outcome.success.dtype == bool


def reference_env_step(env: TwoLinkEnv, action):
    """The single env's step computed with the reference path from its current state."""
    sim = env.sim
    a = np.clip(np.asarray(action, dtype=np.float64), -1, 1)[None]
    nxt, obs, ref = reference(sim, env.state[None], env.goal[None], a)
    return nxt[0], obs[0], ref


@pytest.mark.parametrize("name", TASKS)
def test_single_env_step_matches_reference_across_episodes(name):
    env = TwoLinkEnv(task=TASKS[name])
    rng = np.random.default_rng(4)
    env.reset(seed=4)
    steps, resets = 0, 0
    while steps < 150:
        action = rng.uniform(-1.5, 1.5, 2).astype(np.float32)
        if steps % 3 == 0:
            action = action.tolist()  # a list goes through the checked path
        nxt, obs, ref = reference_env_step(env, action)
        o, r, terminated, truncated, info = env.step(action)
        steps += 1
        np.testing.assert_allclose(env.state, nxt, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(o, obs, rtol=1e-6, atol=1e-7)
        assert o.dtype == np.float32 and o.shape == env.observation_space.shape
        assert type(r) is float and type(terminated) is bool and truncated is False
        np.testing.assert_allclose(r, ref["reward"][0], rtol=RTOL, atol=ATOL)
        assert terminated == ref["terminated"][0]
        assert type(info["is_success"]) is bool and info["is_success"] == ref["success"][0]
        assert type(info["distance"]) is float
        np.testing.assert_allclose(info["distance"], ref["distance"][0], rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(info["tip"], ref["tip"][0], rtol=RTOL, atol=ATOL)
        np.testing.assert_array_equal(info["state"], env.state)
        for key, value in ref["terms"].items():
            assert type(info[key]) is float
            np.testing.assert_allclose(info[key], value[0], rtol=RTOL, atol=ATOL)
        if terminated or steps % 60 == 0:
            env.reset()
            resets += 1
    assert resets >= 2


class PlainReach(ReachTask):
    """Reach without a fast path: the envs fall back to the batched methods."""

    outcome = Task.outcome


def test_task_without_fast_path_uses_the_reference_path():
    env = TwoLinkEnv(task=PlainReach())
    assert not env.sim.has_fast_path
    env.reset(seed=5)
    action = np.array([0.3, -0.7], dtype=np.float32)
    nxt, obs, ref = reference_env_step(env, action)
    o, r, *_ = env.step(action)
    np.testing.assert_array_equal(env.state, nxt)
    np.testing.assert_array_equal(o, obs)
    assert r == ref["reward"][0]


def run_single_envs(task, seeds, actions):
    """Per copy: the obs/reward/terminated/truncated sequence of a single env (SameStep resets)."""
    runs = []
    for i, seed in enumerate(seeds):
        env = TwoLinkEnv(task=task)
        limit = env.default_max_episode_steps
        env.reset(seed=seed)
        rows, t = [], 0
        for a in actions[:, i]:
            o, r, term, _, info = env.step(a)
            t += 1
            trunc = t >= limit and not term
            final = o
            if term or trunc:
                o, _ = env.reset()
                t = 0
            rows.append((o, r, term, trunc, final, info["is_success"]))
        runs.append(rows)
    return runs


@pytest.mark.parametrize(("name", "n"), [("balance", 3), ("balance", 40), ("reach", 3)])
def test_vector_env_equals_single_envs_bit_for_bit(name, n):
    """Both backends of the vector env (scalar loop for n=3, numpy for n=40) vs single envs."""
    task = TASKS[name]
    steps = 210 if name == "reach" else 120  # reach truncates at 200; balance falls
    rng = np.random.default_rng(6)
    actions = rng.uniform(-1, 1, (steps, n, 2)).astype(np.float32)
    venv = TwoLinkVectorEnv(n, task=task, autoreset_mode="SameStep")
    venv.reset(seed=10)
    singles = run_single_envs(task, [10 + i for i in range(n)], actions)
    ends = 0
    for t in range(steps):
        obs, reward, terminated, truncated, info = venv.step(actions[t])
        for i in range(n):
            o, r, term, trunc, final, success = singles[i][t]
            assert_same(obs[i], o)
            assert_same(reward[i], r)
            assert terminated[i] == term and truncated[i] == trunc
            if term or trunc:
                ends += 1
                assert_same(info["final_obs"][i], final)
                assert info["final_info"]["is_success"][i] == success
            else:
                assert info["is_success"][i] == success
    assert ends >= n


def test_advance_in_blocks_equals_one_batched_step():
    sim = Simulation.create(task="reach")
    n = ADVANCE_BLOCK + 7  # two blocks, the second partial
    state, _, action = random_batch(sim, n, seed=7)
    expected = rk4_step(sim.params, state, action * sim.max_torque, sim.dt, sim.substeps)
    expected[:, 2:] = np.clip(expected[:, 2:], -sim.max_speed, sim.max_speed)
    np.testing.assert_array_equal(sim.advance(state, action), expected)
