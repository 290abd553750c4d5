"""RealAIGym's criteria and scores on trajectories with answers worked out by hand.

The published trajectories and scores are the publisher's data and are not in
the repository; ``benchmarks/realaigym_scores.py DATA_DIR`` checks the scorer
against them. Here every expected value is derived on paper from the rules of
the benchmark (:mod:`twolink_gym.realaigym.scoring`): the tip height ``-l1 cos q1 - l2 cos(q1+q2)``
against ``0.9 (l1 + l2)``, the stay-there rule on samples ``1 … N-2``, sums over
``k = 0 … N-2`` with ``Δt``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from twolink_gym.realaigym import Trajectory, criteria, read_csv, score, write_csv

DT = 0.002
N = 5000  # 10 s at 2 ms, the v2 layout: t = 0 … 9.998


def hanging_then_upright(switch: int, n: int = N) -> Trajectory:
    """At rest hanging until sample ``switch``, upright from it on; no torque."""
    t = np.arange(n) * DT
    x = np.zeros((n, 4))
    x[switch:, 0] = math.pi
    return Trajectory(t=t, x=x, u=np.zeros((n, 2)))


def test_swingup_time_is_the_start_of_the_final_upright_run() -> None:
    c = criteria(hanging_then_upright(switch=700))
    assert c.swingup_time == pytest.approx(700 * DT, abs=1e-15)
    assert c.success == 1


def test_a_dip_breaks_the_run_and_only_samples_1_to_n_minus_2_count() -> None:
    tr = hanging_then_upright(switch=700)
    x = tr.x.copy()
    x[2000, 0] = 0.0  # one sample hanging again: the final run starts after it
    x[N - 1, 0] = 0.0  # the last sample is never examined
    c = criteria(Trajectory(tr.t, x, tr.u))
    assert c.swingup_time == pytest.approx(2001 * DT, abs=1e-15)
    assert c.success == 1
    # up from sample 0 on: sample 0 is not examined either, so the time is t_1
    assert criteria(hanging_then_upright(switch=0)).swingup_time == pytest.approx(DT)


def test_not_up_at_the_second_to_last_sample_is_a_failure() -> None:
    tr = hanging_then_upright(switch=700)
    x = tr.x.copy()
    x[N - 2, 0] = 0.0
    c = criteria(Trajectory(tr.t, x, tr.u))
    assert c.success == 0
    assert c.swingup_time == tr.t[-1]
    assert score(c, "v2") == 0.0 and score(c, "v1") == 0.0


def test_a_run_shorter_than_99_percent_of_10_s_never_swings_up() -> None:
    c = criteria(hanging_then_upright(switch=10, n=4900))  # ends at 9.798 s < 9.9 s
    assert c.swingup_time == math.inf and c.success == 0


def test_the_line_is_strict_and_uses_the_boards_link_lengths() -> None:
    # q1 = π (link 1 up), q2 bent: height l1 + l2 cos q2 against 0.45 m.
    # v2 (l1, l2) = (0.2, 0.3): up iff cos q2 > 5/6; v1 pendubot (0.3, 0.2): iff cos q2 > 3/4
    tr = hanging_then_upright(switch=100)
    x = tr.x.copy()
    x[100:, 1] = 0.65  # cos 0.65 = 0.796
    bent = Trajectory(tr.t, x, tr.u)
    assert criteria(bent, "pendubot", "v2").success == 0
    assert criteria(bent, "acrobot", "v1").success == 0
    assert criteria(bent, "pendubot", "v1").success == 1


def test_costs_of_a_known_torque_and_motion() -> None:
    t = np.arange(N) * DT
    x = np.zeros((N, 4))
    x[:, 0] = math.pi  # upright throughout
    x[:, 1] = 0.001 * np.arange(N)  # q2 grows 1 mrad a sample
    x[:, 2] = 1.0  # q̇1 = 1 rad/s (not integrated: the criteria read the columns)
    u = np.zeros((N, 2))
    u[:, 1] = np.where(np.arange(N) % 2 == 0, 3.0, -1.0)  # +3, -1, +3, ...
    c = criteria(Trajectory(t, x, u), "acrobot", "v2")
    steps = N - 1  # sums over k = 0 … N-2
    # |u2 Δq2| = 3 mJ or 1 mJ alternately: 2500 of each among the first 4999 samples
    assert c.energy == pytest.approx(2500 * 0.003 + 2499 * 0.001, rel=1e-12)
    assert c.max_tau == 3.0
    assert c.integ_tau == pytest.approx((2500 * 3 + 2499 * 1) * DT, rel=1e-12)
    assert c.tau_cost == pytest.approx((2500 * 9 + 2499 * 1) * DT, rel=1e-12)
    # Δu2 = -4, +4, ... (4999 of them: 2500 of -4, 2499 of +4); population std
    d = np.array([-4.0, 4.0] * 2500)[:steps]
    assert c.tau_smoothness == pytest.approx(math.sqrt(np.mean((d - d.mean()) ** 2)), rel=1e-12)
    assert c.tau_smoothness == pytest.approx(4.0, rel=1e-6)
    assert c.velocity_cost == pytest.approx(steps * DT, rel=1e-12)


def test_scores_follow_the_published_formulas() -> None:
    tr = hanging_then_upright(switch=500)
    u = tr.u.copy()
    u[:, 1] = 0.5
    c = criteria(Trajectory(tr.t, tr.x, u))
    # the only motion is q1's jump, where u1 = 0: no work, no speed, a constant torque
    assert c.energy == 0.0 and c.tau_smoothness == 0.0 and c.velocity_cost == 0.0
    tau_cost = 0.25 * (N - 1) * DT
    # v2: 1 - (1/5) Σ tanh(π c/n), n = (20 s, 60 J, 20, 0.1 N·m, 400); time 1.0 s here
    expected_v2 = 1 - (math.tanh(math.pi * 1.0 / 20) + math.tanh(math.pi * tau_cost / 20)) / 5
    assert score(c, "v2") == pytest.approx(expected_v2, rel=1e-12)
    # v1: 1 - Σ w c / n with (w, n): time (0.2, 10), max torque (0.1, 6),
    # integrated torque (0.1, 60), torque cost (0.1, 360); the others are 0 here
    integ = 0.5 * (N - 1) * DT
    expected_v1 = 1 - (0.2 * 1.0 / 10 + 0.1 * 0.5 / 6 + 0.1 * integ / 60 + 0.1 * tau_cost / 360)
    assert score(c, "v1") == pytest.approx(expected_v1, rel=1e-12)


def test_csv_round_trip_and_bad_input(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    tr = Trajectory(np.arange(10) * DT, rng.normal(size=(10, 4)), rng.normal(size=(10, 2)))
    path = write_csv(tmp_path / "sim_swingup.csv", tr)
    assert path.read_text().splitlines()[0] == (
        "time,pos_meas1,pos_meas2,vel_meas1,vel_meas2,tau_con1,tau_con2"
    )
    back = read_csv(path)
    assert np.array_equal(back.t, tr.t) and np.array_equal(back.x, tr.x)
    assert np.array_equal(back.u, tr.u)
    bad = tmp_path / "bad.csv"
    bad.write_text("t,q1,q2\n0,0,0\n")
    with pytest.raises(ValueError, match="header"):
        read_csv(bad)
    with pytest.raises(ValueError, match="robot must be one of"):
        criteria(tr, "cartpole")
    with pytest.raises(ValueError, match="version must be one of"):
        score(criteria(tr), "v3")
