"""Robustness models: domain randomisation, observation models, actuator models, pushes.

The references are independent of the models' code: an env made directly with
the drawn parameters, an ideal env fed actions computed in the test by hand,
the noiseless twin env, an ideal env started where the push leaves the arm,
Gymnasium's ``SyncVectorEnv`` over single envs, scipy's Kolmogorov-Smirnov test
for the draws' distribution and the binomial law for the pushes' frequency.
"""

import copy
import math
import pickle
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from scipy import stats

import twolink_gym  # noqa: F401  (registers the ids)
from twolink_gym import ArmParams, TwoLinkEnv, TwoLinkVectorEnv
from twolink_gym.controllers import PDGravityController
from twolink_gym.imperfections import ActuatorModel, PushModel, Randomization
from twolink_gym.tasks.push import push, push_target

RANDOMIZE: dict[str, Any] = {
    "m2": (0.8, 1.2),
    "l1": (0.8, 1.2),
    "friction1": {"absolute": (0.0, 0.2)},
}
ALL_MODELS: dict[str, Any] = {
    "randomize": RANDOMIZE,
    "observation": "angles",
    "obs_noise": 0.01,
    "torque_noise": 0.05,
    "torque_response": 0.5,
    "action_delay": 2,
    "push_rate": 5.0,
}


def rollout(env, seed, actions):
    """Observations, rewards and true states of one seeded episode under ``actions``."""
    obs, info = env.reset(seed=seed)
    out = [(obs, 0.0, env.unwrapped.state, info)]
    for a in actions:
        obs, reward, _, _, info = env.step(a)
        out.append((obs, reward, env.unwrapped.state, info))
    return out


def actions(n, size=2, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, (n, size)).astype(np.float32)


# -- domain randomisation ----------------------------------------------------
def test_randomised_seeded_resets_are_bit_reproducible_in_the_single_env():
    a = actions(40)
    runs = [rollout(TwoLinkEnv("reach", **ALL_MODELS), 7, a) for _ in range(2)]
    for (o1, r1, x1, i1), (o2, r2, x2, i2) in zip(*runs, strict=True):
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(x1, x2)
        assert r1 == r2 and i1["params"] == i2["params"]
    other = rollout(TwoLinkEnv("reach", **ALL_MODELS), 8, a)
    assert other[0][3]["params"] != runs[0][0][3]["params"]


def test_randomised_seeded_resets_are_bit_reproducible_in_the_vector_env():
    def run():
        env = TwoLinkVectorEnv(4, task="reach", max_episode_steps=10, **ALL_MODELS)
        obs, info = env.reset(seed=3)
        seen = [obs, info["params"]["l1"]]
        for a in actions(25, seed=1):
            obs, _, _, _, info = env.step(np.tile(a, (4, 1)))
            seen += [obs, env.state, info["params"]["m2"]]
        return seen

    for x, y in zip(run(), run(), strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_vector_env_equals_sync_vector_env_of_single_envs_with_every_model(mode):
    """Copy i (own arm draws, own noise) equals gym.make's env seeded seed + i, across autoresets."""
    n, steps = 3, 12
    ref = SyncVectorEnv(
        [lambda: gym.make("TwoLinkReach-v0", max_episode_steps=5, **ALL_MODELS) for _ in range(n)],
        autoreset_mode=mode,
    )
    native = gym.make_vec(
        "TwoLinkReach-v0", num_envs=n, max_episode_steps=5, autoreset_mode=mode, **ALL_MODELS
    )
    pushes = 0
    o_ref, i_ref = ref.reset(seed=11)
    o_nat, i_nat = native.reset(seed=11)
    np.testing.assert_array_equal(o_nat, o_ref)
    assert i_nat["params"].keys() == i_ref["params"].keys()
    for key in i_ref["params"]:
        np.testing.assert_array_equal(i_nat["params"][key], i_ref["params"][key])
    for a in actions(steps * n, seed=2).reshape(steps, n, 2):
        r = ref.step(a)
        g = native.step(a)
        for x, y in zip(r[:4], g[:4], strict=True):
            np.testing.assert_array_equal(y, x)
        for key in r[4]["params"]:
            np.testing.assert_array_equal(g[4]["params"][key], r[4]["params"][key])
        np.testing.assert_array_equal(g[4]["pushed"], r[4]["pushed"])
        pushes += int(np.count_nonzero(r[4]["pushed"]))
        if mode == AutoresetMode.SAME_STEP and r[3].any():
            for i in np.flatnonzero(r[3]):  # SyncVectorEnv: an object array of observations
                np.testing.assert_array_equal(g[4]["final_obs"][i], r[4]["final_obs"][i])
    # the copies' arms differ from each other, and some steps began with a push
    assert len(set(g[4]["params"]["l1"].tolist())) == n
    assert pushes > 0


def test_drawn_parameters_lie_in_their_ranges_and_are_uniform():
    env = TwoLinkEnv("balance", randomize=RANDOMIZE)
    draws = [env.reset(seed=s)[1]["params"] for s in range(400)]
    nominal = ArmParams()
    m2 = np.array([d["m2"] for d in draws]) / nominal.m2
    l1 = np.array([d["l1"] for d in draws]) / nominal.l1
    f1 = np.array([d["friction1"] for d in draws])
    for x, (lo, hi) in ((m2, (0.8, 1.2)), (l1, (0.8, 1.2)), (f1, (0.0, 0.2))):
        assert np.all((x >= lo) & (x <= hi))
        assert stats.kstest(x, stats.uniform(lo, hi - lo).cdf).pvalue > 1e-3
    # independent fields: uncorrelated draws
    assert abs(np.corrcoef(m2, l1)[0, 1]) < 0.2
    # undeclared fields keep the nominal value
    assert {d["m1"] for d in draws} == {nominal.m1}
    assert {d["lc2"] for d in draws} == {nominal.lc2}


def test_dynamics_with_drawn_parameters_equal_an_env_made_with_them():
    a = actions(60, seed=4)
    random_env = TwoLinkEnv("reach", randomize=RANDOMIZE)
    obs, info = random_env.reset(seed=21)
    fixed = TwoLinkEnv("reach", params=info["params"])
    assert fixed.params == random_env.arm_params == ArmParams(**info["params"])
    obs_f, _ = fixed.reset(options={"state": random_env.state, "target": random_env.goal})
    np.testing.assert_array_equal(obs_f, obs)
    for action in a:
        o1, r1, *_ = random_env.step(action)
        o2, r2, *_ = fixed.step(action)
        np.testing.assert_array_equal(random_env.state, fixed.state)
        np.testing.assert_array_equal(o1, o2)
        assert r1 == r2


def test_observation_bounds_cover_the_randomised_arms():
    env = TwoLinkEnv("reach", randomize={"l1": (0.8, 1.2), "l2": (0.5, 1.5)})
    nominal = ArmParams()
    reach = 1.2 * nominal.l1 + 1.5 * nominal.l2  # the largest arm the ranges allow
    np.testing.assert_allclose(env.observation_space.high[6:], [reach, reach, 2 * reach, 2 * reach])
    for seed in range(200):
        obs, _ = env.reset(seed=seed)
        assert env.observation_space.contains(obs)


def test_check_env_passes_without_warnings_and_pickling_keeps_the_stream():
    for kwargs in (
        {"randomize": RANDOMIZE},
        ALL_MODELS,
        {**ALL_MODELS, "observation": "state", "obs_noise": [0.01] * 6 + [0.0] * 4},
    ):
        env = TwoLinkEnv("reach", **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env, skip_render_check=True)
        env.reset(seed=5)
        for a in actions(5):
            env.step(a)
        twin = pickle.loads(pickle.dumps(env))
        for a in actions(20, seed=9):
            np.testing.assert_array_equal(env.step(a)[0], twin.step(a)[0])
        np.testing.assert_array_equal(env.reset()[0], twin.reset()[0])


def test_gym_make_and_make_vec_take_the_keywords():
    env = gym.make("TwoLink-v0", task="balance", randomize={"m2": (0.8, 1.2)})
    _, info = env.reset(seed=0)
    assert 0.8 <= info["params"]["m2"] <= 1.2
    vec = gym.make_vec("TwoLinkBalance-v0", num_envs=2, randomize={"m2": (0.8, 1.2)})
    _, info = vec.reset(seed=0)
    assert info["params"]["m2"].shape == (2,) and info["_params"].all()
    assert env.unwrapped.randomization == vec.unwrapped.randomization


def test_sb3_native_vec_env_with_randomisation():
    from twolink_gym.training.sb3_vec_env import make_sb3_vec_env

    venv = make_sb3_vec_env(3, seed=0, task="reach", max_episode_steps=4, **ALL_MODELS)
    obs = venv.reset()
    assert obs.shape == (3, 8)
    l1 = [info["params"]["l1"] for info in venv.unwrapped.reset_infos]
    assert len(set(l1)) == 3
    for _ in range(5):
        obs, _, dones, _ = venv.step(actions(3, seed=1))
        arms = venv.get_attr("arm_params")  # each copy's own, as DummyVecEnv's envs give it
        for i in np.flatnonzero(dones):  # the new episode's arm, from its reset info
            assert venv.unwrapped.reset_infos[i]["params"]["l1"] == arms[i].l1


@pytest.mark.parametrize(
    ("randomize", "match"),
    [
        ({"mass": (0.8, 1.2)}, r"unknown ArmParams field.*'mass'"),
        ({"m1": (1.2, 0.8)}, r"randomize\['m1'\] must satisfy low < high"),
        ({"m1": (1.0, 1.0)}, r"randomize\['m1'\] must satisfy low < high"),
        ({"m1": (0.8, float("nan"))}, r"randomize\['m1'\] must be a pair of finite numbers"),
        ({"m1": (0.8,)}, r"randomize\['m1'\] must be a pair"),
        ({"m1": "wide"}, r"randomize\['m1'\] must be a pair"),
        ({"m1": {"relative": (0.8, 1.2)}}, r"randomize\['m1'\] must be \(low, high\) factors"),
        ({"m1": (-0.5, 1.2)}, r"randomize\['m1'\]: factors must be >= 0"),
        ({"m1": (0.0, 1.2)}, r"randomize\['m1'\] allows invalid arms.*m1 must be > 0"),
        ({"friction1": {"absolute": (-0.1, 0.2)}}, r"randomize\['friction1'\] allows.*>= 0"),
        ({"lc2": (0.8, 2.5)}, r"randomize\['lc2'\] allows invalid arms.*lc2 <= l2"),
        ({"l2": (0.4, 1.0)}, r"randomize\['l2'\] allows invalid arms.*lc2 <= l2"),
        ({"lc1": (1.0, 2.0), "l1": (0.9, 1.1)}, r"randomize\[.lc1.\] allows invalid arms"),
        ([("m1", (0.8, 1.2))], r"randomize must be a mapping"),
    ],
)
def test_bad_randomisation_names_the_field_and_the_rule(randomize, match):
    with pytest.raises(ValueError, match=match):
        TwoLinkEnv("reach", randomize=randomize)
    with pytest.raises(ValueError, match=match):
        TwoLinkVectorEnv(2, task="reach", randomize=randomize)


def test_per_copy_arms_are_checked_against_the_ranges():
    arms = [ArmParams(), ArmParams(lc2=0.9)]  # 0.9 * 1.2 > l2 = 1
    TwoLinkVectorEnv(2, task="reach", params=[ArmParams()] * 2, randomize={"lc2": (0.8, 1.2)})
    with pytest.raises(ValueError, match=r"randomize\['lc2'\]"):
        TwoLinkVectorEnv(2, task="reach", params=arms, randomize={"lc2": (0.8, 1.2)})


def test_empty_randomisation_is_none_and_to_spec_round_trips():
    assert Randomization.create({}) is None
    r = Randomization.create(RANDOMIZE)
    assert r is not None and Randomization.create(r.to_spec()) == r
    assert "params" not in TwoLinkEnv("reach", randomize={}).reset(seed=0)[1]


# -- observation models ------------------------------------------------------
@pytest.mark.parametrize("task", ["reach", "balance", "swingup"])
def test_angles_observation_is_the_state_observation_without_speeds(task):
    full, angles = TwoLinkEnv(task), TwoLinkEnv(task, observation="angles")
    kept = [0, 1, 2, 3, *range(6, full.observation_space.shape[0])]
    assert angles.observation_space.shape == (len(kept),)
    np.testing.assert_array_equal(angles.observation_space.low, full.observation_space.low[kept])
    names = angles.sim.observation_names
    assert "dq1" not in names and "dq2" not in names and names[:4] == full.sim.observation_names[:4]
    o1, _ = full.reset(seed=2)
    o2, _ = angles.reset(seed=2)
    np.testing.assert_array_equal(o2, o1[kept])
    for a in actions(30):
        np.testing.assert_array_equal(angles.step(a)[0], full.step(a)[0][kept])
    decoded = angles.decode(o2)
    np.testing.assert_array_equal(decoded.state[:2], full.decode(o1).state[:2])
    np.testing.assert_array_equal(decoded.extras, full.decode(o1).extras)
    assert np.isnan(decoded.state[2:]).all()


@pytest.mark.parametrize("observation", ["state", "angles"])
def test_observation_noise_has_the_declared_std_on_state_entries_only(observation):
    """Sample std of (noisy - noiseless twin) over many steps, against the declared std."""
    std = 0.02
    noisy = TwoLinkEnv("reach", observation=observation, obs_noise=std)
    exact = TwoLinkEnv("reach", observation=observation)
    diffs = []
    for seed in range(10):
        diffs.append(noisy.reset(seed=seed)[0] - exact.reset(seed=seed)[0])
        for a in actions(200, seed=seed):
            o1, r1, *_ = noisy.step(a)
            o2, r2, *_ = exact.step(a)
            assert r1 == r2  # the noise changes what is seen, not the dynamics
            diffs.append(o1 - o2)
    d = np.array(diffs, dtype=np.float64)
    k = 6 if observation == "state" else 4
    # 2010 samples: the sample std is within 6 % of sigma with overwhelming probability
    np.testing.assert_allclose(d[:, :k].std(axis=0), std, rtol=0.06)
    assert np.all(np.abs(d[:, :k].mean(axis=0)) < 4 * std / np.sqrt(len(d)))
    assert np.all(d[:, k:] == 0)  # the task's extras stay exact
    # independent entries
    assert np.all(np.abs(np.corrcoef(d[:, :k].T) - np.eye(k)) < 0.1)


def test_observation_noise_per_entry_includes_the_extras():
    std = np.array([0, 0, 0, 0, 0.1, 0.2, 0, 0, 0.05, 0.05])
    noisy = TwoLinkEnv("reach", obs_noise=std)
    exact = TwoLinkEnv("reach")
    noisy.reset(seed=0)
    exact.reset(seed=0)
    d = np.array([noisy.step(a)[0] - exact.step(a)[0] for a in actions(3000)], dtype=np.float64)
    np.testing.assert_allclose(d.std(axis=0), std, rtol=0.06, atol=1e-7)
    low = exact.observation_space.low
    np.testing.assert_allclose(noisy.observation_space.low, low - 6 * std, rtol=1e-6)


# -- actuator models ---------------------------------------------------------
@pytest.mark.parametrize(("k", "delay"), [(0.3, 0), (1.0, 2), (0.6, 3)])
def test_first_order_response_and_delay_reproduce_a_hand_computed_sequence(k, delay):
    """The model env under commands a_t equals the ideal env under tau_t computed here."""
    commands = actions(40, seed=5)
    applied = []
    tau = np.zeros(2)
    for t in range(len(commands)):
        u = commands[t - delay] if t >= delay else np.zeros(2)
        tau = tau + k * (u - tau)
        applied.append(tau.copy())
    model = TwoLinkEnv("reach", torque_response=k, action_delay=delay)
    ideal = TwoLinkEnv("reach")
    for episode in range(2):  # the memory is reset at the episode start
        np.testing.assert_array_equal(model.reset(seed=episode)[0], ideal.reset(seed=episode)[0])
        for c, a in zip(commands, applied, strict=True):
            o1, r1, *_ = model.step(c)
            o2, r2, *_ = ideal.step(a)
            np.testing.assert_allclose(model.state, ideal.state, rtol=0, atol=1e-12)
            np.testing.assert_allclose(o1, o2, rtol=0, atol=1e-6)
            assert r1 == pytest.approx(r2, abs=1e-9)  # the reward sees the applied torque


def test_torque_noise_is_drawn_from_the_env_generator_before_saturation():
    sigma = 0.3
    model = TwoLinkEnv("reach", torque_noise=sigma)
    ideal = TwoLinkEnv("reach")
    model.reset(seed=4)
    ideal.reset(seed=4)
    rng = copy.deepcopy(model.np_random)
    for c in actions(50, seed=6):
        a = np.clip(c + sigma * rng.standard_normal(2), -1, 1)
        model.step(c)
        ideal.step(a)
        np.testing.assert_allclose(model.state, ideal.state, rtol=0, atol=1e-12)


def test_torque_noise_std_and_the_joint_without_a_motor():
    for actuated, joints in (((0, 1), [0, 1]), ((1,), [1])):
        model = ActuatorModel.create(0.1, 1.0, 0, actuated)
        assert model is not None
        state = model.new_state(20000)
        rngs = [np.random.default_rng(i) for i in range(20000)]
        applied = model.apply(np.zeros((20000, 2)), state, rngs)
        np.testing.assert_allclose(applied[:, joints].std(axis=0), 0.1, rtol=0.03)
        idle = [j for j in (0, 1) if j not in joints]
        assert np.all(applied[:, idle] == 0)


def test_acrobot_torque_noise_only_at_the_elbow():
    env = TwoLinkEnv("swingup", actuation="acrobot", torque_noise=0.2, action_delay=1)
    env.reset(seed=0)
    for a in actions(10, size=1):
        env.step(a)
        assert env.unwrapped._core.arrays.action[0, 0] == 0.0


def test_everything_composes_through_gym_make():
    env = gym.make("TwoLinkReach-v0", **ALL_MODELS)
    obs, info = env.reset(seed=0)
    assert obs.shape == (8,) and "params" in info
    for a in actions(60):
        obs, *_ = env.step(a)
        assert env.observation_space.contains(obs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"observation": "pixels"}, r"observation must be one of \['angles', 'state'\]"),
        ({"obs_noise": -0.1}, r"obs_noise must be a number >= 0"),
        ({"obs_noise": float("inf")}, r"obs_noise must be a number >= 0"),
        ({"obs_noise": [0.1, 0.1]}, r"obs_noise must be .*sequence of 10 numbers"),
        ({"observation": "angles", "obs_noise": [0.1] * 10}, r"obs_noise .*sequence of 8"),
        ({"torque_noise": -1}, r"torque_noise must be a number >= 0"),
        ({"torque_noise": "x"}, r"torque_noise must be a number >= 0"),
        ({"torque_response": 0.0}, r"torque_response must be a number in \(0, 1\]"),
        ({"torque_response": 1.5}, r"torque_response must be a number in \(0, 1\]"),
        ({"action_delay": -1}, r"action_delay must be an integer >= 0"),
        ({"action_delay": 1.5}, r"action_delay must be an integer >= 0"),
        ({"action_delay": True}, r"action_delay must be an integer >= 0"),
        ({"push_rate": -0.5}, r"push_rate must be a number >= 0 \(pushes per second\)"),
        ({"push_rate": float("nan")}, r"push_rate must be a number >= 0"),
        ({"push_rate": True}, r"push_rate must be a number >= 0"),
        ({"push_rate": "often"}, r"push_rate must be a number >= 0"),
    ],
)
def test_bad_model_keywords_name_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TwoLinkEnv("reach", **kwargs)
    with pytest.raises(ValueError, match=match):
        TwoLinkVectorEnv(2, task="reach", **kwargs)


def test_controllers_estimate_speeds_by_a_backward_difference_on_angles():
    """On angles, a controller acts as on the state with dq = wrap(q_t - q_{t-1}) / dt (computed here)."""
    env = TwoLinkVectorEnv(
        3, task="reach", observation="angles", max_episode_steps=15, autoreset_mode="SameStep"
    )
    on_angles = PDGravityController.from_env(env)
    on_state = PDGravityController.from_env(TwoLinkVectorEnv(3, task="reach"))
    assert on_angles.observation_kind == "angles" and on_state.observation_kind == "state"
    obs, _ = env.reset(seed=0)
    starts = np.ones(3, dtype=bool)
    previous = None
    for t in range(40):
        action, _ = on_angles.predict(obs, episode_start=starts)
        o = obs.astype(np.float64)
        q = np.stack([np.arctan2(o[:, 1], o[:, 0]), np.arctan2(o[:, 3], o[:, 2])], 1)
        dq = (
            np.zeros_like(q) if previous is None else np.angle(np.exp(1j * (q - previous))) / env.dt
        )
        dq[starts] = 0.0
        full = np.concatenate([o[:, :4], dq, o[:, 4:]], axis=1)
        expected, _ = on_state.predict(full)
        np.testing.assert_allclose(action, expected, rtol=0, atol=1e-5)
        previous = q
        obs, _, terminated, truncated, _ = env.step(action)
        starts = terminated | truncated  # SameStep: the next observation is a reset's
        if t == 14:
            assert starts.all()


def test_a_randomised_env_controller_keeps_the_nominal_model():
    env = TwoLinkEnv("reach", randomize=RANDOMIZE)
    env.reset(seed=0)
    assert env.arm_params != ArmParams()
    assert PDGravityController.from_env(env).params == ArmParams()
    with pytest.raises(ValueError, match="observation must be 'state' or 'angles'"):
        PDGravityController("reach").set_observation("pixels")


def test_sb3_check_env_and_vector_env_pickling_with_every_model():
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check_env(TwoLinkEnv("reach", **ALL_MODELS))
    env = TwoLinkVectorEnv(3, task="reach", max_episode_steps=3, **ALL_MODELS)
    env.reset(seed=0)
    twin = pickle.loads(pickle.dumps(env))
    for a in actions(8, seed=3):
        x, y = env.step(np.tile(a, (3, 1))), twin.step(np.tile(a, (3, 1)))
        np.testing.assert_array_equal(x[0], y[0])
        np.testing.assert_array_equal(x[4]["params"]["l1"], y[4]["params"]["l1"])


# -- pushes -------------------------------------------------------------------------
def test_a_pushed_step_starts_where_the_push_leaves_the_arm():
    """Each step's three draws (documented order) decide the push; the step then acts from there.

    The reference: an ideal env started at the pushed state (or the unpushed
    one) and given the same action, whose state and angle encoding must match.
    """
    rate, dt = 30.0, 0.01
    settings = {"actuation": "acrobot", "dt": dt, "substeps": 5, "max_speed": 60.0}
    env = TwoLinkEnv("swingup", push_rate=rate, **settings)
    ideal = TwoLinkEnv("swingup", **settings)
    _, info = env.reset(seed=5)
    assert info["pushed"] is False
    p = 1.0 - math.exp(-rate * dt)
    seen = set()
    for a in actions(60, size=1, seed=9):
        rng = copy.deepcopy(env.np_random)
        u = rng.random(3)
        start = env.state
        if u[0] < p:
            start = push(env.arm_params, start, push_target(u[1:]))
        ideal.reset(options={"state": start})
        obs, _, _, _, info = env.step(a)
        expected, *_ = ideal.step(a)
        assert info["pushed"] is bool(u[0] < p)
        np.testing.assert_array_equal(env.state, ideal.state)
        np.testing.assert_array_equal(obs[:6], expected[:6])
        seen.add(info["pushed"])
    assert seen == {True, False}


def test_pushes_come_at_the_declared_rate_in_every_copy():
    """Over 64 copies x 400 steps the pushed share is 1 - exp(-rate dt) within 5 binomial sigmas."""
    rate, dt, n, steps = 2.0, 0.01, 64, 400
    env = TwoLinkVectorEnv(
        n, task="swingup", dt=dt, substeps=1, push_rate=rate, max_episode_steps=150
    )
    env.reset(seed=0)
    counts = np.zeros(n)
    for _ in range(steps):
        *_, info = env.step(np.zeros((n, 2), dtype=np.float32))
        counts += info["pushed"]
    p = 1.0 - math.exp(-rate * dt)
    total = n * steps
    assert abs(counts.sum() - p * total) < 5 * math.sqrt(total * p * (1 - p))
    assert np.count_nonzero(counts) > n // 2  # spread over the copies, not one stream
    assert PushModel.create(rate).probability(dt) == pytest.approx(p, rel=1e-15)


def test_no_push_rate_is_no_model_and_no_info_entry():
    assert PushModel.create(0) is None and PushModel.create(0.0) is None
    env = TwoLinkEnv("swingup")
    _, info = env.reset(seed=0)
    assert env.push_model is None and "pushed" not in info
    assert "pushed" not in env.step(np.zeros(2, dtype=np.float32))[4]
