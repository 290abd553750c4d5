"""Rendering: frames, what is drawn where, human mode headless, recording."""

from __future__ import annotations

import os

os.environ["SDL_VIDEODRIVER"] = "dummy"  # never open a real window
os.environ["SDL_AUDIODRIVER"] = "dummy"

import math
import sys
import warnings

import gymnasium as gym
import imageio.v2 as imageio_v2
import imageio.v3 as iio
import numpy as np
import pytest
from gymnasium.error import DependencyNotInstalled, ResetNeeded
from gymnasium.utils.env_checker import check_env
from gymnasium.wrappers import RecordVideo
from twolink_gym.training.record import (
    RandomPolicy,
    ZeroPolicy,
    main,
    play_episode,
    record_episode,
)

import twolink_gym  # noqa: F401  (registers the envs)
from twolink_gym import ArmParams, TwoLinkVectorEnv, make_task
from twolink_gym.kinematics import inverse_kinematics
from twolink_gym.rendering import ArmRenderer, Colors

HANG = np.array([-math.pi / 2, 0.0, 0.0, 0.0])  # tip at (0, -2) for the default arm


def pixel(frame: np.ndarray, col_row: np.ndarray) -> tuple[int, int, int]:
    col, row = (round(float(v)) for v in col_row)
    return tuple(int(c) for c in frame[row, col])


def assert_color(actual: tuple[int, ...], expected: tuple[int, ...], tol: int = 3) -> None:
    assert max(abs(a - e) for a, e in zip(actual, expected, strict=True)) <= tol, (
        f"pixel {actual} is not {expected}"
    )


@pytest.fixture
def reach_env():
    env = gym.make("TwoLink-v0", task="reach", render_mode="rgb_array")
    yield env
    env.close()


# -- frames --------------------------------------------------------------------
@pytest.mark.parametrize("task", ["reach", "balance"])
def test_frame_shape_and_dtype(task):
    env = gym.make("TwoLink-v0", task=task, render_mode="rgb_array")
    env.reset(seed=0)
    for _ in range(2):
        frame = env.render()
        assert isinstance(frame, np.ndarray)
        assert frame.shape == (500, 500, 3)
        assert frame.dtype == np.uint8
        assert frame.flags["C_CONTIGUOUS"] and frame.flags["WRITEABLE"]
        env.step(env.action_space.sample())
    env.close()


def test_frame_size_is_width_by_height():
    r = ArmRenderer(ArmParams(), make_task("balance"), "rgb_array", 50, size=(320, 240))
    frame = r.draw(HANG, np.zeros(0))
    assert frame.shape == (240, 320, 3)
    r.close()


def test_world_to_pixel_matches_hand_computed_mapping():
    # default frame 500x500: base at the centre, l1 + l2 = 2 m spans 42 % of 500 px
    r = ArmRenderer(ArmParams(), make_task("reach"), "rgb_array", 50)
    scale = 0.42 * 500 / 2.0
    np.testing.assert_allclose(r.world_to_pixel([0.0, 0.0]), [250.0, 250.0])
    np.testing.assert_allclose(r.world_to_pixel([1.2, 0.9]), [250 + 1.2 * scale, 250 - 0.9 * scale])
    np.testing.assert_allclose(r.world_to_pixel([[0.0, -2.0]]), [[250.0, 250 + 2 * scale]])
    r.close()


@pytest.mark.parametrize(
    "params", [ArmParams(), ArmParams(l1=0.3, l2=0.2, lc1=0.1, lc2=0.1), ArmParams(l1=5.0, l2=1.0)]
)
def test_links_to_scale_and_workspace_fits_any_arm(params):
    r = ArmRenderer(params, make_task("balance"), "rgb_array", 50)
    reach = params.l1 + params.l2
    # the whole workspace circle lies inside the frame with a margin
    angles = np.linspace(0, 2 * np.pi, 64)
    ring = r.world_to_pixel(reach * np.stack([np.cos(angles), np.sin(angles)], -1))
    assert ring.min() > 10 and ring.max() < 490
    # a straight horizontal arm: its drawn length is (l1 + l2) * scale pixels, and
    # link 1 and link 2 are drawn in their colours at their midpoints
    frame = r.draw([0.0, 0.0, 0.0, 0.0], np.zeros(0))
    np.testing.assert_allclose(
        r.world_to_pixel([reach, 0.0]) - r.world_to_pixel([0.0, 0.0]), [reach * r.scale, 0.0]
    )
    assert_color(pixel(frame, r.world_to_pixel([0.6 * params.l1, 0.0])), Colors.link1)
    assert_color(pixel(frame, r.world_to_pixel([params.l1 + 0.6 * params.l2, 0.0])), Colors.link2)
    # the arm ends at l1 + l2: just inside is link 2, 5 % beyond is background
    assert_color(pixel(frame, r.world_to_pixel([0.93 * reach, 0.0])), Colors.link2)
    assert_color(pixel(frame, r.world_to_pixel([1.05 * reach, 0.0])), Colors.background)
    r.close()


def test_frame_changes_when_state_changes(reach_env):
    target = np.array([0.0, 1.5])
    reach_env.reset(seed=0, options={"state": HANG, "target": target})
    f_hang = reach_env.render()
    r = reach_env.unwrapped._renderer
    right = np.array([0.0, 0.0, 0.0, 0.0])  # arm straight along +x
    reach_env.reset(seed=0, options={"state": right, "target": target})
    f_right = reach_env.render()
    assert not np.array_equal(f_hang, f_right)
    # link 1's midpoint, from the kinematics by hand: (0, -0.5) hanging, (0.5, 0) to the right
    assert_color(pixel(f_hang, r.world_to_pixel([0.0, -0.5])), Colors.link1)
    assert_color(pixel(f_hang, r.world_to_pixel([0.5, 0.0])), Colors.workspace)
    assert_color(pixel(f_right, r.world_to_pixel([0.5, 0.0])), Colors.link1)
    assert_color(pixel(f_right, r.world_to_pixel([0.0, -0.5])), Colors.workspace)


# -- goals -----------------------------------------------------------------
def test_target_is_drawn_at_its_position(reach_env):
    target = np.array([1.2, 0.9])
    reach_env.reset(seed=0, options={"state": HANG, "target": target})
    frame = reach_env.render()
    # expected pixel of the target from the hand-computed mapping (see above)
    scale = 0.42 * 500 / 2.0
    expected = np.array([250 + 1.2 * scale, 250 - 0.9 * scale])
    assert_color(pixel(frame, expected), Colors.target)
    # the disc has the tolerance radius (0.05 m, about 5 px): 15 px away, off the
    # cross-hair's arms, is no target
    assert_color(pixel(frame, expected + np.array([11.0, 11.0])), Colors.workspace)
    # a different target moves the red disc
    reach_env.reset(seed=0, options={"state": HANG, "target": [-1.0, 0.5]})
    frame2 = reach_env.render()
    assert_color(pixel(frame2, expected), Colors.workspace)
    assert_color(pixel(frame2, [250 - 1.0 * scale, 250 - 0.5 * scale]), Colors.target)


def test_target_turns_green_on_success(reach_env):
    q = np.array([0.3, 0.8])
    tip = [math.cos(0.3) + math.cos(1.1), math.sin(0.3) + math.sin(1.1)]  # l1 = l2 = 1
    reach_env.reset(seed=0, options={"state": [*q, 0.0, 0.0], "target": tip})
    frame = reach_env.render()
    r = reach_env.unwrapped._renderer
    radius = round(0.05 * r.scale)
    # the cross-hair is drawn over the arm, so it shows even when the tip covers the disc
    mark = r.world_to_pixel(tip) + np.array([radius + 4, 0.0])
    assert_color(pixel(frame, mark), Colors.target_success)
    reach_env.reset(seed=0, options={"state": HANG, "target": tip})
    assert_color(pixel(reach_env.render(), mark), Colors.target)


def test_balance_draws_the_upright_goal():
    env = gym.make("TwoLink-v0", task="balance", render_mode="rgb_array")
    env.reset(seed=0, options={"state": HANG})
    frame = env.render()
    r = env.unwrapped._renderer
    fall = env.unwrapped.task.fall_angle  # 60 degrees
    # inside the wedge of allowed tilts (30 deg from vertical, 1.5 m out): zone colour
    inside = 1.5 * np.array([math.cos(math.pi / 2 - fall / 2), math.sin(math.pi / 2 - fall / 2)])
    assert_color(pixel(frame, r.world_to_pixel(inside)), Colors.upright_zone)
    # outside it (80 deg from vertical): plain workspace
    outside = 1.5 * np.array([math.cos(math.radians(10)), math.sin(math.radians(10))])
    assert_color(pixel(frame, r.world_to_pixel(outside)), Colors.workspace)
    # the dashed upright line (dashes of 0.125 m from the base, every other one
    # drawn) over the success band
    assert_color(pixel(frame, r.world_to_pixel([0.0, 0.31])), Colors.upright)
    assert_color(pixel(frame, r.world_to_pixel([0.0, 0.19])), Colors.success_band)
    env.close()


def _at_tilt(tilt: float, radius: float, apex=(0.0, 0.0)) -> np.ndarray:
    """The point ``radius`` metres from ``apex`` at ``tilt`` rad from the upward vertical."""
    return np.asarray(apex) + radius * np.array([math.sin(tilt), math.cos(tilt)])


@pytest.mark.parametrize("success_angle", [None, 0.3])
def test_balance_success_band_is_drawn_to_the_tasks_success_angle(success_angle):
    options = {} if success_angle is None else {"success_angle": success_angle}
    task = make_task("balance", options)
    band = task.success_angle  # 0.1 rad by default
    r = ArmRenderer(ArmParams(), task, "rgb_array", 50)
    frame = r.draw(HANG, np.zeros(0))
    for side in (1, -1):
        # 1.5 m out, 0.08 rad off vertical: in the band; 0.12 rad off: outside it
        assert_color(
            pixel(frame, r.world_to_pixel(_at_tilt(side * 0.8 * band, 1.5))), Colors.success_band
        )
        assert_color(
            pixel(frame, r.world_to_pixel(_at_tilt(side * 1.2 * band, 1.5))), Colors.upright_zone
        )
    r.close()


def test_balance_success_band_of_link_2_is_at_the_elbow():
    task = make_task("balance")
    r = ArmRenderer(ArmParams(), task, "rgb_array", 50)
    # link 1 tilted 0.3 rad to the right, link 2 vertical: elbow at (sin 0.3, cos 0.3)
    state = [math.pi / 2 - 0.3, 0.3, 0.0, 0.0]
    elbow = (math.sin(0.3), math.cos(0.3))
    frame = r.draw(state, np.zeros(0))
    assert_color(pixel(frame, r.world_to_pixel(_at_tilt(0.09, 0.9, elbow))), Colors.success_band)
    assert_color(pixel(frame, r.world_to_pixel(_at_tilt(-0.09, 0.9, elbow))), Colors.success_band)
    # 0.15 rad off vertical at the elbow: outside the band (and outside the base's band)
    assert_color(pixel(frame, r.world_to_pixel(_at_tilt(0.15, 0.9, elbow))), Colors.upright_zone)
    r.close()


def test_balance_upright_reference_is_drawn_over_the_arm():
    r = ArmRenderer(ArmParams(), make_task("balance"), "rgb_array", 50)
    frame = r.draw([math.pi / 2, 0.0, 0.0, 0.0], np.zeros(0))  # the arm upright, on the line
    # a dash (0.25 to 0.375 m) shows over link 1; the gap beside it shows the link
    assert_color(pixel(frame, r.world_to_pixel([0.0, 0.31])), Colors.upright)
    assert_color(pixel(frame, r.world_to_pixel([0.0, 0.19])), Colors.link1)
    assert_color(pixel(frame, r.world_to_pixel([0.0, 1.56])), Colors.upright)
    assert_color(pixel(frame, r.world_to_pixel([0.0, 1.44])), Colors.link2)
    r.close()


def test_reach_target_marker_is_visible_beyond_the_tolerance_disc():
    r = ArmRenderer(ArmParams(), make_task("reach"), "rgb_array", 50)
    target = np.array([-1.0, 0.8])
    frame = r.draw(HANG, target)
    centre = r.world_to_pixel(target)
    radius = 0.05 * r.scale  # the tolerance to scale, about 5 px
    # the four cross-hair arms reach at least 3 % of the frame (15 px) past the disc
    for direction in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        for distance in (radius + 5, radius + 12, radius + 17):
            assert_color(pixel(frame, centre + distance * np.array(direction)), Colors.target)
    # the marker covers far more pixels than a 5 px disc (about 80 pixels)
    box = frame[
        round(centre[1]) - 30 : round(centre[1]) + 31, round(centre[0]) - 30 : round(centre[0]) + 31
    ]
    red = np.all(np.abs(box.astype(int) - Colors.target) <= 3, axis=-1).sum()
    assert red > math.pi * radius**2 + 4 * 15 * 3 * 0.8
    r.close()


# -- trail and torque ----------------------------------------------------------
def test_trail_follows_the_tip_and_resets():
    params = ArmParams()
    r = ArmRenderer(params, make_task("balance"), "rgb_array", 50)
    q2 = -0.6
    angles = np.linspace(0.0, 0.5, 11)
    for i, q1 in enumerate(angles):
        frame = r.draw([q1, q2, 0.0, 0.0], np.zeros(0), time=0.02 * i)
    # the tip position of step 4, by hand (l1 = l2 = 1): on the trail, away from the arm
    old_tip = [
        math.cos(angles[4]) + math.cos(angles[4] + q2),
        math.sin(angles[4]) + math.sin(angles[4] + q2),
    ]
    red, _, blue = pixel(frame, r.world_to_pixel(old_tip))
    assert red > blue + 60 and red > 200, "the trail (orange) should pass through the old tip"
    # an earlier time than the last frame means a new episode: the trail is gone
    frame = r.draw([angles[-1], q2, 0.0, 0.0], np.zeros(0), time=0.0)
    assert_color(pixel(frame, r.world_to_pixel(old_tip)), Colors.workspace)
    r.close()


def test_torque_indicator_appears_with_torque():
    r = ArmRenderer(ArmParams(), make_task("reach"), "rgb_array", 50, max_torque=(30.0, 10.0))
    state = [0.0, 0.0, 0.0, 0.0]  # arm along +x
    target = [-1.5, -0.5]  # out of the way
    # a positive base torque sweeps an arc centred on the side the link turns to (+y)
    probe = r.world_to_pixel([0.0, 0.11 * 2.0])
    assert_color(pixel(r.draw(state, target, torque=(0.0, 0.0)), probe), Colors.workspace)
    assert_color(pixel(r.draw(state, target, torque=(30.0, 0.0)), probe), Colors.torque)
    # a negative one puts it on the other side (-y); a small one draws no arc there
    below = r.world_to_pixel([0.0, -0.11 * 2.0])
    assert_color(pixel(r.draw(state, target, torque=(-30.0, 0.0)), below), Colors.torque)
    assert_color(pixel(r.draw(state, target, torque=(-30.0, 0.0)), probe), Colors.workspace)
    r.close()


@pytest.mark.parametrize("fraction", [0.001, 0.02, 0.04])
def test_near_zero_torque_draws_no_indicator(fraction):
    r = ArmRenderer(ArmParams(), make_task("reach"), "rgb_array", 50, max_torque=(30.0, 10.0))
    state = [0.0, 0.0, 0.0, 0.0]
    target = [-1.5, -0.5]
    for torque in (
        (fraction * 30.0, 0.0),
        (0.0, -fraction * 10.0),
        (-fraction * 30.0, fraction * 10.0),
    ):
        frame = r.draw(state, target, torque=torque)
        assert not (np.all(frame == Colors.torque, axis=-1)).any(), torque
        # the whole picture apart from the readout equals the zero-torque one
        zero = r.draw(state, target, torque=(0.0, 0.0))
        np.testing.assert_array_equal(frame[60:440], zero[60:440])
    # from TORQUE_MIN_FRACTION up, the indicator is drawn
    frame = r.draw(state, target, torque=(0.06 * 30.0, 0.0))
    assert (np.all(frame == Colors.torque, axis=-1)).sum() > 10
    r.close()


# -- vector env ----------------------------------------------------------------
def test_vector_env_returns_one_frame_per_copy():
    venv = TwoLinkVectorEnv(3, task="reach", render_mode="rgb_array")
    targets = np.array([[1.2, 0.9], [-1.0, 0.5], [0.3, -1.2]])
    venv.reset(seed=0, options={"state": HANG, "target": targets})
    frames = venv.render()
    assert isinstance(frames, tuple) and len(frames) == 3
    scale = 0.42 * 500 / 2.0
    for i, frame in enumerate(frames):
        assert frame.shape == (500, 500, 3) and frame.dtype == np.uint8
        x, y = targets[i]
        assert_color(pixel(frame, [250 + x * scale, 250 - y * scale]), Colors.target)
        x, y = targets[(i + 1) % 3]
        assert_color(pixel(frame, [250 + x * scale, 250 - y * scale]), Colors.workspace)
    venv.close()
    venv.close()


# -- modes, errors, closing ----------------------------------------------------
def test_human_mode_under_the_dummy_driver():
    import pygame

    env = gym.make("TwoLink-v0", task="balance", render_mode="human")
    env.reset(seed=0)
    assert pygame.display.get_init()
    assert pygame.display.get_surface().get_size() == (500, 500)
    for _ in range(3):
        env.step(np.zeros(2, dtype=np.float32))
    assert env.render() is None
    env.close()
    assert not pygame.display.get_init()
    env.close()


def test_render_without_render_mode_warns_and_returns_none():
    env = gym.make("TwoLink-v0", task="reach")
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="without specifying any render mode"):
        assert env.render() is None
    env.close()


def test_render_before_reset_is_refused_by_gym_make():
    env = gym.make("TwoLink-v0", task="reach", render_mode="rgb_array")
    with pytest.raises(ResetNeeded):
        env.render()
    env.close()


def test_close_is_idempotent_and_a_closed_env_renders_again(reach_env):
    reach_env.reset(seed=0, options={"state": HANG, "target": [1.2, 0.9]})
    before = reach_env.render()
    renderer = reach_env.unwrapped._renderer
    reach_env.close()
    reach_env.close()  # Gymnasium: closing a closed env has no effect
    assert renderer.closed
    with pytest.raises(RuntimeError, match="closed"):
        renderer.draw(HANG, np.zeros(2))
    renderer.close()
    # the env draws with a fresh renderer after close (as it does lazily after __init__)
    after = reach_env.render()
    np.testing.assert_array_equal(before, after)


def test_bad_arguments_are_rejected():
    task = make_task("reach")
    with pytest.raises(ValueError, match="render_mode"):
        ArmRenderer(ArmParams(), task, "ansi", 50)
    with pytest.raises(ValueError, match="fps"):
        ArmRenderer(ArmParams(), task, "rgb_array", 0)
    with pytest.raises(ValueError, match="size"):
        ArmRenderer(ArmParams(), task, "rgb_array", 50, size=(10, 10))
    r = ArmRenderer(ArmParams(), task, "rgb_array", 50)
    with pytest.raises(ValueError, match="goal"):
        r.draw(HANG, np.zeros(0))
    with pytest.raises(ValueError, match="state"):
        r.draw(HANG[:3], np.zeros(2))
    r.close()


def test_missing_pygame_gives_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygame", None)  # makes `import pygame` fail
    with pytest.raises(DependencyNotInstalled, match="pip install pygame"):
        ArmRenderer(ArmParams(), make_task("reach"), "rgb_array", 50)


@pytest.mark.parametrize("task", ["reach", "balance"])
@pytest.mark.parametrize("render_mode", [None, "rgb_array"])
def test_check_env_passes_with_render_checks(task, render_mode):
    env = gym.make("TwoLink-v0", task=task, render_mode=render_mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # renders every mode of metadata["render_modes"], "human" included
        check_env(env.unwrapped)
    env.close()


# -- recording -------------------------------------------------------------
def test_gymnasium_record_video_writes_a_video(tmp_path):
    env = gym.make("TwoLink-v0", task="reach", render_mode="rgb_array", max_episode_steps=10)
    folder = tmp_path / "videos"
    env = RecordVideo(env, str(folder), episode_trigger=lambda _: True, disable_logger=True)
    env.reset(seed=0)
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        done = terminated or truncated
    env.close()
    video = folder / "rl-video-episode-0.mp4"
    assert video.is_file() and video.stat().st_size > 0
    with imageio_v2.get_reader(video, format="FFMPEG") as reader:
        # 11 frames were captured (the reset and 10 steps); moviepy 2.x can drop the
        # last one of an ImageSequenceClip (Zulko/moviepy#2507)
        assert reader.count_frames() in (10, 11)
        assert reader.get_meta_data()["size"] == (500, 500)
        first = reader.get_data(0).astype(int)
    # the first frame is the reset state of seed 0 (up to H.264 compression)
    env = gym.make("TwoLink-v0", task="reach", render_mode="rgb_array")
    env.reset(seed=0)
    assert np.mean(np.abs(first - env.render().astype(int))) < 3.0
    env.close()


def test_record_episode_writes_a_gif_with_one_frame_per_step(tmp_path):
    env = gym.make("TwoLink-v0", task="reach", render_mode="rgb_array", max_episode_steps=8)
    path = record_episode(RandomPolicy(env.action_space, seed=3), env, tmp_path / "a" / "ep.gif")
    assert path == tmp_path / "a" / "ep.gif"
    frames = iio.imread(path, index=None)
    assert frames.shape[0] == 9 and frames.shape[1:3] == (500, 500)
    meta = iio.immeta(path)
    assert meta["duration"] == 20  # ms: real time at the 50 Hz control rate
    assert meta["loop"] == 0  # forever
    # the first frame is the reset state of seed 0 (up to the GIF palette)
    env.reset(seed=0)
    first = env.render().astype(int)
    assert np.mean(np.abs(frames[0][..., :3].astype(int) - first)) < 2.0
    env.close()


def test_record_episode_keeps_every_nth_frame_and_the_last(tmp_path):
    env = gym.make("TwoLink-v0", task="reach", render_mode="rgb_array", max_episode_steps=8)
    path = record_episode(ZeroPolicy(env.action_space), env, tmp_path / "ep.gif", every=3)
    frames = iio.imread(path, index=None)
    # the reset, steps 3 and 6, and step 8 (the episode's last)
    assert frames.shape[0] == 4
    assert iio.immeta(path)["duration"] == 60  # ms: real time, three 20 ms steps a frame
    # the frames are the arm after 0, 3, 6 and 8 zero-torque steps, rendered here apart
    env.reset(seed=0)
    expected = [env.render().astype(int)]
    for step in range(1, 9):
        env.step(np.zeros(2, dtype=np.float32))
        if step in (3, 6, 8):
            expected.append(env.render().astype(int))
    for frame, want in zip(frames, expected, strict=True):
        assert np.mean(np.abs(frame[..., :3].astype(int) - want)) < 2.0
    assert np.mean(np.abs(expected[1] - expected[0])) > 0.0  # the arm moved between them
    with pytest.raises(ValueError, match="every must be an integer >= 1, got 0"):
        record_episode(ZeroPolicy(env.action_space), env, tmp_path / "x.gif", every=0)
    env.close()


def test_record_episode_stops_when_the_episode_terminates(tmp_path):
    env = gym.make("TwoLink-v0", task="balance", render_mode="rgb_array")
    # count the steps until the unactuated arm falls, independently of record_episode
    env.reset(seed=0)
    steps, done = 0, False
    while not done:
        _, _, terminated, truncated, _ = env.step(np.zeros(2, dtype=np.float32))
        steps += 1
        done = terminated or truncated
    assert terminated and steps < 500
    path = record_episode(ZeroPolicy(env.action_space), env, tmp_path / "fall.mp4", fps=25)
    with imageio_v2.get_reader(path, format="FFMPEG") as reader:
        assert reader.count_frames() == steps + 1
        assert reader.get_meta_data()["fps"] == 25
    env.close()


def test_record_episode_writes_mp4(tmp_path):
    env = gym.make("TwoLink-v0", task="reach", render_mode="rgb_array")
    path = record_episode(ZeroPolicy(env.action_space), env, tmp_path / "ep.mp4", max_steps=4)
    with imageio_v2.get_reader(path, format="FFMPEG") as reader:
        assert reader.count_frames() == 5
        assert reader.get_meta_data()["fps"] == 50
    env.close()


def test_record_episode_rejects_bad_input(tmp_path):
    env = gym.make("TwoLink-v0", task="reach")
    with pytest.raises(ValueError, match="rgb_array"):
        record_episode(ZeroPolicy(env.action_space), env, tmp_path / "x.gif")
    env.close()
    env = gym.make("TwoLink-v0", task="reach", render_mode="rgb_array")
    with pytest.raises(ValueError, match=r"\.gif"):
        record_episode(ZeroPolicy(env.action_space), env, tmp_path / "x.avi")
    with pytest.raises(ValueError, match="max_steps"):
        record_episode(ZeroPolicy(env.action_space), env, tmp_path / "x.gif", max_steps=0)
    env.close()


def test_play_episode_returns_what_a_hand_loop_of_the_env_sees():
    env = gym.make("TwoLink-v0", task="balance")  # no render mode: keeps no frames
    env.reset(seed=4)
    rewards, info, done = [], {}, False
    while not done:  # the unactuated arm falls: terminated, within the time limit
        _, reward, terminated, truncated, info = env.step(np.zeros(2, dtype=np.float32))
        rewards.append(reward)
        done = terminated or truncated
    episode = play_episode(ZeroPolicy(env.action_space), env, seed=4, every=None)
    assert episode.frames == []
    assert episode.steps == len(rewards) < 500
    assert episode.total_reward == pytest.approx(sum(rewards), rel=1e-12)
    assert episode.info["is_success"] == info["is_success"]
    short = play_episode(ZeroPolicy(env.action_space), env, seed=4, max_steps=3, every=None)
    assert short.steps == 3
    assert short.total_reward == pytest.approx(sum(rewards[:3]), rel=1e-12)
    with pytest.raises(ValueError, match="max_steps must be an integer >= 1, got 0"):
        play_episode(ZeroPolicy(env.action_space), env, seed=4, max_steps=0, every=None)
    env.close()


def test_record_command_line(tmp_path, capsys):
    out = tmp_path / "cli.gif"
    main(
        [
            "--task",
            "balance",
            "--policy",
            "random",
            "--out",
            str(out),
            "--seed",
            "1",
            "--max-steps",
            "3",
        ]
    )
    assert iio.imread(out, index=None).shape[0] == 4
    assert str(out) in capsys.readouterr().out
    main(["--task", "balance", "--out", str(out), "--max-steps", "3", "--every", "3"])
    assert iio.imread(out, index=None).shape[0] == 2  # the reset and step 3
    with pytest.raises(SystemExit):
        main(["--task", "nope", "--out", str(out)])


def test_no_font_support_draws_without_the_readout(monkeypatch):
    import pygame

    def no_font(*args, **kwargs):
        raise pygame.error("font support is missing")

    monkeypatch.setattr(pygame.font, "Font", no_font)
    r = ArmRenderer(ArmParams(), make_task("reach"), "rgb_array", 50)
    frame = r.draw(HANG, np.array([1.2, 0.9]), time=1.5, reward=-0.5)
    assert frame.shape == (500, 500, 3)
    # the readout corner (top left) is plain background
    corner = frame[5:60, 5:150].reshape(-1, 3)
    assert np.all(corner == np.array(Colors.background, dtype=np.uint8))
    r.close()


def test_readout_is_drawn_in_the_corner():
    r = ArmRenderer(ArmParams(), make_task("reach"), "rgb_array", 50)
    frame = r.draw(HANG, np.array([1.2, 0.9]), time=1.5, reward=-0.5)
    corner = frame[5:60, 5:150].astype(int)
    # dark text pixels on the light background
    assert np.sum(corner.sum(axis=-1) < 200) > 50
    r.close()


def test_readout_lines_name_the_task_motors_and_values():
    r = ArmRenderer(ArmParams(), make_task("swingup"), "rgb_array", 50, actuated=(1,))
    top, bottom = r.readout(1.234, -0.5, [3.04, -1.26])
    assert top == ["task: swingup", "t = 1.23 s", "reward = -0.500"]
    assert bottom == ["motor: elbow only", "torque = (+3.0, -1.3) N m"]
    r.close()


def _text_coverage(frame_region: np.ndarray) -> np.ndarray:
    """Ink coverage in [0, 1] of readout text on the background, shape ``(rows, cols)``."""
    bg = np.array(Colors.background, dtype=float)
    ink = np.array(Colors.text, dtype=float)
    return np.clip(((bg - frame_region) / (bg - ink)).mean(axis=-1), 0.0, 1.0)


def _ink_box(a: np.ndarray) -> np.ndarray:
    rows = np.flatnonzero(a.max(axis=1) > 0.1)
    cols = np.flatnonzero(a.max(axis=0) > 0.1)
    return a[rows[0] : rows[-1] + 1, cols[0] : cols[-1] + 1]


def _shifted(a: np.ndarray, dy: float, dx: float) -> np.ndarray:
    """``a`` moved by ``(dy, dx)`` pixels, linearly interpolated, zeros outside."""
    rows, cols = np.arange(a.shape[0]), np.arange(a.shape[1])
    a = np.array([np.interp(cols - dx, cols, row, left=0.0, right=0.0) for row in a])
    return np.array([np.interp(rows - dy, rows, col, left=0.0, right=0.0) for col in a.T]).T


@pytest.mark.parametrize(("side", "font_size"), [(500, 22), (400, 18)])
def test_readout_letters_keep_the_fonts_own_spacing(side, font_size):
    # "task: sw ingup": drawn at its small size, the font snapped each letter to
    # whole pixels and opened uneven gaps. The reference is the same line typeset
    # 8 times larger (where whole-pixel snapping is negligible) and averaged over
    # 8 x 8 blocks; the readout must match it up to a sub-pixel shift.
    import pygame

    pygame.font.init()
    r = ArmRenderer(ArmParams(), make_task("swingup"), "rgb_array", 50, size=(side, side))
    frame = r.draw(HANG, np.zeros(0), time=0.0, reward=0.0).astype(float)
    r.close()
    k = 8
    # the readout's size: 4.4 % of the smaller frame side (pygame's default font)
    big = pygame.font.Font(None, k * font_size).render("task: swingup", True, (0, 0, 0))
    alpha = pygame.surfarray.array_alpha(big).T / 255.0
    alpha = np.pad(alpha, ((0, -alpha.shape[0] % k), (0, -alpha.shape[1] % k)))
    reference = _ink_box(
        alpha.reshape(alpha.shape[0] // k, k, alpha.shape[1] // k, k).mean(axis=(1, 3))
    )
    # the first line of the top-left readout, above the "t = ..." line
    line = _text_coverage(frame[: 8 + reference.shape[0] + 2, : reference.shape[1] + 30])
    drawn = _ink_box(line)
    h = max(drawn.shape[0], reference.shape[0]) + 4
    w = max(drawn.shape[1], reference.shape[1]) + 4
    a, b = np.zeros((h, w)), np.zeros((h, w))
    a[2 : 2 + drawn.shape[0], 2 : 2 + drawn.shape[1]] = drawn
    b[2 : 2 + reference.shape[0], 2 : 2 + reference.shape[1]] = reference
    shifts = np.arange(-1.0, 1.01, 0.25)
    mismatch = (
        min(np.abs(_shifted(a, dy, dx) - b).sum() for dy in shifts for dx in shifts) / b.sum()
    )
    # letters drawn at whole-pixel positions: 0.6 to 0.9; at the font's spacing: below 0.35
    assert mismatch < 0.45


# -- track -------------------------------------------------------------------
def circle_reference(t: float) -> np.ndarray:
    """The reference of ``options={"path": "circle"}`` at time ``t`` [s], by hand.

    A circle of radius 0.3 m about (0.5, 0) m, period 10 s, counter-clockwise from angle 0.
    """
    angle = 2 * math.pi * t / 10.0
    return np.array([0.5 + 0.3 * math.cos(angle), 0.3 * math.sin(angle)])


def track_env(**task_options) -> gym.Env:
    return gym.make("TwoLink-v0", task="track", render_mode="rgb_array", task_options=task_options)


def run_track(env: gym.Env, steps: int, state=HANG) -> tuple[np.ndarray, float, dict]:
    """Reset ``env`` on the circle (the arm at ``state``), step with zero torque, render.

    Returns the frame, its time [s] and the last step's info. The default
    hanging arm (an equilibrium) stays on x = 0, clear of the circle.
    """
    options = {"path": "circle"} if state is None else {"path": "circle", "state": state}
    env.reset(seed=0, options=options)
    info: dict = {}
    for _ in range(steps):
        _, _, _, _, info = env.step(np.zeros(2, dtype=np.float32))
    return env.render(), info["time"], info


def test_track_draws_the_reference_point_path_and_preview():
    env = track_env()
    frame, t, info = run_track(env, 5)
    r = env.unwrapped._renderer
    task = env.unwrapped.sim.task
    assert t == pytest.approx(0.1)
    np.testing.assert_allclose(info["reference"], circle_reference(t), atol=1e-9)
    # the current reference: the target disc, red (the hanging arm is far off the path)
    assert not info["is_success"]
    assert_color(pixel(frame, r.world_to_pixel(circle_reference(t))), Colors.target)
    # its cross-hair, beyond the disc of radius max(3, 0.02 m to scale) = 3 px
    mark = r.world_to_pixel(circle_reference(t)) + np.array([0.0, 3 + 5])
    assert_color(pixel(frame, mark), Colors.target)
    # the path over the episode, far from the arm and the current point: the far
    # side (t = 5 s), the top (2.5 s) and the bottom (7.5 s) of the circle
    for far in (5.0, 2.5, 7.5):
        assert_color(pixel(frame, r.world_to_pixel(circle_reference(far))), Colors.reference_path)
    # a thin line: the circle's centre and points 4 px off the path are not drawn
    assert_color(pixel(frame, r.world_to_pixel([0.5, 0.0])), Colors.workspace)
    off = r.world_to_pixel(circle_reference(5.0)) + np.array([4.0, 0.0])
    assert_color(pixel(frame, off), Colors.workspace)
    # the farthest preview dot, r(t + 5 * 0.1 s), about 10 px ahead (the nearer
    # ones lie under the disc at this path speed)
    ahead = circle_reference(t + task.preview * task.preview_dt)
    assert_color(pixel(frame, r.world_to_pixel(ahead)), Colors.reference_preview)
    # a positional goal: no upright line (balance draws dashes at (0, 0.31) and (0, 1.56))
    for dash in ([0.0, 0.31], [0.0, 1.56]):
        assert_color(pixel(frame, r.world_to_pixel(dash)), Colors.workspace)
    env.close()


def test_track_preview_dots_are_at_the_preview_times():
    env = track_env(preview_dt=0.5)  # dots 0.094 m (about 10 px) apart on the circle
    frame, t, _ = run_track(env, 10)
    r = env.unwrapped._renderer
    for k in range(1, 6):
        point = r.world_to_pixel(circle_reference(t + 0.5 * k))
        assert_color(pixel(frame, point), Colors.reference_preview)
    # halfway between two dots, and one step past the last, only the path is drawn
    for between in (t + 0.75, t + 3.0):
        point = r.world_to_pixel(circle_reference(between))
        assert_color(pixel(frame, point), Colors.reference_path)
    env.close()


def test_track_reference_moves_with_time():
    env = track_env()
    frame, t, _ = run_track(env, 5)
    r = env.unwrapped._renderer
    then = r.world_to_pixel(circle_reference(t))
    assert_color(pixel(frame, then), Colors.target)
    for _ in range(50):  # 1 s later: the reference is 0.19 m (20 px) further on
        env.step(np.zeros(2, dtype=np.float32))
    later = env.render()
    now = r.world_to_pixel(circle_reference(t + 1.0))
    assert_color(pixel(later, now), Colors.target)
    assert_color(pixel(later, then), Colors.reference_path)
    env.close()


def test_track_reference_turns_green_while_the_rms_error_is_within_tolerance():
    params = ArmParams()
    task = make_task("track")
    goal = task.goals_from_option("circle", 1, [params])[0]
    r = ArmRenderer(params, task, "rgb_array", 50)
    t = 1.0
    reference = circle_reference(t)
    # the tip exactly on r(t): the running RMS error (this one sample) is 0
    q = inverse_kinematics(params, reference, "up")
    frame = r.draw([*q, 0.0, 0.0], goal, time=t)
    # the cross-hair is drawn over the arm, which covers the disc
    mark = r.world_to_pixel(reference) + np.array([3 + 4, 0.0])
    assert_color(pixel(frame, mark), Colors.target_success)
    r.reset_trail()  # the trail of the tip on r(t) would cover the disc
    frame = r.draw(HANG, goal, time=t)
    assert_color(pixel(frame, mark), Colors.target)
    assert_color(pixel(frame, r.world_to_pixel(reference)), Colors.target)
    r.close()


def test_track_draws_the_path_only_over_the_episode():
    env = track_env(seconds=2.5)  # a quarter of the circle
    frame, _, _ = run_track(env, 5)
    r = env.unwrapped._renderer
    for t, color in ((1.5, Colors.reference_path), (2.4, Colors.reference_path)):
        assert_color(pixel(frame, r.world_to_pixel(circle_reference(t))), color)
    # tabulated (for the preview) but after the episode's end: not drawn
    for t in (2.9, 5.0, 7.5):
        assert_color(pixel(frame, r.world_to_pixel(circle_reference(t))), Colors.workspace)
    env.close()


def test_track_path_is_redrawn_when_the_goal_changes():
    env = track_env()
    frame, _, _ = run_track(env, 2)
    r = env.unwrapped._renderer
    old = r.world_to_pixel(circle_reference(5.0))  # (0.2, 0) m
    assert_color(pixel(frame, old), Colors.reference_path)
    # reset rewrites the env's goal buffer in place: the new circle, about (-0.5, 0) m
    other = {"type": "circle", "centre": (-0.5, 0.0), "radius": 0.3, "period": 10.0}
    env.reset(seed=0, options={"path": other, "state": HANG})
    frame = env.render()
    assert_color(pixel(frame, old), Colors.workspace)
    assert_color(pixel(frame, r.world_to_pixel([-0.8, 0.0])), Colors.reference_path)
    env.close()


def test_track_path_is_computed_once_per_goal():
    params = ArmParams()
    task = make_task("track")
    goal = task.goals_from_option("circle", 1, [params])[0]
    r = ArmRenderer(params, task, "rgb_array", 50)
    r.draw(HANG, goal, time=0.0)
    first = r._path_cache
    # the env passes a new array of the same goal at every frame: same path
    r.draw(HANG, goal.copy(), time=0.1)
    assert r._path_cache is first
    other = task.goals_from_option("figure_eight", 1, [params])[0]
    r.draw(HANG, other, time=0.2)
    assert r._path_cache is not first
    r.close()


def test_track_renders_in_the_vector_env():
    venv = TwoLinkVectorEnv(2, task="track", render_mode="rgb_array")
    venv.reset(seed=0, options={"path": "circle", "state": HANG})
    frames = venv.render()
    r = venv._renderers[0]
    for frame in frames:
        assert_color(pixel(frame, r.world_to_pixel(circle_reference(0.0))), Colors.target)
        assert_color(pixel(frame, r.world_to_pixel(circle_reference(5.0))), Colors.reference_path)
    venv.close()
