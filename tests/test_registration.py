"""Registration of ``TwoLink-v0`` and the per-task ids: ``gym.make``, ``gym.make_vec``, time limits.

Episode lengths are the documented ones (reach 4 s, balance 10 s at the default
50 Hz control rate: 200 and 500 steps; ``TwoLink-v0``: 200 steps for every
task), typed here from the documentation, not read back from the code. Truncation is checked by running episodes to their end
on an arm in a horizontal plane (``gravity = 0``) held still at the upright
pose, where neither task can terminate early.
"""

import inspect
import math
import os
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec, load_env_creator
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers import RenderCollection
from wrapper_stack import time_limits

import twolink_gym
from twolink_gym import TwoLinkEnv, TwoLinkVectorEnv
from twolink_gym.registration import EpisodeLengthWarning

REACH_STEPS = 200  # 4 s at 0.02 s
BALANCE_STEPS = 500  # 10 s at 0.02 s
TASK_STEPS = {"reach": REACH_STEPS, "balance": BALANCE_STEPS}
GENERIC_STEPS = 200  # TwoLink-v0, whatever the task
CONVENIENCE = {"reach": "TwoLinkReach-v0", "balance": "TwoLinkBalance-v0"}
UPRIGHT_STILL = [math.pi / 2, 0.0, 0.0, 0.0]
NO_GRAVITY = {"gravity": 0.0}


def _episode_length(env: gym.Env, limit: int = 5000) -> int:
    """Steps until the episode ends, from a still upright arm without gravity.

    Asserts that the ending is a truncation (never a termination) and that no
    earlier step was flagged.
    """
    options = {"state": UPRIGHT_STILL}
    if env.unwrapped.task.goal_size:
        options["target"] = [0.0, 2.0]  # the upright tip: reach's distance is 0
    env.reset(seed=0, options=options)
    zero = np.zeros(2, dtype=np.float32)
    for n in range(1, limit + 1):
        _, _, terminated, truncated, _ = env.step(zero)
        assert not terminated
        if truncated:
            return n
    raise AssertionError(f"no truncation within {limit} steps")


# -- the registry --------------------------------------------------------------


def test_ids_are_registered_with_entry_points():
    for env_id in ("TwoLink-v0", *CONVENIENCE.values()):
        spec = gym.spec(env_id)
        assert spec.entry_point is not None
        assert spec.vector_entry_point is not None


def test_convenience_ids_carry_task_and_length():
    for task, env_id in CONVENIENCE.items():
        spec = gym.spec(env_id)
        assert spec.kwargs["task"] == task
        assert spec.max_episode_steps == TASK_STEPS[task]


def test_register_envs_is_idempotent():
    before = {k: gym.spec(k) for k in ("TwoLink-v0", *CONVENIENCE.values())}
    twolink_gym.register_envs()
    after = {k: gym.spec(k) for k in before}
    assert before == after


def test_default_task_is_reach():
    env = gym.make("TwoLink-v0")
    assert env.unwrapped.task.name == "reach"
    assert env.observation_space.shape == (10,)


# -- gym.make ------------------------------------------------------------------


@pytest.mark.parametrize("task", ["reach", "balance"])
def test_twolink_v0_gives_every_task_its_registered_length(task):
    env = gym.make("TwoLink-v0", task=task, params=NO_GRAVITY)
    assert isinstance(env.unwrapped, TwoLinkEnv)
    assert env.unwrapped.task.name == task
    assert gym.spec("TwoLink-v0").max_episode_steps == GENERIC_STEPS
    assert env.spec.max_episode_steps == GENERIC_STEPS
    assert _episode_length(env) == GENERIC_STEPS


@pytest.mark.parametrize("task", ["reach", "balance"])
def test_convenience_id_gives_the_tasks_episode_length(task):
    env = gym.make(CONVENIENCE[task], params=NO_GRAVITY)
    assert env.unwrapped.task.name == task
    assert _episode_length(env) == TASK_STEPS[task]


def test_a_registered_length_is_in_steps_and_the_tasks_own_length_in_seconds():
    # a spec's max_episode_steps counts steps whatever dt; the task's own length
    # (reach: 4 s) is default_max_episode_steps, 400 steps at dt = 0.01 s, 100 at 0.04 s
    for dt, steps in ((0.01, 400), (0.04, 100)):
        env = gym.make("TwoLinkReach-v0", dt=dt, params=NO_GRAVITY)
        assert _episode_length(env) == REACH_STEPS
        assert env.unwrapped.default_max_episode_steps == steps
        env = gym.make("TwoLinkReach-v0", dt=dt, params=NO_GRAVITY, max_episode_steps=steps)
        assert _episode_length(env) == steps
        assert TwoLinkVectorEnv(num_envs=1, task="reach", dt=dt).max_episode_steps == steps


@pytest.mark.parametrize("task", ["reach", "balance"])
@pytest.mark.parametrize("steps", [7, 123, 750])
def test_max_episode_steps_of_a_per_task_id_overrides_longer_and_shorter(task, steps):
    env = gym.make(CONVENIENCE[task], max_episode_steps=steps, params=NO_GRAVITY)
    assert env.spec.max_episode_steps == steps
    assert _episode_length(env) == steps
    # one TimeLimit only: no hidden limit of the task underneath
    assert time_limits(env) == [steps]


@pytest.mark.parametrize("task", ["reach", "balance"])
@pytest.mark.parametrize("steps", [1, 7, 123, 750])
def test_max_episode_steps_of_twolink_v0_overrides_longer_and_shorter(task, steps):
    env = gym.make("TwoLink-v0", task=task, max_episode_steps=steps, params=NO_GRAVITY)
    assert env.spec.max_episode_steps == steps
    assert _episode_length(env) == steps
    assert time_limits(env) == [steps]


def test_twolink_v0_takes_a_longer_episode():
    # the report of issue 27: the spec said 400 but episodes ended after 200 steps
    env = gym.make("TwoLink-v0", task="reach", max_episode_steps=400, params=NO_GRAVITY)
    assert env.spec.max_episode_steps == 400
    assert _episode_length(env) == 400


@pytest.mark.parametrize(
    ("env_id", "task"),
    [
        *((CONVENIENCE[t], t) for t in CONVENIENCE),
        ("TwoLink-v0", "reach"),
        ("TwoLink-v0", "balance"),
    ],
)
def test_max_episode_steps_minus_one_means_no_limit(env_id, task):
    env = gym.make(env_id, task=task, max_episode_steps=-1, params=NO_GRAVITY)
    assert time_limits(env) == []
    assert env.spec.max_episode_steps is None
    options = {"state": UPRIGHT_STILL}
    if task == "reach":
        options["target"] = [0.0, 2.0]
    env.reset(seed=0, options=options)
    for _ in range(max(TASK_STEPS[task], GENERIC_STEPS) + 50):
        _, _, terminated, truncated, _ = env.step(np.zeros(2, dtype=np.float32))
        assert not (terminated or truncated)


def test_truncation_is_reported_the_gymnasium_way():
    # truncated (not terminated) on the last step; the wrapped env itself never truncates
    env = gym.make("TwoLink-v0", task="reach", max_episode_steps=3, params=NO_GRAVITY)
    env.reset(seed=1, options={"state": UPRIGHT_STILL, "target": [0.0, 2.0]})
    flags = [env.step(np.zeros(2, dtype=np.float32))[2:4] for _ in range(3)]
    assert flags == [(False, False), (False, False), (False, True)]
    raw = TwoLinkEnv(task="reach", params=NO_GRAVITY)
    raw.reset(seed=1, options={"state": UPRIGHT_STILL, "target": [0.0, 2.0]})
    for _ in range(REACH_STEPS + 10):
        assert raw.step(np.zeros(2, dtype=np.float32))[3] is False


@pytest.mark.parametrize("task", ["reach", "balance"])
def test_remake_from_spec_of_a_per_task_id_keeps_a_longer_episode_length(task):
    env = gym.make(CONVENIENCE[task], max_episode_steps=750, params=NO_GRAVITY)
    again = gym.make(env.spec)
    assert again.spec.max_episode_steps == 750
    assert _episode_length(again) == 750


def test_remake_from_spec_keeps_a_shorter_episode_length():
    env = gym.make("TwoLink-v0", task="balance", max_episode_steps=123, params=NO_GRAVITY)
    assert _episode_length(gym.make(env.spec)) == 123


@pytest.mark.parametrize(
    ("env_id", "task", "steps"),
    [
        ("TwoLink-v0", "reach", GENERIC_STEPS),
        ("TwoLink-v0", "balance", GENERIC_STEPS),
        ("TwoLinkReach-v0", "reach", REACH_STEPS),
        ("TwoLinkBalance-v0", "balance", BALANCE_STEPS),
    ],
)
def test_remake_from_spec_keeps_the_default_episode_length(env_id, task, steps):
    env = gym.make(env_id, task=task, params=NO_GRAVITY)
    again = gym.make(env.spec)
    assert again.spec.max_episode_steps == steps
    assert _episode_length(again) == steps


def test_remake_from_spec_keeps_no_limit():
    env = gym.make("TwoLink-v0", task="balance", max_episode_steps=-1)
    assert time_limits(gym.make(env.spec)) == []


@pytest.mark.parametrize("env_id", ["TwoLink-v0", "TwoLinkTrack-v0", *CONVENIENCE.values()])
def test_entry_point_builds_the_env_class_which_never_truncates(env_id):
    # every limit is gym.make's one TimeLimit: none hides inside the entry point
    spec = gym.spec(env_id)
    env = load_env_creator(spec.entry_point)(**spec.kwargs, params=NO_GRAVITY)
    assert type(env) is TwoLinkEnv
    assert not isinstance(env, gym.Wrapper)
    env.reset(seed=0, options={"state": UPRIGHT_STILL})
    for _ in range(spec.max_episode_steps + 10):
        assert env.step(np.zeros(2, dtype=np.float32))[3] is False
    assert time_limits(gym.make(env_id)) == [spec.max_episode_steps]
    vector = load_env_creator(spec.vector_entry_point)(num_envs=2, **spec.kwargs)
    assert type(vector) is TwoLinkVectorEnv


# -- TwoLink-v0's one length: a warning where it is not the task's ------------------


@pytest.fixture
def fresh_notices(monkeypatch):
    """Forget which lengths were warned of (a notice is given once per process)."""
    monkeypatch.setattr(twolink_gym.registration, "_noticed", set())


@pytest.mark.parametrize(
    ("task", "own_steps", "own_id"),
    [
        ("swingup", 750, "TwoLinkSwingup-v0"),
        ("balance", 500, "TwoLinkBalance-v0"),
        ("track", 500, "TwoLinkTrack-v0"),
    ],
)
def test_twolink_v0_warns_when_its_length_is_not_the_tasks(fresh_notices, task, own_steps, own_id):
    # the trap of issue 43: a swing-up cut at 200 of its 750 steps, in silence
    with pytest.warns(EpisodeLengthWarning) as caught:
        env = gym.make("TwoLink-v0", task=task, params=NO_GRAVITY)
    (warning,) = caught
    message = str(warning.message)
    assert "200 steps" in message and f"max_episode_steps={own_steps}" in message
    assert repr(own_id) in message
    assert warning.filename == __file__  # attributed to the caller of gym.make
    assert env.spec.max_episode_steps == GENERIC_STEPS  # what it warns of
    if task != "track":  # (track's episodes follow a path: no still upright arm)
        assert _episode_length(env) == GENERIC_STEPS


def test_the_length_warning_names_the_length_at_the_envs_dt(fresh_notices):
    with pytest.warns(EpisodeLengthWarning, match=r"lasts 400 steps at dt=0.01 s") as caught:
        gym.make("TwoLink-v0", task="reach", dt=0.01)
    # TwoLinkReach-v0 gives 200 steps at any dt: not offered as the task's own length
    assert "TwoLinkReach-v0" not in str(caught[0].message)
    with pytest.warns(EpisodeLengthWarning, match="TwoLinkAcrobotSwingup-v0"):
        gym.make("TwoLink-v0", task="swingup", actuation="acrobot")


def test_no_length_warning_where_the_length_is_the_tasks(fresh_notices):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym.make("TwoLink-v0")
        gym.make("TwoLink-v0", task="reach", max_episode_steps=50)
        for env_id in ("TwoLinkSwingup-v0", "TwoLinkBalance-v0", "TwoLinkTrack-v0"):
            gym.make(env_id)
            gym.make_vec(env_id, num_envs=2)


def test_the_length_warning_comes_once_so_the_env_checker_stays_clean(fresh_notices):
    with pytest.warns(EpisodeLengthWarning):
        env = gym.make("TwoLink-v0", task="swingup")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gym.make("TwoLink-v0", task="swingup", max_episode_steps=750)
        check_env(env.unwrapped, skip_render_check=True)  # remakes the env from its spec


def test_make_vec_warns_only_when_it_passes_the_generic_length(fresh_notices):
    with pytest.warns(EpisodeLengthWarning, match="task 'swingup' lasts 750 steps"):
        envs = gym.make_vec("TwoLink-v0", num_envs=2, task="swingup")
    assert envs.max_episode_steps == GENERIC_STEPS
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for steps in (750, 30, -1):
            gym.make_vec("TwoLink-v0", num_envs=2, task="balance", max_episode_steps=steps)
    with pytest.warns(EpisodeLengthWarning, match="task 'balance' lasts 500 steps"):
        gym.make_vec("TwoLink-v0", num_envs=2, task="balance")


# -- reach and track have no underactuated form --------------------------------------


@pytest.mark.parametrize("env_id", ["TwoLinkReach-v0", "TwoLinkTrack-v0"])
@pytest.mark.parametrize("actuation", ["acrobot", "pendubot"])
@pytest.mark.parametrize("how", ["make", "sync", "vector_entry_point"])
def test_reach_and_track_ids_refuse_an_underactuated_arm(env_id, actuation, how):
    expected = rf"actuation must be 'full' .*got '{actuation}'"
    with pytest.raises(ValueError, match=expected):
        if how == "make":
            gym.make(env_id, actuation=actuation)
        else:
            gym.make_vec(env_id, num_envs=2, vectorization_mode=how, actuation=actuation)


@pytest.mark.parametrize("task", ["reach", "track"])
def test_twolink_v0_still_takes_reach_and_track_on_one_motor(task):
    # documented: for experiments, through the generic id
    env = gym.make("TwoLink-v0", task=task, actuation="pendubot", max_episode_steps=10)
    assert env.action_space.shape == (1,)
    assert gym.make("TwoLinkReach-v0", actuation="full").action_space.shape == (2,)


def test_registration_uses_no_frame_inspection():
    import twolink_gym.registration as registration

    source = inspect.getsource(registration)
    for needle in ("inspect", "f_back", "f_locals", "currentframe", "_getframe"):
        assert needle not in source


# -- render modes through gym.make ----------------------------------------------


@pytest.mark.parametrize("env_id", ["TwoLink-v0", "TwoLinkReach-v0", "TwoLinkBalance-v0"])
def test_make_reads_the_render_modes_of_the_entry_point(env_id):
    # gym.make takes the supported modes from the entry point's metadata (Gymnasium's rule)
    creator = load_env_creator(gym.spec(env_id).entry_point)
    assert creator.metadata["render_modes"] == ["human", "rgb_array"]


@pytest.mark.parametrize("env_id", ["TwoLink-v0", "TwoLinkReach-v0", "TwoLinkBalance-v0"])
def test_rgb_array_list_gives_gymnasiums_render_collection(env_id):
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    env = gym.make(env_id, render_mode="rgb_array_list")
    assert isinstance(env, RenderCollection)
    assert env.unwrapped.render_mode == "rgb_array"
    # the reference: Gymnasium's RenderCollection put by hand on an rgb_array env
    ref = RenderCollection(gym.make(env_id, render_mode="rgb_array"))
    options = {"state": UPRIGHT_STILL}
    if env.unwrapped.task.goal_size:
        options["target"] = [0.5, 0.5]
    zero = np.zeros(2, dtype=np.float32)
    for e in (env, ref):
        e.reset(seed=0, options=options)
        for _ in range(3):
            e.step(zero)
    frames, expected = env.render(), ref.render()
    assert isinstance(frames, list) and len(frames) == len(expected) == 4  # reset + 3 steps
    for a, b in zip(frames, expected, strict=True):
        np.testing.assert_array_equal(a, b)
    env.close()
    ref.close()


def test_make_vec_sync_accepts_rgb_array_list():
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    env = gym.make_vec(
        "TwoLink-v0", num_envs=2, vectorization_mode="sync", render_mode="rgb_array_list"
    )
    assert isinstance(env, SyncVectorEnv)
    assert all(isinstance(e, RenderCollection) for e in env.envs)
    env.reset(seed=0)
    env.step(np.zeros((2, 2), dtype=np.float32))
    frames = env.render()
    assert len(frames) == 2 and all(len(f) == 2 for f in frames)  # per copy: reset + 1 step
    env.close()


def test_kwargs_are_json_friendly_and_survive_a_spec_round_trip():
    env = gym.make(
        "TwoLink-v0",
        task="balance",
        params={"m1": 2.0, "l2": 0.8, "lc2": 0.4},
        dt=0.01,
        substeps=3,
        max_torque=[40.0, 12.0],
        max_speed=10.0,
        task_options={"fall_angle": 1.0, "ctrl_weight": 0.1},
    )
    spec = EnvSpec.from_json(env.spec.to_json())
    again = gym.make(spec).unwrapped
    assert again.params == twolink_gym.ArmParams(m1=2.0, l2=0.8, lc2=0.4)
    assert again.dt == 0.01
    assert again.sim.substeps == 3
    np.testing.assert_array_equal(again.sim.max_torque, [40.0, 12.0])
    assert again.sim.max_speed == 10.0
    assert again.task.fall_angle == 1.0
    assert again.task.ctrl_weight == 0.1


def test_make_accepts_armparams_and_dict_alike():
    params = twolink_gym.ArmParams(m2=1.5, friction1=0.0)
    a = gym.make("TwoLink-v0", params=params).unwrapped
    b = gym.make("TwoLink-v0", params=params.to_dict()).unwrapped
    assert a.params == b.params == params


def test_make_rejects_an_unknown_task_listing_the_valid_ones():
    with pytest.raises(
        ValueError, match=r"unknown task 'swim'.*\['balance', 'reach', 'swingup', 'track'\]"
    ):
        gym.make("TwoLink-v0", task="swim")


def test_make_rejects_a_bad_render_mode():
    with pytest.raises(ValueError, match="render_mode"):
        gym.make("TwoLink-v0", render_mode="ascii")


# -- gym.make_vec --------------------------------------------------------------


@pytest.mark.parametrize("task", ["reach", "balance"])
def test_make_vec_returns_the_native_vector_env(task):
    env = gym.make_vec("TwoLink-v0", num_envs=4, task=task)
    assert isinstance(env, TwoLinkVectorEnv)
    assert env.num_envs == 4
    assert env.sim.task.name == task
    assert env.max_episode_steps == GENERIC_STEPS
    assert env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP


@pytest.mark.parametrize("task", ["reach", "balance"])
def test_make_vec_of_convenience_id(task):
    env = gym.make_vec(CONVENIENCE[task], num_envs=3)
    assert isinstance(env, TwoLinkVectorEnv)
    assert env.sim.task.name == task
    assert env.max_episode_steps == TASK_STEPS[task]
    assert gym.make_vec(CONVENIENCE[task], num_envs=3, max_episode_steps=11).max_episode_steps == 11


def test_make_vec_passes_kwargs():
    env = gym.make_vec(
        "TwoLink-v0",
        num_envs=2,
        task="balance",
        dt=0.01,
        max_episode_steps=9,
        params={"m2": 0.5},
        autoreset_mode="SameStep",
    )
    assert env.sim.dt == 0.01
    assert env.max_episode_steps == 9
    assert env.sim.params.m2 == 0.5
    assert env.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    # the id's registered length, as gym.make gives it; the task's own length
    # (balance: 10 s, 1000 steps at dt = 0.01) when the vector env is built directly
    assert (
        gym.make_vec("TwoLink-v0", num_envs=2, task="balance", dt=0.01).max_episode_steps
        == GENERIC_STEPS
    )
    assert TwoLinkVectorEnv(num_envs=2, task="balance", dt=0.01).max_episode_steps == 1000


def test_make_vec_sync_mode_wraps_single_envs_with_their_time_limit():
    env = gym.make_vec("TwoLink-v0", num_envs=2, vectorization_mode="sync", task="reach")
    assert isinstance(env, SyncVectorEnv)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (2, 10)
    assert all(e.spec.max_episode_steps == REACH_STEPS for e in env.envs)


@pytest.mark.parametrize("num_envs", [0, -2, 1.5, True, "2"])
def test_make_vec_rejects_bad_num_envs(num_envs):
    with pytest.raises(ValueError, match="num_envs"):
        gym.make_vec("TwoLink-v0", num_envs=num_envs)
