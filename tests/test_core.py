"""The batched core (``twolink_gym.core``): episodes by row, named results, one info builder."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from twolink_gym.core import Core, step_info
from twolink_gym.env import TwoLinkEnv
from twolink_gym.kinematics import forward_kinematics
from twolink_gym.simulation import Simulation


def _core(task: str, n: int, seed: int = 0, **settings: object) -> Core:
    sim = Simulation.create(task=task, **settings)
    return Core(sim, [np.random.default_rng(seed + i) for i in range(n)])


def test_reset_of_some_rows_leaves_the_others_as_they_were() -> None:
    core = _core("track", 4)
    core.reset()
    for _ in range(5):
        core.step(np.full((4, 2), 0.3))
    a = core.arrays
    before = {name: getattr(a, name).copy() for name in ("state", "goal", "memory", "steps")}
    rows = np.array([1, 3])
    fresh = core.reset(rows)
    kept = np.array([0, 2])
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(a, name)[kept], value[kept], err_msg=name)
    np.testing.assert_array_equal(a.steps[rows], 0)
    # track's running statistics: those of a new episode at the new state and path
    other = _core("track", 2, seed=9)
    other.reset(None, {"state": a.state[rows], "goal": a.goal[rows]})
    np.testing.assert_array_equal(a.memory[rows], other.arrays.memory)
    assert not np.array_equal(a.memory[rows], before["memory"][rows])
    np.testing.assert_array_equal(fresh.state, a.state[rows])
    np.testing.assert_array_equal(fresh.time, 0.0)
    assert fresh.obs.shape == (2, a.obs.shape[1])
    # the outcome is that of the new states: the tip from the kinematics
    tip = forward_kinematics(core.sim.params, fresh.state[:, :2])[1]
    np.testing.assert_allclose(fresh.tip, tip, rtol=1e-13, atol=1e-13)


def test_a_step_result_names_views_of_the_cores_arrays_and_a_new_observation() -> None:
    core = _core("reach", 3)
    core.reset()
    result = core.step(np.zeros((3, 2)))
    a = core.arrays
    assert np.shares_memory(result.state, a.state) and np.shares_memory(result.reward, a.outcome)
    assert not np.shares_memory(result.obs, a.obs)
    np.testing.assert_array_equal(result.time, core.sim.dt)  # one step into every episode
    tip = forward_kinematics(core.sim.params, a.state[:, :2])[1]
    np.testing.assert_allclose(result.tip, tip, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(result.distance, np.hypot(*(a.goal - tip).T), rtol=1e-13)


def test_step_info_of_a_row_is_that_rows_entries_of_every_rows_info() -> None:
    core = _core("reach", 3, randomize={"m2": (0.8, 1.2)})
    core.reset()
    result = core.step(np.full((3, 2), -0.4))
    task = core.sim.task
    every = step_info(result, task)
    for i in range(3):
        one = step_info(result, task, i)
        assert list(one) == list(every)
        for key, value in one.items():
            np.testing.assert_array_equal(value, every[key][i], err_msg=key)
        assert isinstance(one["distance"], float) and isinstance(one["is_success"], bool)


def test_the_single_env_is_the_core_with_one_arm() -> None:
    env = TwoLinkEnv(task="balance")
    env.reset(seed=5)
    core = _core("balance", 1)
    core.rngs[0] = np.random.default_rng(0)
    core.reset(None, {"state": env.state})
    rng = np.random.default_rng(1)
    for _ in range(30):
        action = rng.uniform(-1, 1, 2)
        obs, reward, terminated, _, info = env.step(action.astype(np.float32))
        result = core.step(action.astype(np.float32)[None])
        np.testing.assert_array_equal(obs, result.obs[0])
        assert reward == result.reward[0] and terminated == result.terminated[0]
        expected = step_info(result, core.sim.task, 0)
        assert list(info) == list(expected)
        for key, value in expected.items():
            np.testing.assert_array_equal(info[key], value, err_msg=key)


def test_a_core_unpickled_steps_on_as_the_original() -> None:
    core = _core("swingup", 2)
    core.reset()
    core.step(np.full((2, 2), 0.5))
    copy = pickle.loads(pickle.dumps(core))
    for _ in range(10):
        a = core.step(np.full((2, 2), -0.2))
        b = copy.step(np.full((2, 2), -0.2))
        np.testing.assert_array_equal(a.obs, b.obs)
        np.testing.assert_array_equal(a.reward, b.reward)
    assert np.shares_memory(copy.step().state, copy.arrays.state)  # its views rebuilt


def test_a_wrong_action_shape_names_the_shape_and_changes_nothing() -> None:
    core = _core("reach", 2)
    core.reset()
    before = core.arrays.action.copy()
    with pytest.raises(ValueError, match=r"\(2, 2\)"):
        core.set_command(np.zeros((3, 2)))
    np.testing.assert_array_equal(core.arrays.action, before)
