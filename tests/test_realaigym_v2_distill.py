"""The DART distillation of the TVLQR variants (``benchmarks/realaigym_v2_distill.py``).

The labels are checked against the protocol's own record of the torque the teacher
applied and the observations against the env's encoding of the recorded states; the
script end to end against ``twolink realaigym performance`` run on the agent folder it
writes, and its resume against the rounds a first call saved.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from benchmark_scripts import load_benchmark
from twolink_gym.training.cli import main as twolink

from twolink_gym.realaigym.arm import arm, from_realaigym_state
from twolink_gym.realaigym.controllers import variant_runner
from twolink_gym.realaigym.protocol import PolicyRunner, run

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "realaigym_v2_distill.py"


distill = load_benchmark("realaigym_v2_distill")


@pytest.mark.parametrize("robot, motor", [("acrobot", 1), ("pendubot", 0)])
def test_labels_are_the_torques_the_teacher_applied(robot: str, motor: int) -> None:
    teacher = variant_runner(f"realaigym_{robot}_tvlqr", robot)
    recorder = distill.Recorder(teacher.predictor)
    runs = run(PolicyRunner(recorder, teacher.sim, 1), robot, record=True)
    assert runs.u is not None and runs.x is not None
    labels = np.concatenate(recorder.labels)
    assert labels.shape == (5000,)
    # the board's limit is 6 N·m and the teacher's env scales its action by 6
    np.testing.assert_allclose(6.0 * labels, runs.u[0, :, motor], rtol=0, atol=1e-5)
    assert np.all(runs.u[0, :, 1 - motor] == 0.0)
    states = from_realaigym_state(runs.x[0])
    expected = teacher.sim.observe(states, np.zeros((5000, 0))).astype(np.float32)
    np.testing.assert_allclose(np.concatenate(recorder.observations), expected, atol=1e-6)
    # the teacher swings up: the tip ends above the shoulder, near the upright
    assert abs(np.cos(runs.final[0, 0])) > 0.99


def test_held_out_arms_scale_only_m2_and_I2_within_the_spread() -> None:
    nominal = arm()
    arms = distill.held_out_arms(8, 0.02)
    assert arms == distill.held_out_arms(8, 0.02)
    assert len({(a.m2, a.I2) for a in arms}) == 8
    for a in arms:
        assert 0.98 <= a.m2 / nominal.m2 <= 1.02 and 0.98 <= a.I2 / nominal.I2 <= 1.02
        assert dataclasses.replace(a, m2=nominal.m2, I2=nominal.I2) == nominal


def test_model_family_arms_change_one_parameter_within_the_boards_range() -> None:
    nominal = arm()
    rng = np.random.default_rng(0)
    fields = ["m1", "m2", "lc1", "lc2", "I1", "I2", "rotor_inertia"]
    fields += ["friction1", "friction2", "coulomb1", "coulomb2"]
    changed = set()
    for _ in range(200):
        plant = distill.model_family_arm(rng)
        moved = [f for f in fields if getattr(plant, f) != getattr(nominal, f)]
        # m2 and m2r2 move the centre-of-mass inertia I2 as well (RealAIGym's is about the joint)
        assert len(set(moved) - {"I2", "I1"}) <= 1, moved
        changed.update(moved)
        assert 0.0 <= plant.rotor_inertia <= 1e-4
        assert -0.1 <= plant.friction1 <= 0.1 and -0.2 <= plant.coulomb2 <= 0.2
        assert 0.75 * nominal.m2 <= plant.m2 <= 1.25 * nominal.m2
    # every parameter of the family is drawn
    assert {"m2", "lc1", "lc2", "I1", "I2", "rotor_inertia"} <= changed
    assert {"friction1", "friction2", "coulomb1", "coulomb2"} <= changed


def _distill(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable,
        str(SCRIPT),
        "realaigym_pendubot_tvlqr",
        "--robot",
        "pendubot",
        "--config",
        str(ROOT / "configs" / "realaigym_pendubot_sac.yaml"),
        "--runs",
        "2",
        "--fit-steps",
        "30",
        "--hidden",
        "8",
        "--select-arms",
        "1",
        "--out",
        str(out),
        *extra,
    ]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)


def test_bad_arguments_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = _distill(out, "--pulse-fraction", "2")
    assert done.returncode == 2 and "--pulse-fraction must lie in [0, 1], got 2" in done.stderr
    done = _distill(out, "--config", str(ROOT / "configs" / "realaigym_acrobot_sac.yaml"))
    assert done.returncode == 2 and "not a config of the pendubot's swing-up" in done.stderr
    done = _distill(tmp_path / "out", "--robot", "acrobot")
    assert done.returncode == 2 and "is not a TVLQR variant of the acrobot" in done.stderr
    assert not out.exists()


@pytest.mark.slow
def test_the_agent_folder_scores_what_the_script_reports_and_a_rerun_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "dart"
    first = _distill(out, "--rounds", "1")
    assert first.returncode == 0, first.stderr
    round_0 = (out / "seed_0" / "round_0" / "policy.npz").read_bytes()
    second = _distill(out, "--rounds", "2")
    assert second.returncode == 0, second.stderr
    assert "seed 0 round 0" not in second.stdout and "seed 0 round 1" in second.stdout
    assert (out / "seed_0" / "round_0" / "policy.npz").read_bytes() == round_0
    log = json.loads((out / "seed_0" / "log.json").read_text())
    assert [row["round"] for row in log] == [0, 1]
    assert log[1]["labels"] == log[0]["labels"] + 5000 * log[1]["runs_kept"]

    agent = out / "agent_s0"
    cfg = yaml.safe_load((agent / "config.yaml").read_text())
    assert cfg["algo"]["name"] == "dart"
    assert cfg["env"]["dt"] == 0.002 and cfg["env"]["substeps"] == 1
    # the best held-out mean, a tie going to the later round
    chosen = max(log, key=lambda row: (row["selection_mean"], row["round"]))["round"]
    assert cfg["algo"]["hyperparams"]["chosen_round"] == chosen
    assert cfg["algo"]["hyperparams"]["teacher"] == "realaigym_pendubot_tvlqr"
    assert (agent / "policy.npz").read_bytes() == (
        out / "seed_0" / f"round_{chosen}" / "policy.npz"
    ).read_bytes()

    result = json.loads((out / "seed_0" / "result.json").read_text())
    board = tmp_path / "board"
    capsys.readouterr()
    assert (
        twolink(
            ["realaigym", "performance", str(agent), "--robot", "pendubot", "--out", str(board)]
        )
        == 0
    )
    rows = json.loads((board / "performance.json").read_text())
    assert rows[0]["score"] == pytest.approx(result["board"], abs=1e-12)
    assert f"performance v2 {result['board']:.3f}" in second.stdout

    # another held-out set: the saved rounds are scored on it, nothing is trained
    third = _distill(out, "--rounds", "2", "--select-from", "worlds", "--select-arms", "3")
    assert third.returncode == 0, third.stderr
    assert "labels" not in third.stdout and "on the held-out set asked" in third.stdout
    rescored = json.loads((out / "seed_0" / "log.json").read_text())
    for before, after in zip(log, rescored, strict=True):
        assert after["labels"] == before["labels"]
        assert after["select"] == {"from": "worlds", "count": 3}
        assert len(after["selection"]) == 3 and set(after["selection"]) <= {0.0, 1.0}
    best = max(row["selection_mean"] for row in rescored)
    # a tie goes to the later round
    expected = max(row["round"] for row in rescored if row["selection_mean"] == best)
    cfg = yaml.safe_load((agent / "config.yaml").read_text())
    assert cfg["algo"]["hyperparams"]["chosen_round"] == expected
    assert cfg["algo"]["hyperparams"]["select_from"] == "worlds"
    assert (out / "seed_0" / "round_0" / "policy.npz").read_bytes() == round_0
