"""The native batched env ``TwoLinkVectorEnv`` against Gymnasium's ``SyncVectorEnv`` and single envs.

The reference is Gymnasium's own vectoriser over ``gym.make`` envs: with the
same seeds and actions the native env must produce identical observations,
rewards, flags and infos, across episode boundaries (autoreset) and time limits.
"""

import math
import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.vector.utils import batch_space

import twolink_gym
from twolink_gym import ArmParams, TwoLinkEnv, TwoLinkVectorEnv

TASKS = ("reach", "balance")
NO_GRAVITY = {"gravity": 0.0}


def sync_env(n, mode=AutoresetMode.NEXT_STEP, **kwargs):
    return SyncVectorEnv(
        [lambda: gym.make("TwoLink-v0", **kwargs) for _ in range(n)], autoreset_mode=mode
    )


def assert_infos_equal(ref, got, exact_time=True):
    assert set(ref) == set(got)
    for key in ref:
        if key in ("time", "final_info", "final_obs"):
            continue
        np.testing.assert_array_equal(got[key], ref[key], err_msg=key)
        assert np.asarray(got[key]).dtype == np.asarray(ref[key]).dtype, key
    if exact_time:
        np.testing.assert_array_equal(got["time"], ref["time"])
    else:
        np.testing.assert_allclose(got["time"], ref["time"], rtol=1e-13, atol=0)


def compare_with_sync(task, n, steps, seed, exact_time=False, **kwargs):
    """Run both vector envs with the same seed and actions; return the episode ends seen."""
    ref = sync_env(n, task=task, **kwargs)
    native = gym.make_vec("TwoLink-v0", num_envs=n, task=task, **kwargs)
    o_ref, i_ref = ref.reset(seed=seed)
    o_nat, i_nat = native.reset(seed=seed)
    np.testing.assert_array_equal(o_nat, o_ref)
    assert_infos_equal(i_ref, i_nat, exact_time)
    rng = np.random.default_rng(seed)
    ends = np.zeros(n, dtype=int)
    for _ in range(steps):
        actions = rng.uniform(-1.2, 1.2, size=(n, 2)).astype(np.float32)
        r = ref.step(actions)
        g = native.step(actions)
        for a, b in zip(r[:4], g[:4], strict=True):
            np.testing.assert_array_equal(b, a)
        assert g[0].dtype == np.float32 and g[1].dtype == np.float64
        assert g[2].dtype == np.bool_ and g[3].dtype == np.bool_
        assert_infos_equal(r[4], g[4], exact_time)
        ends += r[2] | r[3]
    return ends


# -- conformance -----------------------------------------------------------------------


@pytest.mark.parametrize("task", TASKS)
def test_batched_spaces_and_metadata(task):
    env = TwoLinkVectorEnv(num_envs=5, task=task)
    single = TwoLinkEnv(task=task)
    assert isinstance(env, VectorEnv)
    assert env.num_envs == 5
    assert env.single_observation_space == single.observation_space
    assert env.single_action_space == single.action_space
    assert env.observation_space == batch_space(single.observation_space, 5)
    assert env.action_space == batch_space(single.action_space, 5)
    assert env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    assert env.observation_space.contains(obs)
    assert reward.shape == terminated.shape == truncated.shape == (5,)
    for key in ("state", "tip", "distance", "is_success", "time"):
        assert np.asarray(info[key]).shape[0] == 5
        np.testing.assert_array_equal(info["_" + key], np.ones(5, dtype=bool))


def test_usable_right_after_init():
    env = TwoLinkVectorEnv(num_envs=3, task="reach")
    obs, reward, *_ = env.step(np.zeros((3, 2), dtype=np.float32))
    assert env.observation_space.contains(obs)
    assert np.all(np.isfinite(reward))


# -- identical trajectories -----------------------------------------------------------------


@pytest.mark.parametrize(("task", "max_steps"), [("reach", 23), ("balance", 60), ("balance", 7)])
def test_identical_to_sync_vector_env_across_autoresets(task, max_steps):
    ends = compare_with_sync(task, n=3, steps=150, seed=10, max_episode_steps=max_steps)
    assert np.all(ends >= 2)  # several episode boundaries in every copy


@pytest.mark.parametrize("task", TASKS)
def test_identical_to_sync_vector_env_with_many_copies(task):
    # enough copies for any batched (rather than per-arm) code path
    ends = compare_with_sync(task, n=48, steps=45, seed=6, max_episode_steps=20)
    assert np.all(ends >= 2)


def test_identical_to_sync_vector_env_with_the_tasks_own_time_limit():
    # the native env's own step counter against the TimeLimit that gym.make adds
    ends = compare_with_sync("reach", n=2, steps=420, seed=3)
    np.testing.assert_array_equal(ends, [2, 2])


def test_identical_to_sync_vector_env_with_non_default_arguments():
    compare_with_sync(
        "balance",
        n=2,
        steps=120,
        seed=4,
        max_episode_steps=40,
        dt=0.03,
        substeps=3,
        max_torque=[20.0, 6.0],
        max_speed=8.0,
        params={"m2": 0.6, "l2": 0.7, "lc2": 0.3},
        task_options={"fall_angle": 0.8, "init_angle_noise": 0.3},
    )


def test_identical_infos_including_time():
    compare_with_sync("reach", n=2, steps=60, seed=1, exact_time=True, max_episode_steps=25)


def test_seed_list_matches_single_envs():
    seeds = [5, 17, 3]
    env = TwoLinkVectorEnv(num_envs=3, task="reach")
    obs, _ = env.reset(seed=seeds)
    for i, s in enumerate(seeds):
        single_obs, _ = TwoLinkEnv(task="reach").reset(seed=s)
        np.testing.assert_array_equal(obs[i], single_obs)
    # an int seed gives copy i the seed seed + i, like SyncVectorEnv
    obs, _ = env.reset(seed=40)
    for i in range(3):
        np.testing.assert_array_equal(obs[i], TwoLinkEnv(task="reach").reset(seed=40 + i)[0])


def test_same_seed_and_actions_give_identical_rollouts_and_seeds_differ():
    a, b = (TwoLinkVectorEnv(num_envs=4, task="balance", max_episode_steps=30) for _ in range(2))
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, size=(100, 4, 2))
    np.testing.assert_array_equal(a.reset(seed=9)[0], b.reset(seed=9)[0])
    for act in actions:
        for x, y in zip(a.step(act)[:4], b.step(act)[:4], strict=True):
            np.testing.assert_array_equal(x, y)
    obs, _ = a.reset(seed=9)
    assert len({tuple(o) for o in obs}) == 4  # copies start apart
    assert not np.array_equal(obs, a.reset(seed=10)[0])


# -- autoreset and per-copy time limits ------------------------------------------------------


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_max_episode_steps_minus_one_means_no_limit(mode):
    # Gymnasium's convention, as gym.make_vec passes it: the balance task's 500
    # steps and beyond without a truncation
    env = TwoLinkVectorEnv(
        num_envs=2, task="balance", params=NO_GRAVITY, max_episode_steps=-1, autoreset_mode=mode
    )
    assert env.max_episode_steps is None
    env.reset(seed=0, options={"state": [math.pi / 2, 0.0, 0.0, 0.0]})
    for _ in range(600):
        _, _, terminated, truncated, info = env.step(np.zeros((2, 2)))
        assert not (terminated.any() or truncated.any())
    np.testing.assert_allclose(info["time"], 600 * 0.02)


@pytest.mark.parametrize("options", [[1, 2], "state", 0])
def test_reset_rejects_options_that_are_not_a_dict(options):
    env = TwoLinkVectorEnv(num_envs=2, task="reach")
    env.reset(seed=4)
    before = env.np_random.bit_generator.state
    state = env.state
    with pytest.raises(
        ValueError,
        match=r"options must be a dict \(or None\).*valid keys for task 'reach' are "
        r"\['goal', 'state', 'target'\]",
    ):
        env.reset(seed=7, options=options)
    assert env.np_random.bit_generator.state == before
    np.testing.assert_array_equal(env.state, state)


def test_per_copy_time_limits_and_next_step_autoreset_by_hand():
    # Copy 0 starts fallen (terminates on step 1); copies 1 and 2 start upright in a
    # horizontal-plane arm and never fall. With a 5-step limit:
    #   copy 0: terminated at step 1, reset at step 2, truncated at 7, reset at 8, ...
    #   copies 1, 2: truncated at 5, reset at 6, truncated at 11, ...
    n, limit, seed = 3, 5, 21
    env = TwoLinkVectorEnv(num_envs=n, task="balance", params=NO_GRAVITY, max_episode_steps=limit)
    fallen = [0.0, 0.0, 0.0, 0.0]
    upright = [math.pi / 2, 0.0, 0.0, 0.0]
    env.reset(seed=seed, options={"state": [fallen, upright, upright]})
    terminated_at, truncated_at, reset_at = (
        {i: [] for i in range(n)},
        {i: [] for i in range(n)},
        {i: [] for i in range(n)},
    )
    restart_state = {}
    for t in range(1, 14):
        actions = np.full((n, 2), 0.9 if t == 2 else 0.0)  # ignored by copies that reset
        _, reward, terminated, truncated, info = env.step(actions)
        for i in range(n):
            if terminated[i]:
                terminated_at[i].append(t)
            if truncated[i]:
                truncated_at[i].append(t)
            if info["time"][i] == 0.0:
                reset_at[i].append(t)
                assert reward[i] == 0.0 and not terminated[i] and not truncated[i]
                restart_state.setdefault(i, info["state"][i].copy())
    assert terminated_at == {0: [1], 1: [], 2: []}
    assert truncated_at == {0: [7, 13], 1: [5, 11], 2: [5, 11]}
    assert reset_at == {0: [2, 8], 1: [6, 12], 2: [6, 12]}
    # the reset draws from the copy's own generator, like a single env's second reset
    single = TwoLinkEnv(task="balance", params=NO_GRAVITY)
    single.reset(seed=seed, options={"state": fallen})
    single.reset()
    np.testing.assert_array_equal(restart_state[0], single.state)


@pytest.mark.parametrize("task", TASKS)
def test_same_step_autoreset_matches_sync_vector_env(task):
    n, seed = 3, 8
    kwargs = {"task": task, "max_episode_steps": 17}
    ref = sync_env(n, AutoresetMode.SAME_STEP, **kwargs)
    native = TwoLinkVectorEnv(num_envs=n, autoreset_mode="SameStep", **kwargs)
    assert native.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    np.testing.assert_array_equal(native.reset(seed=seed)[0], ref.reset(seed=seed)[0])
    rng = np.random.default_rng(seed)
    finals = 0
    for _ in range(60):
        actions = rng.uniform(-1, 1, size=(n, 2)).astype(np.float32)
        r, g = ref.step(actions), native.step(actions)
        for a, b in zip(r[:4], g[:4], strict=True):
            np.testing.assert_array_equal(b, a)
        done = r[2] | r[3]
        if done.any():
            finals += int(done.sum())
            np.testing.assert_array_equal(g[4]["_final_obs"], r[4]["_final_obs"])
            for i in np.flatnonzero(done):
                np.testing.assert_array_equal(g[4]["final_obs"][i], r[4]["final_obs"][i])
                for key in ("state", "tip", "distance", "is_success"):
                    np.testing.assert_array_equal(
                        g[4]["final_info"][key][i], r[4]["final_info"][key][i]
                    )
        else:
            assert "final_obs" not in g[4]
    assert finals >= n


def test_same_step_final_info_masks_mark_the_finished_copies():
    env = TwoLinkVectorEnv(num_envs=3, task="balance", params=NO_GRAVITY, autoreset_mode="SameStep")
    fallen, upright = [0.0, 0.0, 0.0, 0.0], [math.pi / 2, 0.0, 0.0, 0.0]
    env.reset(seed=0, options={"state": [fallen, upright, upright]})
    info = env.step(np.zeros((3, 2)))[4]
    np.testing.assert_array_equal(info["_final_obs"], [True, False, False])
    np.testing.assert_array_equal(info["final_info"]["_state"], [True, False, False])


# -- reset options ---------------------------------------------------------------------------


def test_reset_options_batched_and_broadcast():
    env = TwoLinkVectorEnv(num_envs=3, task="reach")
    states = np.array([[0.1, 0.2, 0.3, 0.4], [-1.0, 2.0, 0.0, 0.0], [3.0, -3.0, 1.0, -1.0]])
    targets = np.array([[1.0, 0.0], [0.0, -1.5], [-0.5, 0.5]])
    obs, info = env.reset(seed=0, options={"state": states, "target": targets})
    np.testing.assert_array_equal(env.state, states)
    np.testing.assert_array_equal(info["state"], states)
    np.testing.assert_array_equal(info["target"], targets)
    np.testing.assert_array_equal(obs[:, 6:8], targets.astype(np.float32))
    decoded = env.decode(obs)
    np.testing.assert_allclose(decoded.state, states, rtol=1.2e-7, atol=5e-7)
    # one state for every copy
    _, info = env.reset(options={"state": states[1], "target": targets[1]})
    np.testing.assert_array_equal(info["state"], np.tile(states[1], (3, 1)))
    np.testing.assert_array_equal(info["target"], np.tile(targets[1], (3, 1)))


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"state": np.zeros((2, 4))}, r"options\['state'\] must have shape \(4,\) or \(3, 4\)"),
        ({"state": np.zeros((3, 3))}, r"options\['state'\] must have shape"),
        ({"target": np.zeros((3, 3))}, r"options\['target'\] must have shape \(2,\) or \(3, 2\)"),
        ({"target": [[1.0, 0.0], [2.5, 0.0], [0.0, 1.0]]}, "outside the workspace"),
        ({"state": np.full((3, 4), np.nan)}, "finite"),
        ({"speed": [1.0, 0.0]}, r"unknown reset option.*'speed'"),
        ({"goal": [1.0, 0.0], "target": [1.0, 0.0]}, r"'goal' and 'target' both set the goal"),
        ({"goal": np.zeros((3, 3))}, r"options\['goal'\] must have shape \(2,\) or \(3, 2\)"),
    ],
)
def test_reset_rejects_bad_batched_options(options, match):
    env = TwoLinkVectorEnv(num_envs=3, task="reach")
    with pytest.raises(ValueError, match=match):
        env.reset(options=options)


# -- physics and long runs ---------------------------------------------------------------------


@pytest.mark.parametrize("n", [6, 64])
def test_vector_step_is_the_batched_integrator_step(n):
    params = ArmParams(m1=1.3, l2=0.9, lc2=0.45)
    max_torque = np.array([25.0, 8.0])
    env = TwoLinkVectorEnv(
        num_envs=n, task="reach", params=params, dt=0.025, substeps=3, max_torque=max_torque
    )
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        state = env.state
        actions = rng.uniform(-1, 1, size=(n, 2)).astype(np.float32)
        expected = twolink_gym.step(params, state, actions * max_torque, 0.025, 3)
        info = env.step(actions)[4]
        np.testing.assert_allclose(info["state"], expected, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize(
    ("task", "kind", "n", "steps"),
    [
        ("reach", "random", 20, 500),
        ("reach", "bang-bang", 64, 160),
        ("balance", "random", 64, 160),
        ("balance", "bang-bang", 20, 500),
    ],
)
def test_long_run_stays_finite_and_inside_the_observation_space(task, kind, n, steps):
    # about 10k steps per case, 40k over the four cases, with few and many copies
    env = TwoLinkVectorEnv(num_envs=n, task=task, max_episode_steps=250)
    space = env.single_observation_space
    low, high = space.low, space.high
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(1)
    max_speed = env.sim.max_speed
    for _ in range(steps):
        if kind == "random":
            actions = rng.uniform(-1, 1, size=(n, 2)).astype(np.float32)
        else:
            actions = rng.choice(np.float32([-1.0, 1.0]), size=(n, 2))
        obs, reward, _, _, info = env.step(actions)
        assert obs.dtype == np.float32
        assert np.all(np.isfinite(obs)) and np.all(np.isfinite(reward))
        assert np.all((obs >= low) & (obs <= high))
        assert np.all(np.isfinite(info["state"]))
        assert np.all(np.abs(info["state"][:, 2:]) <= max_speed)
        if task == "balance":
            assert np.all((reward >= 0.0) & (reward <= 1.0))
    assert env.observation_space.contains(obs)


def test_pickle_round_trip_mid_episode_continues_identically():
    env = TwoLinkVectorEnv(num_envs=3, task="balance", max_episode_steps=20)
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(13):
        env.step(rng.uniform(-1, 1, size=(3, 2)))
    clone = pickle.loads(pickle.dumps(env))
    for _ in range(40):
        actions = rng.uniform(-1, 1, size=(3, 2))
        r, g = env.step(actions), clone.step(actions)
        for a, b in zip(r[:4], g[:4], strict=True):
            np.testing.assert_array_equal(b, a)
        assert_infos_equal(r[4], g[4])


# -- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize("num_envs", [0, -1, 2.0, True, "4", None])
def test_bad_num_envs(num_envs):
    with pytest.raises(ValueError, match="num_envs must be an integer >= 1"):
        TwoLinkVectorEnv(num_envs=num_envs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (
            {"max_episode_steps": 0},
            r"max_episode_steps must be a positive integer, -1 \(no limit\)",
        ),
        ({"max_episode_steps": -2}, "max_episode_steps"),
        ({"max_episode_steps": 2.5}, "max_episode_steps"),
        ({"max_episode_steps": True}, "max_episode_steps"),
        ({"autoreset_mode": "Sometimes"}, "autoreset_mode"),
        ({"autoreset_mode": "Disabled"}, "autoreset_mode|not supported"),
        ({"render_mode": "human"}, "render_mode"),
        ({"task": "swim"}, r"valid tasks are \['balance', 'reach', 'swingup', 'track'\]"),
        ({"dt": -1.0}, "dt"),
        ({"substeps": 0}, "substeps"),
        ({"max_torque": -5.0}, "max_torque"),
        ({"max_speed": 0.0}, "max_speed"),
        ({"params": {"l1": 0.0}}, r"ArmParams\.l1"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TwoLinkVectorEnv(num_envs=2, **kwargs)


@pytest.mark.parametrize(
    ("actions", "match"),
    [
        (np.zeros(2), r"shape \(3, 2\)"),
        (np.zeros((2, 2)), r"shape \(3, 2\)"),
        (np.zeros((3, 2, 1)), r"shape \(3, 2\)"),
        ([[0.0, 0.0], [np.nan, 0.0], [0.0, 0.0]], "finite"),
        ([[0.0, 0.0], [0.0, 0.0], [0.0, -np.inf]], "finite"),
        # float arrays of the right shape take the step's fast path: checked all the same
        (np.array([[0.0, 0.0], [np.nan, 0.0], [0.0, 0.0]], dtype=np.float32), "finite"),
        (np.array([[0.0, 0.0], [0.0, 0.0], [0.0, np.inf]]), "finite"),
        (np.zeros((3, 2), dtype=np.float32)[:, :1], r"shape \(3, 2\)"),
    ],
)
def test_bad_actions(actions, match):
    env = TwoLinkVectorEnv(num_envs=3, task="reach")
    env.reset(seed=0)
    before = env.state
    with pytest.raises(ValueError, match=match):
        env.step(actions)
    np.testing.assert_array_equal(env.state, before)


def test_bad_seed_list():
    env = TwoLinkVectorEnv(num_envs=3)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=[1, 2])


# -- seeding, info masks, configuration -----------------------------------------


@pytest.mark.parametrize("seed", [-1, [0, -2, 1], [0, 1, 2.5]])
def test_bad_seed_raises_gymnasiums_error_like_sync_vector_env(seed):
    # the reference: Gymnasium's own vectoriser over single envs refuses the same seeds
    with pytest.raises(gym.error.Error):
        sync_env(3, task="reach").reset(seed=seed)
    with pytest.raises(gym.error.Error):
        gym.make_vec("TwoLink-v0", num_envs=3).reset(seed=seed)


def test_seed_list_of_the_wrong_length_raises_value_error_like_sync_vector_env():
    with pytest.raises(ValueError, match="3"):
        sync_env(3, task="reach").reset(seed=[1, 2])
    with pytest.raises(ValueError, match=r"list of 3 seeds"):
        TwoLinkVectorEnv(3).reset(seed=[1, 2])


@pytest.mark.parametrize("seed", [1.5, "3", {"a": 1}])
def test_seed_of_another_type_is_refused_naming_the_argument(seed):
    with pytest.raises(gym.error.Error, match=r"seed must be an int, a list of 2 ints"):
        TwoLinkVectorEnv(2).reset(seed=seed)


def test_numpy_integer_seeds_are_accepted_and_match_python_ints():
    a, _ = TwoLinkVectorEnv(2).reset(seed=np.int64(4))
    b, _ = TwoLinkVectorEnv(2).reset(seed=[np.int32(4), 5])
    c, _ = sync_env(2, task="reach").reset(seed=4)
    np.testing.assert_array_equal(a, c)
    np.testing.assert_array_equal(b, c)


def test_none_entries_in_a_seed_list_draw_fresh_generators():
    env = TwoLinkVectorEnv(2)
    first, _ = env.reset(seed=[7, None])
    second, _ = env.reset(seed=[7, None])
    np.testing.assert_array_equal(first[0], second[0])
    assert not np.array_equal(first[1], second[1])


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_info_masks_are_separate_arrays(mode):
    env = TwoLinkVectorEnv(3, task="reach", max_episode_steps=1, autoreset_mode=mode)
    _, info = env.reset(seed=0)
    infos = [info, env.step(np.zeros((3, 2), dtype=np.float32))[4]]
    infos.append(env.step(np.zeros((3, 2), dtype=np.float32))[4])
    for info in infos:
        masks = [v for k, v in info.items() if k.startswith("_")]
        assert len(masks) >= 6
        assert len({id(m) for m in masks}) == len(masks)
        info["_state"][0] = False  # a caller editing one mask leaves the others alone
        assert all(info[k][0] for k in info if k.startswith("_") and k != "_state")
        if "final_info" in info:
            final_masks = [v for k, v in info["final_info"].items() if k.startswith("_")]
            assert len({id(m) for m in final_masks}) == len(final_masks)


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"task": "balance", "dt": 0.01, "substeps": 3, "max_torque": 7.0, "max_speed": 9.0}],
)
def test_configuration_is_exposed_read_only_like_the_single_env(kwargs):
    env = TwoLinkVectorEnv(2, params={"m2": 0.7}, **kwargs)
    single = TwoLinkEnv(params={"m2": 0.7}, **kwargs)
    expected = {
        "dt": kwargs.get("dt", 0.02),
        "substeps": kwargs.get("substeps", 2),
        "max_speed": kwargs.get("max_speed", 6 * math.pi),
    }
    torque = np.broadcast_to(kwargs.get("max_torque", (30.0, 10.0)), (2,))
    for e in (env, single):
        assert e.params == ArmParams(m2=0.7)
        assert e.task.name == kwargs.get("task", "reach")
        for name, value in expected.items():
            assert getattr(e, name) == pytest.approx(value)
        np.testing.assert_array_equal(e.max_torque, torque)
        for name in ("params", "task", "dt", "substeps", "max_torque", "max_speed"):
            with pytest.raises(AttributeError):
                setattr(e, name, getattr(e, name))
        # the torque limits are a copy: editing it leaves the env unchanged
        e.max_torque[:] = 0.0
        np.testing.assert_array_equal(e.max_torque, torque)


def test_float_arrays_out_of_range_are_clipped_like_any_action():
    """The fast path (a float array) clips as the general one (a list of floats) does."""
    fast, general = (TwoLinkVectorEnv(num_envs=3, task="reach") for _ in range(2))
    fast.reset(seed=1)
    general.reset(seed=1)
    big = np.array([[3.0e38, -3.0e38], [0.5, -2.0], [-0.25, 1.5]], dtype=np.float32)
    for _ in range(5):
        o1, r1, *_ = fast.step(big)
        o2, r2, *_ = general.step(big.astype(np.float64).tolist())
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(r1, r2)
    np.testing.assert_array_equal(
        fast._core.arrays.action, [[1.0, -1.0], [0.5, -1.0], [-0.25, 1.0]]
    )
