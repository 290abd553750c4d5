"""The swing-up task, its torque limits, ids, controller, field metrics and drawing."""

from __future__ import annotations

import os

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # never open a real window

import math

import gymnasium as gym
import numpy as np
import pytest
from twolink_gym.training.evaluate import arrival_times, torque_metrics

import twolink_gym  # noqa: F401  (registers the envs)
from twolink_gym import ArmParams, TwoLinkEnv, TwoLinkVectorEnv, make_task
from twolink_gym.controllers import CONTROLLERS, EnergySwingupController, LQRController
from twolink_gym.dynamics import gravity_torque, linearize, total_energy
from twolink_gym.kinematics import forward_kinematics
from twolink_gym.tasks import BalanceTask, SwingupTask

UPRIGHT = np.array([math.pi / 2, 0.0, 0.0, 0.0])
HANGING = np.array([-math.pi / 2, 0.0, 0.0, 0.0])


def _random_states(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack(
        [rng.uniform(-2 * np.pi, 2 * np.pi, (n, 2)), rng.uniform(-8.0, 8.0, (n, 2))]
    )


# -- the task ------------------------------------------------------------------------
def test_reward_is_bounded_and_peaks_at_the_still_upright():
    task = SwingupTask()
    params = ArmParams()
    x = _random_states(5000)
    a = np.random.default_rng(1).uniform(-1, 1, (5000, 2))
    ev = task.evaluate(params, x, np.zeros((5000, 0)), a)
    assert np.all(ev.reward >= 0.0) and np.all(ev.reward <= 1.0)
    assert not ev.terminated.any()  # a swing-up passes through every pose
    top = task.evaluate(params, UPRIGHT[None], np.zeros((1, 0)))
    assert top.reward[0] == pytest.approx(1.0, abs=1e-15)
    bottom = task.evaluate(params, HANGING[None], np.zeros((1, 0)))
    assert bottom.reward[0] < 1e-12


def test_height_term_is_each_links_height_from_the_kinematics():
    """sqrt((1 + sin q1)/2 · (1 + sin(q1 + q2))/2), recomputed from the link end points."""
    params = ArmParams(l1=0.7, l2=1.3)
    x = _random_states(500, seed=2)
    ev = SwingupTask().evaluate(params, x, np.zeros((500, 0)))
    elbow, tip = forward_kinematics(params, x[:, :2])
    h1 = (1 + elbow[:, 1] / params.l1) / 2
    h2 = (1 + (tip[:, 1] - elbow[:, 1]) / params.l2) / 2
    np.testing.assert_allclose(ev.terms["reward_height"], np.sqrt(h1 * h2), rtol=0, atol=1e-12)


def test_line_term_is_the_realaigym_boards_tip_above_the_line():
    """line_weight w: the reward is (1 - w)·plain + w·line, where line is the v3 board's own
    test (its scorer, in RealAIGym's angles: 0 hanging) of the tip above 0.9 of the reach."""
    from twolink_gym.realaigym.scoring import above_line

    params = ArmParams(l1=0.2, l2=0.3, lc1=0.2, lc2=0.25)
    rng = np.random.default_rng(5)
    x = _random_states(4000, seed=3)
    x[:2000, :2] = np.array([np.pi / 2, 0.0]) + rng.uniform(-0.6, 0.6, (2000, 2))  # near the line
    a = rng.uniform(-1, 1, (4000, 2))
    goal = np.zeros((4000, 0))
    board = above_line(np.column_stack([x[:, 0] + np.pi / 2, x[:, 1]]), (0.2, 0.3))
    assert 500 < board.sum() < 3500  # both sides of the line are sampled
    w = 0.4
    plain = SwingupTask(ctrl_weight=0.3).evaluate(params, x, goal, a)
    lined = SwingupTask(ctrl_weight=0.3, line_weight=w).evaluate(params, x, goal, a)
    np.testing.assert_array_equal(lined.terms["reward_line"], board.astype(float))
    ctrl = 1.0 - 0.3 * np.sum(a**2, axis=1) / 2.0
    np.testing.assert_allclose(
        lined.reward, (1 - w) * plain.reward + w * ctrl * board, rtol=0, atol=1e-12
    )
    # a lower line (half the reach): more of the states are above it
    low = SwingupTask(line_weight=1.0, line_height=0.5).evaluate(params, x, goal)
    tip_y = params.l1 * np.sin(x[:, 0]) + params.l2 * np.sin(x[:, 0] + x[:, 1])
    np.testing.assert_array_equal(low.reward, (tip_y > 0.25).astype(float))
    # off by default: the plain reward, rebuilt from its other factors
    t = plain.terms
    shaped = 0.2 * t["reward_height"] + 0.8 * t["reward_upright"] * t["reward_still"]
    np.testing.assert_allclose(plain.reward, ctrl * shaped, rtol=0, atol=1e-12)


def test_height_guide_is_quadratic_in_a_straight_swing_and_zero_folded():
    """A straight arm swung by θ from hanging: its centre of mass rose by (1 - cos θ) lc."""
    theta = np.linspace(-np.pi, np.pi, 201)
    x = np.zeros((theta.size, 4))
    x[:, 0] = -np.pi / 2 + theta
    ev = SwingupTask().evaluate(ArmParams(), x, np.zeros((theta.size, 0)))
    np.testing.assert_allclose(ev.terms["reward_height"], (1 - np.cos(theta)) / 2, atol=1e-12)
    small = np.abs(theta) < 0.05
    np.testing.assert_allclose(
        ev.terms["reward_height"][small], theta[small] ** 2 / 4, rtol=1e-3, atol=1e-12
    )
    # link 1 up and link 2 folded down (or the reverse): no height at all
    folded = np.array([[np.pi / 2, np.pi, 0, 0], [-np.pi / 2, np.pi, 0, 0]])
    ev = SwingupTask().evaluate(ArmParams(), folded, np.zeros((2, 0)))
    np.testing.assert_allclose(ev.terms["reward_height"], 0.0, atol=1e-7)


def test_success_is_the_balance_tasks_success():
    rng = np.random.default_rng(3)
    x = UPRIGHT + rng.uniform(-1, 1, (4000, 4)) * np.array([0.15, 0.15, 0.8, 0.8])
    goal = np.zeros((4000, 0))
    swing = SwingupTask().evaluate(ArmParams(), x, goal)
    balance = BalanceTask().evaluate(ArmParams(), x, goal)
    assert 0.1 < swing.success.mean() < 0.9  # both outcomes are exercised
    np.testing.assert_array_equal(swing.success, balance.success)
    np.testing.assert_array_equal(swing.distance, balance.distance)
    # and the condition itself, from the link angles' tilts computed here
    tilts = np.abs(np.angle(np.exp(1j * (np.cumsum(x[:, :2], axis=1) - np.pi / 2))))
    expected = (tilts.max(axis=1) <= 0.1) & np.all(np.abs(x[:, 2:]) <= 0.5, axis=1)
    np.testing.assert_array_equal(swing.success, expected)
    np.testing.assert_allclose(swing.distance, tilts.max(axis=1), rtol=0, atol=1e-12)


def test_episodes_start_near_hanging_and_last_15_s():
    env = gym.make("TwoLinkSwingup-v0")
    assert env.spec.max_episode_steps == 750
    task = env.unwrapped.task
    for seed in range(20):
        _, info = env.reset(seed=seed)
        dev = info["state"] - HANGING
        assert np.all(np.abs(dev[:2]) <= task.init_angle_noise)
        assert np.all(np.abs(dev[2:]) <= task.init_speed_noise)


def test_default_starts_are_four_uniforms_from_the_episode_generator():
    """Without exploring starts the draw is the documented one, uniform by uniform."""
    task = SwingupTask()
    for seed in range(5):
        drawn = task.sample_initial_state(np.random.default_rng(seed), ArmParams())
        u = np.random.default_rng(seed).uniform(-1.0, 1.0, size=4)
        np.testing.assert_array_equal(drawn, HANGING + u * 0.05)


def test_exploring_starts_mix_hanging_and_anywhere():
    task = SwingupTask(explore_fraction=0.3, explore_speed=2.0)
    rng = np.random.default_rng(7)
    starts = np.array([task.sample_initial_state(rng, ArmParams()) for _ in range(4000)])
    dev = starts - HANGING
    near = np.all(np.abs(dev[:, :2]) <= 0.05, axis=1) & np.all(np.abs(dev[:, 2:]) <= 0.05, axis=1)
    anywhere = starts[~near]
    # the share of exploring starts: binomial(4000, 0.3), 5 standard deviations
    assert abs(len(anywhere) / 4000 - 0.3) < 5 * math.sqrt(0.3 * 0.7 / 4000)
    # uniform over the whole circle in each angle, speeds within ±explore_speed
    for k in (0, 1):
        assert np.all(np.abs(anywhere[:, k] - HANGING[k]) <= math.pi)
        counts, _ = np.histogram(anywhere[:, k] - HANGING[k], bins=4, range=(-math.pi, math.pi))
        assert counts.min() > 0.8 * len(anywhere) / 4
    assert np.all(np.abs(anywhere[:, 2:]) <= 2.0) and np.abs(anywhere[:, 2:]).max() > 1.9
    # they only shape the episodes: an agent trained with them runs on the task's own
    assert {"explore_fraction", "explore_speed"} <= set(SwingupTask.episode_option_names)


def test_catch_starts_are_near_upright_in_their_share():
    task = SwingupTask(explore_fraction=0.2, catch_fraction=0.5, catch_angle=0.2, catch_speed=0.4)
    rng = np.random.default_rng(11)
    starts = np.array([task.sample_initial_state(rng, ArmParams()) for _ in range(4000)])
    # upright is q1 = +pi/2, q2 = 0 in the package's convention (angles from the x-axis)
    dev = starts - np.array([math.pi / 2, 0.0, 0.0, 0.0])
    near_upright = np.all(np.abs(dev[:, :2]) <= 0.2, axis=1) & np.all(
        np.abs(dev[:, 2:]) <= 0.4, axis=1
    )
    hanging = np.all(np.abs(starts - HANGING) <= 0.05, axis=1)
    # shares: catch 0.5, hanging 0.3 (binomial, 5 standard deviations); an exploring
    # start lands in the upright box with probability (0.4 / 2pi)^2 (0.2 / 1)^2 < 2e-4
    assert abs(near_upright.mean() - 0.5) < 5 * math.sqrt(0.25 / 4000) + 2e-4
    assert abs(hanging.mean() - 0.3) < 5 * math.sqrt(0.21 / 4000)
    caught = dev[near_upright]
    assert np.abs(caught[:, :2]).max() > 0.19 and np.abs(caught[:, 2:]).max() > 0.39
    # the tip of a catch start is near the top: y = l1 sin q1 + l2 sin(q1 + q2) close to l1 + l2
    p, up = ArmParams(), starts[near_upright]
    y = p.l1 * np.sin(up[:, 0]) + p.l2 * np.sin(up[:, 0] + up[:, 1])
    assert y.min() > 0.9 * (p.l1 + p.l2)


def test_catch_starts_leave_the_other_draws_as_they_were():
    """With catch_fraction 0 the exploring starts draw exactly what they drew before it existed."""
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    mixed = SwingupTask(explore_fraction=0.4)
    for _ in range(200):
        drawn = mixed.sample_initial_state(rng_a, ArmParams())
        # the documented draw: one uniform picks the kind, then 4 uniforms
        u = rng_b.uniform()
        noise = rng_b.uniform(-1.0, 1.0, size=4)
        scale = np.array([math.pi, math.pi, 1.0, 1.0]) if u < 0.4 else np.full(4, 0.05)
        np.testing.assert_array_equal(drawn, HANGING + noise * scale)


def test_exploring_and_catch_fractions_cannot_exceed_one():
    message = r"explore_fraction \+ catch_fraction \+ push_fraction must be at most 1"
    with pytest.raises(ValueError, match=message):
        make_task("swingup", {"explore_fraction": 0.6, "catch_fraction": 0.5})


def _largest_tilt(obs: np.ndarray) -> float:
    """The larger link tilt from the upward vertical [rad], from ``[cos q1, sin q1, cos q2, sin q2, ...]``."""
    q1 = math.atan2(obs[1], obs[0])
    absolute = np.array([q1, q1 + math.atan2(obs[3], obs[2])])
    return float(np.abs(np.angle(np.exp(1j * (absolute - np.pi / 2)))).max())


def _steps_to_truncation(env: gym.Env, action: np.ndarray) -> int:
    """Step ``env`` with ``action`` until it truncates, checking it never terminates; the steps."""
    steps = 0
    while True:
        _, _, terminated, truncated, _ = env.step(action)
        steps += 1
        assert not terminated
        if truncated:
            return steps


@pytest.mark.parametrize("vector", [False, True])
def test_fall_angle_ends_the_episode_when_a_caught_arm_falls(vector):
    """Started near upright (within fall_angle), an unactuated arm falls; the step past it ends it."""
    fall = 0.8
    options = {"fall_angle": fall, "catch_fraction": 1.0, "catch_angle": 0.02, "catch_speed": 0.02}
    if vector:
        env = TwoLinkVectorEnv(2, task="swingup", actuation="pendubot", task_options=options)
        obs, _ = env.reset(seed=5)
        obs = obs[0]
    else:
        env = gym.make("TwoLinkPendubotSwingup-v0", task_options=options)
        obs, _ = env.reset(seed=5)
    assert _largest_tilt(obs) < 0.05  # well within fall_angle
    tilts = []
    for _ in range(2000):
        action = np.zeros((2, 1)) if vector else np.zeros(1)
        obs, _, terminated, truncated, _ = env.step(action)
        if vector:
            # the vector env reports the finished episode's last observation before its autoreset
            obs, terminated, truncated = obs[0], terminated[0], truncated[0]
        tilt = _largest_tilt(obs)
        if terminated or truncated:
            break
        tilts.append(tilt)
    assert terminated and not truncated
    assert tilt > fall and max(tilts) <= fall
    # 0 (the default) never ends an episode: the same start falls and runs to truncation
    plain = gym.make("TwoLinkPendubotSwingup-v0", task_options={**options, "fall_angle": 0.0})
    plain.reset(seed=5)
    assert _steps_to_truncation(plain, np.zeros(1)) == plain.spec.max_episode_steps


def test_fall_angle_ends_a_swing_through_the_cone_when_it_leaves_it():
    """Thrown through the cone from outside it, the arm's episode ends on the step it leaves it."""
    fall = 0.8
    env = gym.make("TwoLinkPendubotSwingup-v0", task_options={"fall_angle": fall})
    # link 1 tilted 1 rad from upright (outside the cone), thrown toward it at 3 rad/s
    start = np.array([math.pi / 2 - 1.0, 0.0, 3.0, 0.0])
    obs, _ = env.reset(seed=0, options={"state": start})
    tilts = [_largest_tilt(obs)]
    for _ in range(env.spec.max_episode_steps):
        obs, _, terminated, truncated, _ = env.step(np.zeros(1))
        tilts.append(_largest_tilt(obs))
        if terminated or truncated:
            break
    assert terminated
    # from the observations: it started outside, entered, and ended on its first step out
    first_in = next(k for k, t in enumerate(tilts) if t <= fall)
    assert tilts[0] > fall and first_in > 0
    assert tilts[-1] > fall and max(tilts[first_in:-1]) <= fall


def test_fall_angle_spares_an_arm_never_up():
    """From hanging the arm is far past fall_angle from the start, and never within it: no end."""
    env = gym.make("TwoLinkPendubotSwingup-v0", task_options={"fall_angle": 0.3})
    env.reset(seed=2)
    assert _steps_to_truncation(env, np.array([0.3])) == env.spec.max_episode_steps


def test_smooth_weight_scales_the_reward_by_the_step_to_step_action_change():
    """Same seed, same actions: the reward with smooth_weight w is the plain reward times
    1 - w·|a_t - a_(t-1)|²/8, with a_(-1) = 0 at each episode's start (an autoreset included)."""
    w, n, steps = 0.6, 3, 40
    actions = np.random.default_rng(4).uniform(-1.2, 1.2, (steps, n, 2))  # clipped to [-1, 1]
    kwargs = {"task": "swingup", "num_envs": n, "max_episode_steps": 15}
    plain = TwoLinkVectorEnv(**kwargs)
    smooth = TwoLinkVectorEnv(**kwargs, task_options={"smooth_weight": w})
    plain.reset(seed=7)
    smooth.reset(seed=7)
    previous = np.zeros((n, 2))
    restarted = np.zeros(n, dtype=bool)  # NextStep autoreset: this step starts a new episode
    restarts = 0
    for a in actions:
        _, r0, _, trunc0, i0 = plain.step(a)
        _, r1, _, trunc1, i1 = smooth.step(a)
        np.testing.assert_array_equal(i1["state"], i0["state"])  # the physics is untouched
        np.testing.assert_array_equal(trunc1, trunc0)
        sent = np.clip(a, -1.0, 1.0)
        factor = 1.0 - w * np.sum((sent - previous) ** 2, axis=1) / 8.0
        live = ~restarted
        np.testing.assert_allclose(r1[live], r0[live] * factor[live], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(i1["reward_smooth"][live], factor[live], rtol=1e-12)
        previous = np.where(restarted[:, None], 0.0, sent)  # a reset step's action is not applied
        restarts += int(restarted.sum())
        restarted = trunc0.copy()
    assert restarts == 2 * n  # two episode ends per copy in 40 steps of 15-step episodes
    # off by default: the factor is 1 whatever the action
    assert np.all(i0["reward_smooth"] == 1.0)


@pytest.mark.parametrize(
    "option, value, rule",
    [
        ("explore_fraction", 1.5, r"must lie in \[0, 1\]"),
        ("explore_speed", -1.0, r"must be >= 0"),
        ("catch_fraction", 1.5, r"must lie in \[0, 1\]"),
        ("catch_angle", -0.1, r"must be >= 0"),
        ("fall_angle", -1.0, r"must be >= 0"),
        ("success_angle", 0.0, r"must be > 0"),
        ("height_weight", 1.5, r"must lie in \[0, 1\]"),
        ("smooth_weight", -0.1, r"must lie in \[0, 1\]"),
        ("line_weight", 1.5, r"must lie in \[0, 1\]"),
        ("line_height", -1.5, r"must lie in \[-1, 1\]"),
        ("init_speed_noise", -1.0, r"must be >= 0"),
    ],
)
def test_bad_task_options_are_named(option, value, rule):
    with pytest.raises(ValueError, match=f"swingup task option {option} {rule}, got"):
        make_task("swingup", {option: value})


# -- torque limits ------------------------------------------------------------------------
def _smallest_shoulder_torque_to_hold_link1_level(params: ArmParams, elbow_limit: float) -> float:
    """min over link 2's angle of |G1| at q1 = 0 with |G2| <= elbow_limit (a dense scan)."""
    q2 = np.linspace(-np.pi, np.pi, 200001)
    g = gravity_torque(params, np.column_stack([np.zeros_like(q2), q2]))
    ok = np.abs(g[:, 1]) <= elbow_limit
    return float(np.min(np.abs(g[ok, 0])))


def test_default_limits_cannot_lift_the_arm_quasi_statically():
    """The README's calculation: g1 - min(tau2, g2) > tau1 for (8, 4), not for (30, 10)."""
    params = ArmParams()
    env = TwoLinkEnv(task="swingup")
    tau1, tau2 = env.max_torque
    assert (tau1, tau2) == (8.0, 4.0)
    g1 = (params.m1 * params.lc1 + params.m2 * params.l1) * params.gravity
    g2 = params.m2 * params.lc2 * params.gravity
    need = _smallest_shoulder_torque_to_hold_link1_level(params, tau2)
    assert need == pytest.approx(g1 - min(tau2, g2), abs=1e-3)  # the scan's resolution
    assert need > tau1
    assert _smallest_shoulder_torque_to_hold_link1_level(params, 10.0) < 30.0


def test_task_default_torque_limits_and_overrides():
    assert TwoLinkEnv(task="reach").max_torque.tolist() == [30.0, 10.0]
    assert TwoLinkEnv(task="balance").max_torque.tolist() == [30.0, 10.0]
    assert TwoLinkVectorEnv(2, task="swingup").max_torque.tolist() == [8.0, 4.0]
    assert TwoLinkEnv(task="swingup", max_torque=(5, 3)).max_torque.tolist() == [5.0, 3.0]


@pytest.mark.parametrize("actuation", ["acrobot", "pendubot"])
def test_underactuated_swingup_defaults_to_the_arms_ordinary_motors(actuation):
    """(30, 10) N·m for the acrobot and the pendubot, everywhere the default is read."""
    from twolink_gym.training.config import EnvConfig

    assert TwoLinkEnv(task="swingup", actuation=actuation).max_torque.tolist() == [30.0, 10.0]
    venv = TwoLinkVectorEnv(2, task="swingup", actuation=actuation)
    assert venv.max_torque.tolist() == [30.0, 10.0]
    assert CONTROLLERS["lqr"]("balance", actuation=actuation).max_torque.tolist() == [30.0, 10.0]
    cfg = EnvConfig(task="swingup", actuation=actuation)
    assert cfg.resolved_max_torque == (30.0, 10.0)
    assert EnvConfig(task="swingup").resolved_max_torque == (8.0, 4.0)
    assert SwingupTask.default_max_torque_for("full") == (8.0, 4.0)
    assert BalanceTask.default_max_torque_for(actuation) == (30.0, 10.0)


def test_an_underactuated_arm_cannot_hold_its_passive_link_off_vertical():
    """Whatever the motor's limit: holding a pose needs the passive joint's gravity torque = 0.

    The acrobot (no shoulder torque) can hold link 1 level (q1 = 0) only if
    G1 = g1 + g2 cos q2 = 0, impossible as g1 > g2; the pendubot (no elbow
    torque) can hold link 2 only vertical (G2 = g2 cos(q1 + q2) = 0). A scan of
    the package's gravity_torque agrees.
    """
    params = ArmParams()
    g1 = (params.m1 * params.lc1 + params.m2 * params.l1) * params.gravity
    g2 = params.m2 * params.lc2 * params.gravity
    q2 = np.linspace(-np.pi, np.pi, 100001)
    level = gravity_torque(params, np.column_stack([np.zeros_like(q2), q2]))
    assert np.min(np.abs(level[:, 0])) == pytest.approx(g1 - g2, abs=1e-6)
    assert g1 - g2 > 9.0
    # link 2 level (absolute angle 0) from any link-1 pose: |G2| = g2
    q1 = np.linspace(-np.pi, np.pi, 1001)
    g = gravity_torque(params, np.column_stack([q1, -q1]))
    np.testing.assert_allclose(np.abs(g[:, 1]), g2, rtol=1e-12)


@pytest.mark.parametrize(
    "env_id, actuation, size",
    [
        ("TwoLinkSwingup-v0", "full", 2),
        ("TwoLinkAcrobotSwingup-v0", "acrobot", 1),
        ("TwoLinkPendubotSwingup-v0", "pendubot", 1),
        ("TwoLinkAcrobotBalance-v0", "acrobot", 1),
        ("TwoLinkPendubotBalance-v0", "pendubot", 1),
    ],
)
def test_registered_ids(env_id, actuation, size):
    env = gym.make(env_id)
    assert env.unwrapped.actuation == actuation
    assert env.action_space.shape == (size,)
    generic = gym.make("TwoLink-v0", task=env.unwrapped.task.name, actuation=actuation)
    assert generic.action_space == env.action_space
    assert generic.unwrapped.max_torque.tolist() == env.unwrapped.max_torque.tolist()


# -- the energy swing-up controller -----------------------------------------------------
def _run(controller, env: TwoLinkVectorEnv, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Success at the end, motor work ∫|τ·dq|dt [J] and start states of one episode per copy."""
    obs, info = env.reset(seed=seed)
    start = info["state"].copy()
    work = np.zeros(env.num_envs)
    for _ in range(env.max_episode_steps):
        action, _ = controller.predict(obs)
        tau = env.sim.torque(env.sim.expand_action(np.clip(action, -1, 1)))
        work += np.abs(np.sum(tau * env.state[:, 2:], axis=1)) * env.sim.dt
        obs, _, _, _, info = env.step(action)
    return info["is_success"], work, start


def test_energy_swingup_succeeds_and_does_at_least_the_work_gravity_asks():
    env = TwoLinkVectorEnv(100, task="swingup")
    controller = EnergySwingupController.from_env(env)
    success, work, start = _run(controller, env, seed=1000000)
    assert success.mean() >= 0.95
    # conservation of energy: the motors must supply the potential difference
    # (friction only adds to it)
    lift = total_energy(env.params, UPRIGHT) - total_energy(env.params, start)
    assert np.all(work[success] >= lift[success])


def test_energy_swingup_is_listed_for_swingup_only_and_drives_the_full_arm_only():
    assert EnergySwingupController.applies_to("swingup")
    assert not EnergySwingupController.applies_to("balance")
    assert "energy_swingup" in CONTROLLERS
    with pytest.raises(ValueError, match=r"cannot drive actuation 'acrobot'.*\['full'\]"):
        EnergySwingupController.from_env(TwoLinkEnv(task="swingup", actuation="acrobot"))
    with pytest.raises(
        ValueError, match=r"actuation must be one of \['acrobot', 'full', 'pendubot'\]"
    ):
        EnergySwingupController(actuation="elbow")
    for name in ("computed_torque", "pd_gravity"):
        with pytest.raises(ValueError, match=r"cannot drive actuation 'pendubot'"):
            CONTROLLERS[name].from_env(TwoLinkEnv(task="balance", actuation="pendubot"))


@pytest.mark.parametrize("actuation, joint", [("acrobot", 1), ("pendubot", 0)])
def test_one_input_linearisation_is_controllable_and_the_lqr_balances(actuation, joint):
    params = ArmParams()
    a, b = linearize(params, UPRIGHT, np.zeros(2))
    column = b[:, [joint]]
    ctrb = np.hstack([np.linalg.matrix_power(a, i) @ column for i in range(4)])
    assert np.linalg.matrix_rank(ctrb) == 4
    env = TwoLinkVectorEnv(20, task="balance", actuation=actuation)
    controller = LQRController.from_env(env)
    assert controller.design.k.shape == (1, 4)
    rng = np.random.default_rng(0)
    starts = UPRIGHT + rng.uniform(-1, 1, (20, 4)) * np.array([0.01, 0.01, 0.02, 0.02])
    obs, _ = env.reset(seed=0, options={"state": starts})
    for _ in range(env.max_episode_steps):
        action, _ = controller.predict(obs)
        assert action.shape == (20, 1)
        obs, _, terminated, _, info = env.step(action)
        assert not terminated.any()
    assert info["is_success"].all()


# -- field metrics -------------------------------------------------------------------------
def test_arrival_time_is_the_first_sample_within_the_tolerance():
    d = np.array(
        [[3.0, 2.0, 0.05, 0.2, 0.01], [3.0, 2.0, 1.0, 0.5, 0.2], [0.0, 1.0, 1.0, 1.0, 1.0]]
    )
    np.testing.assert_array_equal(arrival_times(d, 0.1, 0.5), [1.0, np.nan, 0.0])


def test_torque_metrics_on_hand_computed_signals():
    dt = 0.1
    # joint 1: +2, -2, +2 N·m at 1 rad/s; joint 2 without a motor; one step after the end
    tau = np.array([[[2.0, 0.0], [-2.0, 0.0], [2.0, 0.0], [np.nan, np.nan]]])
    dq = np.array([[[1.0, 3.0], [1.0, 3.0], [1.0, 3.0], [np.nan, np.nan]]])
    m = torque_metrics(tau, dq, (0,), dt)
    assert m["peak_torque"][0] == 2.0
    assert m["torque_integral"][0] == pytest.approx(0.6)
    assert m["work"][0] == pytest.approx(0.6)  # |τ·dq| = 2 J/s for 0.3 s
    assert m["smoothness"][0] == pytest.approx(np.std([-4.0, 4.0]))


# -- drawing ----------------------------------------------------------------------------------
@pytest.mark.parametrize("actuation, passive", [("full", None), ("acrobot", 0), ("pendubot", 1)])
def test_renderer_shows_which_joints_have_a_motor(actuation, passive):
    from twolink_gym.rendering import Colors

    env = TwoLinkEnv(task="swingup", actuation=actuation, render_mode="rgb_array")
    env.reset(seed=0, options={"state": [0.0, math.pi / 2, 0.0, 0.0]})  # link 1 level, link 2 up
    frame = env.render()
    r = env._renderer
    r_joint = max(3, round(0.035 * env.params.reach * r.scale))
    for joint, centre in enumerate(([0.0, 0.0], [env.params.l1, 0.0])):
        col, row = r.world_to_pixel(centre)
        # the ring's lower-left edge, off both links and the base mount
        px = frame[round(row + (r_joint - 1.5) * 0.7), round(col - (r_joint - 1.5) * 0.7)]
        expected = Colors.passive_joint if joint == passive else Colors.joint
        assert max(abs(int(p) - e) for p, e in zip(px, expected, strict=True)) <= 40, (
            joint,
            px.tolist(),
        )
    env.close()
