"""What the lean step paths promise: fresh arrays, one info layout, one clip, a light import.

The vector env returns some entries as rows of one fresh block (the reward
terms, the masks) instead of one copy each; these tests pin what that may not
change: nothing returned is overwritten by a later step, an in-place edit of
one returned entry changes no other, and the single and the vector env's info
(one function, :func:`twolink_gym.core.step_info`) have the same entries in
the same order.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from twolink_gym.env import TwoLinkEnv
from twolink_gym.kernel import clip_actions
from twolink_gym.vector_env import TwoLinkVectorEnv

TASKS = ["reach", "balance", "swingup", "track"]
RANDOMIZE = {"m2": (0.8, 1.2), "l1": (0.8, 1.2)}


def _arrays(value: Any, prefix: str = "") -> dict[str, np.ndarray]:
    """Every array in a step's return (nested info dicts flattened), by a path name."""
    found: dict[str, np.ndarray] = {}
    if isinstance(value, np.ndarray):
        found[prefix] = value
    elif isinstance(value, dict):
        for key, item in value.items():
            found.update(_arrays(item, f"{prefix}/{key}"))
    elif isinstance(value, tuple):
        for j, item in enumerate(value):
            found.update(_arrays(item, f"{prefix}/{j}"))
    return found


def _snapshot(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {key: value.copy() for key, value in arrays.items()}


@pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
@pytest.mark.parametrize("task", TASKS)
def test_vector_step_returns_are_not_changed_by_later_steps(task: str, mode: str) -> None:
    env = TwoLinkVectorEnv(4, task=task, autoreset_mode=mode, max_episode_steps=3)
    first = env.reset(seed=1)
    kept = _arrays(first)
    before = _snapshot(kept)
    rng = np.random.default_rng(0)
    for _ in range(8):  # through truncations and autoresets
        result = env.step(rng.uniform(-1, 1, (4, env.sim.action_size)).astype(np.float32))
        for key, value in kept.items():
            np.testing.assert_array_equal(value, before[key], err_msg=key)
        kept = _arrays(result)
        before = _snapshot(kept)


@pytest.mark.parametrize("task", TASKS)
def test_an_in_place_edit_of_one_returned_vector_entry_changes_no_other(task: str) -> None:
    env = TwoLinkVectorEnv(3, task=task, randomize=RANDOMIZE)
    env.reset(seed=2)
    result = env.step(np.full((3, env.sim.action_size), 0.3, dtype=np.float32))
    arrays = _arrays(result)
    for key, value in arrays.items():
        others = _snapshot({k: v for k, v in arrays.items() if k != key})
        value[...] = ~value if value.dtype == bool else value + 1.0
        for other, saved in others.items():
            np.testing.assert_array_equal(arrays[other], saved, err_msg=f"{key} -> {other}")


@pytest.mark.parametrize("task", TASKS)
def test_single_step_returns_are_not_changed_by_later_steps(task: str) -> None:
    env = TwoLinkEnv(task, randomize=RANDOMIZE)
    kept = _arrays(env.reset(seed=3))
    before = _snapshot(kept)
    for k in range(5):
        result = env.step(np.full(env.action_space.shape, 0.5 - 0.2 * k, dtype=np.float32))
        for key, value in kept.items():
            np.testing.assert_array_equal(value, before[key], err_msg=key)
        kept = _arrays(result)
        before = _snapshot(kept)


@pytest.mark.parametrize("randomize", [None, RANDOMIZE])
@pytest.mark.parametrize("task", TASKS)
def test_single_and_vector_info_have_the_same_entries_in_the_same_order(
    task: str, randomize: dict[str, Any] | None
) -> None:
    single = TwoLinkEnv(task, randomize=randomize)
    vector = TwoLinkVectorEnv(2, task=task, randomize=randomize)
    for (_, single_info), (_, vector_info) in [
        (single.reset(seed=0), vector.reset(seed=0)),
        (
            single.step(single.action_space.sample())[3:],
            vector.step(vector.action_space.sample())[3:],
        ),
    ]:
        keys = [k for k in vector_info if not k.startswith("_")]
        assert list(single_info) == keys
        assert [k for k in vector_info if k.startswith("_")] == ["_" + k for k in keys]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clip_actions_equals_numpys_clip(dtype: type) -> None:
    rng = np.random.default_rng(4)
    actions = rng.uniform(-3.0, 3.0, (64, 2)).astype(dtype)
    actions[:4] = [[-1.0, 1.0], [-0.0, 0.0], [1e30, -1e30], [np.nextafter(1.0, 2.0), -1.0]]
    command = np.full((64, 2), 7.0)
    assert clip_actions(actions, command)
    expected = np.minimum(np.maximum(actions.astype(np.float64), -1.0), 1.0)
    np.testing.assert_array_equal(command, expected)
    assert np.array_equal(np.signbit(command), np.signbit(expected))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_clip_actions_refuses_non_finite_entries_and_writes_nothing(bad: float) -> None:
    actions = np.zeros((8, 2))
    actions[5, 1] = bad
    command = np.full((8, 2), 7.0)
    assert not clip_actions(actions, command)
    np.testing.assert_array_equal(command, 7.0)


def test_a_non_finite_vector_action_raises_and_the_env_steps_on() -> None:
    env = TwoLinkVectorEnv(3)
    env.reset(seed=0)
    actions = np.zeros((3, 2), dtype=np.float32)
    actions[1, 0] = np.nan
    with pytest.raises(ValueError, match="action"):
        env.step(actions)
    env.step(np.zeros((3, 2), dtype=np.float32))


def test_import_does_not_load_scipy_interpolate() -> None:
    code = "import sys, twolink_gym; print('scipy.interpolate' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
