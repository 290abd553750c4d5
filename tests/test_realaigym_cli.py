"""``twolink realaigym score`` on trajectories built here with known answers."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from twolink_gym.training.cli import main

from twolink_gym.realaigym import Trajectory, write_csv


def _upright(torque: float) -> Trajectory:
    t = np.cumsum(np.r_[0.0, np.full(4999, 0.002)])
    x = np.zeros((5000, 4))
    x[:, 0] = math.pi  # upright all the time, at rest
    u = np.zeros((5000, 2))
    u[:, 1] = torque
    return Trajectory(t=t, x=x, u=u)


def test_score_json_known_answer(tmp_path, capsys) -> None:
    path = write_csv(tmp_path / "sim_swingup.csv", _upright(1.0))
    assert main(["realaigym", "score", str(path), "--robot", "acrobot", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # up from sample 1 (sample 0 is never examined): time t_1 = 0.002 s; no motion: no energy,
    # no velocity cost; constant torque: no smoothness cost; torque cost 1² · 9.998 s
    assert out["success"] == 1 and out["swingup_time"] == pytest.approx(0.002)
    assert out["energy"] == 0.0 and out["velocity_cost"] == 0.0 and out["tau_smoothness"] == 0.0
    assert out["tau_cost"] == pytest.approx(9.998)
    expected = 1 - (math.tanh(math.pi * 0.002 / 20) + math.tanh(math.pi * 9.998 / 20)) / 5
    assert out["score"] == pytest.approx(expected, rel=1e-12)


def test_score_text_v1_and_failure(tmp_path, capsys) -> None:
    traj = _upright(0.0)
    traj.x[-2, 0] = 0.0  # hanging at the second-to-last sample: a failure
    path = write_csv(tmp_path / "fail.csv", traj)
    assert main(["realaigym", "score", str(path), "--robot", "pendubot", "--version", "v1"]) == 0
    text = capsys.readouterr().out
    assert "success          0" in text and "score            0.000000" in text
    with pytest.raises(SystemExit):
        main(["realaigym", "score", str(path), "--robot", "cartpole"])


def test_robustness_gives_every_policy_the_same_noise(tmp_path, monkeypatch, capsys) -> None:
    # the board's noise and pulses come from --seed; a policy's draws must not depend on
    # the policies listed before it (common random numbers across the command)
    import twolink_gym.training.realaigym as cli_module

    import twolink_gym.realaigym.robustness as board

    draws: dict[str, float] = {}

    class Result:
        def __init__(self, score: float) -> None:
            self.score, self.partial = score, False

        def as_dict(self) -> dict[str, float]:
            return {"score": self.score}

    def fake_robustness(runner, robot, families=board.FAMILIES, *, rng, progress=None):
        draws[runner] = float(rng.random())
        return {f: Result(draws[runner]) for f in families}

    monkeypatch.setattr(board, "robustness", fake_robustness)

    class Runner(str):  # a runner without an observer, named by its policy
        observer = None

    monkeypatch.setattr(cli_module, "policy_runner", lambda spec, robot: Runner(spec))
    monkeypatch.setattr(cli_module, "_plot_families", lambda results, folder, spec: None)
    long = "b" * 40  # longer than the board's 34-character column
    argv = ["realaigym", "robustness", "a", long, "--robot", "pendubot", "--seed", "3"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    first = float(np.random.default_rng(3).random())
    assert draws == {"a": first, long: first}
    rows = json.loads((tmp_path / "robustness.json").read_text())
    assert [(r["policy"], r["noise_seed"], r["score"]) for r in rows] == [
        ("a", 3, first),
        (long, 3, first),
    ]
    # the printed board names every policy in full, the published rows too
    printed = capsys.readouterr().out
    assert f"{long} (ours)" in printed and "a (ours)" in printed
    assert "AR-EAPO (published)" in printed
