"""Gymnasium's registration contract, on every registered id and every ``TwoLink-v0`` variant.

Reproduces, for this package's ids, what Gymnasium's own registration tests
(``tests/envs/registration/test_make.py`` and ``test_make_vec.py``) check of
``CartPole-v1``: ``gym.make(id)`` truncates after the spec's
``max_episode_steps``, ``gym.make(id, max_episode_steps=N)`` after exactly
``N``, ``-1`` removes the limit, ``env.spec.max_episode_steps`` is the limit in
force and ``gym.make(env.spec)`` rebuilds the same env; the same through
``gym.make_vec`` in both vectorisation modes; Gymnasium's
``check_environments_match`` between ``TwoLink-v0`` and each per-task id; the
env checkers; pickling.

The lengths are the documented ones (reach 4 s, balance and track 10 s, swing-up
15 s at 50 Hz; ``TwoLink-v0`` 200 steps whatever the task), typed here from
the documentation. Episodes run on an arm without gravity held still at the
upright, where no task terminates, so every ending is a truncation.
"""

from __future__ import annotations

import math
import pickle
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.utils.env_match import check_environments_match
from gymnasium.vector import SyncVectorEnv
from wrapper_stack import time_limits

import twolink_gym  # noqa: F401  (registers the ids)
from twolink_gym import TwoLinkVectorEnv

#: Every registered id and its documented episode length in steps.
DOCUMENTED_STEPS = {
    "TwoLink-v0": 200,
    "TwoLinkReach-v0": 200,
    "TwoLinkBalance-v0": 500,
    "TwoLinkSwingup-v0": 750,
    "TwoLinkTrack-v0": 500,
    "TwoLinkAcrobotBalance-v0": 500,
    "TwoLinkPendubotBalance-v0": 500,
    "TwoLinkAcrobotSwingup-v0": 750,
    "TwoLinkPendubotSwingup-v0": 750,
}
#: The per-task ids with their task and actuation (typed from the documentation).
PER_TASK = {
    "TwoLinkReach-v0": ("reach", "full"),
    "TwoLinkBalance-v0": ("balance", "full"),
    "TwoLinkSwingup-v0": ("swingup", "full"),
    "TwoLinkTrack-v0": ("track", "full"),
    "TwoLinkAcrobotBalance-v0": ("balance", "acrobot"),
    "TwoLinkPendubotBalance-v0": ("balance", "pendubot"),
    "TwoLinkAcrobotSwingup-v0": ("swingup", "acrobot"),
    "TwoLinkPendubotSwingup-v0": ("swingup", "pendubot"),
}
TASKS = ("reach", "balance", "swingup", "track")
ACTUATIONS = ("full", "acrobot", "pendubot")

#: (id, keywords, documented length): each per-task id, and TwoLink-v0 with every task and actuation.
CASES = [
    (env_id, {}, steps) for env_id, steps in DOCUMENTED_STEPS.items() if env_id in PER_TASK
] + [
    ("TwoLink-v0", {"task": t, "actuation": a}, DOCUMENTED_STEPS["TwoLink-v0"])
    for t in TASKS
    for a in ACTUATIONS
]
CASE_IDS = [f"{i}-{k.get('task', '')}-{k.get('actuation', '')}".rstrip("-") for i, k, _ in CASES]

UPRIGHT_STILL = [math.pi / 2, 0.0, 0.0, 0.0]
NO_GRAVITY = {"gravity": 0.0}


def _ours(env_id: str) -> bool:
    entry = gym.spec(env_id).entry_point
    return isinstance(entry, str) and entry.startswith("twolink_gym")


def _steps_to_truncation(env: gym.Env, limit: int) -> int | None:
    """Steps until the first truncation (``None``: none within ``limit``); never a termination."""
    env.reset(seed=0, options={"state": UPRIGHT_STILL})
    zero = np.zeros(env.action_space.shape, dtype=np.float32)
    for n in range(1, limit + 1):
        _, _, terminated, truncated, _ = env.step(zero)
        assert not terminated
        if truncated:
            return n
    return None


def _vector_steps_to_truncation(envs: gym.vector.VectorEnv, limit: int) -> int | None:
    """Steps until every copy truncates at once (``None``: none within ``limit``)."""
    envs.reset(seed=0, options={"state": UPRIGHT_STILL})
    zero = np.zeros(envs.action_space.shape, dtype=np.float32)
    for n in range(1, limit + 1):
        _, _, terminated, truncated, _ = envs.step(zero)
        assert not terminated.any()
        if truncated.any():
            assert truncated.all()
            return n
    return None


# -- the registry -----------------------------------------------------------------


def test_the_registered_ids_are_the_documented_ones_with_their_lengths():
    ours = {env_id for env_id in gym.registry if _ours(env_id)}
    assert ours == set(DOCUMENTED_STEPS)
    for env_id, steps in DOCUMENTED_STEPS.items():
        assert gym.spec(env_id).max_episode_steps == steps, env_id
    for env_id, (task, actuation) in PER_TASK.items():
        env = gym.make(env_id).unwrapped
        assert (env.task.name, env.actuation) == (task, actuation)


# -- gym.make ---------------------------------------------------------------------


@pytest.mark.parametrize("by_spec", [False, True], ids=["id", "spec"])
@pytest.mark.parametrize(("env_id", "kwargs", "steps"), CASES, ids=CASE_IDS)
def test_make_truncates_after_the_specs_length(env_id, kwargs, steps, by_spec):
    make_id = gym.spec(env_id) if by_spec else env_id
    env = gym.make(make_id, **kwargs, params=NO_GRAVITY)
    assert time_limits(env) == [steps]
    assert env.spec.max_episode_steps == gym.spec(env_id).max_episode_steps == steps
    assert _steps_to_truncation(env, steps + 100) == steps


@pytest.mark.parametrize("by_spec", [False, True], ids=["id", "spec"])
@pytest.mark.parametrize(("env_id", "kwargs", "steps"), CASES, ids=CASE_IDS)
def test_make_with_max_episode_steps_truncates_after_exactly_that_many(
    env_id, kwargs, steps, by_spec
):
    make_id = gym.spec(env_id) if by_spec else env_id
    for n in (1, 37, steps + 101):
        env = gym.make(make_id, max_episode_steps=n, **kwargs, params=NO_GRAVITY)
        assert time_limits(env) == [n]
        assert env.spec.max_episode_steps == n
        assert _steps_to_truncation(env, n + 100) == n


@pytest.mark.parametrize(("env_id", "kwargs", "steps"), CASES, ids=CASE_IDS)
def test_max_episode_steps_minus_one_means_no_limit(env_id, kwargs, steps):
    env = gym.make(env_id, max_episode_steps=-1, **kwargs, params=NO_GRAVITY)
    assert time_limits(env) == []
    assert env.spec.max_episode_steps is None
    assert _steps_to_truncation(env, steps + 101) is None


@pytest.mark.parametrize(("env_id", "kwargs", "steps"), CASES, ids=CASE_IDS)
def test_remaking_from_the_spec_keeps_the_length(env_id, kwargs, steps):
    for n, expected in ((None, steps), (37, 37), (-1, None)):
        env = gym.make(env_id, max_episode_steps=n, **kwargs, params=NO_GRAVITY)
        again = gym.make(env.spec)
        assert again.spec == env.spec
        assert again.spec.max_episode_steps == expected
        assert time_limits(again) == ([] if expected is None else [expected])
        assert _steps_to_truncation(again, steps + 101) == expected


def test_the_reported_case_of_issue_27():
    env = gym.make("TwoLink-v0", task="reach", max_episode_steps=400, params=NO_GRAVITY)
    assert env.spec.max_episode_steps == 400
    assert _steps_to_truncation(env, 500) == 400
    env = gym.make("TwoLink-v0", task="reach", max_episode_steps=-1, params=NO_GRAVITY)
    assert _steps_to_truncation(env, 500) is None


def test_twolink_v0_gives_balance_the_length_its_spec_says():
    env = gym.make("TwoLink-v0", task="balance", params=NO_GRAVITY)
    assert _steps_to_truncation(env, 1000) == env.spec.max_episode_steps == 200


# -- TwoLink-v0 and the per-task ids are the same envs -------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("env_id", list(PER_TASK))
def test_twolink_v0_matches_the_per_task_id_with_the_same_length(env_id):
    task, actuation = PER_TASK[env_id]
    generic = gym.make("TwoLink-v0", task=task, actuation=actuation, max_episode_steps=300)
    check_environments_match(generic, gym.make(env_id, max_episode_steps=300), 10_000)


def test_twolink_v0_with_the_tasks_length_is_the_per_task_id():
    # what a user passes to keep a task's own length through TwoLink-v0
    for env_id, (task, actuation) in PER_TASK.items():
        steps = DOCUMENTED_STEPS[env_id]
        generic = gym.make("TwoLink-v0", task=task, actuation=actuation, max_episode_steps=steps)
        assert generic.unwrapped.default_max_episode_steps == steps
        assert generic.spec.max_episode_steps == gym.make(env_id).spec.max_episode_steps
        check_environments_match(generic, gym.make(env_id), 2 * steps + 10)


@pytest.mark.slow
def test_twolink_v0_matches_the_reach_id_with_default_lengths():
    check_environments_match(gym.make("TwoLink-v0"), gym.make("TwoLinkReach-v0"), 10_000)
    check_environments_match(
        gym.make("TwoLink-v0", task="reach"), gym.make("TwoLinkReach-v0"), 10_000
    )


# -- gym.make_vec -------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "vector_entry_point"])
@pytest.mark.parametrize(("env_id", "kwargs", "steps"), CASES, ids=CASE_IDS)
def test_make_vec_honours_the_same_lengths(env_id, kwargs, steps, mode):
    for n, expected in ((None, steps), (37, 37), (steps + 101, steps + 101), (-1, None)):
        extra = {} if n is None else {"max_episode_steps": n}
        envs = gym.make_vec(
            env_id, num_envs=2, vectorization_mode=mode, **kwargs, **extra, params=NO_GRAVITY
        )
        if mode == "sync":
            assert isinstance(envs, SyncVectorEnv)
            assert all(e.spec.max_episode_steps == expected for e in envs.envs)
        else:
            assert isinstance(envs, TwoLinkVectorEnv)
            assert envs.max_episode_steps == expected
        assert _vector_steps_to_truncation(envs, (expected or steps + 101) + 50) == expected
        # Gymnasium's make_vec round trip: the spec rebuilds the same vector env
        again = gym.make_vec(envs.spec)
        assert again.spec == envs.spec
        assert type(again) is type(envs)
        assert _vector_steps_to_truncation(again, (expected or steps + 101) + 50) == expected
        envs.close()
        again.close()


# -- checkers and pickling ---------------------------------------------------------


@pytest.mark.parametrize(("env_id", "kwargs", "steps"), CASES, ids=CASE_IDS)
def test_gymnasium_env_checker_is_clean(env_id, kwargs, steps):
    env = gym.make(env_id, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("env_id", list(DOCUMENTED_STEPS))
def test_stable_baselines3_env_checker_is_clean(env_id):
    sb3_env_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    env = gym.make(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_env_checker.check_env(env, warn=True)


@pytest.mark.parametrize(("env_id", "kwargs", "steps"), CASES, ids=CASE_IDS)
def test_pickling_keeps_the_env_and_its_length(env_id, kwargs, steps):
    for n, expected in ((None, steps), (37, 37), (-1, None)):
        env = gym.make(env_id, max_episode_steps=n, **kwargs, params=NO_GRAVITY)
        env.reset(seed=3)
        copy: Any = pickle.loads(pickle.dumps(env))
        assert copy.spec == env.spec
        assert time_limits(copy) == time_limits(env)
        action = np.full(env.action_space.shape, 0.3, dtype=np.float32)
        a, b = env.step(action), copy.step(action)
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1:4] == b[1:4]
        assert _steps_to_truncation(copy, steps + 101) == expected
