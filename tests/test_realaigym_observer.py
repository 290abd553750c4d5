"""The velocity observer: exact on the nominal arm, filters velocity noise, restarts after gaps."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from twolink_gym.training.cli import main

from twolink_gym.realaigym.arm import arm, from_realaigym_state
from twolink_gym.realaigym.observer import OBSERVER_GAINS, VelocityObserver
from twolink_gym.realaigym.protocol import Conditions, PolicyRunner, make_policy_env, run
from twolink_gym.realaigym.v3 import run_v3


class Wobble:
    """A policy whose normalised action follows a fixed sequence, whatever it sees."""

    def __init__(self) -> None:
        self.calls = 0

    def predict(self, obs, state=None, episode_start=None, deterministic=True):
        self.calls += 1
        action = 0.8 * math.sin(0.37 * self.calls) + 0.2 * math.sin(1.3 * self.calls)
        return np.full((obs.shape[0], 1), action, dtype=np.float32), state


class Recording(VelocityObserver):
    """The observer, keeping every measurement it got and every estimate it gave."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.measured: list[np.ndarray] = []
        self.estimates: list[np.ndarray] = []
        self.restarts: list[int] = []  # the estimates that followed each reset

    def reset(self) -> None:
        super().reset()
        self.restarts.append(len(self.estimates))

    def estimate(self, measured, period, substeps):
        x = super().estimate(measured, period, substeps)
        self.measured.append(np.array(measured, dtype=np.float64))
        self.estimates.append(x)
        return x


def _runner(robot: str = "pendubot", steps: int = 5, gains: tuple[float, ...] = ()):
    env = make_policy_env(robot, dt=0.002 * steps)
    observer = Recording(env.sim.params, *(gains or OBSERVER_GAINS[robot]))
    return PolicyRunner(Wobble(), env.sim, steps, observer), observer


@pytest.mark.parametrize(("robot", "steps"), [("pendubot", 5), ("acrobot", 1)])
def test_the_nominal_estimate_is_the_true_state(robot: str, steps: int) -> None:
    # no noise, the nominal arm: the prediction over a decision is the world's own step
    runner, observer = _runner(robot, steps)
    runs = run(runner, robot, record=True)
    truth = from_realaigym_state(runs.trajectory().x)[::steps]
    estimates = np.array([x[0] for x in observer.estimates])
    assert estimates.shape == truth.shape
    assert np.max(np.abs(truth[:, 2:])) > 5.0  # the arm moves
    np.testing.assert_allclose(estimates, truth, rtol=0, atol=1e-9)


def test_velocity_noise_is_filtered_and_the_gains_mean_what_they_say() -> None:
    sigma = 0.5
    world = Conditions.create(1, velocity_noise=sigma)
    rms = {}
    for gains in ((), (1.0, 0.0)):
        runner, observer = _runner(gains=gains)
        runs = run(runner, "pendubot", world, rng=np.random.default_rng(0), record=True)
        truth = from_realaigym_state(runs.trajectory().x)[::5, 2:]
        measured = np.array([y[0, 2:] for y in observer.measured])
        estimates = np.array([x[0, 2:] for x in observer.estimates])
        assert np.sqrt(np.mean((measured - truth) ** 2)) == pytest.approx(sigma, rel=0.05)
        rms[gains] = float(np.sqrt(np.mean((estimates - truth) ** 2)))
    assert rms[()] < 0.1 * sigma  # the board's gains: the angles and the model carry it
    assert rms[(1.0, 0.0)] == pytest.approx(sigma, rel=0.05)  # the measurement alone


def test_a_jump_in_the_angles_restarts_from_the_measurement() -> None:
    observer = VelocityObserver(arm(), 0.0, 1.0)
    x0 = np.array([[0.3, -0.2, 1.0, -2.0]])
    np.testing.assert_array_equal(observer.estimate(x0, 0.01, 5), x0)  # the first: as measured
    observer.hold([[1.0, 0.0]])
    # 0.5 rad in 10 ms at about 1 rad/s: not a prediction
    jumped = x0 + np.array([[0.5, 0.0, 3.0, 3.0]])
    np.testing.assert_array_equal(observer.estimate(jumped, 0.01, 5), jumped)
    observer.hold([[1.0, 0.0]])
    # a wrap of the angle by 2π is no jump: the innovation is wrapped
    near = observer.estimate(jumped + np.array([[2 * math.pi, 0, 0, 0]]), 0.01, 5)
    assert not np.array_equal(near[:, 2:], jumped[:, 2:])
    with pytest.raises(RuntimeError, match="estimate"):
        VelocityObserver(arm(), 0.0, 1.0).hold([[0.0, 0.0]])


def test_v3_restarts_the_observer_after_each_push() -> None:
    runner, observer = _runner("pendubot", 5)
    result = run_v3(runner, "pendubot", steps=6000)  # 12 s: the first pushes
    # the policy is asked at the steps no push drives, deciding at every 5th of its calls
    decided = np.flatnonzero(~result.pushed)[::5]
    assert len(observer.estimates) == len(decided)
    ends = np.flatnonzero(np.diff(result.pushed.astype(int)) == -1) + 1  # first step after each
    assert len(ends) >= 2
    expected = [0] + [int(np.searchsorted(decided, k)) for k in ends if k <= decided[-1]]
    assert observer.restarts == expected


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"velocity_gain": -0.1}, "velocity_gain"),
        ({"velocity_gain": 1.5}, "velocity_gain"),
        ({"position_gain": 2.5}, "position_gain"),
        ({"position_gain": math.nan}, "position_gain"),
        ({"gate": 0.0}, "gate"),
        ({"gate": math.inf}, "gate"),
    ],
)
def test_bad_gains_are_refused_by_name(kwargs: dict[str, float], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        VelocityObserver(arm(), **{"velocity_gain": 0.0, "position_gain": 1.0, **kwargs})


def test_the_cli_records_the_observer_and_refuses_bad_gains(tmp_path, capsys) -> None:
    argv = ["realaigym", "performance", "realaigym_pendubot_tvlqr", "--robot", "pendubot"]
    assert main([*argv, "--out", str(tmp_path / "a"), "--observer"]) == 0
    assert "realaigym_pendubot_tvlqr + observer (ours)" in capsys.readouterr().out
    (row,) = json.loads((tmp_path / "a" / "performance.json").read_text())
    assert row["observer"] == {"velocity_gain": 0.0, "position_gain": 1.0, "gate": 0.1}
    assert main([*argv, "--out", str(tmp_path / "b"), "--observer-gains", "2", "0"]) == 2
    assert "--observer-gains needs --observer" in capsys.readouterr().err
    bad = [*argv, "--out", str(tmp_path / "c"), "--observer", "--observer-gains", "2", "0"]
    assert main(bad) == 2
    assert "--observer-gains: velocity_gain must lie in [0, 1]" in capsys.readouterr().err
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()
