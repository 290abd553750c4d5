"""RealAIGym v3 (ICRA 2025): the scorer, the push schedule, the simulator and ``twolink realaigym v3``.

The expected values come from outside the code under test: the published push
schedules, scores and trajectories, an RK4 of RealAIGym's own equations of
motion (their angles, their joint-axis inertias, their formulas) written out
here, and answers worked out by hand. The published trajectories and the
original code's reference run are the publisher's data and are not in the
repository: the tests that need them read the folder named by the environment
variable ``TWOLINK_REALAIGYM_V3_DATA`` (default: ``shared/realaigym/v3`` beside
the repository) and are skipped when it does not exist.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

from twolink_gym.realaigym import Trajectory, read_csv
from twolink_gym.realaigym.protocol import PolicyRunner, make_policy_env
from twolink_gym.realaigym.v3 import run_v3, schedule, score_v3

DATA = Path(
    os.environ.get(
        "TWOLINK_REALAIGYM_V3_DATA",
        Path(__file__).resolve().parents[2] / "shared" / "realaigym" / "v3",
    )
)
needs_data = pytest.mark.skipif(
    not (DATA / "published_v3.json").is_file(),
    reason=f"the publisher's v3 data is not at {DATA} (set TWOLINK_REALAIGYM_V3_DATA)",
)

# RealAIGym's C.1 / 1.1 arm as they publish it: masses, lengths, centres of mass, inertias
# about the joint axes
M1, M2 = 0.5234602302310271, 0.6255677234174437
L1, L2 = 0.2, 0.3
R1, R2 = 0.2, 0.25569305436052964
I1, I2 = 0.031887199591513114, 0.05086984812807257
G = 9.81


def their_rhs(x: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``ẋ`` of RealAIGym's plant (``UnderactuatedLecture`` formulas), rows ``(n, 4)``."""
    q1, q2, dq1, dq2 = x.T
    c2, s2 = np.cos(q2), np.sin(q2)
    m11 = I1 + I2 + M2 * L1**2 + 2 * M2 * L1 * R2 * c2
    m12 = I2 + M2 * L1 * R2 * c2
    m22 = np.full_like(q1, I2)
    h = M2 * L1 * R2 * s2
    cq1 = -2 * h * dq2 * dq1 - h * dq2 * dq2
    cq2 = h * dq1 * dq1
    g1 = -M1 * G * R1 * np.sin(q1) - M2 * G * (L1 * np.sin(q1) + R2 * np.sin(q1 + q2))
    g2 = -M2 * G * R2 * np.sin(q1 + q2)
    b1, b2 = u[:, 0] + g1 - cq1, u[:, 1] + g2 - cq2
    det = m11 * m22 - m12 * m12
    return np.stack([dq1, dq2, (m22 * b1 - m12 * b2) / det, (m11 * b2 - m12 * b1) / det], 1)


def their_rk4(x: np.ndarray, u: np.ndarray, dt: float = 0.002) -> np.ndarray:
    k1 = their_rhs(x, u)
    k2 = their_rhs(x + 0.5 * dt * k1, u)
    k3 = their_rhs(x + 0.5 * dt * k2, u)
    k4 = their_rhs(x + dt * k3, u)
    return x + dt * (k1 + 2 * (k2 + k3) + k4) / 6


def their_gravity_compensation(q: np.ndarray) -> np.ndarray:
    """``-G(q)``: the torque that holds the arm still, RealAIGym's angles, rows ``(n, 2)``."""
    s1, s12 = np.sin(q[:, 0]), np.sin(q[:, 0] + q[:, 1])
    return np.stack([M1 * G * R1 * s1 + M2 * G * (L1 * s1 + R2 * s12), M2 * G * R2 * s12], 1)


# -- the schedule: the published push times (REALAIGYM_V3 §3.2, four decimals) ----------------

PUBLISHED_TIMES = {
    "acrobot": "3.4035 6.8570 11.0847 14.7531 18.6623 21.9897 26.6599 29.2397 33.3879 38.0553 "
    "40.3788 45.9899 47.9368 53.0290 55.5594",
    "pendubot": "3.8060 7.1561 11.1478 14.0327 17.9441 22.8852 26.9219 29.8486 34.4475 37.5936 "
    "40.9582 45.4545 47.9377 53.2857 55.9225",
}
PUBLISHED_FIRST_TARGETS = {
    "acrobot": [(0.272, 1.439), (-0.825, -2.838), (-1.600, 2.347)],
    "pendubot": [(-2.182, -1.242), (2.106, 2.683), (-1.450, 0.905)],
}


@pytest.mark.parametrize("robot", ["acrobot", "pendubot"])
def test_schedule_is_the_published_one(robot: str) -> None:
    pushes = schedule(robot)
    expected = [float(v) for v in PUBLISHED_TIMES[robot].split()]
    np.testing.assert_allclose(pushes.times, expected, atol=5.1e-5, rtol=0)
    np.testing.assert_allclose(
        pushes.targets[:3, :2], PUBLISHED_FIRST_TARGETS[robot], atol=5.1e-4, rtol=0
    )
    assert np.all(np.abs(pushes.targets[:, :2]) <= math.pi)


@pytest.mark.parametrize("robot", ["acrobot", "pendubot"])
def test_schedule_from_another_seed_draws_other_pushes_the_same_way(robot: str) -> None:
    board = schedule(robot)
    # the board's seed given explicitly is the board's schedule
    same = schedule(robot, {"acrobot": 333, "pendubot": 777}[robot])
    np.testing.assert_array_equal(same.times, board.times)
    np.testing.assert_array_equal(same.targets, board.targets)
    other = schedule(robot, 5)
    assert np.max(np.abs(other.times - board.times)) > 0.1
    # the seed decides the draws, not the robot
    np.testing.assert_array_equal(other.times, schedule("acrobot", 5).times)
    # drawn as the board's: 15 times within 1 s of every 3.75 s, increasing; angles in [-pi, pi)
    gap = 60.0 / 16
    assert other.times.shape == (15,) and np.all(np.diff(other.times) > 0)
    assert np.all(np.abs(other.times - gap * np.arange(1, 16)) <= 1.0)
    assert other.targets.shape == (15, 4)
    assert np.all((-math.pi <= other.targets[:, :2]) & (other.targets[:, :2] < math.pi))
    assert np.all(np.abs(other.targets[:, 2:]) <= 4 * math.pi)


@pytest.mark.parametrize("seed", [-1, 2**32, 1.5, True, "5"])
def test_schedule_names_a_bad_seed(seed: object) -> None:
    with pytest.raises(ValueError, match=r"seed must be None or an integer in \[0, 2\*\*32\)"):
        schedule("pendubot", seed)  # type: ignore[arg-type]


# -- the scorer on trajectories with hand-worked answers ---------------------------------------


def _float_times(n: int) -> np.ndarray:
    t, out = 0.0, []
    for _ in range(n):
        out.append(t)
        t += 0.002
    return np.array(out)


def test_uptime_counts_each_up_row_for_the_step_ending_at_it() -> None:
    n = 30000
    x = np.zeros((n, 4))
    up_rows = [*range(0, 10), *range(300, 310), *range(600, 610), *range(1200, 1201)]
    x[up_rows, 0] = math.pi  # upright: tip at 0.5 m > 0.45 m
    tr = Trajectory(t=_float_times(n), x=x, u=np.zeros((n, 2)))
    s = score_v3(tr)
    # row 0 weighs t_0 - 0 = 0; the other 30 up rows 0.002 s each
    assert s.uptime == pytest.approx(30 * 0.002, rel=1e-9)
    assert s.score == pytest.approx(30 * 0.002 / 60, rel=1e-9)
    # rises, the last count starting at -1 s: row 0 (t = 0, exactly 1 s after -1 s: the
    # test is strict, not counted), row 300 (t = 0.6: counted), row 600 (0.6 s after the
    # last count: not counted), row 1200 (1.8 s after it: counted)
    assert s.n_swingups == 2


def test_the_line_is_strict_and_at_nine_tenths_of_the_reach() -> None:
    n = 4
    # tip height -l1 cos q1 - l2 cos(q1 + q2) with q2 = 0: 0.5 (-cos q1); 0.45 exactly is not up
    q1 = math.acos(-0.9)
    x = np.zeros((n, 4))
    x[:, 0] = [0.0, q1 + 1e-6, q1 - 1e-3, math.pi]
    s = score_v3(Trajectory(t=_float_times(n), x=x, u=np.zeros((n, 2))))
    assert s.uptime == pytest.approx(2 * 0.002)


# -- the simulator: an independent RK4 replays every step; pushes where the protocol puts them --


class Recorder:
    """A policy ``f(x, t)`` giving a torque on the motor joint; it records the times it is asked at."""

    def __init__(self, motor: int) -> None:
        self.motor = motor
        self.asked: list[float] = []

    def __call__(self, x: np.ndarray, t: float) -> np.ndarray:
        self.asked.append(t)
        u = np.zeros(2)
        u[self.motor] = 5.0 * math.sin(3.0 * t) - 0.5 * x[2 + self.motor]
        return u


def _windows(pushed: np.ndarray) -> list[tuple[int, int]]:
    edges = np.flatnonzero(np.diff(np.r_[0, pushed.astype(int), 0]))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))


@pytest.mark.parametrize(("robot", "motor"), [("acrobot", 1), ("pendubot", 0)])
def test_every_step_replays_and_the_pushes_are_where_the_protocol_puts_them(
    robot: str, motor: int
) -> None:
    steps = 3300  # the first push of both robots (3.40 s, 3.81 s) and what follows it
    policy = Recorder(motor)
    run = run_v3(policy, robot, steps=steps)
    tr = run.trajectory
    t, x, u = tr.t, tr.x, tr.u
    assert t.tolist() == _float_times(steps).tolist()
    np.testing.assert_array_equal(x[0], [0.0, 0.0, 0.0, 0.0])
    # every step: their RK4 from row k with the applied torque lands on row k + 1
    nxt = np.vstack([x[1:], run.final])
    np.testing.assert_allclose(their_rk4(x, u), nxt, rtol=0, atol=1e-12)
    # one push, starting at the first row with t >= its time, for 100 or 101 steps
    first = float(schedule(robot).times[0])
    ((start, stop),) = _windows(run.pushed)
    assert start == int(np.argmax(t >= first)) and stop - start in (100, 101)
    # the policy is asked at every step outside the push and never inside it
    assert policy.asked == t[~run.pushed].tolist()
    outside = ~run.pushed
    assert np.all(u[outside, 1 - motor] == 0.0)
    # inside: clip(PID, ±6) + gravity compensation on both joints, then clip(±6): a PID on
    # unwrapped angles, integral over the push so far at dt 0.001, derivative at dt 0.001
    # (0 on its first two calls)
    target = schedule(robot).targets[0, :2]
    errors = target - x[start:stop, :2]
    integral = 0.1 * np.cumsum(errors, axis=0) * 0.001
    derivative = np.zeros_like(errors)
    derivative[2:] = 1.0 * np.diff(errors, axis=0)[1:] / 0.001
    pid = np.clip(10.0 * errors + integral + derivative, -6.0, 6.0)
    expected = np.clip(pid + their_gravity_compensation(x[start:stop, :2]), -6.0, 6.0)
    np.testing.assert_allclose(u[start:stop], expected, rtol=0, atol=1e-12)


def test_a_second_push_continues_the_pid_memory() -> None:
    # the PID's error memory is never cleared: the second push's first derivative
    # differences against the first push's last error, its integral runs on
    run = run_v3(None, "acrobot", steps=int(7.2 / 0.002))
    tr = run.trajectory
    (a, b), (c, d) = _windows(run.pushed)
    targets = schedule("acrobot").targets[:2, :2]
    errors = np.vstack([targets[0] - tr.x[a:b, :2], targets[1] - tr.x[c:d, :2]])
    integral = 0.1 * np.cumsum(errors, axis=0) * 0.001
    derivative = np.zeros_like(errors)
    derivative[2:] = np.diff(errors, axis=0)[1:] / 0.001
    pid = np.clip(10.0 * errors + integral + derivative, -6.0, 6.0)
    grav = their_gravity_compensation(np.vstack([tr.x[a:b, :2], tr.x[c:d, :2]]))
    expected = np.clip(pid + grav, -6.0, 6.0)
    np.testing.assert_allclose(np.vstack([tr.u[a:b], tr.u[c:d]]), expected, rtol=0, atol=1e-12)
    assert np.all(tr.u[:a] == 0.0) and np.all(tr.u[b:c] == 0.0)  # no torque outside the pushes


class Counting:
    """A policy of constant normalised action 0.5; it counts its calls and their episode starts."""

    def __init__(self) -> None:
        self.calls: list[bool] = []

    def predict(self, obs, state=None, episode_start=None, deterministic=True):
        self.calls.append(bool(np.asarray(episode_start).all()))
        return np.full((obs.shape[0], 1), 0.5, dtype=np.float32), state


def test_policy_runner_is_asked_as_the_protocol_says() -> None:
    # a policy deciding every 5th of its own calls; pushes are not its calls; its actions are
    # scaled by its env's max_torque (10 N·m: 5 N·m) on its motor joint only
    policy = Counting()
    runner = PolicyRunner(policy, make_policy_env("pendubot", max_torque=10.0).sim, 5)
    run = run_v3(runner, "pendubot", steps=1800)  # the pendubot's first push is at 3.806 s
    assert not run.pushed.any() and len(policy.calls) == 360
    assert policy.calls[0] and not any(policy.calls[1:])  # an episode start only at the start
    assert np.all(run.trajectory.u == [5.0, 0.0])
    with pytest.raises(ValueError, match="actuation"):
        run_v3(runner, "acrobot", steps=10)
    with pytest.raises(ValueError, match="steps"):
        run_v3(None, "acrobot", steps=0)


# -- `twolink realaigym v3` and `score --version v3` ----------------------------------------


def test_cli_writes_a_full_run_in_the_published_layout(tmp_path, monkeypatch, capsys) -> None:
    import twolink_gym.training.realaigym as cli_module
    from twolink_gym.training.cli import main

    # a policy of no torque as a plain function of the state (a full run of 30,000 steps
    # through a PolicyRunner costs seconds; test_policy_runner_is_asked_as_the_protocol_says
    # runs one for part of a run)
    monkeypatch.setattr(cli_module, "policy_runner", lambda spec, robot: lambda x, t: (0.0, 0.0))
    assert main(["realaigym", "v3", "zero", "--robot", "acrobot", "--out", str(tmp_path)]) == 0
    board = capsys.readouterr().out
    assert "zero (ours)" in board and "AR-EAPO (published)" in board
    folder = tmp_path / "zero"
    header = (folder / "sim_swingup.csv").read_text().splitlines()[0]
    assert header == "time,pos_meas1,pos_meas2,vel_meas1,vel_meas2,tau_con1,tau_con2"
    tr = read_csv(folder / "sim_swingup.csv")
    assert tr.t.shape == (30000,) and tr.t[-1] == pytest.approx(59.998)
    # every one of the 29,999 recorded steps replays through their RK4
    np.testing.assert_allclose(their_rk4(tr.x[:-1], tr.u[:-1]), tr.x[1:], rtol=0, atol=1e-12)
    # with no torque from the policy, the pushes are the rows with torque: 15 windows of
    # 100 or 101 steps starting at the first row at or after each published time
    windows = _windows(np.any(tr.u != 0.0, axis=1))
    times = [float(v) for v in PUBLISHED_TIMES["acrobot"].split()]
    assert len(windows) == 15
    for (start, stop), when in zip(windows, times, strict=True):
        assert stop - start in (100, 101)
        assert tr.t[start] >= when - 5e-5 and tr.t[start - 1] < when + 5e-5
    lines = (folder / "scores_v3.csv").read_text().splitlines()
    assert lines[0] == "#swingups,Uptime [s],RealAI Score"
    n, uptime, score = (float(v) for v in lines[1].split(","))
    assert score == pytest.approx(uptime / 60, rel=1e-15)
    assert (folder / "timeseries.png").stat().st_size > 0
    (row,) = json.loads((tmp_path / "v3.json").read_text())
    assert row["policy"] == "zero" and row["score"] == score and row["n_swingups"] == n
    assert row["pushes_seed"] is None  # the board's pushes
    assert main(["realaigym", "score", str(folder / "sim_swingup.csv"), "--robot", "acrobot",
                 "--version", "v3", "--json"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)["uptime"] == uptime


def test_cli_runs_held_out_pushes_from_another_seed(tmp_path, monkeypatch, capsys) -> None:
    import twolink_gym.training.realaigym as cli_module
    from twolink_gym.training.cli import main

    monkeypatch.setattr(cli_module, "policy_runner", lambda spec, robot: lambda x, t: (0.0, 0.0))
    args = ["realaigym", "v3", "zero", "--robot", "acrobot", "--out", str(tmp_path)]
    assert main([*args, "--pushes-seed", "5"]) == 0
    board = capsys.readouterr().out
    # ours alone, said not to be the board
    assert "held-out pushes (seed 5)" in board and "(published)" not in board
    tr = read_csv(tmp_path / "zero" / "sim_swingup.csv")
    windows = _windows(np.any(tr.u != 0.0, axis=1))
    # the pushes start where seed 5's draws put them, not at the published times
    when = schedule("acrobot", 5).times
    assert len(windows) == 15 and abs(when[0] - float(PUBLISHED_TIMES["acrobot"].split()[0])) > 0.1
    for (start, _), t in zip(windows, when, strict=True):
        assert tr.t[start] >= t - 5e-5 and tr.t[start - 1] < t + 5e-5
    (row,) = json.loads((tmp_path / "v3.json").read_text())
    assert row["pushes_seed"] == 5
    # the seed is checked before anything runs, and named
    for bad in ("-3", "4294967296", "x"):
        with pytest.raises(SystemExit) as exit_info:
            main([*args, "--pushes-seed", bad])
        assert exit_info.value.code == 2
        assert "--pushes-seed: must be an integer in [0, 2**32)" in capsys.readouterr().err


# -- against the publisher's data -------------------------------------------------------------

TRAJECTORIES = [
    ("acrobot", "mcpilco", "acrobot_mcpilco.csv"),
    ("acrobot", "prx_acrobot_analytical", "acrobot_prx_acrobot_analytical.csv"),
    ("pendubot", "mcpilco", "pendubot_mcpilco.csv"),
    ("pendubot", "prx_pendubot_analytical", "pendubot_prx_pendubot_analytical.csv"),
]


@needs_data
@pytest.mark.parametrize(("robot", "entry", "csv"), TRAJECTORIES)
def test_scorer_reproduces_the_published_scores(robot, entry, csv, capsys) -> None:
    from twolink_gym.training.cli import main

    published = json.loads((DATA / "published_v3.json").read_text())["simulation"][robot]
    expected = published[entry]["scores_v3"]
    assert main(["realaigym", "score", str(DATA / csv), "--robot", robot, "--version", "v3",
                 "--json"]) == 0  # fmt: skip
    got = json.loads(capsys.readouterr().out)
    assert got["n_swingups"] == expected["n_swingups"]
    assert abs(got["uptime"] - expected["uptime"]) <= 1e-9
    assert abs(got["score"] - expected["score"]) <= 1e-9


@needs_data
@pytest.mark.parametrize("robot", ["acrobot", "pendubot"])
def test_simulator_matches_the_original_code_with_a_do_nothing_policy(robot: str) -> None:
    reference = np.load(DATA / "reference_zero_controller_10s.npz")
    tr = run_v3(None, robot, steps=5000).trajectory
    assert tr.t.tolist() == reference[f"{robot}_T"].tolist()
    np.testing.assert_allclose(tr.x, reference[f"{robot}_X"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(tr.u, reference[f"{robot}_U"], rtol=0, atol=1e-9)


@needs_data
@pytest.mark.parametrize(("robot", "entry", "csv"), TRAJECTORIES)
def test_published_runs_replay_through_our_dynamics(robot, entry, csv) -> None:
    # the simulator's physics (our RK4 on our arm, our angles) on every published step
    from twolink_gym import step
    from twolink_gym.realaigym.arm import arm, from_realaigym_state

    tr = read_csv(DATA / csv)
    x = from_realaigym_state(tr.x)
    np.testing.assert_allclose(step(arm(), x[:-1], tr.u[:-1], 0.002), x[1:], rtol=0, atol=1e-9)


def test_push_pid_first_step_by_hand_and_a_batch_as_its_arms() -> None:
    from twolink_gym.realaigym.arm import arm
    from twolink_gym.realaigym.v3 import PushPID

    # at RealAIGym's upright at rest gravity needs no torque: the first step is
    # P = 10 e plus I = 0.1 · 0.001 · e (no derivative yet)
    upright = np.array([math.pi, 0.0, 0.0, 0.0])
    pid = PushPID([math.pi - 0.3, 0.2], arm())
    np.testing.assert_allclose(pid.torque(upright), [-3.00003, 2.00002], atol=1e-12)
    # a new target keeps the history: the second step still has no derivative, the third
    # has D = (e3 - e2) / 0.001 = (-50, 0), which saturates the shoulder at -6 N·m
    pid.target = np.array([math.pi - 0.2, 0.1])
    np.testing.assert_allclose(pid.torque(upright), [-2.00005, 1.00003], atol=1e-12)
    pid.target = np.array([math.pi - 0.25, 0.1])
    np.testing.assert_allclose(pid.torque(upright), [-6.0, 1.00004], atol=1e-12)
    # a batch of pushes is each push on its own, step by step (integral and derivative too)
    rng = np.random.default_rng(0)
    targets = rng.uniform(-math.pi, math.pi, (3, 2))
    states = rng.uniform(-3.0, 3.0, (5, 3, 4))
    batch = PushPID(targets, arm())
    alone = [PushPID(t, arm()) for t in targets]
    for x in states:
        np.testing.assert_allclose(
            batch.torque(x), [p.torque(xi) for p, xi in zip(alone, x, strict=True)], atol=1e-12
        )
