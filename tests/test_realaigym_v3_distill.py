"""The DAgger distillation of the MPPI variants (``benchmarks/realaigym_v3_distill.py``).

End to end on a tiny planner and network: the rounds a first call saves are kept by a
rerun that asks for more, the rerun refuses another ``--velocity-noise`` than the one its
folder was trained with, the agent folder holds the round the held-out runs chose and
runs through ``twolink realaigym v3``; bad arguments are refused before anything is
written.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from twolink_gym.training.cli import main as twolink

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "realaigym_v3_distill.py"
CONFIG = ROOT / "configs" / "realaigym_pendubot_jax_sac_v3_push.yaml"


def _distill(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """The script on the pendubot's MPPI, 16 samples, one run a round, a 16-unit network."""
    command = [
        sys.executable,
        str(SCRIPT),
        "realaigym_pendubot_mppi",
        "--robot",
        "pendubot",
        "--config",
        str(CONFIG),
        "--runs",
        "1",
        "--samples",
        "16",
        "--fit-steps",
        "20",
        "--hidden",
        "16",
        "--select-seeds",
        "101",
        "--out",
        str(out),
        *extra,
    ]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)


def test_bad_arguments_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = _distill(out, "--velocity-noise", "-1")
    assert done.returncode == 2 and "--velocity-noise must be >= 0 rad/s, got -1" in done.stderr
    done = _distill(out, "--robot", "acrobot")
    assert done.returncode == 2 and "is not an MPPI variant of the acrobot" in done.stderr
    acrobot = ["--config", str(ROOT / "configs" / "realaigym_acrobot_jax_sac_v3_line.yaml")]
    done = _distill(out, *acrobot)
    assert done.returncode == 2 and "is a config of the acrobot, not of the pendubot" in done.stderr
    assert not out.exists()


@pytest.mark.slow
def test_a_rerun_keeps_the_saved_rounds_and_their_velocity_noise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "dagger"
    noisy = ("--velocity-noise", "0.5")
    first = _distill(out, "--rounds", "1", *noisy)
    assert first.returncode == 0, first.stderr
    round_0 = (out / "seed_0" / "round_0" / "policy.npz").read_bytes()
    second = _distill(out, "--rounds", "2", *noisy)
    assert second.returncode == 0, second.stderr
    assert "seed 0 round 0" not in second.stdout and "seed 0 round 1" in second.stdout
    assert (out / "seed_0" / "round_0" / "policy.npz").read_bytes() == round_0
    log = json.loads((out / "seed_0" / "log.json").read_text())
    assert [row["round"] for row in log] == [0, 1]
    assert [row["beta"] for row in log] == [1.0, 0.5]  # the planner alone, then mixed
    assert log[1]["labels"] > log[0]["labels"] > 0  # the labels accumulate over rounds
    assert all(row["velocity_noise"] == 0.5 for row in log)
    assert all(row["select_seeds"] == [101] for row in log)

    # the folder was trained with noise: a rerun without it is refused and changes nothing
    saved = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    third = _distill(out, "--rounds", "3")
    assert third.returncode == 2
    assert "was trained with --velocity-noise 0.5, not 0.0" in third.stderr
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == saved

    agent = out / "agent_s0"
    cfg = yaml.safe_load((agent / "config.yaml").read_text())
    chosen = max(log, key=lambda row: row["selection_mean"])["round"]
    assert cfg["algo"]["name"] == "dagger"
    hyper = cfg["algo"]["hyperparams"]
    assert hyper["chosen_round"] == chosen and hyper["velocity_noise"] == 0.5
    assert hyper["teacher"] == "realaigym_pendubot_mppi" and hyper["samples"] == 16
    assert (agent / "policy.npz").read_bytes() == (
        out / "seed_0" / f"round_{chosen}" / "policy.npz"
    ).read_bytes()
    result = json.loads((out / "seed_0" / "result.json").read_text())
    assert result["round"] == chosen and 0.0 <= result["board"] <= 1.0

    board = tmp_path / "board"
    capsys.readouterr()
    assert twolink(["realaigym", "v3", str(agent), "--robot", "pendubot", "--out", str(board)]) == 0
    (row,) = json.loads((board / "v3.json").read_text())
    assert row["algorithm"] == "dagger" and row["train_seed"] == 0
    assert 0.0 <= row["score"] <= 1.0
