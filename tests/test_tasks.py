"""Reward terms, termination and success of the tasks against hand-computed cases.

The arm is placed with ``reset(options=...)`` so that the quantities are known
from geometry (tip by trigonometry, targets by inverse kinematics or trig, tilts
from the angle convention of docs/physics.md). Cases that need a step use an arm in a
horizontal plane (``gravity = 0``) held still with zero torque: it stays exactly
where it was put, so the step's reward, termination and success are those of
the placed pose. Nothing here calls a task's own reward function, except to check
the shape of the reach reward against the Gaussian's known properties.
"""

import dataclasses
import itertools
import math

import gymnasium as gym
import numpy as np
import pytest

import twolink_gym
from twolink_gym import ArmParams, TwoLinkEnv, TwoLinkVectorEnv
from twolink_gym.tasks import TASKS, Task, make_task

NO_GRAVITY = ArmParams(gravity=0.0)
ZERO = np.zeros(2, dtype=np.float32)
DEG = math.pi / 180


def tip_by_trig(params, q1, q2):
    return np.array(
        [
            params.l1 * math.cos(q1) + params.l2 * math.cos(q1 + q2),
            params.l1 * math.sin(q1) + params.l2 * math.sin(q1 + q2),
        ]
    )


def still_step(env, state, action=ZERO, **options):
    """Reset to ``state`` (and options) and take one step; return the step."""
    env.reset(options={"state": state, **options})
    return env.step(action)


# -- reach ---------------------------------------------------------------------------


@pytest.mark.parametrize("q", [(0.3, 1.2), (-2.0, -0.7), (2.9, 2.5), (math.pi / 2, 0.0)])
def test_reach_tip_on_a_trig_target_has_zero_distance(q):
    params = ArmParams(l1=1.1, l2=0.8, lc1=0.5, lc2=0.4)
    target = tip_by_trig(params, *q)
    env = TwoLinkEnv(task="reach", params=params)
    _, info = env.reset(options={"state": [q[0], q[1], 0.0, 0.0], "target": target})
    assert info["distance"] == pytest.approx(0.0, abs=1e-15)
    assert info["reward_dist"] == pytest.approx(0.0, abs=1e-15)
    assert info["reward_ctrl"] == 0.0
    assert info["is_success"] is True
    np.testing.assert_allclose(info["tip"], target, rtol=0, atol=1e-15)


@pytest.mark.parametrize("elbow", ["up", "down"])
@pytest.mark.parametrize("target", [(0.7, -1.1), (-1.5, 0.2), (0.0, 1.95)])
def test_reach_tip_on_an_ik_target_gives_the_maximal_reward_after_a_still_step(target, elbow):
    q = twolink_gym.inverse_kinematics(NO_GRAVITY, target, elbow)
    env = TwoLinkEnv(task="reach", params=NO_GRAVITY)
    _, reward, terminated, truncated, info = still_step(env, [q[0], q[1], 0.0, 0.0], target=target)
    np.testing.assert_array_equal(info["state"], [q[0], q[1], 0.0, 0.0])  # did not move
    # on the target, idle: the cone is 0 and the Gaussian near term its maximum 1
    assert reward == pytest.approx(1.0, abs=1e-14)
    assert info["reward_dist"] == pytest.approx(0.0, abs=1e-14)
    assert info["reward_near"] == pytest.approx(1.0, abs=1e-14)
    assert info["distance"] == pytest.approx(0.0, abs=1e-14)
    assert info["is_success"] is True
    assert not terminated and not truncated


@pytest.mark.parametrize(("offset", "success"), [(0.04, True), (0.0499, True), (0.06, False)])
def test_reach_success_radius_is_5_cm(offset, success):
    q = (0.5, 1.4)
    tip = tip_by_trig(NO_GRAVITY, *q)
    direction = -tip / np.linalg.norm(tip)  # towards the base: stays in the workspace
    target = tip + offset * direction
    env = TwoLinkEnv(task="reach", params=NO_GRAVITY)
    _, reward, _, _, info = still_step(env, [q[0], q[1], 0.0, 0.0], target=target)
    assert info["distance"] == pytest.approx(offset, abs=1e-14)
    # -d + exp(-d² / (2 · 0.05²)), no action: 0.04 m -> 0.6861, 0.06 m -> 0.4268
    assert reward == pytest.approx(-offset + math.exp(-(offset**2) / 0.005), abs=1e-14)
    assert info["is_success"] is success


@pytest.mark.parametrize(("speed", "success"), [(0.09, True), (0.11, False)])
def test_reach_success_needs_the_tip_to_move_slowly(speed, success):
    # Turning joint 2 alone at w rad/s moves the tip on a circle of radius l2
    # about the elbow: tip speed l2·w. Here l2 = 1, so the tip moves at w m/s.
    q = (0.5, 1.4)
    target = tip_by_trig(NO_GRAVITY, *q)
    env = TwoLinkEnv(task="reach", params=NO_GRAVITY)
    _, info = env.reset(options={"state": [q[0], q[1], 0.0, speed], "target": target})
    assert info["distance"] == pytest.approx(0.0, abs=1e-15)
    assert info["is_success"] is success
    # the same through the straight arm turning at the base: tip speed (l1 + l2)·w
    q = (-0.8, 0.0)
    target = tip_by_trig(NO_GRAVITY, *q)
    _, info = env.reset(options={"state": [q[0], q[1], speed / 2, 0.0], "target": target})
    assert info["is_success"] is success


@pytest.mark.parametrize("action", [(0.6, -0.8), (1.0, 1.0), (3.0, -0.5)])
def test_reach_dense_reward_is_cone_plus_gaussian_minus_control_cost(action):
    target = np.array([-0.4, 1.3])
    env = TwoLinkEnv(task="reach", params=NO_GRAVITY)
    _, reward, _, _, info = still_step(
        env, [0.2, 0.9, 0.0, 0.0], np.array(action, dtype=np.float32), target=target
    )
    clipped = np.clip(np.float32(action).astype(np.float64), -1.0, 1.0)  # as applied
    ctrl = -0.05 * float(np.sum(clipped**2))
    tip = tip_by_trig(NO_GRAVITY, *info["state"][:2])
    dist = math.dist(tip, target)
    assert info["reward_ctrl"] == pytest.approx(ctrl, abs=1e-12)
    near = math.exp(-(dist**2) / (2 * 0.05**2))
    assert info["reward_dist"] == pytest.approx(-dist, abs=1e-12)
    assert info["reward_near"] == pytest.approx(near, abs=1e-12)
    assert reward == pytest.approx(-dist + near + ctrl, abs=1e-12)


@pytest.mark.parametrize(
    ("dist", "near"),
    # the Gaussian near term by hand: exp(-d² / (2 σ²)) with σ = 0.05 m
    [(0.0, 1.0), (0.05, math.exp(-0.5)), (0.1, math.exp(-2.0)), (0.5, math.exp(-50.0))],
)
def test_reach_near_term_is_sharp_across_the_success_disc(dist, near):
    task = twolink_gym.ReachTask()
    # the near term alone: the reward with the cone's -d added back
    assert task.reward_at_distance(dist, {}) + dist == pytest.approx(near, rel=1e-12, abs=1e-15)
    # the reward is larger on the target than anywhere else, and falls fastest
    # across the success disc: the gradient of the near term peaks at d = σ
    ds = np.linspace(0.0, 0.3, 3001)
    reward = task.reward_at_distance(ds, {})
    assert np.argmax(reward) == 0
    slope = -np.gradient(reward, ds)
    assert ds[np.argmax(slope)] == pytest.approx(0.05, abs=1e-3)
    # weights and width are options; a zero weight leaves Reacher's cone
    cone = twolink_gym.ReachTask(near_weight=0.0).reward_at_distance(ds, {})
    np.testing.assert_allclose(cone, -ds, rtol=0, atol=0)


def test_reach_ctrl_and_speed_weights():
    env = TwoLinkEnv(
        task="reach", params=NO_GRAVITY, task_options={"ctrl_weight": 0.2, "speed_weight": 0.5}
    )
    # at reset (no action yet) only the speed term: tip speed l2·w with joint 2 at w
    _, info = env.reset(options={"state": [0.1, 0.7, 0.0, 0.8], "target": [1.0, 0.5]})
    assert info["reward_ctrl"] == 0.0
    assert info["reward_speed"] == pytest.approx(-0.5 * 0.8**2, rel=1e-12)
    _, reward, _, _, info = still_step(
        env, [0.1, 0.7, 0.0, 0.0], np.array([0.5, -1.0], np.float32), target=[1.0, 0.5]
    )
    assert info["reward_ctrl"] == pytest.approx(-0.2 * 1.25, rel=1e-12)
    assert reward == pytest.approx(
        info["reward_dist"] + info["reward_near"] + info["reward_ctrl"] + info["reward_speed"],
        abs=1e-14,
    )


@pytest.mark.parametrize(("offset", "expected"), [(0.0, 1.0), (0.03, 1.0), (0.07, 0.0)])
def test_reach_sparse_reward(offset, expected):
    q = (-1.0, 0.6)
    tip = tip_by_trig(NO_GRAVITY, *q)
    target = tip - offset * tip / np.linalg.norm(tip)
    env = TwoLinkEnv(task="reach", params=NO_GRAVITY, task_options={"sparse": True})
    action = np.array([0.0, 0.0], dtype=np.float32)
    _, reward, terminated, _, info = still_step(env, [q[0], q[1], 0.0, 0.0], action, target=target)
    assert reward == expected
    assert info["is_success"] is (expected == 1.0)
    assert not terminated
    assert "reward_ctrl" not in info  # no costs in the sparse variant


def test_reach_never_terminates_early():
    env = TwoLinkVectorEnv(num_envs=16, task="reach", max_episode_steps=10_000)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(300):
        _, _, terminated, truncated, _ = env.step(rng.choice([-1.0, 1.0], size=(16, 2)))
        assert not terminated.any() and not truncated.any()


def test_reach_targets_are_uniform_by_area_in_the_target_annulus():
    # documented: r in [0.2, 0.95]·(l1 + l2), uniform by area, any direction
    n = 2500
    env = TwoLinkVectorEnv(num_envs=n, task="reach")
    env.reset(seed=0)
    goals = env.goal
    r = np.hypot(goals[:, 0], goals[:, 1])
    assert r.min() >= 0.4 and r.max() <= 1.9
    r_lo, r_hi = 0.4**2, 1.9**2
    # r² is uniform on [0.16, 3.61]: mean 1.885, sd 0.996; 5 standard errors
    assert abs(np.mean(r**2) - (r_lo + r_hi) / 2) < 5 * (r_hi - r_lo) / math.sqrt(12 * n)
    frac_inner = np.mean(r**2 < (r_lo + r_hi) / 2)
    assert abs(frac_inner - 0.5) < 5 * 0.5 / math.sqrt(n)
    angle = np.arctan2(goals[:, 1], goals[:, 0])
    assert abs(np.mean(np.cos(angle))) < 5 / math.sqrt(2 * n)
    assert abs(np.mean(np.sin(angle))) < 5 / math.sqrt(2 * n)
    # every quadrant
    assert np.all(np.histogram(angle, bins=4, range=(-math.pi, math.pi))[0] > n / 5)


def test_reach_target_range_follows_the_arm():
    params = ArmParams(l1=1.0, l2=0.3, lc2=0.15)
    env = TwoLinkVectorEnv(num_envs=2000, task="reach", params=params)
    env.reset(seed=1)
    r = np.hypot(*env.goal.T)
    # 0.2·1.3 = 0.26 < |l1 - l2| = 0.7: the inner workspace radius wins
    assert r.min() >= 0.7 and r.max() <= 0.95 * 1.3


def test_reach_initial_states_are_near_hanging_down():
    env = TwoLinkVectorEnv(num_envs=1000, task="reach")
    env.reset(seed=2)
    offset = env.state - np.array([-math.pi / 2, 0.0, 0.0, 0.0])
    assert np.all(np.abs(offset) <= 0.1)
    assert np.all(np.abs(offset).max(axis=0) > 0.09)  # uses the whole documented range


# -- balance --------------------------------------------------------------------------


def _upright_with_tilts(tilt1, tilt2, dq=(0.0, 0.0)):
    """State whose links tilt ``tilt1``, ``tilt2`` [rad] from the upward vertical (CCW +)."""
    q1 = math.pi / 2 + tilt1
    q2 = tilt2 - tilt1  # absolute angle of link 2 is q1 + q2 = pi/2 + tilt2
    return [q1, q2, dq[0], dq[1]]


@pytest.mark.parametrize(
    ("tilts", "terminated"),
    [
        ((61, 0), True),
        ((59, 0), False),
        ((-61, 0), True),
        ((-59, 0), False),
        ((0, 61), True),
        ((0, -59), False),
        ((59, -59), False),
        ((59, 61), True),
        ((30, 30), False),
        ((10, 170), True),
        ((180, 180), True),
        ((-90, -90), True),
    ],
)
def test_balance_terminates_beyond_60_degrees_of_either_link(tilts, terminated):
    env = TwoLinkEnv(task="balance", params=NO_GRAVITY)
    state = _upright_with_tilts(tilts[0] * DEG, tilts[1] * DEG)
    _, _, term, trunc, info = still_step(env, state)
    np.testing.assert_array_equal(info["state"], state)
    assert term is terminated
    assert trunc is False
    assert info["distance"] == pytest.approx(max(abs(t) for t in tilts) * DEG, abs=1e-12)


@pytest.mark.parametrize(("tilt", "terminated"), [(61, True), (59, False)])
def test_balance_fall_with_gravity(tilt, terminated):
    # with gravity the arm moves by well under a degree in one 20 ms step
    env = TwoLinkEnv(task="balance")
    for sign in (1, -1):
        state = _upright_with_tilts(sign * tilt * DEG, sign * tilt * DEG)
        assert still_step(env, state)[2] is terminated


def test_balance_fall_angle_option():
    env = TwoLinkEnv(task="balance", params=NO_GRAVITY, task_options={"fall_angle": 0.5})
    assert still_step(env, _upright_with_tilts(0.51, 0.0))[2] is True
    assert still_step(env, _upright_with_tilts(0.49, 0.0))[2] is False


def test_balance_upright_still_and_idle_earns_exactly_one():
    env = TwoLinkEnv(task="balance", params=NO_GRAVITY)
    _, reward, terminated, _, info = still_step(env, [math.pi / 2, 0.0, 0.0, 0.0])
    assert reward == 1.0
    assert info["reward_upright"] == 1.0
    assert info["reward_ctrl"] == 1.0
    assert info["reward_still"] == 1.0
    assert info["is_success"] is True
    assert terminated is False


@pytest.mark.parametrize(
    ("tilts", "sigma", "upright"),
    [
        ((0.0, 0.0), 0.12, 1.0),
        ((0.12, 0.0), 0.12, math.exp(-0.5)),  # one sigma on one link
        ((0.0, -0.24), 0.12, math.exp(-2.0)),  # two sigmas on the other
        ((0.12, -0.12), 0.12, math.exp(-1.0)),  # one sigma on each: the factors multiply
        ((0.1, 0.0), 0.12, math.exp(-0.01 / 0.0288)),  # the success limit: 0.7066
        ((0.3, 0.4), 0.5, math.exp(-0.25 / 0.5)),  # a wider option
        ((math.pi / 2, math.pi / 2), 0.12, math.exp(-(math.pi**2) / 2 / 0.0288)),
    ],
)
def test_balance_upright_factor(tilts, sigma, upright):
    # upright = exp(-(tilt1² + tilt2²) / (2σ²)) with the absolute link tilts
    env = TwoLinkEnv(task="balance", params=NO_GRAVITY, task_options={"upright_sigma": sigma})
    _, info = env.reset(options={"state": _upright_with_tilts(*tilts)})
    assert info["reward_upright"] == pytest.approx(upright, rel=1e-13, abs=1e-300)


def test_balance_reward_is_sharp_inside_the_success_band():
    # The reward's maximum is the upright pose, and leaning to the edge of the
    # success band costs a visible share of it (version 0's (1 + cos)/2 factor
    # kept 99.75% there, so holding a pose just outside the band was nearly free).
    env = TwoLinkEnv(task="balance", params=NO_GRAVITY)
    limit = env.unwrapped.sim.task.success_angle
    factors = []
    for tilt in (0.0, 0.02, limit / 2, limit, 1.5 * limit):
        _, info = env.reset(options={"state": _upright_with_tilts(tilt, tilt)})
        factors.append(info["reward_upright"])
    assert factors[0] == 1.0
    assert all(a > b for a, b in itertools.pairwise(factors))
    assert factors[3] < 0.55  # both links at the limit: e^(-0.694) = 0.4994
    assert factors[1] > 0.95  # within 0.02 rad: nearly full reward


def test_balance_upright_sigma_is_validated():
    with pytest.raises(ValueError, match="upright_sigma"):
        TwoLinkEnv(task="balance", task_options={"upright_sigma": 0.0})


@pytest.mark.parametrize("action", [(1.0, 1.0), (0.5, -0.2), (-4.0, 0.0)])
def test_balance_control_factor(action):
    # ctrl = 1 - 0.2·|a|²/2 with the clipped action; the torque moves the arm, so
    # the upright and still factors are computed by hand from the state after the step
    env = TwoLinkEnv(task="balance", params=NO_GRAVITY)
    _, reward, _, _, info = still_step(
        env, [math.pi / 2, 0.0, 0.0, 0.0], np.array(action, dtype=np.float32)
    )
    a = np.clip(np.float32(action).astype(np.float64), -1.0, 1.0)  # as applied
    ctrl = 1.0 - 0.2 * float(np.sum(a**2)) / 2
    assert info["reward_ctrl"] == pytest.approx(ctrl, abs=1e-15)
    q1, q2, dq1, dq2 = info["state"]
    tilt1, tilt2 = q1 - math.pi / 2, q1 + q2 - math.pi / 2
    upright = math.exp(-(tilt1**2 + tilt2**2) / (2 * 0.12**2))
    still = 1 - 0.5 * (1 - math.exp(-(dq1**2 + dq2**2) / 0.5))
    assert reward == pytest.approx(upright * ctrl * still, abs=1e-14)


@pytest.mark.parametrize(
    ("dq", "still"),
    [
        ((0.0, 0.0), 1.0),
        ((0.5, 0.0), 1 - 0.5 * (1 - math.exp(-0.5))),  # one sigma: 0.803
        ((0.3, -0.4), 1 - 0.5 * (1 - math.exp(-0.5))),  # |dq| = 0.5 too
        ((3.0, -4.0), 1 - 0.5 * (1 - math.exp(-50.0))),  # fast: the floor 1 - speed_weight
    ],
)
def test_balance_stillness_factor(dq, still):
    # still = 1 - speed_weight · (1 - exp(-|dq|² / (2 · 0.5²)))
    env = TwoLinkEnv(task="balance", params=NO_GRAVITY)
    _, info = env.reset(options={"state": _upright_with_tilts(0.0, 0.0, dq)})
    assert info["reward_still"] == pytest.approx(still, abs=1e-15)


@pytest.mark.parametrize(
    ("state", "success"),
    [
        (_upright_with_tilts(0.0, 0.0), True),
        (_upright_with_tilts(0.09, -0.09, (0.4, -0.4)), True),
        (_upright_with_tilts(0.11, 0.0), False),
        (_upright_with_tilts(0.0, -0.11), False),
        (_upright_with_tilts(0.0, 0.0, (0.6, 0.0)), False),
        (_upright_with_tilts(0.0, 0.0, (0.0, -0.6)), False),
    ],
)
def test_balance_success_is_upright_and_still(state, success):
    env = TwoLinkEnv(task="balance", params=NO_GRAVITY)
    _, info = env.reset(options={"state": state})
    assert info["is_success"] is success


def test_balance_success_at_the_end_of_a_full_episode():
    env = gym.make("TwoLinkBalance-v0", params=NO_GRAVITY.to_dict())
    env.reset(seed=0, options={"state": _upright_with_tilts(0.0, 0.0)})
    steps = 0
    while True:
        _, reward, terminated, truncated, info = env.step(ZERO)
        steps += 1
        if terminated or truncated:
            break
    assert (steps, terminated, truncated) == (500, False, True)
    assert info["is_success"] is True
    assert reward == 1.0


def test_balance_reward_lies_in_0_1_and_falls_terminate():
    env = TwoLinkVectorEnv(num_envs=32, task="balance", max_episode_steps=10_000)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    falls = 0
    for _ in range(250):
        _, reward, terminated, _, info = env.step(rng.uniform(-1, 1, size=(32, 2)))
        assert np.all((reward >= 0.0) & (reward <= 1.0))
        # a copy terminates exactly when a link is beyond 60°
        np.testing.assert_array_equal(terminated, info["distance"] > math.pi / 3)
        falls += int(terminated.sum())
    assert falls > 0


def test_balance_initial_states_are_near_upright():
    env = TwoLinkVectorEnv(num_envs=1000, task="balance")
    env.reset(seed=4)
    offset = env.state - np.array([math.pi / 2, 0.0, 0.0, 0.0])
    assert np.all(np.abs(offset) <= 0.1)
    assert np.all(np.abs(offset).max(axis=0) > 0.09)


# -- the task objects ------------------------------------------------------------------


def test_task_names_map_to_classes_once():
    assert set(twolink_gym.TASKS) == {"reach", "balance", "swingup", "track"}
    assert isinstance(twolink_gym.make_task("track"), twolink_gym.TrackTask)
    assert isinstance(twolink_gym.make_task("swingup"), twolink_gym.SwingupTask)
    assert isinstance(twolink_gym.make_task("reach"), twolink_gym.ReachTask)
    assert isinstance(twolink_gym.make_task("balance"), twolink_gym.BalanceTask)
    task = twolink_gym.ReachTask(tolerance=0.1)
    assert twolink_gym.make_task(task) is task
    assert TwoLinkEnv(task=task).task is task


@pytest.mark.parametrize(
    ("task", "options", "match"),
    [
        ("reach", {"tolerance": 0.0}, "tolerance"),
        ("reach", {"success_speed": -1.0}, "success_speed"),
        ("reach", {"ctrl_weight": -0.1}, "ctrl_weight"),
        ("reach", {"min_target_radius_frac": 0.9, "max_target_radius_frac": 0.5}, "radius_frac"),
        ("reach", {"max_target_radius_frac": 1.5}, "radius_frac"),
        ("reach", {"tolerance": math.nan}, "tolerance"),
        ("balance", {"fall_angle": 0.0}, "fall_angle"),
        ("balance", {"speed_weight": 1.5}, "speed_weight"),
        ("balance", {"init_angle_noise": -0.1}, "init_angle_noise"),
        ("balance", {"sparse": True}, r"unknown option.*'sparse'.*'fall_angle'"),
    ],
)
def test_bad_task_options_raise_a_clear_error(task, options, match):
    with pytest.raises(ValueError, match=match):
        twolink_gym.make_task(task, options)


def test_task_instance_and_options_do_not_mix():
    with pytest.raises(ValueError, match="task_options"):
        twolink_gym.make_task(twolink_gym.ReachTask(), {"tolerance": 0.1})


#: episode options that change the episodes only when another option is set
_ENABLED_BY = {
    "explore_speed": {"explore_fraction": 0.5},
    "catch_angle": {"catch_fraction": 0.5},
    "catch_speed": {"catch_fraction": 0.5},
    "push_turns": {"push_fraction": 0.9},
}


def _changed(task: Task, name: str) -> object:
    """Another valid value of an episode option (half of a number or 0.5 for 0, one path family)."""
    value = getattr(task, name)
    if isinstance(value, tuple):
        return value[-1:]
    if isinstance(value, int) and not isinstance(value, bool):
        return value + 1
    return 0.5 * value if value else 0.5


@pytest.mark.parametrize("name", sorted(TASKS))
def test_episode_options_change_the_episodes_and_nothing_else(name):
    # what EnvConfig.nominal relies on to run an agent trained with other values
    base = make_task(name)
    fields = {f.name for f in dataclasses.fields(base)}
    assert base.episode_option_names and set(base.episode_option_names) <= fields
    assert not set(base.episode_option_names) & set(base.options_type()._fields)
    params = ArmParams()
    for option in base.episode_option_names:
        # an option that acts only beside another (swing-up's explore_speed) is compared
        # with that other option on in both tasks
        enabling = _ENABLED_BY.get(option, {})
        reference = make_task(name, enabling)
        other = make_task(name, {**enabling, option: _changed(reference, option)})
        np.testing.assert_array_equal(other.kernel_options(), base.kernel_options())
        assert (other.extras_size, other.goal_size) == (base.extras_size, base.goal_size)
        env_a, env_b = TwoLinkEnv(task=base), TwoLinkEnv(task=other)
        assert env_a.observation_space == env_b.observation_space
        assert env_a.default_max_episode_steps == env_b.default_max_episode_steps

        # ... and they do change the drawn episodes
        def episodes(task: Task) -> list[np.ndarray]:
            drawn = (task.sample_episode(np.random.default_rng(s), params) for s in range(10))
            return [np.concatenate([state, goal]) for state, goal in drawn]

        assert not np.array_equal(episodes(reference), episodes(other)), option


# -- tasks read and write by name (#28) ---------------------------------------------


@pytest.mark.parametrize("options", [{}, {"speed_weight": 0.3}, {"sparse": True}])
def test_reach_relabelled_reward_equals_the_envs_to_the_last_bit(options):
    """HER's relabelling (reward_at_distance) recomputes the env's own reward exactly."""
    from twolink_gym.vector_env import TwoLinkVectorEnv

    venv = TwoLinkVectorEnv(8, task="reach", task_options=options)
    venv.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(20):
        _, reward, _, _, info = venv.step(rng.uniform(-1, 1, (8, 2)))
        terms = {k: info[k] for k in venv.task.goal_free_term_names()}
        again = venv.task.reward_at_distance(info["distance"], terms)
        np.testing.assert_array_equal(again, reward)


def test_options_and_terms_are_declared_once_by_name():
    """The kernel's options are the dataclass fields minus the episode options, in order."""
    for cls in TASKS.values():
        fields = [f.name for f in dataclasses.fields(cls)]
        options = cls.options_type()._fields
        assert list(options) == [
            f for f in fields if f in options and f not in cls.episode_option_names
        ]
        assert cls.term_names == cls.Terms._fields
    reach = twolink_gym.ReachTask(tolerance=0.07, sparse=True)
    named = dict(zip(reach.options_type()._fields, reach.kernel_options(), strict=True))
    assert named["tolerance"] == 0.07 and named["sparse"] == 1.0
    assert "init_angle_noise" not in named  # an episode option


def test_no_index_constants_or_literal_term_indices_in_the_tasks():
    import pathlib
    import re

    folder = pathlib.Path(twolink_gym.__file__).parent / "tasks"
    for path in folder.glob("*.py"):
        text = path.read_text()
        assert "= range(" not in text, path.name
        assert not re.search(r"\bterms\[\s*\d", text), path.name
        assert not re.search(r"\boptions\[\s*(\d|_[A-Z])", text), path.name


# -- what a task declares for the tools above it (no tables keyed by task name) --------
def test_the_settling_tolerance_is_the_option_a_task_names_even_for_a_new_task():
    pytest.importorskip("stable_baselines3")
    from twolink_gym.training.evaluate import settle_tolerance

    from twolink_gym.tasks.balance import BalanceTask

    @dataclasses.dataclass(frozen=True)
    class Still(BalanceTask):  # a task no table in training/ has heard of
        name = "still"
        tolerance_option = "fall_angle"

    assert settle_tolerance(Still(fall_angle=0.7)) == 0.7
    assert settle_tolerance(TASKS["reach"](tolerance=0.03)) == 0.03

    @dataclasses.dataclass(frozen=True)
    class Vague(BalanceTask):
        name = "vague"
        tolerance_option = None

    with pytest.raises(ValueError, match="'vague' declares no tolerance_option"):
        settle_tolerance(Vague())


def test_distance_units_agree_with_the_distance_the_env_reports():
    # reach and track: the tip's distance to a point [m]; balance and swing-up: a tilt [rad]
    units = {name: cls.distance_unit for name, cls in TASKS.items()}
    assert units == {"reach": "m", "balance": "rad", "swingup": "rad", "track": "m"}
    env = TwoLinkEnv(task="reach")
    _, info = env.reset(seed=0, options={"state": [0.0, 0.0, 0.0, 0.0], "target": [0.5, 0.0]})
    assert info["distance"] == pytest.approx(2.0 - 0.5)  # tip at x = l1 + l2 = 2 m
    env = TwoLinkEnv(task="balance")
    _, info = env.reset(seed=0, options={"state": [math.pi / 2 + 0.1, -0.3, 0.0, 0.0]})
    assert info["distance"] == pytest.approx(0.2)  # the second link's tilt, rad


def test_only_goal_conditioned_tasks_get_the_her_view():
    pytest.importorskip("stable_baselines3")
    from twolink_gym.training.goal_env import GoalObservationVecEnv

    assert [name for name, cls in TASKS.items() if cls.goal_conditioned] == ["reach"]
    reach = TASKS["reach"]()
    assert hasattr(reach, "reward_at_distance") and hasattr(reach, "goal_free_term_names")
    with pytest.raises(ValueError, match=r"task 'track' has no goal-conditioned.*\['reach'\]"):
        GoalObservationVecEnv(None, TASKS["track"](), None)  # type: ignore[arg-type]


def test_a_task_without_a_goal_or_extras_needs_neither_hook():
    @dataclasses.dataclass(frozen=True)
    class Bare(TASKS["balance"]):  # type: ignore[misc,valid-type]
        name = "bare"

    task = Bare()
    assert task.sample_goal(np.random.default_rng(0), ArmParams()).shape == (0,)
    low, high = task.extras_bounds(ArmParams())
    assert low.shape == high.shape == (0,)
    assert "sample_goal" not in vars(TASKS["balance"]) and "sample_goal" not in vars(
        TASKS["swingup"]
    )
