"""Underactuated arms: an acrobot (elbow motor only) and a pendubot (shoulder only).

Reference: the fully actuated env driven with the same torque at the motor's
joint and zero at the other; trajectories must be identical bit for bit.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import twolink_gym  # noqa: F401  (registers the ids)
from twolink_gym.env import TwoLinkEnv
from twolink_gym.vector_env import TwoLinkVectorEnv

JOINT = {"acrobot": 1, "pendubot": 0}


@pytest.mark.parametrize("actuation", ["acrobot", "pendubot"])
@pytest.mark.parametrize("task", ["reach", "balance"])
def test_underactuated_env_is_the_full_env_with_one_motor_off(actuation, task):
    under = TwoLinkEnv(task=task, actuation=actuation)
    full = TwoLinkEnv(task=task)
    assert under.action_space.shape == (1,) and under.actuation == actuation
    under.reset(seed=3)
    full.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(120):
        a = rng.uniform(-1.5, 1.5, 1).astype(np.float32)
        both = np.zeros(2, dtype=np.float32)
        both[JOINT[actuation]] = a[0]
        o1, r1, t1, _, i1 = under.step(a)
        o2, r2, t2, _, i2 = full.step(both)
        np.testing.assert_array_equal(o1, o2)
        assert r1 == r2 and t1 == t2
        np.testing.assert_array_equal(i1["state"], i2["state"])
        if t1:
            under.reset(seed=4)
            full.reset(seed=4)


@pytest.mark.parametrize("actuation", ["acrobot", "pendubot"])
def test_underactuated_vector_env_matches_single_envs(actuation):
    n = 4
    venv = TwoLinkVectorEnv(n, task="balance", actuation=actuation, autoreset_mode="SameStep")
    assert venv.single_action_space.shape == (1,) and venv.action_space.shape == (n, 1)
    singles = [TwoLinkEnv(task="balance", actuation=actuation) for _ in range(n)]
    venv.reset(seed=7)
    for i, env in enumerate(singles):
        env.reset(seed=7 + i)
    actions = np.random.default_rng(7).uniform(-1, 1, (60, n, 1)).astype(np.float32)
    for a in actions:
        obs, reward, terminated, _, _ = venv.step(a)
        for i, env in enumerate(singles):
            o, r, t, _, _ = env.step(a[i])
            if t:
                o, _ = env.reset()
            np.testing.assert_array_equal(obs[i], o)
            assert reward[i] == r and terminated[i] == t


def test_the_motor_joint_alone_gets_torque():
    env = TwoLinkEnv(
        task="reach",
        actuation="acrobot",
        params={"gravity": 0.0, "friction1": 0.0, "friction2": 0.0},
    )
    env.reset(options={"state": [0.0, 0.5, 0.0, 0.0], "target": [1.0, 0.5]})
    np.testing.assert_array_equal(env.max_torque, [30.0, 10.0])
    env.step(np.array([1.0], dtype=np.float32))
    # elbow torque only, from rest without gravity: both joints accelerate (coupled
    # through M), and the applied torque recorded is (0, +10 N·m)
    np.testing.assert_array_equal(env.sim.torque(env._core.arrays.action), [[0.0, 10.0]])
    assert env.state[3] > 0 and env.state[2] < 0


def test_make_and_make_vec_take_the_actuation():
    env = gym.make("TwoLink-v0", task="balance", actuation="pendubot")
    assert env.action_space.shape == (1,)
    env.reset(seed=0)
    env.step(env.action_space.sample())
    venv = gym.make_vec(
        "TwoLink-v0", num_envs=3, vectorization_mode="vector_entry_point", actuation="acrobot"
    )
    assert venv.action_space.shape == (3, 1)


def test_bad_actuation_and_action_shape_are_named():
    with pytest.raises(
        ValueError, match=r"actuation must be one of \['acrobot', 'full', 'pendubot'\]"
    ):
        TwoLinkEnv(actuation="elbow")
    env = TwoLinkEnv(actuation="acrobot")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action must have shape \(1,\)"):
        env.step(np.zeros(2, dtype=np.float32))
    venv = TwoLinkVectorEnv(2, actuation="pendubot")
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"action must have shape \(2, 1\)"):
        venv.step(np.zeros((2, 2)))


def _config(actuation, vectorization="native"):
    from twolink_gym.training.config import config_from_dict

    return config_from_dict(
        {
            "env": {"task": "balance", "actuation": actuation, "vectorization": vectorization},
            "algo": {"name": "ppo"},
            "train": {"total_timesteps": 128, "n_envs": 2},
        },
        "test.yaml",
    )


@pytest.mark.parametrize("vectorization", ["native", "dummy"])
def test_training_config_builds_underactuated_training_envs(vectorization):
    from twolink_gym.training.envs import make_training_env

    cfg = _config("acrobot", vectorization)
    venv = make_training_env(cfg.env, 2, seed=0)
    assert venv.action_space.shape == (1,)
    venv.reset()
    venv.step(np.zeros((2, 1), dtype=np.float32))


def test_training_config_rejects_an_unknown_actuation_naming_the_key():
    from twolink_gym.training.config import ConfigError

    with pytest.raises(ConfigError, match=r"test\.yaml: env\.actuation must be one of"):
        _config("elbow")


def test_full_arm_controllers_refuse_an_underactuated_arm_and_auto_picks_the_lqr():
    from twolink_gym.training.evaluate import resolve_policies
    from twolink_gym.training.policies import load_policy

    from twolink_gym.controllers import ComputedTorqueController

    cfg = _config("pendubot")
    assert resolve_policies(["auto"], cfg) == ["lqr"]  # the one-input LQR drives it
    env = TwoLinkEnv(task="balance", actuation="pendubot")
    with pytest.raises(
        ValueError, match=r"ComputedTorqueController cannot drive actuation 'pendubot'.*\['full'\]"
    ):
        ComputedTorqueController.from_env(env)
    with pytest.raises(ValueError, match=r"cannot drive env\.actuation 'pendubot'.*\['lqr'\]"):
        load_policy("pd_gravity", cfg.env, env)


def test_default_run_names_keep_the_arms_apart():
    """A pendubot run must not land in (or --overwrite) the full arm's run folder."""
    from twolink_gym.training.sweep import seed_config, sweep_dir

    full, pendubot = _config("full"), _config("pendubot")
    assert full.run_name == "balance_ppo_s0"
    assert pendubot.run_name == "balance_pendubot_ppo_s0"
    assert seed_config(pendubot, 3).run_name == "balance_pendubot_ppo_s3"
    assert sweep_dir(pendubot) != sweep_dir(full)


def test_the_codec_maps_actions_and_sits_below_the_tasks():
    """The actuation table and the codec in one small module importing no task or env code."""
    import ast
    import inspect

    from twolink_gym import codec
    from twolink_gym.controllers import base

    for name, joints in codec.ACTUATIONS.items():
        action = np.array([[0.25] * len(joints), [-0.5] * len(joints)])
        full = codec.expand_action(action, joints)
        assert full.shape == (2, 2), name
        off = [j for j in (0, 1) if j not in joints]
        np.testing.assert_array_equal(full[:, list(joints)], action)
        np.testing.assert_array_equal(full[:, off], 0.0)
    # controllers take the codec from it, not from the env core
    assert base.decode_observation is codec.decode_observation
    tree = ast.parse(inspect.getsource(codec))
    imported = {
        node.module
        for node in tree.body  # module level only (not the TYPE_CHECKING block)
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported <= {"__future__", "typing", "numpy.typing", "twolink_gym.imperfections"}
