"""Episode-sample intervals: Wilson, the two-level bootstrap, and the sizes they imply."""

import json
import math

import numpy as np
import pytest
from twolink_gym.training.compare import markdown_table
from twolink_gym.training.config import config_from_dict
from twolink_gym.training.evaluate import Rollouts, summarize
from twolink_gym.training.stats import (
    episodes_for_half_width,
    seed_statistics,
    two_level_bootstrap,
    wilson_interval,
)
from twolink_gym.training.sweep import (
    combine_sweeps,
    format_sweep_table,
    seed_record,
    write_summary,
)

# Newcombe (1998), "Two-sided confidence intervals for the single proportion",
# Stat. Med. 17, Table I, method 3 (score interval without continuity correction)
NEWCOMBE = [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
]


@pytest.mark.parametrize(("k", "n", "low", "high"), NEWCOMBE)
def test_wilson_matches_newcombes_published_values(k, n, low, high):
    got = wilson_interval(k, n)
    assert got == pytest.approx((low, high), abs=6e-5)


def test_wilson_is_the_formula_written_out():
    z = 1.959963984540054  # the 97.5 % normal quantile
    for k, n in [(85, 100), (100, 100), (3, 7), (500, 1000)]:
        p = k / n
        centre = (2 * n * p + z**2) / (2 * (n + z**2))
        half = z / (n + z**2) * math.sqrt(n * p * (1 - p) + z**2 / 4)
        assert wilson_interval(k, n) == pytest.approx((centre - half, centre + half), abs=1e-12)
    assert wilson_interval(100, 100)[1] == 1.0 and wilson_interval(0, 5)[0] == 0.0
    # a 99 % interval is wider
    lo95, hi95 = wilson_interval(85, 100)
    lo99, hi99 = wilson_interval(85, 100, confidence=0.99)
    assert lo99 < lo95 and hi99 > hi95


def test_wilson_covers_a_known_bernoulli_rate():
    rng = np.random.default_rng(1)
    for p, n in [(0.85, 100), (0.97, 200)]:
        hits = 0
        trials = 2000
        for k in rng.binomial(n, p, size=trials):
            low, high = wilson_interval(int(k), n)
            hits += low <= p <= high
        # nominal 95 %; the binomial sampling error of the coverage over 2000 trials is 0.5 %
        assert 0.92 <= hits / trials <= 0.98, (p, hits / trials)


def test_wilson_errors_name_the_argument():
    with pytest.raises(ValueError, match="n must be a positive"):
        wilson_interval(0, 0)
    with pytest.raises(ValueError, match=r"successes must be an integer in \[0, n=5\]"):
        wilson_interval(6, 5)
    with pytest.raises(ValueError, match="confidence"):
        wilson_interval(1, 5, confidence=1.0)


def _brute_force_two_level(outcomes, n_resamples, seed):
    """The hierarchical bootstrap written as plain loops, with its own generator."""
    rng = np.random.default_rng(seed)
    means = []
    for _ in range(n_resamples):
        drawn = [outcomes[int(rng.integers(len(outcomes)))] for _ in outcomes]
        means.append(np.mean([np.mean(rng.choice(o, size=len(o))) for o in drawn]))
    return tuple(np.quantile(means, [0.025, 0.975]))


def test_two_level_bootstrap_agrees_with_a_brute_force_resampling():
    outcomes = [
        np.r_[np.ones(85), np.zeros(15)],
        np.r_[np.ones(70), np.zeros(30)],
        np.r_[np.ones(92), np.zeros(8)],
    ]
    fast = two_level_bootstrap(outcomes, n_resamples=4000, random_state=3)
    slow = _brute_force_two_level(outcomes, 4000, 99)
    # two Monte Carlo estimates of the same quantiles: their error is ~0.5 point
    assert fast == pytest.approx(slow, abs=0.015)
    # the seeds' spread widens it beyond the episode-only interval of the pooled episodes
    pooled = wilson_interval(247, 300)
    assert fast[1] - fast[0] > 1.5 * (pooled[1] - pooled[0])
    # reproducible with its random_state
    assert fast == two_level_bootstrap(outcomes, n_resamples=4000, random_state=3)


def test_two_level_bootstrap_degenerate_and_single_seed_cases():
    assert two_level_bootstrap([np.ones(50), np.ones(20)], n_resamples=200) == (1.0, 1.0)
    # one seed: the episode bootstrap alone, close to the Wilson interval at n = 400
    one = two_level_bootstrap([np.r_[np.ones(320), np.zeros(80)]], n_resamples=4000)
    assert one == pytest.approx(wilson_interval(320, 400), abs=0.01)
    with pytest.raises(ValueError, match="at least one seed"):
        two_level_bootstrap([])
    with pytest.raises(ValueError, match="seed 1 has no episodes"):
        two_level_bootstrap([[1.0], []])


def test_two_level_bootstrap_covers_a_known_rate_across_seeds_and_episodes():
    # each seed's true rate drawn around 0.8, 100 episodes each: the interval should
    # cover the population mean (0.8) at least about as often as it claims
    rng = np.random.default_rng(7)
    hits = 0
    trials = 200
    for _ in range(trials):
        rates = np.clip(rng.normal(0.8, 0.05, size=5), 0, 1)
        outcomes = [rng.random(100) < r for r in rates]
        low, high = two_level_bootstrap(outcomes, n_resamples=1000, random_state=1)
        hits += low <= 0.8 <= high
    assert hits / trials >= 0.88, hits / trials


def test_episodes_for_half_width_is_the_smallest_count():
    for p in (0.5, 0.75, 0.85, 0.95, 1.0):
        n = episodes_for_half_width(p, 0.03)
        low, high = wilson_interval(round(p * n), n)
        assert (high - low) / 2 <= 0.03
        before = wilson_interval(round(p * (n - 1)), n - 1)
        assert (before[1] - before[0]) / 2 > 0.03
    # p = 0.5: the normal approximation's 1.96² · 0.25 / 0.03² = 1067.1
    assert abs(episodes_for_half_width(0.5, 0.03) - 1067) <= 5
    with pytest.raises(ValueError, match="half_width"):
        episodes_for_half_width(0.5, 0.0)


def _rollouts(success):
    n = len(success)
    z = np.zeros(n)
    return Rollouts(
        label="x",
        kind="controller",
        success=np.asarray(success, bool),
        returns=z,
        final_distance=z,
        settle_time=z,
        effort=z,
        length=np.ones(n, np.int64),
        distance=np.zeros((n, 2)),
        states=np.zeros((n, 2, 4)),
        actions=np.zeros((n, 1, 2)),
        dt=0.01,
        arrival_time=z,
        peak_torque=z,
        torque_integral=z,
        work=z,
        smoothness=z,
        rms_distance=z,
        max_distance=z,
    )


def test_evaluation_tables_show_the_episode_interval():
    r = _rollouts([True] * 17 + [False] * 3)
    s = summarize(r)
    assert s["success_ci"] == list(wilson_interval(17, 20))
    table = markdown_table([r], "reach")
    assert "| success | 95% CI (episodes) |" in table
    assert "| 85% | [64, 95] |" in table


def _sweep_json(folder, with_episodes):
    seeds = [0, 1, 2]
    per_episode = [[1] * 9 + [0], [1] * 8 + [0] * 2, [1] * 10]
    summary = {
        "label": "ppo (x)",
        "task": "reach",
        "evaluation": {"episodes": 10, "seed": 1},
        "success_rate": seed_statistics(seeds, [0.9, 0.8, 1.0]).to_dict(),
        "seeds": [
            {"seed": s, "success_rate": np.mean(e), "final_distance_median": 0.01, "curve": None}
            | ({"episode_success": e} if with_episodes else {})
            for s, e in zip(seeds, per_episode, strict=True)
        ],
    }
    if with_episodes:
        low, high = two_level_bootstrap(per_episode)
        summary["success_rate_two_level"] = {"ci_low": low, "ci_high": high}
    folder.mkdir()
    (folder / "sweep.json").write_text(json.dumps(summary))
    return summary


# the sweeps hold no learning curves: the seed-band plot has nothing to label
@pytest.mark.filterwarnings("ignore:No artists with labels")
def test_sweep_tables_show_the_two_level_interval_or_na_for_old_sweeps(tmp_path):
    new = _sweep_json(tmp_path / "new_sweep", True)
    old = _sweep_json(tmp_path / "old_sweep", False)  # as written before per-episode results
    table = format_sweep_table([new, old])
    assert "seeds + episodes 95% CI" in table
    rows = [line for line in table.splitlines() if line.startswith("| ppo")]
    low, high = new["success_rate_two_level"]["ci_low"], new["success_rate_two_level"]["ci_high"]
    assert f"| [{100 * low:.0f}%, {100 * high:.0f}%] |" in rows[0]
    assert "| n/a |" in rows[1]
    combined = combine_sweeps([tmp_path / "new_sweep", tmp_path / "old_sweep"], tmp_path / "out")
    assert combined == table


@pytest.mark.filterwarnings("ignore:No artists with labels")
def test_write_summary_stores_the_two_level_interval_only_with_episode_results(tmp_path):
    cfg = config_from_dict(
        {"env": {"task": "reach"}, "algo": {"name": "ppo"}, "train": {"total_timesteps": 64}},
        "x.yaml",
    )
    episodes = [[1] * 9 + [0], [1] * 7 + [0] * 3]
    records = [
        {"seed": s, "success_rate": float(np.mean(e)), "final_distance_median": 0.01}
        | {"episode_success": e, "curve": None, "wall_time_s": None}
        for s, e in enumerate(episodes)
    ]
    summary, _, _ = write_summary(cfg, records, tmp_path / "a")
    both = summary["success_rate_two_level"]
    assert (both["ci_low"], both["ci_high"]) == two_level_bootstrap(episodes)
    assert json.loads((tmp_path / "a" / "sweep.json").read_text())["success_rate_two_level"]
    for r in records:
        del r["episode_success"]
    summary, _, _ = write_summary(cfg, records, tmp_path / "b")
    assert summary["success_rate_two_level"] is None
    assert "| n/a |" in (tmp_path / "b" / "table.md").read_text()


def test_a_resumed_run_counts_every_segment_of_its_training_time(tmp_path):
    # a run trained in two segments: 600 s, then 400 s after --resume
    (tmp_path / "train_summary.json").write_text(
        json.dumps({"timesteps": 300, "wall_time_s": 400.0, "cumulative_wall_time_s": 1000.0})
    )
    record = seed_record(0, tmp_path, _rollouts([True, False]))
    assert record["wall_time_s"] == 1000.0
    # a summary written before segments were summed has only the run's own time
    (tmp_path / "train_summary.json").write_text(json.dumps({"wall_time_s": 400.0}))
    assert seed_record(0, tmp_path, _rollouts([True]))["wall_time_s"] == 400.0
