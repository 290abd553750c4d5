"""The single environment ``TwoLinkEnv``: API conformance, determinism, observations, errors, physics.

Expected values come from outside the env: the geometry of the arm (tip by
plain trigonometry), the integrator called directly, the dynamics functions,
and the documented conventions (action scaling, clipping, observation layout).
"""

import copy
import math
import os
import pickle
import warnings

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import twolink_gym
from twolink_gym import ArmParams, TwoLinkEnv
from twolink_gym.registration import task_env_id

TASKS = ("reach", "balance")
F32_EPS = float(np.finfo(np.float32).eps)


def tip_by_trig(params: ArmParams, q1: float, q2: float) -> np.ndarray:
    return np.array(
        [
            params.l1 * math.cos(q1) + params.l2 * math.cos(q1 + q2),
            params.l1 * math.sin(q1) + params.l2 * math.sin(q1 + q2),
        ]
    )


def wrapped_diff(a, b):
    d = np.asarray(a) - np.asarray(b)
    return (d + np.pi) % (2 * np.pi) - np.pi


def rollout(env, actions, seed):
    """Observations, rewards, flags and infos of a rollout (resets when an episode ends)."""
    out = []
    obs, info = env.reset(seed=seed)
    out.append((obs, info))
    for a in actions:
        step = env.step(a)
        out.append(step)
        if step[2] or step[3]:
            out.append(env.reset())
    return out


def assert_same_rollouts(r1, r2):
    assert len(r1) == len(r2)
    for s1, s2 in zip(r1, r2, strict=True):
        assert len(s1) == len(s2)
        for x1, x2 in zip(s1[:-1], s2[:-1], strict=True):
            np.testing.assert_array_equal(x1, x2)
        assert s1[-1].keys() == s2[-1].keys()
        for key in s1[-1]:
            np.testing.assert_array_equal(s1[-1][key], s2[-1][key], err_msg=key)


# -- conformance -----------------------------------------------------------------


@pytest.mark.parametrize("render_mode", [None, "rgb_array"])
@pytest.mark.parametrize("task", TASKS)
def test_gymnasium_check_env_passes_without_warnings(task, render_mode):
    # the per-task id: TwoLink-v0 warns by design where its 200 steps are not the task's own
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gym.make(task_env_id(task), render_mode=render_mode)
        gym_check_env(env.unwrapped)
        env.close()
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("render_mode", [None, "rgb_array"])
@pytest.mark.parametrize("task", TASKS)
def test_sb3_check_env_passes_without_warnings(task, render_mode):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gym.make(task_env_id(task), render_mode=render_mode)
        sb3_check_env(env, warn=True)
        sb3_check_env(env.unwrapped, warn=True)
        env.close()
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize("task", TASKS)
def test_spaces(task):
    env = TwoLinkEnv(task=task)
    assert env.action_space == gym.spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
    space = env.observation_space
    assert space.dtype == np.float32
    assert space.shape == ((10,) if task == "reach" else (6,))
    assert np.all(np.isfinite(space.low)) and np.all(np.isfinite(space.high))
    # the state encoding: cos/sin in [-1, 1], speeds within the speed limit
    np.testing.assert_array_equal(space.low[:4], -1.0)
    np.testing.assert_array_equal(space.high[:4], 1.0)
    np.testing.assert_array_equal(space.high[4:6], np.float32(6 * math.pi))
    np.testing.assert_array_equal(space.low[4:6], -np.float32(6 * math.pi))
    if task == "reach":
        # targets lie within l1 + l2 = 2 m of the base, tip-to-target within 4 m
        assert np.all(space.high[6:8] >= 2.0) and np.all(space.low[6:8] <= -2.0)
        assert np.all(space.high[8:] >= 4.0) and np.all(space.low[8:] <= -4.0)


def test_render_fps_follows_dt():
    assert TwoLinkEnv(dt=0.02).metadata["render_fps"] == 50
    assert TwoLinkEnv(dt=0.04).metadata["render_fps"] == 25


# -- determinism, seeding, pickling ----------------------------------------------


@pytest.mark.parametrize("task", TASKS)
def test_same_seed_and_actions_give_identical_rollouts(task):
    actions = np.random.default_rng(1).uniform(-1.2, 1.2, size=(260, 2)).astype(np.float32)
    # across a reach time limit (200 steps) and balance falls, with autoreset by hand
    r1 = rollout(gym.make("TwoLink-v0", task=task), actions, seed=42)
    r2 = rollout(gym.make("TwoLink-v0", task=task), actions, seed=42)
    assert_same_rollouts(r1, r2)
    assert sum(1 for s in r1 if len(s) == 5 and (s[2] or s[3])) >= 1  # an episode boundary


@pytest.mark.parametrize("task", TASKS)
def test_different_seeds_give_different_initial_states_and_targets(task):
    env = TwoLinkEnv(task=task)
    starts = []
    for seed in range(20):
        env.reset(seed=seed)
        starts.append((env.state, env.goal))
    states = np.array([s for s, _ in starts])
    assert len({tuple(s) for s in states}) == 20
    if task == "reach":
        goals = np.array([g for _, g in starts])
        assert len({tuple(g) for g in goals}) == 20


def test_reset_with_the_same_seed_repeats_and_without_a_seed_continues():
    env = TwoLinkEnv(task="reach")
    o1, _ = env.reset(seed=7)
    o2, _ = env.reset(seed=7)
    o3, _ = env.reset()
    np.testing.assert_array_equal(o1, o2)
    assert not np.array_equal(o1, o3)
    # the unseeded reset continues the seeded generator: reproducible too
    env.reset(seed=7)
    o4, _ = env.reset()
    np.testing.assert_array_equal(o3, o4)


@pytest.mark.parametrize("task", TASKS)
def test_env_is_usable_right_after_init(task):
    env = TwoLinkEnv(task=task)
    obs, reward, _, truncated, info = env.step(env.action_space.sample())
    assert env.observation_space.contains(obs)
    assert math.isfinite(reward)
    assert not truncated
    assert np.all(np.isfinite(info["state"]))
    fresh = TwoLinkEnv(task=task)
    if task == "reach":
        # an initial state near hanging down, a target in the workspace
        np.testing.assert_allclose(fresh.state[:2], [-math.pi / 2, 0.0], atol=0.1)
        assert 0.0 < np.hypot(*fresh.goal) <= 2.0
    else:
        np.testing.assert_allclose(fresh.state[:2], [math.pi / 2, 0.0], atol=0.1)
    obs, _ = fresh.reset()
    assert fresh.observation_space.contains(obs)


@pytest.mark.parametrize("make", ["raw", "gym.make"])
@pytest.mark.parametrize("task", TASKS)
def test_pickle_round_trip_mid_episode_continues_identically(task, make):
    env = TwoLinkEnv(task=task) if make == "raw" else gym.make("TwoLink-v0", task=task)
    rng = np.random.default_rng(3)
    env.reset(seed=11)
    for _ in range(37):
        env.step(rng.uniform(-0.5, 0.5, 2).astype(np.float32))
    clones = [pickle.loads(pickle.dumps(env)), copy.deepcopy(env)]
    actions = rng.uniform(-1, 1, size=(80, 2)).astype(np.float32)
    runs = []
    for e in (env, *clones):
        run = []
        for a in actions:
            step = e.step(a)
            run.append(step)
            if step[2] or step[3]:
                run.append(e.reset())
        runs.append(run)
    assert_same_rollouts(runs[0], runs[1])
    assert_same_rollouts(runs[0], runs[2])


# -- observations ------------------------------------------------------------------


def test_observation_layout_by_hand():
    params = ArmParams()
    env = TwoLinkEnv(task="reach")
    state = np.array([0.4, -1.3, 0.7, -2.1])
    target = np.array([-0.6, 1.1])
    obs, _ = env.reset(options={"state": state, "target": target})
    tip = tip_by_trig(params, state[0], state[1])
    expected = [
        math.cos(0.4),
        math.sin(0.4),
        math.cos(-1.3),
        math.sin(-1.3),
        0.7,
        -2.1,
        -0.6,
        1.1,
        -0.6 - tip[0],
        1.1 - tip[1],
    ]
    assert obs.dtype == np.float32
    np.testing.assert_allclose(obs, np.float32(expected), rtol=0, atol=2e-7)

    balance = TwoLinkEnv(task="balance")
    obs, _ = balance.reset(options={"state": state})
    np.testing.assert_array_equal(obs, np.asarray(expected[:6], dtype=np.float32))


@pytest.mark.parametrize("task", TASKS)
def test_decode_recovers_state_and_goal_to_float32_precision(task):
    env = gym.make("TwoLink-v0", task=task)
    obs, info = env.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(150):
        decoded = twolink_gym.decode_observation(obs, env.unwrapped.task)
        same = env.unwrapped.decode(obs)
        np.testing.assert_array_equal(decoded.state, same.state)
        true = info["state"]
        assert np.all(np.abs(wrapped_diff(decoded.state[:2], true[:2])) <= 2 * F32_EPS)
        assert np.all(decoded.state[:2] > -math.pi) and np.all(decoded.state[:2] <= math.pi)
        np.testing.assert_allclose(decoded.state[2:], true[2:], rtol=F32_EPS / 2, atol=0)
        if task == "reach":
            np.testing.assert_array_equal(decoded.goal, info["target"].astype(np.float32))
            np.testing.assert_allclose(
                decoded.extras[2:], info["target"] - info["tip"], rtol=0, atol=4 * F32_EPS
            )
        else:
            assert decoded.goal.shape == (0,)
        obs, _, terminated, truncated, info = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
        if terminated or truncated:
            obs, info = env.reset()


def test_decode_is_batched_and_rejects_a_wrong_size():
    env = TwoLinkEnv(task="reach")
    states = np.array([[0.1, 0.2, 0.3, 0.4], [3.0, -3.0, -1.0, 2.0]])
    obs = np.stack([env.reset(options={"state": s, "target": [1.0, 0.0]})[0] for s in states])
    decoded = env.decode(obs)
    assert decoded.state.shape == (2, 4)
    assert decoded.goal.shape == (2, 2)
    np.testing.assert_allclose(decoded.state, states, atol=4e-7)
    with pytest.raises(ValueError, match="observation must have shape"):
        env.decode(np.zeros(6, dtype=np.float32))


# -- reset options ---------------------------------------------------------------


def test_reset_options_set_state_and_target_exactly():
    env = TwoLinkEnv(task="reach")
    state = np.array([1.0, -0.5, 0.25, -0.125])
    _, info = env.reset(seed=0, options={"state": state, "target": (0.5, 1.2)})
    np.testing.assert_array_equal(env.state, state)
    np.testing.assert_array_equal(info["state"], state)
    np.testing.assert_array_equal(env.goal, [0.5, 1.2])
    np.testing.assert_array_equal(info["target"], [0.5, 1.2])
    # the state alone leaves the target to the generator, and the other way round
    _, info = env.reset(seed=0, options={"state": state})
    np.testing.assert_array_equal(info["state"], state)
    _, info = env.reset(seed=0, options={"target": [0.5, 1.2]})
    np.testing.assert_array_equal(info["target"], [0.5, 1.2])


def test_reset_options_replay_an_episode_exactly():
    env = TwoLinkEnv(task="reach")
    actions = np.random.default_rng(2).uniform(-1, 1, size=(50, 2)).astype(np.float32)
    env.reset(seed=123)
    start, goal = env.state, env.goal
    first = [env.step(a) for a in actions]
    env.reset(seed=999, options={"state": start, "target": goal})
    second = [env.step(a) for a in actions]
    assert_same_rollouts(first, second)


@pytest.mark.parametrize(
    ("task", "options", "match"),
    [
        ("reach", {"speed": 1.0}, r"unknown reset option.*'speed'.*\['goal', 'state', 'target'\]"),
        ("balance", {"target": [1.0, 0.0]}, r"unknown reset option.*'target'.*\['state'\]"),
        ("reach", {"state": [0.0, 0.0, 0.0]}, r"options\['state'\] must have shape \(4,\)"),
        ("reach", {"state": np.zeros((2, 4))}, r"options\['state'\] must have shape"),
        ("reach", {"target": [1.0, 0.0, 0.0]}, r"options\['target'\] must have shape \(2,\)"),
        ("reach", {"state": [0.0, np.nan, 0.0, 0.0]}, r"options\['state'\] must be finite"),
        ("reach", {"target": [np.inf, 0.0]}, r"options\['target'\] must be finite"),
        ("reach", {"target": [1.5, 1.5]}, r"outside the workspace"),
        ("reach", {"state": [0.0, 0.0, 100.0, 0.0]}, r"max_speed"),
    ],
)
def test_reset_rejects_bad_options(task, options, match):
    env = TwoLinkEnv(task=task)
    with pytest.raises(ValueError, match=match):
        env.reset(options=options)


@pytest.mark.parametrize(
    ("task", "keys"),
    [
        ("reach", "['goal', 'state', 'target']"),
        ("balance", "['state']"),
        ("track", "['goal', 'path', 'state']"),
    ],
)
@pytest.mark.parametrize("options", [[1, 2], "state", 3, (("state", [0.0] * 4),)])
def test_reset_rejects_options_that_are_not_a_dict(task, keys, options):
    env = gym.make("TwoLink-v0", task=task)
    env.reset(seed=5)
    before = env.unwrapped.np_random.bit_generator.state
    with pytest.raises(ValueError, match=r"options must be a dict \(or None\)") as excinfo:
        env.reset(seed=9, options=options)
    assert f"valid keys for task {task!r} are {keys}" in str(excinfo.value)
    # a refused reset changes nothing, not even the generator
    assert env.unwrapped.np_random.bit_generator.state == before


def test_reset_accepts_targets_on_the_workspace_boundary():
    params = ArmParams(l1=1.0, l2=0.6, lc2=0.3)
    env = TwoLinkEnv(task="reach", params=params)
    for target in ([1.6, 0.0], [0.0, -0.4], [-0.4 / math.sqrt(2), 0.4 / math.sqrt(2)]):
        env.reset(options={"target": target})
    with pytest.raises(ValueError, match="outside the workspace"):
        env.reset(options={"target": [0.0, 0.3]})  # inside the inner radius 0.4 m


# -- info --------------------------------------------------------------------------


@pytest.mark.parametrize("task", TASKS)
def test_info_carries_state_tip_terms_and_distance(task):
    params = ArmParams(l1=1.2, l2=0.7, lc1=0.6, lc2=0.35)
    env = gym.make("TwoLink-v0", task=task, params=params)
    options = {"state": [1.3, 0.4, 0.0, 0.0]}
    if task == "reach":
        options["target"] = [0.3, 1.1]
    env.reset(seed=0, options=options)
    rng = np.random.default_rng(0)
    for k in range(1, 40):
        _, reward, terminated, _, info = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
        q1, q2 = info["state"][:2]
        tip = tip_by_trig(params, q1, q2)
        np.testing.assert_allclose(info["tip"], tip, rtol=0, atol=1e-14)
        np.testing.assert_allclose(info["time"], k * 0.02, rtol=1e-14)
        assert isinstance(info["is_success"], bool)
        if task == "reach":
            expected = {"reward_dist", "reward_near", "reward_ctrl"}
            np.testing.assert_array_equal(info["target"], [0.3, 1.1])
            dist = math.dist(tip, (0.3, 1.1))
            assert info["distance"] == pytest.approx(dist, abs=1e-14)
            assert info["reward_near"] == pytest.approx(math.exp(-(dist**2) / 0.005), abs=1e-14)
            assert reward == pytest.approx(
                info["reward_dist"] + info["reward_near"] + info["reward_ctrl"], abs=1e-14
            )
        else:
            expected = {"reward_upright", "reward_ctrl", "reward_still"}
            tilts = [q1 - math.pi / 2, q1 + q2 - math.pi / 2]
            assert info["distance"] == pytest.approx(
                max(abs(math.remainder(t, 2 * math.pi)) for t in tilts), abs=1e-14
            )
            product = info["reward_upright"] * info["reward_ctrl"] * info["reward_still"]
            assert reward == pytest.approx(product, abs=1e-14)
        assert expected <= set(info)
        assert {"state", "tip", "distance", "is_success", "time"} <= set(info)
        if terminated:
            break


def test_info_state_is_a_copy():
    env = TwoLinkEnv(task="reach")
    _, info = env.reset(seed=0)
    before = env.state
    info["state"][:] = 99.0
    env.state[:] = 99.0
    np.testing.assert_array_equal(env.state, before)


def test_info_time_is_zero_at_reset_and_counts_steps():
    env = TwoLinkEnv(task="reach", dt=0.05)
    _, info = env.reset(seed=0)
    assert info["time"] == 0.0
    for k in range(1, 8):
        info = env.step(np.zeros(2, dtype=np.float32))[4]
        assert info["time"] == pytest.approx(0.05 * k, rel=1e-14)
    assert env.reset()[1]["time"] == 0.0


def test_info_time_is_exactly_steps_times_dt():
    env = TwoLinkEnv(task="reach")
    env.reset(seed=0)
    for k in range(1, 30):
        assert env.step(np.zeros(2, dtype=np.float32))[4]["time"] == k * 0.02


# -- actions -------------------------------------------------------------------------


def test_out_of_range_actions_are_clipped():
    a, b = TwoLinkEnv(task="reach"), TwoLinkEnv(task="reach")
    options = {"state": [0.3, 0.5, 0.2, -0.1], "target": [1.0, 0.5]}
    a.reset(options=options)
    b.reset(options=options)
    for big, clipped in (([5.0, -7.0], [1.0, -1.0]), ([0.5, 1.0001], [0.5, 1.0])):
        sa = a.step(np.array(big, dtype=np.float32))
        sb = b.step(np.array(clipped, dtype=np.float32))
        assert_same_rollouts([sa], [sb])


def test_actions_of_other_numeric_types_are_accepted():
    env = TwoLinkEnv(task="reach")
    env.reset(seed=0)
    for action in ([0.1, -0.2], (1, 0), np.array([0.3, 0.3]), np.array([1, -1], dtype=np.int64)):
        obs = env.step(action)[0]
        assert env.observation_space.contains(obs)


@pytest.mark.parametrize(
    ("action", "match"),
    [
        ([np.nan, 0.0], "finite"),
        ([0.0, np.inf], "finite"),
        ([-np.inf, 0.5], "finite"),
        ([0.0, 0.0, 0.0], r"shape \(2,\)"),
        ([[0.0, 0.0]], r"shape \(2,\)"),
        (0.5, r"shape \(2,\)"),
        (None, "action"),
        ("up", "action"),
        (["a", "b"], "action"),
    ],
)
def test_bad_actions_raise_a_clear_error(action, match):
    env = TwoLinkEnv(task="reach")
    env.reset(seed=0)
    before = env.state
    with pytest.raises(ValueError, match=match):
        env.step(action)
    np.testing.assert_array_equal(env.state, before)  # nothing happened


# -- physics -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"dt": 0.05, "substeps": 4, "max_torque": (12.0, 7.0)},
        {"dt": 0.01, "substeps": 1, "max_torque": 5.0, "params": {"m2": 0.3, "friction1": 0.0}},
    ],
)
@pytest.mark.parametrize("task", TASKS)
def test_env_step_is_the_integrator_step(task, kwargs):
    env = TwoLinkEnv(task=task, **kwargs)
    params = ArmParams.coerce(kwargs.get("params"))
    dt, substeps = kwargs.get("dt", 0.02), kwargs.get("substeps", 2)
    max_torque = np.broadcast_to(np.asarray(kwargs.get("max_torque", (30.0, 10.0))), (2,))
    env.reset(seed=1, options={"state": [0.2, 1.0, 0.5, -0.3]})
    rng = np.random.default_rng(4)
    for _ in range(25):
        state = env.state
        action = rng.uniform(-1, 1, 2).astype(np.float32)
        expected = twolink_gym.step(params, state, action * max_torque, dt, substeps)
        assert np.all(np.abs(expected[2:]) < 6 * math.pi)  # no speed clipping involved
        info = env.step(action)[4]
        np.testing.assert_allclose(info["state"], expected, rtol=1e-13, atol=1e-13)
        np.testing.assert_array_equal(info["state"], env.state)


@pytest.mark.parametrize("action", [(0.5, 0.5), (-0.25, 1.0), (1.0, -0.75)])
def test_action_scales_to_torque(action):
    # A still arm at a non-equilibrium pose: over a tiny step the velocity change
    # gives the acceleration, and inverse dynamics turns it back into the torque.
    params = ArmParams()
    max_torque = np.array([30.0, 10.0])
    q = np.array([0.7, -1.1])
    h = 1e-5
    env = TwoLinkEnv(task="balance", dt=h, substeps=1, task_options={"fall_angle": math.pi})
    env.reset(options={"state": [q[0], q[1], 0.0, 0.0]})
    state = env.step(np.array(action, dtype=np.float32))[4]["state"]
    ddq = state[2:] / h
    tau = np.asarray(action) * max_torque
    np.testing.assert_allclose(
        ddq, twolink_gym.forward_dynamics(params, q, np.zeros(2), tau), rtol=2e-5, atol=1e-6
    )
    implied = twolink_gym.inverse_dynamics(params, q, np.zeros(2), ddq)
    np.testing.assert_allclose(implied, tau, rtol=0, atol=1e-4)


def test_default_max_torque_holds_any_static_pose_with_margin():
    # Largest static gravity torques of the default arm (link 1 and link 2 both
    # horizontal): (m1·lc1 + m2·l1 + m2·lc2)·g = 19.62 N·m and m2·lc2·g = 4.905 N·m.
    g = 9.81
    worst = np.array([(0.5 + 1.0 + 0.5) * g, 0.5 * g])
    env = TwoLinkEnv(task="reach")
    assert np.all(env.sim.max_torque >= 1.5 * worst)
    # and holding is real: the action G(q)/max_torque keeps a resting arm at rest
    q1, q2 = np.meshgrid(np.linspace(-math.pi, math.pi, 7), np.linspace(-math.pi, math.pi, 7))
    for q in np.stack([q1.ravel(), q2.ravel()], 1):
        action = twolink_gym.gravity_torque(env.params, q) / env.sim.max_torque
        assert np.all(np.abs(action) <= 1 / 1.5)
        env.reset(options={"state": [q[0], q[1], 0.0, 0.0]})
        state = env.step(action)[4]["state"]
        np.testing.assert_allclose(state, [q[0], q[1], 0.0, 0.0], rtol=0, atol=1e-12)


def test_speeds_are_clipped_to_max_speed():
    max_speed = 3.0
    env = TwoLinkEnv(task="reach", max_speed=max_speed, params={"gravity": 0.0, "friction1": 0.0})
    env.reset(options={"state": [0.0, 0.0, max_speed - 1e-3, -(max_speed - 1e-3)]})
    for _ in range(50):
        obs, _, _, _, info = env.step(np.array([1.0, -1.0], dtype=np.float32))
        assert np.all(np.abs(info["state"][2:]) <= max_speed)
        assert env.observation_space.contains(obs)
    assert info["state"][2] == max_speed  # held at the limit by full torque


# -- bad construction arguments ----------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"task": "swim"},
            r"unknown task 'swim'; valid tasks are \['balance', 'reach', 'swingup', 'track'\]",
        ),
        ({"params": {"m1": -1.0}}, r"ArmParams\.m1 must be > 0"),
        ({"params": {"mass": 1.0}}, r"unknown ArmParams field.*'mass'.*'m1'"),
        ({"params": {"lc1": 2.0}}, r"ArmParams\.lc1"),
        ({"params": 3}, "ArmParams"),
        ({"task_options": {"tol": 0.1}}, r"unknown option.*'tol'.*'tolerance'"),
        ({"task": "balance", "task_options": {"tolerance": 0.1}}, r"unknown option.*tolerance"),
        ({"task_options": {"tolerance": -0.1}}, "tolerance"),
        ({"task": "balance", "task_options": {"ctrl_weight": 2.0}}, "ctrl_weight"),
        ({"dt": 0.0}, "dt"),
        ({"dt": -0.02}, "dt"),
        ({"dt": math.nan}, "dt"),
        ({"dt": "0.02"}, "dt"),
        ({"substeps": 0}, "substeps"),
        ({"substeps": 2.5}, "substeps"),
        ({"substeps": True}, "substeps"),
        ({"max_torque": 0.0}, "max_torque"),
        ({"max_torque": (30.0, -1.0)}, "max_torque"),
        ({"max_torque": (30.0, math.inf)}, "max_torque"),
        ({"max_torque": "strong"}, "max_torque"),
        ({"max_speed": 0.0}, "max_speed"),
        ({"max_speed": math.inf}, "max_speed"),
        ({"render_mode": "ascii"}, r"render_mode must be one of \['human', 'rgb_array'\]"),
    ],
)
def test_bad_arguments_raise_a_clear_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TwoLinkEnv(**kwargs)


@pytest.mark.parametrize("max_torque", [(1.0, 2.0, 3.0), [[1.0, 2.0]], "big"])
def test_max_torque_of_wrong_shape_or_type_is_named(max_torque):
    with pytest.raises(ValueError, match="max_torque"):
        TwoLinkEnv(max_torque=max_torque)


@pytest.mark.parametrize(
    "task_options", [{"tolerance": "wide"}, {"ctrl_weight": math.inf}, {"sparse": "yes"}]
)
def test_bad_task_option_values_raise_value_error(task_options):
    with pytest.raises(ValueError, match=next(iter(task_options))):
        TwoLinkEnv(task="reach", task_options=task_options)


@pytest.mark.parametrize(
    "kwargs", [{"max_speed": 0.05}, {"task_options": {"init_speed_noise": 30.0}}]
)
def test_initial_observation_is_inside_the_space_for_any_valid_arguments(kwargs):
    env = TwoLinkEnv(task="reach", **kwargs)
    for seed in range(10):
        obs, _ = env.reset(seed=seed)
        assert env.observation_space.contains(obs)


def test_render_without_render_mode_warns_and_returns_none():
    env = TwoLinkEnv(task="reach")
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None
