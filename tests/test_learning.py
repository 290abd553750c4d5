"""Results over seeds, schedules, goal relabelling: the learning issue's machinery."""

import json
import math

import numpy as np
import pytest
import yaml
from scipy import stats as scipy_stats
from stable_baselines3 import SAC, HerReplayBuffer
from stable_baselines3.common.utils import LinearSchedule
from twolink_gym.training.algorithms import check_hyperparams, resolve_hyperparams
from twolink_gym.training.config import config_from_dict
from twolink_gym.training.envs import goal_split, make_training_env, make_vec
from twolink_gym.training.evaluate import draw_episodes, run_policy
from twolink_gym.training.export import export_agent
from twolink_gym.training.goal_env import GoalObservationVecEnv
from twolink_gym.training.policies import load_policy
from twolink_gym.training.stats import seed_difference, seed_statistics
from twolink_gym.training.sweep import (
    combine_sweeps,
    format_sweep_table,
    parse_seeds,
    seed_config,
    sweep,
)

from twolink_gym.env import TwoLinkEnv

# -- statistics over seeds -------------------------------------------------------


def test_seed_statistics_matches_direct_computation():
    values = [0.9, 1.0, 0.8, 0.95, 0.7]
    s = seed_statistics([0, 1, 2, 3, 4], values)
    assert s.mean == pytest.approx(np.mean(values))
    assert s.worst == 0.7 and s.best == 1.0
    # interquartile mean of 5 values, 25% cut at each end: the middle 3 (one cut per side)
    assert s.iqm == pytest.approx(np.mean(sorted(values)[1:4]))
    assert s.ci_low <= s.mean <= s.ci_high
    assert 0.7 <= s.ci_low < s.ci_high <= 1.0


def test_seed_statistics_worst_seed_of_a_cost_is_the_largest():
    distances = [0.01, 0.002, 0.03]
    s = seed_statistics([0, 1, 2], distances, higher_is_better=False)
    assert (s.worst, s.best) == (0.03, 0.002)
    # the mean and interval do not depend on the direction
    plain = seed_statistics([0, 1, 2], distances)
    assert (s.mean, s.ci_low, s.ci_high) == (plain.mean, plain.ci_low, plain.ci_high)


def test_seed_statistics_interval_is_scipys_percentile_bootstrap():
    values = [0.2, 0.5, 0.9, 0.4]
    s = seed_statistics(range(4), values, confidence=0.9, n_resamples=2000, random_state=7)
    ref = scipy_stats.bootstrap(
        (np.array(values),),
        np.mean,
        confidence_level=0.9,
        n_resamples=2000,
        method="percentile",
        random_state=np.random.default_rng(7),
    ).confidence_interval
    assert (s.ci_low, s.ci_high) == pytest.approx((ref.low, ref.high))


def test_seed_statistics_interval_covers_the_truth_at_its_level():
    # coverage of the percentile interval for the mean of 10 draws of a known law
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(200):
        x = rng.uniform(0.0, 1.0, 10)
        s = seed_statistics(range(10), x, n_resamples=500, random_state=int(rng.integers(1e9)))
        hits += s.ci_low <= 0.5 <= s.ci_high
    assert 0.85 <= hits / 200 <= 0.99  # nominal 95%; the percentile method under-covers a bit


def test_seed_statistics_degenerate_samples():
    s = seed_statistics([3, 4, 5], [1.0, 1.0, 1.0])
    assert (s.mean, s.worst, s.ci_low, s.ci_high) == (1.0, 1.0, 1.0, 1.0)
    one = seed_statistics([0], [0.42])
    assert (one.ci_low, one.ci_high) == (0.42, 0.42)


@pytest.mark.parametrize(
    ("seeds", "values", "kwargs", "match"),
    [
        ([0, 1], [1.0], {}, "differ in length"),
        ([], [], {}, "at least one seed"),
        ([0], [math.nan], {}, "finite"),
        ([0], [1.0], {"confidence": 1.0}, "confidence"),
    ],
)
def test_seed_statistics_rejects_bad_input(seeds, values, kwargs, match):
    with pytest.raises(ValueError, match=match):
        seed_statistics(seeds, values, **kwargs)


def test_seed_difference_against_direct_computation():
    tuned, hand = [1.0, 0.9, 0.95, 0.97], [0.96, 0.81, 0.95, 0.74, 0.94]
    d = seed_difference(tuned, hand)
    assert d.difference == pytest.approx(np.mean(tuned) - np.mean(hand))
    # probability of improvement by counting every (tuned, hand) pair, ties counting half
    pairs = [(x > y) + 0.5 * (x == y) for x in tuned for y in hand]
    assert d.probability_of_improvement == pytest.approx(np.mean(pairs))
    assert d.p_value == pytest.approx(
        scipy_stats.mannwhitneyu(tuned, hand, alternative="two-sided").pvalue
    )
    assert d.ci_low <= d.difference <= d.ci_high


def test_seed_difference_interval_is_a_two_sample_bootstrap():
    # the interval of the difference, by resampling each sample on its own by hand
    rng = np.random.default_rng(3)
    x, y = rng.uniform(0.6, 1.0, 6), rng.uniform(0.4, 0.9, 5)
    d = seed_difference(x, y, n_resamples=20_000, random_state=1)
    draws = np.random.default_rng(11)
    boot = [draws.choice(x, x.size).mean() - draws.choice(y, y.size).mean() for _ in range(20_000)]
    low, high = np.percentile(boot, [2.5, 97.5])
    assert (d.ci_low, d.ci_high) == pytest.approx((low, high), abs=0.01)
    # a shift of the candidate by c shifts the difference and its interval by c
    shifted = seed_difference(x + 0.05, y, n_resamples=20_000, random_state=1)
    assert shifted.difference == pytest.approx(d.difference + 0.05)
    assert (shifted.ci_low, shifted.ci_high) == pytest.approx((d.ci_low + 0.05, d.ci_high + 0.05))


def test_seed_difference_degenerate_and_bad_input():
    same = seed_difference([0.5, 0.5], [0.5])
    assert (same.difference, same.ci_low, same.ci_high) == (0.0, 0.0, 0.0)
    assert (same.probability_of_improvement, same.p_value) == (0.5, 1.0)
    better = seed_difference([1.0, 1.0, 1.0], [0.0, 0.0])
    assert better.probability_of_improvement == 1.0
    assert (better.ci_low, better.ci_high) == (1.0, 1.0)
    with pytest.raises(ValueError, match="baseline must be a non-empty"):
        seed_difference([1.0], [])
    with pytest.raises(ValueError, match="candidate scores must be finite"):
        seed_difference([math.inf], [1.0])
    with pytest.raises(ValueError, match="confidence"):
        seed_difference([1.0], [1.0], confidence=0.0)


def _sweep_folder(root, name, values, task="reach", evaluation=None):
    seeds = list(range(len(values)))
    summary = {
        "label": f"sac ({name})",
        "config": f"{name}.yaml",
        "task": task,
        "algo": "sac",
        "evaluation": evaluation or {"episodes": 100, "seed": 1000000},
        "success_rate": seed_statistics(seeds, values).to_dict(),
        "seeds": [
            {"seed": i, "success_rate": v, "final_distance_median": 0.01, "curve": None}
            for i, v in zip(seeds, values, strict=True)
        ],
    }
    folder = root / f"{name}_sweep"
    folder.mkdir()
    (folder / "sweep.json").write_text(json.dumps(summary))
    return folder


def test_summarize_compares_each_sweep_with_the_baseline(tmp_path):
    hand = _sweep_folder(tmp_path, "reach_sac", [0.96, 0.81, 0.95, 0.74, 0.94])
    tuned = _sweep_folder(tmp_path, "reach_sac_tuned", [1.0, 0.99, 1.0, 0.97, 1.0])
    table = combine_sweeps([tuned], tmp_path / "out", baseline=hand)
    rows = [line for line in table.splitlines() if line.startswith("| sac (")]
    # the baseline is added to the table (first), then the comparison row
    assert rows[0].startswith("| sac (reach_sac) |") and rows[1].startswith(
        "| sac (reach_sac_tuned) |"
    )
    record = json.loads((tmp_path / "out" / "comparison.json").read_text())[0]
    assert (
        record["candidate"] == "sac (reach_sac_tuned)" and record["baseline"] == "sac (reach_sac)"
    )
    assert record["difference"] == pytest.approx(np.mean([1.0, 0.99, 1.0, 0.97, 1.0]) - 0.88)
    assert record["probability_of_improvement"] == pytest.approx(1.0)
    assert "+11.2 pts" in rows[2]  # 99.2 % - 88.0 %
    # the combined table says which episode set each row rests on
    records = json.loads((tmp_path / "out" / "sweeps.json").read_text())
    assert [(r["label"], r["evaluation"]["episodes"]) for r in records] == [
        ("sac (reach_sac)", 100),
        ("sac (reach_sac_tuned)", 100),
    ]
    assert records[1]["success_rate"]["values"] == [1.0, 0.99, 1.0, 0.97, 1.0]
    # the baseline may also be one of the sweeps listed: the same comparison
    again = combine_sweeps([hand, tuned], tmp_path / "out_listed", baseline=hand)
    assert again == table
    # another episode set is refused, naming what differs
    other = _sweep_folder(tmp_path, "other", [1.0], evaluation={"episodes": 50, "seed": 1})
    with pytest.raises(ValueError, match="differ in evaluation"):
        combine_sweeps([other], tmp_path / "out2", baseline=hand)


@pytest.mark.parametrize(
    ("text", "seeds"),
    [("0-4", [0, 1, 2, 3, 4]), ("3", [3]), ("0,3,7", [0, 3, 7]), ("0-2,10,1", [0, 1, 2, 10])],
)
def test_parse_seeds(text, seeds):
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize("text", ["", "a", "4-2", "-1", "1-", "0,,1", "1.5"])
def test_parse_seeds_rejects(text):
    with pytest.raises(ValueError, match="--seeds"):
        parse_seeds(text)


# -- schedules and replay buffers named in YAML -----------------------------------


def test_linear_schedule_from_a_config_string():
    resolved = resolve_hyperparams({"learning_rate": "lin_3.0e-4", "n_steps": 64})
    schedule = resolved["learning_rate"]
    assert isinstance(schedule, LinearSchedule)
    # SB3 calls schedules with the remaining progress, 1 at the start and 0 at the end
    assert schedule(1.0) == pytest.approx(3.0e-4)
    assert schedule(0.25) == pytest.approx(0.75e-4)
    assert schedule(0.0) == pytest.approx(0.0)
    assert resolved["n_steps"] == 64


@pytest.mark.parametrize(
    ("hyperparams", "match"),
    [
        ({"learning_rate": "lin_x"}, "lin_<initial value"),
        ({"learning_rate": "lin_-1.0"}, "lin_<initial value"),
        ({"replay_buffer_class": "prioritized"}, "replay_buffer_class .* valid values are"),
        ({"n_steps": "lin_3.0"}, "only .* take a lin_<x> schedule"),
    ],
)
def test_bad_schedules_and_buffers_name_the_key(hyperparams, match):
    name = "ppo" if "n_steps" in hyperparams else "sac"
    with pytest.raises(ValueError, match=match):
        check_hyperparams(name, hyperparams)


def test_her_buffer_is_mapped_from_its_name():
    assert resolve_hyperparams({"replay_buffer_class": "her"})["replay_buffer_class"] is (
        HerReplayBuffer
    )


# -- the goal-conditioned view (HER) ----------------------------------------------

REACH = {"task": "reach", "normalize_obs": False, "normalize_reward": False}


def _cfg(env=None, **train):
    data = {
        "env": {**REACH, "goal_observation": True, **(env or {})},
        "algo": {"name": "sac", "policy": "MultiInputPolicy"},
        "train": {"total_timesteps": 1000, **train},
    }
    return config_from_dict(data)


@pytest.mark.parametrize("vectorization", ["native", "dummy"])
def test_goal_view_splits_the_observation(vectorization):
    cfg = _cfg({"vectorization": vectorization}).env
    venv = make_vec(cfg, 3, seed=5)
    obs = venv.reset()
    assert set(obs) == {"observation", "achieved_goal", "desired_goal"}
    # the same seeds in a plain single env: state encoding, target and tip from its info
    for i in range(3):
        env = TwoLinkEnv(task="reach")
        flat, info = env.reset(seed=5 + i)
        np.testing.assert_allclose(obs["observation"][i], flat[:6], atol=1e-7)
        np.testing.assert_allclose(obs["desired_goal"][i], info["target"], atol=1e-6)
        np.testing.assert_allclose(obs["achieved_goal"][i], info["tip"], atol=1e-6)
    assert venv.observation_space.contains({k: v[0] for k, v in obs.items()})


@pytest.mark.parametrize("task_options", [{}, {"speed_weight": 0.3}, {"sparse": True}])
def test_compute_reward_is_the_envs_reward(task_options):
    # For the transitions an env really made, compute_reward(tip, target, info) must give
    # the env's own reward; for a relabelled target it must give the reward the env pays
    # when that target is the goal (replayed from the same state with the same action).
    cfg = _cfg({"task_options": task_options}).env
    venv = make_vec(cfg, 4, seed=0)
    rng = np.random.default_rng(1)
    venv.reset()
    for _ in range(30):
        actions = rng.uniform(-1, 1, (4, 2)).astype(np.float32)
        states = np.array(venv.get_attr("state"))
        obs, rewards, _, infos = venv.step(actions)
        got = venv.env_method("compute_reward", obs["achieved_goal"], obs["desired_goal"], infos)
        np.testing.assert_allclose(got[0], rewards, rtol=1e-5, atol=1e-5)
        # relabel: a target drawn afresh; the env replays the step with it as the goal
        new_goal = np.array([[0.5, 1.0], [-1.2, 0.3], [0.0, -1.5], [1.1, -0.4]])
        relabelled = venv.env_method("compute_reward", obs["achieved_goal"], new_goal, infos)[0]
        for i in range(4):
            env = TwoLinkEnv(task="reach", task_options=task_options or None)
            env.reset(options={"state": states[i], "target": new_goal[i]})
            _, expected, *_ = env.step(actions[i])
            assert relabelled[i] == pytest.approx(expected, abs=1e-5)


def test_compute_reward_without_infos_says_what_to_set():
    cfg = _cfg().env
    split, task = goal_split(cfg)
    venv = GoalObservationVecEnv(make_vec(_cfg({"goal_observation": False}).env, 1, 0), task, split)
    with pytest.raises(ValueError, match="copy_info_dict"):
        venv.compute_reward(np.zeros((2, 2)), np.ones((2, 2)), [{}, {}])


def test_goal_view_refuses_a_task_without_a_goal():
    with pytest.raises(ValueError, match="goal_observation"):
        goal_split(_cfg({"task": "balance"}).env)


def test_sac_with_her_trains_on_the_goal_view():
    cfg = _cfg()
    env = make_training_env(cfg.env, 2, seed=0)
    model = SAC(
        "MultiInputPolicy",
        env,
        learning_starts=500,
        batch_size=32,
        replay_buffer_class=HerReplayBuffer,
        replay_buffer_kwargs={"n_sampled_goal": 4, "copy_info_dict": True},
        policy_kwargs={"net_arch": [16, 16]},
        seed=0,
    )
    model.learn(900)
    # with n_sampled_goal 4, 80% of the sampled goals are relabelled: rewards of the
    # relabelled samples differ from the stored ones where the goal moved
    sample = model.replay_buffer.sample(256, env=None)
    assert sample.rewards.shape == (256, 1)
    assert np.isfinite(sample.rewards.numpy()).all()


# -- the sweep --------------------------------------------------------------------


def test_sweep_trains_each_seed_and_reports_every_seed(tmp_path):
    data = {
        "env": {"task": "balance"},
        "algo": {
            "name": "ppo",
            "hyperparams": {"n_steps": 64, "batch_size": 64, "n_epochs": 1},
        },
        "train": {
            "total_timesteps": 128,
            "n_envs": 2,
            "eval_freq": 64,
            "eval_episodes": 2,
            "checkpoint_freq": 0,
            "output_dir": str(tmp_path),
            "run_name": "tiny",
            "progress_bar": False,
        },
        "evaluate": {"episodes": 3, "seed": 123},
    }
    cfg = config_from_dict(data, "tiny.yaml")
    result = sweep(cfg, [0, 2], workers=2)
    assert [r.name for r in result.runs] == ["tiny_s0", "tiny_s2"]
    for run, seed in zip(result.runs, (0, 2), strict=True):
        assert yaml.safe_load((run / "config.yaml").read_text())["train"]["seed"] == seed
    summary = json.loads((tmp_path / "tiny_sweep" / "sweep.json").read_text())
    per_seed = [s["success_rate"] for s in summary["seeds"]]
    assert summary["success_rate"]["values"] == per_seed
    assert summary["success_rate"]["mean"] == pytest.approx(np.mean(per_seed))
    assert summary["success_rate"]["worst"] == min(per_seed)
    assert all(s["episodes"] == 3 for s in summary["seeds"])
    assert (tmp_path / "tiny_sweep" / "learning_curves.png").stat().st_size > 1000
    table = format_sweep_table([summary])
    assert "ppo (tiny)" in table and table.count("\n") == 3
    # different seeds, different agents
    w0 = (result.runs[0] / "model.zip").read_bytes()
    assert w0 != (result.runs[1] / "model.zip").read_bytes()
    # the runs exist now: a second sweep refuses before training anything ...
    with pytest.raises(FileExistsError, match="--overwrite"):
        sweep(cfg, [0, 2])
    # ... and --no-train re-evaluates them as they are
    again = sweep(cfg, [0, 2], train=False)
    assert again.success.values == result.success.values
    # an exported agent (policy network with its observation statistics inside) acts
    # exactly like its run's full model with the run's VecNormalize
    exported = export_agent(result.runs[0], tmp_path / "agent")
    assert {p.name for p in exported.iterdir()} == {
        "policy.pt",
        "agent.json",
        "config.yaml",
        "train_summary.json",
        "eval",
    }
    episodes = draw_episodes(cfg.env, 4, 99)
    env = TwoLinkEnv(task="balance")
    full = run_policy(load_policy(str(result.runs[0]), cfg.env, env), cfg.env, episodes)
    small = run_policy(load_policy(str(exported), cfg.env, env), cfg.env, episodes)
    np.testing.assert_array_equal(full.actions, small.actions)
    with pytest.raises(FileExistsError, match="--overwrite"):
        export_agent(result.runs[0], exported)


def test_seed_config_names_each_run():
    cfg = config_from_dict(
        {"env": {"task": "reach"}, "algo": {"name": "ppo"}, "train": {"total_timesteps": 10}}
    )
    assert seed_config(cfg, 3).run_name == "reach_ppo_s3"
    named = config_from_dict(
        {
            "env": {"task": "reach"},
            "algo": {"name": "ppo"},
            "train": {"total_timesteps": 10, "run_name": "x"},
        }
    )
    assert seed_config(named, 3).run_name == "x_s3"
    assert seed_config(named, 3).train.seed == 3
