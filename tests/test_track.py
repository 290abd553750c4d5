"""The ``track`` task: reference, observation, reward, RMS success, replay, bad input, baselines.

Independent sources: the closed forms of a circle (``r(t) = c + R (cos ωt, sin ωt)``)
and of the arm's forward kinematics written out here, the RMS of the tracking
errors recomputed from the tip positions the env reports, Gymnasium's env checker.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import twolink_gym  # noqa: F401 - registers the ids
from twolink_gym import ArmParams, TwoLinkEnv
from twolink_gym.controllers import CONTROLLERS, controllers_for
from twolink_gym.paths import Circle
from twolink_gym.tasks import TrackTask, make_task
from twolink_gym.tasks.track import HEADER_SIZE, TABLE_DT
from twolink_gym.vector_env import TwoLinkVectorEnv

CENTRE, RADIUS, PERIOD = np.array([0.5, 0.0]), 0.3, 10.0  # the named path "circle"


def circle_at(t: float) -> np.ndarray:
    """The named path ``"circle"``, written out."""
    w = 2.0 * math.pi / PERIOD
    return CENTRE + RADIUS * np.array([math.cos(w * t), math.sin(w * t)])


def circle_velocity(t: float) -> np.ndarray:
    w = 2.0 * math.pi / PERIOD
    return RADIUS * w * np.array([-math.sin(w * t), math.cos(w * t)])


def tip_of(state: np.ndarray, params: ArmParams) -> np.ndarray:
    q1, q2 = state[0], state[1]
    return np.array(
        [
            params.l1 * math.cos(q1) + params.l2 * math.cos(q1 + q2),
            params.l1 * math.sin(q1) + params.l2 * math.sin(q1 + q2),
        ]
    )


def test_registered_and_passes_gymnasium_env_checker():
    env = gym.make("TwoLinkTrack-v0")
    assert env.spec.max_episode_steps == 500  # 10 s at 50 Hz
    check_env(env.unwrapped, skip_render_check=True)
    # a 4 s path: the task's own length at 50 Hz is 200 steps, which a user passes on
    short = {"seconds": 4.0}
    assert TwoLinkEnv(task="track", task_options=short).default_max_episode_steps == 200
    env2 = gym.make("TwoLinkTrack-v0", task_options=short, max_episode_steps=200)
    env2.reset(seed=0)
    steps = 0
    truncated = False
    while not truncated:
        *_, truncated, _ = env2.step(env2.action_space.sample())
        steps += 1
    assert steps == 200


def test_reference_and_observation_follow_the_path_in_closed_form():
    env = TwoLinkEnv(task="track")
    task = env.sim.task
    obs, info = env.reset(seed=3, options={"path": "circle"})
    rng = np.random.default_rng(0)
    for step in range(1, 301):
        obs, _, _, _, info = env.step(rng.uniform(-1, 1, 2).astype(np.float32))
        t = step * env.sim.dt
        assert info["time"] == pytest.approx(t)
        np.testing.assert_allclose(info["reference"], circle_at(t), atol=1e-12)
        ex = np.asarray(obs[6:], dtype=np.float64)
        np.testing.assert_allclose(ex[0:2], circle_at(t), atol=1e-6)
        np.testing.assert_allclose(ex[2:4], circle_velocity(t), atol=1e-6)
        w = 2.0 * math.pi / PERIOD
        np.testing.assert_allclose(ex[4:6], -(w**2) * (circle_at(t) - CENTRE), atol=1e-6)
        tip = tip_of(info["state"], env.sim.params)
        np.testing.assert_allclose(info["tip"], tip, atol=1e-12)
        np.testing.assert_allclose(ex[6:8], circle_at(t) - tip, atol=1e-5)
        for k in range(1, task.preview + 1):
            expected = circle_at(t + k * task.preview_dt) - tip
            np.testing.assert_allclose(ex[6 + 2 * k : 8 + 2 * k], expected, atol=1e-5)
        assert info["distance"] == pytest.approx(np.linalg.norm(circle_at(t) - tip), abs=1e-12)


def test_rms_and_max_error_and_success_from_the_tip_history():
    tolerance = 0.3
    env = gym.make("TwoLinkTrack-v0", task_options={"tolerance": tolerance})
    _, info = env.reset(seed=5)
    errors = [np.linalg.norm(info["reference"] - info["tip"])]
    rng = np.random.default_rng(1)
    done = False
    while not done:
        _, reward, terminated, truncated, info = env.step(0.3 * rng.uniform(-1, 1, 2))
        assert not terminated
        done = truncated
        errors.append(np.linalg.norm(info["reference"] - info["tip"]))
        rms = math.sqrt(np.mean(np.square(errors)))
        assert info["rms_error"] == pytest.approx(rms, rel=1e-9)
        assert info["max_error"] == pytest.approx(max(errors), rel=1e-12)
        assert info["is_success"] == (rms <= tolerance)
        assert 0.0 <= reward <= 1.0
    assert len(errors) == 501


@pytest.mark.parametrize("vector", [False, True])
def test_lost_distance_ends_the_episode_at_the_first_error_above_it(vector):
    """The tip's error, from the tip and reference the env reports, decides the step that ends."""
    lost = 0.1
    options = {"lost_distance": lost, "tolerance": 1.0}
    if vector:
        env = TwoLinkVectorEnv(2, task="track", task_options=options)
        _, info = env.reset(seed=3)
        errors = [np.linalg.norm(info["reference"][0] - info["tip"][0])]
        push = np.array([[0.6, -0.6], [0.6, -0.6]])
    else:
        env = gym.make("TwoLinkTrack-v0", task_options=options)
        _, info = env.reset(seed=3)
        errors = [np.linalg.norm(info["reference"] - info["tip"])]
    for _ in range(500):
        if vector:
            _, _, terminated, _, info = env.step(push)
            terminated, tip, ref = terminated[0], info["tip"][0], info["reference"][0]
            success = info["is_success"][0]
        else:
            _, _, terminated, _, info = env.step(np.array([0.6, -0.6]))
            tip, ref, success = info["tip"], info["reference"], info["is_success"]
        if terminated:
            break
        errors.append(np.linalg.norm(ref - tip))
    # the last step is the first whose error exceeds lost_distance (the reported state
    # before an autoreset: the vector env's info is the finished episode's)
    final = np.linalg.norm(ref - tip)
    assert terminated and final > lost and max(errors) <= lost
    # unsuccessful, although the RMS error is well within this tolerance of 1 m
    assert not success and math.sqrt(np.mean(np.square([*errors, final]))) < 1.0
    # 0 (the default) never ends an episode: the same actions run to truncation
    plain = gym.make("TwoLinkTrack-v0")
    plain.reset(seed=3)
    for _ in range(500):
        _, _, terminated, truncated, _ = plain.step(np.array([0.6, -0.6]))
        assert not terminated
    assert truncated


def test_reward_is_bounded_and_peaks_at_zero_error():
    task = TrackTask()
    params = ArmParams()
    goal = task.tabulate(Circle(centre=(0.5, 0.0), radius=0.3, period=10.0))
    # states whose tip is 0, 1, 2, 5, 50 cm from r(0) = (0.8, 0) along x
    from twolink_gym.kinematics import inverse_kinematics

    offsets = np.array([0.0, 0.01, 0.02, 0.05, 0.5])
    q = inverse_kinematics(params, np.stack([0.8 + offsets, np.zeros(5)], 1), "down")
    state = np.concatenate([q, np.zeros((5, 2))], 1)
    ev = task.evaluate(params, state, np.tile(goal, (5, 1)))
    np.testing.assert_allclose(ev.distance, offsets, atol=1e-12)
    sigma, coarse = task.sigma, task.coarse_sigma
    expected = 0.5 * np.exp(-(offsets**2) / (2 * coarse**2)) + 0.5 * np.exp(
        -(offsets**2) / (2 * sigma**2)
    )
    np.testing.assert_allclose(ev.reward, expected, rtol=1e-12)
    assert ev.reward[0] == 1.0
    assert np.all(np.diff(ev.reward) < 0)
    # the action costs: ctrl = 1 - ctrl_weight |a|^2 / 2
    full = task.evaluate(params, state[:1], goal[None], action=np.ones((1, 2)))
    assert full.reward[0] == pytest.approx(1.0 - task.ctrl_weight)


def test_evaluate_does_not_change_the_callers_goal():
    task = TrackTask()
    goal = task.tabulate(Circle(centre=(0.5, 0.0), radius=0.3))
    before = goal.copy()
    task.evaluate(ArmParams(), np.array([[0.0, 0.5, 0.0, 0.0]]), goal[None], time=1.0)
    np.testing.assert_array_equal(goal, before)


def test_episodes_start_on_the_path_moving_with_it():
    env = TwoLinkEnv(task="track", task_options={"init_angle_noise": 0.0, "init_speed_noise": 0.0})
    for seed in range(20):
        _, info = env.reset(seed=seed)
        assert info["distance"] < 1e-9
        # the tip moves with the reference: J dq = r'(0)
        from twolink_gym.kinematics import jacobian

        state = info["state"]
        tip_velocity = jacobian(env.sim.params, state[:2]) @ state[2:]
        ref_velocity = env.sim.task.reference_rows(env.goal)[0, 2:4]
        np.testing.assert_allclose(tip_velocity, ref_velocity, atol=1e-9)


def test_drawn_paths_stay_inside_the_margin_and_within_the_speed_range():
    task = TrackTask()
    params = ArmParams()
    rng = np.random.default_rng(7)
    inner = params.inner_radius + task.workspace_margin * params.reach
    outer = params.reach - task.workspace_margin * params.reach
    speeds = []
    for _ in range(40):
        rows = task.reference_rows(task.sample_goal(rng, params))
        r = np.hypot(rows[:, 0], rows[:, 1])
        assert r.min() >= inner - 1e-3 and r.max() <= outer + 1e-3
        speeds.append(np.mean(np.hypot(rows[:, 2], rows[:, 3])))
    # the mean speed over one episode window is near the drawn mean speed of the whole path
    assert 0.05 < min(speeds) and max(speeds) < 0.6


def test_seeded_resets_are_reproducible_and_the_vector_env_matches_the_single_env():
    env = TwoLinkEnv(task="track")
    venv = TwoLinkVectorEnv(3, task="track")
    vobs, _ = venv.reset(seed=10)
    actions = np.random.default_rng(2).uniform(-1, 1, (50, 3, 2))
    for i in range(3):
        obs, _ = env.reset(seed=10 + i)
        np.testing.assert_array_equal(obs, vobs[i])
        np.testing.assert_array_equal(env.goal, venv.goal[i])
    venv.reset(seed=10)
    for a in actions:
        vobs, vrew, *_, vinfo = venv.step(a)
    for i in range(3):
        env.reset(seed=10 + i)
        for a in actions:
            obs, rew, *_, info = env.step(a[i])
        np.testing.assert_array_equal(obs, vobs[i])
        assert rew == vrew[i]
        assert info["rms_error"] == vinfo["rms_error"][i]


def test_replay_by_goal_vector_reproduces_an_episode():
    env = TwoLinkEnv(task="track")
    env.reset(seed=4)
    goal, state = env.goal, env.state
    actions = np.random.default_rng(3).uniform(-1, 1, (40, 2))
    first = [env.step(a)[0] for a in actions]
    env.reset(seed=99, options={"goal": goal, "state": state})
    second = [env.step(a)[0] for a in actions]
    np.testing.assert_array_equal(np.array(first), np.array(second))


def test_raw_goals_are_checked_against_the_arm():
    env = TwoLinkEnv(task="track")
    env.reset(seed=0)
    goal = env.goal
    short = TwoLinkEnv(task="track", params={"l1": 0.5, "l2": 0.5})
    far = TrackTask().tabulate(Circle(centre=(1.2, 0.0), radius=0.3))
    with pytest.raises(ValueError, match=r"options\['goal'\]: the reference leaves the workspace"):
        short.reset(options={"goal": far})
    with pytest.raises(ValueError, match=r"not a reference table of this track task"):
        TwoLinkEnv(task="track", task_options={"seconds": 5.0}).reset(
            options={"goal": goal[: TrackTask(seconds=5.0).goal_size]}
        )
    bad = goal.copy()
    bad[0] = 0.02
    with pytest.raises(ValueError, match=r"not a reference table"):
        env.reset(options={"goal": bad})


def test_sampled_path_replay_holds_its_last_point():
    t = np.linspace(0.0, 2.0, 41)
    points = np.stack([0.8 + 0.1 * t, 0.2 * np.ones_like(t)], 1)
    env = TwoLinkEnv(task="track")
    env.reset(seed=0, options={"path": np.column_stack([t, points])})
    for _ in range(150):  # 3 s: past the path's end at 2 s
        *_, info = env.step(np.zeros(2))
    np.testing.assert_allclose(info["reference"], [1.0, 0.2], atol=1e-9)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"path": "square"}, r"options\['path'\].*unknown name 'square'"),
        ({"path": np.zeros((5, 2))}, r"options\['path'\].*\(T, 3\) array"),
        (
            {
                "path": np.array(
                    [[0.0, 0.5, 0.0], [1.0, 0.5, 0.1], [0.5, 0.5, 0.2], [2.0, 0.5, 0.3]]
                )
            },
            r"options\['path'\].*times must increase strictly",
        ),
        (
            {"path": {"type": "circle", "centre": (1.5, 0.0), "radius": 0.8}},
            r"options\['path'\].*leaves the reachable annulus",
        ),
        (
            {"path": {"type": "circle", "centre": (1.0, 0.0), "radius": 0.5, "period": 0.5}},
            r"options\['path'\].*too fast",
        ),
        ({"target": [1.0, 0.0]}, r"unknown reset option.*\['goal', 'path', 'state'\]"),
    ],
)
def test_bad_reset_options_are_refused_naming_the_option(options, match):
    env = TwoLinkEnv(task="track")
    with pytest.raises(ValueError, match=match):
        env.reset(options=options)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"preview": 0}, "preview must be a positive integer"),
        ({"preview": 2.5}, "preview must be a positive integer"),
        ({"preview": True}, "preview must be a positive integer"),
        ({"families": ["circle", "spiral"]}, r"families: unknown \['spiral'\]"),
        ({"families": []}, "families must be a non-empty list"),
        ({"tolerance": 0.0}, "tolerance must be > 0"),
        ({"coarse_weight": 1.5}, r"coarse_weight must lie in \[0, 1\]"),
        ({"min_path_speed": 0.5, "max_path_speed": 0.2}, "min_path_speed <= max_path_speed"),
    ],
)
def test_bad_task_options_are_refused_naming_the_option(options, match):
    with pytest.raises(ValueError, match=match):
        make_task("track", options)


def test_preview_horizon_sets_the_observation_size():
    for preview in (1, 3, 8):
        env = TwoLinkEnv(task="track", task_options={"preview": preview})
        assert env.observation_space.shape == (6 + 8 + 2 * preview,)
        assert env.sim.task.extras_names()[-1] == f"preview{preview}_y"


def test_goal_layout_header():
    task = TrackTask(seconds=2.0, preview=2, preview_dt=0.25)
    goal = task.tabulate(Circle(centre=(0.5, 0.0), radius=0.3))
    assert goal[0] == TABLE_DT
    rows = int(goal[1])
    assert goal.shape == (HEADER_SIZE + 6 * rows,)
    assert (rows - 1) * TABLE_DT >= 2.0 + 2 * 0.25


def test_baselines_apply_to_track():
    assert {"computed_torque", "impedance", "feedforward"} <= set(controllers_for("track"))
    with pytest.raises(ValueError, match="applies to task"):
        CONTROLLERS["feedforward"].from_env(TwoLinkEnv(task="reach"))


def _run(controller_name: str, env: gym.Env, model: ArmParams | None = None) -> dict:
    controller = CONTROLLERS[controller_name].from_env(env, model_params=model)
    obs, info = env.reset(seed=0, options={"path": "looping"})
    errors = [info["distance"]]
    first_far = None
    state = None
    start = True
    truncated = False
    while not truncated:
        action, state = controller.predict(obs, state, episode_start=np.array([start]))
        start = False
        obs, _, _, truncated, info = env.step(action)
        errors.append(info["distance"])
        if first_far is None and info["distance"] > 0.05:
            first_far = info["time"]
    return {"rms": info["rms_error"], "max": info["max_error"], "first_far": first_far}


@pytest.fixture(scope="module")
def looping_env():
    """The looping-path exercise's arm and its 60 s path, through the env."""
    params = ArmParams.uniform_rods(m1=1.0, m2=10.0, l1=0.5, l2=0.5, friction1=0.0, friction2=0.0)
    env = gym.make(
        "TwoLinkTrack-v0",
        params=params,
        max_torque=(500.0, 500.0),
        task_options={"seconds": 60.0, "init_angle_noise": 0.0, "init_speed_noise": 0.0},
        max_episode_steps=3000,  # the whole 60 s path at 50 Hz
    )
    return env


def test_computed_torque_tracks_the_looping_path_to_a_millimetre_and_feedforward_drifts(
    looping_env,
):
    ct = _run("computed_torque", looping_env)
    assert ct["rms"] < 1e-3
    assert ct["first_far"] is None
    ff = _run("feedforward", looping_env)
    assert ff["first_far"] is not None and ff["first_far"] < 10.0
    assert ff["rms"] > 0.05


def test_the_goal_is_read_only_and_the_statistics_are_per_episode_memory():
    """Steps leave the goal alone; the RMS restarts with each episode (single and vector env)."""
    from twolink_gym.vector_env import TwoLinkVectorEnv

    env = TwoLinkEnv(task="track")
    env.reset(seed=1)
    goal = env.goal
    errors = [env.step(np.ones(2, np.float32))[4]["distance"] for _ in range(30)]
    info = env.step(np.ones(2, np.float32))[4]
    errors.append(info["distance"])
    np.testing.assert_array_equal(env.goal, goal)
    init_error = np.hypot(*(info["reference"] - info["tip"]))
    assert info["distance"] == pytest.approx(init_error)
    # the RMS over the episode includes the start: recompute it from a fresh env
    env2 = TwoLinkEnv(task="track")
    _, first = env2.reset(seed=1)
    expected = np.sqrt(np.mean(np.square([first["distance"], *errors])))
    assert info["rms_error"] == pytest.approx(expected, rel=1e-12)
    assert info["max_error"] == pytest.approx(max(first["distance"], *errors), rel=1e-12)
    # a new episode starts its statistics afresh
    _, info = env.reset(seed=2)
    assert info["rms_error"] == pytest.approx(info["distance"], rel=1e-12)
    venv = TwoLinkVectorEnv(3, task="track", max_episode_steps=5)
    venv.reset(seed=0)
    goals = venv.goal
    for _ in range(5):
        _, _, _, truncated, info = venv.step(np.zeros((3, 2)))
    assert truncated.all()
    assert np.all(info["rms_error"] != info["distance"])
    info = venv.step(np.zeros((3, 2)))[4]  # autoreset: the statistics start afresh
    np.testing.assert_allclose(info["rms_error"], info["distance"], rtol=1e-12)
    assert not np.array_equal(venv.goal, goals)
