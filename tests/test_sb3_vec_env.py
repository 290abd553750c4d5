"""The SB3 adapter over the native vector env has SB3's VecEnv semantics.

The independent reference is a single ``TwoLinkEnv`` per copy, seeded and driven
with the same actions, reset by hand when its episode ends (what SB3's
``DummyVecEnv`` does), and SB3's own ``DummyVecEnv`` for the PPO check.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from stable_baselines3 import PPO
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import VecEnv
from twolink_gym.training.sb3_vec_env import TwoLinkSB3VecEnv, make_sb3_vec_env

from twolink_gym.env import TwoLinkEnv
from twolink_gym.vector_env import TwoLinkVectorEnv


def single_env_reference(task, seeds, actions, max_steps):
    """Per step and copy: (obs after auto-reset, reward, done, final obs, truncated, success)."""
    envs = [TwoLinkEnv(task=task) for _ in seeds]
    elapsed = [0] * len(seeds)
    first = [env.reset(seed=s)[0] for env, s in zip(envs, seeds, strict=True)]
    steps = []
    for a in actions:
        row = []
        for i, env in enumerate(envs):
            obs, reward, term, _, info = env.step(a[i])
            elapsed[i] += 1
            trunc = elapsed[i] >= max_steps
            final = obs
            if term or trunc:
                obs, _ = env.reset()
                elapsed[i] = 0
            row.append((obs, reward, term or trunc, final, trunc and not term, info["is_success"]))
        steps.append(row)
    return first, steps


@pytest.mark.parametrize(
    ("task", "max_steps"),
    [("reach", 7), ("balance", 500)],  # reach truncates; random actions make balance fall
)
def test_steps_match_single_envs_with_sb3_semantics(task, max_steps):
    n, steps = 4, 60
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, (steps, n, 2)).astype(np.float32)
    env = make_sb3_vec_env(n, seed=3, task=task, max_episode_steps=max_steps)
    assert isinstance(env, VecEnv)
    first, reference = single_env_reference(task, [3 + i for i in range(n)], actions, max_steps)
    np.testing.assert_array_equal(env.reset(), np.stack(first))
    truncations = terminations = 0
    for t in range(steps):
        obs, rewards, dones, infos = env.step(actions[t])
        assert obs.dtype == np.float32 and rewards.dtype == np.float32 and dones.dtype == bool
        assert len(infos) == n
        for i in range(n):
            r_obs, r_reward, r_done, r_final, r_trunc, r_success = reference[t][i]
            np.testing.assert_array_equal(obs[i], r_obs)  # reset within the same step
            assert rewards[i] == np.float32(r_reward)
            assert dones[i] == r_done
            assert infos[i]["is_success"] == r_success  # of the final state when done
            if r_done:
                np.testing.assert_array_equal(infos[i]["terminal_observation"], r_final)
                assert infos[i]["TimeLimit.truncated"] == r_trunc
                truncations += r_trunc
                terminations += not r_trunc
            else:
                assert "terminal_observation" not in infos[i]
                assert "TimeLimit.truncated" not in infos[i]
    if task == "reach":
        assert truncations >= n and terminations == 0
    else:
        assert terminations >= n and truncations == 0


def test_seed_and_set_options_apply_at_the_next_reset():
    n = 3
    env = make_sb3_vec_env(n, task="reach")
    env.seed(11)
    obs = env.reset()
    for i in range(n):
        expected, _ = TwoLinkEnv(task="reach").reset(seed=11 + i)
        np.testing.assert_array_equal(obs[i], expected)
    states = [[0.1 * i, -0.2, 0.0, 0.3] for i in range(n)]
    targets = [[0.5, 0.4 + 0.1 * i] for i in range(n)]
    env.set_options([{"state": s, "target": g} for s, g in zip(states, targets, strict=True)])
    obs = env.reset()
    decoded = env.unwrapped.venv.decode(obs)
    np.testing.assert_allclose(decoded.state, states, atol=1e-6)
    np.testing.assert_allclose(decoded.goal, targets, atol=1e-6)
    # options are used once: the next reset draws again
    assert not np.allclose(env.unwrapped.venv.decode(env.reset()).goal, targets, atol=1e-3)
    env.set_options([{"state": states[0]}, {}, {}])
    with pytest.raises(ValueError, match="same option keys"):
        env.reset()


def test_requires_a_same_step_native_env():
    with pytest.raises(ValueError, match="SameStep"):
        TwoLinkSB3VecEnv(TwoLinkVectorEnv(2))
    with pytest.raises(ValueError, match="TwoLinkVectorEnv"):
        TwoLinkSB3VecEnv(object())  # type: ignore[arg-type]


def dummy_reference(n, seed, max_steps):
    """SB3's own DummyVecEnv over single envs: the reference for the VecEnv contract."""
    return make_vec_env(
        "TwoLinkReach-v0", n_envs=n, seed=seed, env_kwargs={"max_episode_steps": max_steps}
    )


def assert_same_info(got, expected):
    assert set(got) == set(expected)
    for key, value in expected.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-12, atol=1e-12, err_msg=key)


def test_reset_infos_are_filled_at_reset_and_on_autoreset_like_dummy_vec_env():
    n, max_steps = 3, 4
    # the adapter's own reset infos (SB3's VecMonitor keeps its own, as over a DummyVecEnv)
    native = make_sb3_vec_env(n, seed=2, task="reach", max_episode_steps=max_steps).unwrapped
    dummy = dummy_reference(n, 2, max_steps)
    native.reset()
    dummy.reset()
    for i in range(n):
        assert_same_info(native.reset_infos[i], dummy.reset_infos[i])
    before = [dict(info) for info in native.reset_infos]
    rng = np.random.default_rng(1)
    autoresets = 0
    for _ in range(2 * max_steps + 1):
        actions = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
        _, _, dones, _ = native.step(actions)
        _, _, dummy_dones, _ = dummy.step(actions)
        np.testing.assert_array_equal(dones, dummy_dones)
        autoresets += int(dones.sum())
        for i in range(n):
            assert_same_info(native.reset_infos[i], dummy.reset_infos[i])
    assert autoresets == 2 * n
    # the new episodes' reset infos differ from the first ones (new targets)
    assert not np.allclose(native.reset_infos[0]["target"], before[0]["target"])


def test_get_attr_gives_each_requested_copy_its_value_like_dummy_vec_env():
    n = 3
    native = make_sb3_vec_env(n, seed=9, task="reach")
    dummy = dummy_reference(n, 9, 200)
    native.reset()
    dummy.reset()
    for indices in (None, [2, 0], 1, [1, 1], -1):
        for name in ("state", "goal", "dt", "params", "observation_space", "action_space"):
            got = native.get_attr(name, indices)
            expected = dummy.get_attr(name, indices)
            assert len(got) == len(expected), (name, indices)
            for a, b in zip(got, expected, strict=True):
                if isinstance(b, np.ndarray):
                    np.testing.assert_array_equal(a, b)
                else:
                    assert a == b, (name, indices)
    assert native.get_attr("num_envs") == [n] * n  # a vector-env attribute, shared


@pytest.mark.parametrize("indices", [3, [0, 5], -4])
def test_indices_out_of_range_raise_index_error_like_dummy_vec_env(indices):
    with pytest.raises(IndexError):
        dummy_reference(3, 0, 200).get_attr("dt", indices)
    env = make_sb3_vec_env(3, task="reach")
    with pytest.raises(IndexError, match=r"indices must be .*\[-3, 3\)"):
        env.get_attr("dt", indices)
    with pytest.raises(IndexError, match="indices"):
        env.env_method("decode", np.zeros(10), indices=indices)


def test_set_attr_sets_the_shared_attribute_and_refuses_some_copies():
    env = make_sb3_vec_env(2, seed=0, task="reach")
    with pytest.raises(ValueError, match=r"set_attr\('max_episode_steps'\).*indices=None"):
        env.set_attr("max_episode_steps", 3, indices=[0])
    assert env.unwrapped.venv.max_episode_steps == 200  # unchanged by the refused call
    env.set_attr("max_episode_steps", 3, indices=[1, 0])  # every copy: allowed
    env.reset()
    dones = [env.step(np.zeros((2, 2), dtype=np.float32))[2] for _ in range(3)]
    np.testing.assert_array_equal(dones, [[False, False], [False, False], [True, True]])
    with pytest.raises(AttributeError):
        env.set_attr("dt", 0.1)  # read-only configuration


def test_env_method_per_copy_and_refused_for_some_copies():
    env = make_sb3_vec_env(2, seed=0, task="balance")
    obs = env.reset()
    decoded = env.env_method("decode", obs[1], indices=[0, 1])
    assert len(decoded) == 2
    for d in decoded:
        np.testing.assert_allclose(d.state, env.unwrapped.venv.state[1], atol=1e-6)
    with pytest.raises(ValueError, match=r"env_method\('reset'\).*indices=None"):
        env.env_method("reset", indices=[0])
    results = env.env_method("reset", seed=4)  # every copy: one call of the vector env
    assert len(results) == 2
    np.testing.assert_array_equal(
        results[0][0], TwoLinkVectorEnv(2, task="balance").reset(seed=4)[0]
    )


def test_attribute_access_and_wrapping_queries():
    env = make_sb3_vec_env(2, task="balance")
    assert env.get_attr("num_envs") == [2, 2]
    assert env.env_is_wrapped(object) == [False, False]  # type: ignore[arg-type]
    assert env.env_method("decode", np.zeros((2, 6)), indices=[0])[0].state.shape == (2, 4)


def test_episode_statistics_are_built_in():
    # SB3's evaluate_policy warns unless the env is monitored (issue 43)
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.vec_env import VecMonitor

    from twolink_gym.controllers import ComputedTorqueController

    env = make_sb3_vec_env(3, seed=4, task="reach", max_episode_steps=50)
    assert isinstance(env, VecMonitor) and isinstance(env.unwrapped, TwoLinkSB3VecEnv)
    controller = ComputedTorqueController.from_env(env)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mean, _ = evaluate_policy(controller, env, n_eval_episodes=6)
    assert np.isfinite(mean)
    # each episode's statistics against the returns and lengths counted here
    env = make_sb3_vec_env(2, seed=1, task="reach", max_episode_steps=7)
    rng = np.random.default_rng(3)
    returns, lengths, episodes = np.zeros(2), np.zeros(2, dtype=int), 0
    env.reset()
    for _ in range(20):
        _, rewards, dones, infos = env.step(rng.uniform(-1, 1, (2, 2)).astype(np.float32))
        returns += rewards
        lengths += 1
        for i in np.flatnonzero(dones):
            episode = infos[i]["episode"]
            assert episode["r"] == pytest.approx(returns[i], abs=1e-5)
            assert episode["l"] == lengths[i]
            assert episode["is_success"] == infos[i]["is_success"]
            returns[i], lengths[i], episodes = 0.0, 0, episodes + 1
        for i in np.flatnonzero(~dones):
            assert "episode" not in infos[i]
    assert episodes == 4  # two 7-step episodes per copy (reach never ends early on noise)


def test_ppo_first_rollout_equals_dummy_vec_env():
    """Same seed: PPO on the adapter and on DummyVecEnv of single envs sees the same data."""
    n, n_steps = 4, 16

    def first_rollout(venv):
        model = PPO("MlpPolicy", venv, n_steps=n_steps, batch_size=n * n_steps, n_epochs=1, seed=0)
        model.learn(total_timesteps=n * n_steps)
        buf = model.rollout_buffer
        return buf.observations.copy(), buf.rewards.copy(), buf.actions.copy()

    native = first_rollout(make_sb3_vec_env(n, seed=5, task="reach"))
    dummy = first_rollout(make_vec_env("TwoLink-v0", n_envs=n, seed=5))
    for a, b in zip(native, dummy, strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_core_package_imports_no_stable_baselines3():
    """``import twolink_gym`` loads no SB3, and only ``twolink_gym.training`` imports it."""
    import pathlib
    import re
    import subprocess
    import sys

    import twolink_gym

    code = "import sys, twolink_gym\nprint(sorted(m for m in sys.modules if 'baselines' in m))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    package = pathlib.Path(twolink_gym.__file__).parent
    pattern = re.compile(r"^\s*(import|from)\s+(stable_baselines3|sb3_contrib)\b", re.MULTILINE)
    importers = [
        str(path.relative_to(package))
        for path in sorted(package.rglob("*.py"))
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert importers == []
