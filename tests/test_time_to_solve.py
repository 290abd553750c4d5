"""The time-to-solve benchmark and the wall-time log of the periodic evaluations it reads.

The benchmark is checked on synthetic run folders whose evaluation logs are
written here, against values worked out by hand; the log on real tiny
``twolink train`` runs against a clock outside training, the run summary, and a
``--resume`` (from the final model and from a checkpoint).
"""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from benchmark_scripts import load_benchmark
from twolink_gym.training.cli import main as twolink
from twolink_gym.training.config import config_from_dict
from twolink_gym.training.train import TIME_LOG_COLUMNS, read_time_log

ROOT = Path(__file__).resolve().parents[1]


tts = load_benchmark("time_to_solve")


@pytest.fixture(autouse=True)
def _restore_torch_threads():
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


# -- synthetic run folders -----------------------------------------------------------


def _fake_run(root: Path, seed: int, success: list[float], task: str = "balance") -> Path:
    """A run folder with config.yaml, train_summary.json and a hand-made eval/time_log.csv.

    Evaluation ``i`` (1-based) is at ``1000 i`` steps, after ``10 i + seed``
    seconds of training and ``0.5 i`` seconds of evaluation.
    """
    cfg = config_from_dict(
        {
            "env": {"task": task},
            "algo": {"name": "ppo"},
            "train": {
                "total_timesteps": 1000 * len(success),
                "seed": seed,
                "eval_freq": 1000,
                "eval_episodes": 20,
                "output_dir": str(root),
            },
        }
    )
    run = cfg.run_dir
    (run / "eval").mkdir(parents=True)
    (run / "config.yaml").write_text(yaml.safe_dump(cfg.to_dict()))
    lines = [",".join(TIME_LOG_COLUMNS)]
    for i, s in enumerate(success, start=1):
        train_s, eval_s = 10.0 * i + seed, 0.5 * i
        lines.append(f"{1000 * i},{train_s},{eval_s},{train_s + eval_s},{s},{100 * s},20")
    (run / "eval" / "time_log.csv").write_text("\n".join(lines) + "\n")
    summary = {"timesteps": 1000 * len(success), "load_average": [1.5 + seed, 1.0, 0.5]}
    summary["machine"] = {"cpu_count": 2, "processor": "x86_64", "torch": "t", "torch_threads": 1}
    (run / "train_summary.json").write_text(json.dumps(summary))
    return run


def test_first_evaluation_at_target_per_seed_median_and_worst(tmp_path: Path) -> None:
    # balance's target is 95 %: seed 0 first reaches it at its 3rd evaluation,
    # seed 1 at its 2nd (and dips after), seed 2 never (best 90 %)
    runs = [
        _fake_run(tmp_path, 0, [0.0, 0.5, 0.95, 1.0]),
        _fake_run(tmp_path, 1, [0.1, 1.0, 0.85, 1.0]),
        _fake_run(tmp_path, 2, [0.0, 0.9, 0.9, 0.9]),
    ]
    (row,) = tts.time_to_solve(runs)
    assert row["config"] == "balance_ppo" and row["target"] == 0.95
    assert [s["seed"] for s in row["seeds"]] == [0, 1, 2]
    assert [s["steps"] for s in row["seeds"]] == [3000, 2000, None]
    # training time: 10 i + seed
    assert [s["train_time_s"] for s in row["seeds"]] == [30.0, 21.0, None]
    assert [s["wall_time_s"] for s in row["seeds"]] == [31.5, 22.0, None]
    assert [s["end_steps"] for s in row["seeds"]] == [4000, 4000, 4000]
    assert [s["best_success"] for s in row["seeds"]] == [1.0, 1.0, 0.9]
    # median of (3000, 2000, never) is 3000; the worst seed never reached it
    assert row["reached"] == 2
    assert row["median_steps"] == 3000 and row["worst_steps"] is None
    assert row["median_train_time_s"] == 30.0 and row["worst_train_time_s"] is None

    # two in a row: seed 0 from its 3rd evaluation, seed 1 only from its 4th... which is
    # its last, so a run of two cannot start there: never
    (row2,) = tts.time_to_solve(runs, consecutive=2)
    assert [s["steps"] for s in row2["seeds"]] == [3000, None, None]
    assert row2["median_steps"] is None  # two of three seeds never


def test_consecutive_and_nan_success() -> None:
    nan = math.nan
    assert tts.first_at_target(np.array([nan, 0.9, 0.9]), 0.9) == 1
    assert tts.first_at_target(np.array([0.9, 0.8, 0.9, 0.95, 0.9]), 0.9, 3) == 2
    assert tts.first_at_target(np.array([nan, nan]), 0.5) is None
    with pytest.raises(ValueError, match="consecutive"):
        tts.first_at_target(np.array([1.0]), 0.5, 0)


def test_pass_probability_of_a_small_evaluation() -> None:
    # 95 % of 20 episodes needs 19 or 20 successes: p^20 + 20 p^19 (1 - p)
    for p in (0.95, 0.85):
        assert tts.pass_probability(0.95, 20, p) == pytest.approx(p**20 + 20 * p**19 * (1 - p))
    # 80 % of 20 needs 16: the binomial tail from 16
    tail = sum(math.comb(20, k) * 0.8**k * 0.2 ** (20 - k) for k in (16, 17, 18, 19, 20))
    assert tts.pass_probability(0.8, 20, 0.8) == pytest.approx(tail)
    assert tts.pass_probability(0.9, 10, 1.0) == pytest.approx(1.0)


def test_median_and_worst_count_unreached_as_late() -> None:
    assert tts.median_and_worst([4.0, None, 2.0, 3.0]) == (3.5, math.inf)
    assert tts.median_and_worst([None, None, 1.0]) == (math.inf, math.inf)


def test_cli_groups_configs_and_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _fake_run(tmp_path / "a", 0, [0.5, 0.95])
    _fake_run(tmp_path / "a", 1, [0.96, 1.0])
    _fake_run(tmp_path / "b", 0, [0.7, 0.85], task="track")  # track's target is 80 %
    out = tmp_path / "tts.json"
    assert tts.main([str(tmp_path / "*" / "*_s*"), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    data = json.loads(out.read_text())["configs"]
    assert [(r["config"], r["median_steps"], r["worst_steps"]) for r in data] == [
        ("balance_ppo", 1500.0, 2000),  # median of 2000 and 1000 steps
        ("track_ppo", 2000, 2000),
    ]
    assert (
        "| balance_ppo | ≥ 95% | 20 episodes every 1,000 steps | 2/2 | 2,000 / 1,000 |" in printed
    )
    assert "load average (1 min) at the runs' ends: 1.50–2.50" in printed


def test_machine_line_names_the_gpu_jax_ran_on_and_not_a_cpu_device() -> None:
    cpu = {"cpu_count": 2, "cpu_model": "EPYC", "jax_backend": "cpu", "device_kind": "cpu"}
    gpu = {"cpu_count": 16, "cpu_model": "Xeon", "jax_backend": "gpu", "device_kind": "NVIDIA H200"}
    rows = [{"machine": [cpu], "load_average": [[1.0, 1, 1]]}]
    assert "2 CPUs (EPYC), torch" in tts.machine_line(rows)
    assert "JAX on" not in tts.machine_line(rows)
    rows.append({"machine": [gpu, gpu], "load_average": [[0.5, 1, 1], [0.7, 1, 1]]})
    line = tts.machine_line(rows)
    assert "16, 2 CPUs (EPYC, Xeon); JAX on NVIDIA H200, torch" in line
    assert "load average (1 min) at the runs' ends: 0.50–1.00." in line


def test_cli_names_a_folder_that_is_no_run(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert tts.main([str(tmp_path)]) == 2
    assert "neither a run folder" in capsys.readouterr().err


def test_targets_are_the_ones_the_results_pages_state() -> None:
    for target in tts.TARGETS:
        text = (ROOT / target.source).read_text()
        percent = round(100 * target.success)
        assert re.search(rf"≥ {percent} ?%", text), (target, target.source)
    with pytest.raises(ValueError, match=r"env.task='reach' with env.actuation='acrobot'"):
        tts.target_for("reach", "acrobot")


# -- the log written by twolink train ------------------------------------------------

TINY = [
    "--set",
    "train.total_timesteps=2048",
    "--set",
    "train.n_envs=4",
    "--set",
    "algo.hyperparams.n_steps=128",
    "--set",
    "algo.hyperparams.batch_size=128",
    "--set",
    "algo.hyperparams.n_epochs=2",
    "--set",
    "train.eval_freq=512",
    "--set",
    "train.eval_episodes=4",
    "--set",
    "train.checkpoint_freq=1024",
    "--set",
    "train.progress_bar=false",
]


def _train(tmp_path: Path, *extra: str) -> float:
    """``twolink train`` balance PPO, tiny; return the wall time seen from outside [s]."""
    start = time.perf_counter()
    code = twolink(
        [
            "train",
            str(ROOT / "configs" / "balance_ppo.yaml"),
            *TINY,
            "--set",
            f"train.output_dir={tmp_path}",
            *extra,
        ]
    )
    assert code in (0, None)
    return time.perf_counter() - start


def test_train_logs_wall_times_and_resume_continues_them(tmp_path: Path) -> None:
    outside = _train(tmp_path)
    run = tmp_path / "balance_ppo_s0"
    log = read_time_log(run)
    summary = json.loads((run / "train_summary.json").read_text())
    assert log is not None
    np.testing.assert_array_equal(log["timesteps"], [512, 1024, 1536, 2048])
    np.testing.assert_array_equal(log["episodes"], [4, 4, 4, 4])
    for key in ("train_time_s", "eval_time_s", "wall_time_s"):
        assert np.all(np.diff(log[key]) > 0), key
    np.testing.assert_allclose(
        log["wall_time_s"], log["train_time_s"] + log["eval_time_s"], atol=2e-3
    )
    assert log["wall_time_s"][-1] <= summary["wall_time_s"] <= outside
    assert log["train_time_s"][-1] <= summary["cumulative_train_time_s"]
    assert summary["cumulative_wall_time_s"] == summary["wall_time_s"]
    assert np.all((log["success_rate"] >= 0) & (log["success_rate"] <= 1))
    with np.load(run / "eval" / "evaluations.npz") as old:  # SB3's log, unchanged
        np.testing.assert_array_equal(old["timesteps"], log["timesteps"])
        np.testing.assert_allclose(old["results"].mean(axis=1), log["mean_return"], rtol=1e-6)
        np.testing.assert_allclose(old["successes"].mean(axis=1), log["success_rate"])

    # resumed from the final model: the earlier rows are kept, the clock continues
    _train(tmp_path, "--resume", str(run), "--set", "train.total_timesteps=3072")
    resumed = read_time_log(run)
    second = json.loads((run / "train_summary.json").read_text())
    assert resumed is not None
    np.testing.assert_array_equal(resumed["timesteps"], [512, 1024, 1536, 2048, 2560, 3072])
    for key in TIME_LOG_COLUMNS:
        np.testing.assert_array_equal(resumed[key][:4], log[key], err_msg=key)
    assert resumed["train_time_s"][4] > summary["cumulative_train_time_s"]
    assert resumed["eval_time_s"][4] > summary["cumulative_eval_time_s"]
    for key in ("train_time_s", "eval_time_s", "wall_time_s"):
        assert np.all(np.diff(resumed[key]) > 0), key
    assert second["cumulative_wall_time_s"] == pytest.approx(
        summary["cumulative_wall_time_s"] + second["wall_time_s"], abs=0.02
    )
    assert resumed["wall_time_s"][-1] <= second["cumulative_wall_time_s"]


def test_resume_from_a_checkpoint_drops_the_later_rows(tmp_path: Path) -> None:
    _train(tmp_path)
    run = tmp_path / "balance_ppo_s0"
    log = read_time_log(run)
    assert log is not None
    checkpoint = run / "checkpoints" / "model_1024_steps.zip"
    _train(tmp_path, "--resume", str(checkpoint), "--set", "train.total_timesteps=2048")
    resumed = read_time_log(run)
    assert resumed is not None
    np.testing.assert_array_equal(resumed["timesteps"], [512, 1024, 1536, 2048])
    np.testing.assert_array_equal(resumed["train_time_s"][:2], log["train_time_s"][:2])
    # the clock continues from the time at the checkpoint (1,024 steps), which lies
    # between the evaluation there and the next one of the first segment
    assert resumed["train_time_s"][2] > log["train_time_s"][1]
    assert resumed["eval_time_s"][2] > log["eval_time_s"][1]
