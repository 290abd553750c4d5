"""Tests of ``benchmarks/realaigym_v3_schedules.py``: v3 scores over push schedules."""

import json
from pathlib import Path

import pytest
from benchmark_scripts import load_benchmark

schedules = load_benchmark("realaigym_v3_schedules")

# two policies on three schedules; the means and worst by hand
SCORES = {
    "runs/a": {11: 0.70, 12: 0.50, 13: 0.60},  # mean 0.6, worst 0.5, above 0.55: 2 of 3
    "runs/b": {11: 0.20, 12: 0.80, 13: 0.80},  # mean 0.6, worst 0.2, above 0.55: 2 of 3
}


def _write(tmp_path: Path, scores: dict[str, dict[int, float]]) -> list[Path]:
    """One folder per schedule with the rows `twolink realaigym v3 --pushes-seed N` writes."""
    seeds = sorted({s for by_seed in scores.values() for s in by_seed})
    folders = []
    for seed in seeds:
        folder = tmp_path / f"pushes_{seed}"
        folder.mkdir()
        rows = [
            {"policy": p, "robot": "acrobot", "score": by_seed[seed], "pushes_seed": seed}
            for p, by_seed in scores.items()
            if seed in by_seed
        ]
        (folder / "v3.json").write_text(json.dumps(rows))
        folders.append(folder)
    return folders


def test_the_summary_is_each_policys_mean_worst_and_best_over_schedules(tmp_path, capsys):
    folders = _write(tmp_path, SCORES)
    report = tmp_path / "report.json"
    schedules.main([*map(str, folders), "--above", "0.55", "--json", str(report)])
    data = json.loads(report.read_text())
    assert data["runs/a"]["mean"] == pytest.approx(0.6)
    assert data["runs/a"]["worst"] == pytest.approx(0.5)
    assert data["runs/b"]["worst"] == pytest.approx(0.2)
    assert data["runs/b"]["best"] == pytest.approx(0.8)
    assert data["runs/a"]["share_above"] == pytest.approx(2 / 3)
    # the interval lies within the scores and around the mean
    for policy in SCORES:
        low, high = min(SCORES[policy].values()), max(SCORES[policy].values())
        assert (
            low - 1e-12 <= data[policy]["ci_low"] <= 0.6 <= data[policy]["ci_high"] <= high + 1e-12
        )
    out = capsys.readouterr().out
    assert "3 push schedules (pushes seeds 11-13)" in out


def test_runs_on_the_boards_schedule_are_refused(tmp_path):
    folder = tmp_path / "board"
    folder.mkdir()
    (folder / "v3.json").write_text(json.dumps([{"policy": "runs/a", "score": 0.7}]))
    with pytest.raises(ValueError, match="board's schedule"):
        schedules.read_runs([folder])


def test_policies_on_different_schedules_are_refused(tmp_path):
    folders = _write(tmp_path, {"runs/a": {1: 0.5, 2: 0.6}, "runs/b": {1: 0.5}})
    with pytest.raises(ValueError, match="different schedules"):
        schedules.read_runs(folders)


def test_a_folder_without_v3_json_is_named(tmp_path):
    with pytest.raises(ValueError, match=r"has no v3\.json"):
        schedules.read_runs([tmp_path])
