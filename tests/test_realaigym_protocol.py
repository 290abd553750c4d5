"""RealAIGym's protocol on our env: recorded rows, times, clipping, filters, replay; the families."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from twolink_gym import ArmParams, step
from twolink_gym.params import NonphysicalArmParams
from twolink_gym.realaigym import criteria
from twolink_gym.realaigym.arm import arm, from_realaigym_state
from twolink_gym.realaigym.boards import BOARDS_FILE, PUBLISHED
from twolink_gym.realaigym.protocol import (
    Conditions,
    PolicyRunner,
    decision_steps,
    final_state_success,
    make_policy_env,
    perturbation_profile,
    run,
)
from twolink_gym.realaigym.robustness import MODEL_PARAMETERS, MODEL_RANGES, levels, model_arm


class Constant:
    """A policy with a constant normalised action; it remembers what it saw."""

    def __init__(self, action: float) -> None:
        self.action = action
        self.seen: list[np.ndarray] = []

    def predict(self, obs, state=None, episode_start=None, deterministic=True):
        self.seen.append(np.array(obs, dtype=np.float64))
        return np.full((obs.shape[0], 1), self.action, dtype=np.float32), state


def _runner(policy, robot="acrobot", max_torque=10.0, decision_steps=1):
    env = make_policy_env(robot, max_torque=max_torque)
    return PolicyRunner(policy, env.sim, decision_steps)


def test_recorded_rows_times_clipping_and_replay() -> None:
    runs = run(_runner(Constant(1.0)), "acrobot", record=True)
    tr = runs.trajectory()
    assert tr.x.shape == (5000, 4) and tr.u.shape == (5000, 2)
    t, expected = 0.0, []
    for _ in range(5000):  # times accumulated by float addition, as theirs
        expected.append(t)
        t += 0.002
    assert tr.t.tolist() == expected and tr.t[0] == 0.0 and tr.t[-1] == pytest.approx(9.998)
    np.testing.assert_array_equal(tr.x[0], [0.0, 0.0, 0.0, 0.0])  # hanging at rest, their angles
    # action 1 of a 10 N·m policy is clipped to the board's 6 N·m; the shoulder is passive
    assert np.all(tr.u[:, 1] == 6.0) and np.all(tr.u[:, 0] == 0.0)
    # each row's torque from its state lands on the next row (and the final state); the
    # only difference is the rounding of the angle conversion q1 ± π/2 (≤ 1 ulp of q1)
    x = from_realaigym_state(np.vstack([tr.x, runs.final]))
    np.testing.assert_allclose(step(arm(), x[:-1], tr.u, 0.002), x[1:], rtol=0, atol=1e-12)
    # the criteria of the scorer on the recorded file, e.g. the torque cost Σ u² Δt
    c = criteria(tr, "acrobot")
    assert c.tau_cost == pytest.approx(36.0 * 9.998, rel=1e-12) and c.max_tau == 6.0


def test_pendubot_limits_and_held_decisions() -> None:
    policy = Constant(-0.5)
    tr = run(
        _runner(policy, "pendubot", 6.0, decision_steps=5), "pendubot", record=True
    ).trajectory()
    assert len(policy.seen) == 1000  # asked every 5th step of 2 ms
    assert np.all(tr.u[:, 0] == -3.0) and np.all(tr.u[:, 1] == 0.0)


@pytest.mark.parametrize(("dt", "steps"), [(0.002, 1), (0.01, 5), (0.02, 10), (0.1, 50)])
def test_decision_steps_of_multiples_of_2ms(dt: float, steps: int) -> None:
    assert decision_steps(dt) == steps
    assert make_policy_env("acrobot", dt=dt).substeps == steps


@pytest.mark.parametrize("dt", [0.005, 0.001, 0.0, -0.002, math.nan])
def test_decision_steps_refuses_other_periods(dt: float) -> None:
    with pytest.raises(ValueError, match=r"dt must be a positive multiple of 0\.002 s"):
        decision_steps(dt)


def test_responsiveness_torque_noise_delay_and_pulses() -> None:
    # k = 0.5 on a constant 2 N·m command: u_k = 2 (1 - 0.5^(k+1))
    world = Conditions.create(1, responsiveness=0.5)
    tr = run(_runner(Constant(0.25), max_torque=8.0), "acrobot", world, record=True).trajectory()
    np.testing.assert_allclose(tr.u[:4, 1], [1.0, 1.5, 1.75, 1.875], rtol=1e-15)
    # a delay of 3 steps: the policy sees the start state until step 3, then x_{k-3}
    policy = Constant(1.0)
    tr = run(_runner(policy), "acrobot", Conditions.create(1, delay=3), record=True).trajectory()
    seen = np.array([o[0] for o in policy.seen])
    q1 = np.arctan2(seen[:, 1], seen[:, 0])
    hanging = from_realaigym_state([0.0, 0, 0, 0])[0]
    np.testing.assert_allclose(q1[:4], hanging, atol=1e-6)
    ours = from_realaigym_state(tr.x)
    np.testing.assert_allclose(q1[10:50], ours[7:47, 0], atol=1e-6)  # float32 observations
    # pulses add after clipping (beyond 6 N·m), on the motor joint only
    pulses = np.zeros((1, 5000, 2))
    pulses[0, 100] = (2.5, 3.0)
    tr = run(
        _runner(Constant(1.0)), "acrobot", Conditions.create(1, perturbation=pulses), record=True
    ).trajectory()
    assert tuple(tr.u[100]) == (0.0, 9.0) and tuple(tr.u[99]) == (0.0, 6.0)
    # torque noise on the motor joint only, before the clip
    tr = run(
        _runner(Constant(0.0)), "acrobot", Conditions.create(1, torque_noise=1.0), record=True
    ).trajectory()
    assert np.all(tr.u[:, 0] == 0.0) and 0.8 < np.std(tr.u[:, 1]) < 1.2


def test_pulses_act_through_the_plants_actuation_matrix() -> None:
    # RealAIGym's plant (model/plant.py) computes M⁻¹(G + B τ − C q̇ − F) with B = diag(0, 1)
    # for torque limits (0, 6): a pulse on the acrobot's passive shoulder changes nothing
    free = run(_runner(Constant(0.3)), "acrobot", record=True)
    shoulder = np.zeros((1, 5000, 2))
    shoulder[0, 200:400, 0] = 5.0
    hit = run(
        _runner(Constant(0.3)), "acrobot", Conditions.create(1, perturbation=shoulder), record=True
    )
    assert hit.x is not None and free.x is not None
    np.testing.assert_array_equal(hit.x, free.x)
    # ... and one on the pendubot's passive elbow neither; its shoulder pulse does act
    free = run(_runner(Constant(0.3), "pendubot"), "pendubot")
    for joint, moves in ((1, False), (0, True)):
        pulse = np.zeros((1, 5000, 2))
        pulse[0, 200:400, joint] = 5.0
        hit = run(
            _runner(Constant(0.3), "pendubot"), "pendubot", Conditions.create(1, perturbation=pulse)
        )
        assert np.array_equal(hit.final, free.final) != moves


def test_pulse_samples_are_indexed_by_accumulated_time() -> None:
    # simulation.py: pert_index = int(t / dt) with t += dt; t accumulated from 0 by 0.002
    # is below 1007 · 0.002 at step 1007, so steps 1006 and 1007 both take sample 1006
    t = 0.0
    for _ in range(1007):
        t += 0.002
    assert int(t / 0.002) == 1006
    pulses = np.zeros((1, 5000, 2))
    pulses[0, 1006, 1] = 1.0
    pulses[0, 1007, 1] = 2.0
    tr = run(
        _runner(Constant(0.0)), "acrobot", Conditions.create(1, perturbation=pulses), record=True
    ).trajectory()
    assert tr.u[1005:1010, 1].tolist() == [0.0, 1.0, 1.0, 2.0, 0.0]


def test_perturbation_profile_pulses() -> None:
    # perturbations.py with the v2 board's arguments: 3 pulses per joint, centres 1–1.5 s
    # apart from 1–1.5 s on, σ ∈ [0.05, 0.1] s, |A| ∈ [0.5, 5] N·m
    t = np.arange(5000) * 0.002
    for seed in range(20):
        profile = perturbation_profile(np.random.default_rng(seed))
        assert profile.shape == (5000, 2)
        centres = []
        for joint in range(2):
            a = profile[:, joint]
            peaks = [
                i
                for i in range(1, 4999)
                if abs(a[i]) > 0.1 and abs(a[i]) >= abs(a[i - 1]) and abs(a[i]) > abs(a[i + 1])
            ]
            assert len(peaks) == 3
            for i in peaks:
                assert 0.5 - 1e-3 <= abs(a[i]) <= 5.0
                # width: |A| e^{-1/2} is reached between 0.05 and 0.1 s from the peak
                above = np.flatnonzero(np.abs(a) >= abs(a[i]) * math.exp(-0.5))
                half = above[np.abs(above - i) < 100]
                assert 0.05 - 0.003 <= (half.max() - half.min()) * 0.002 / 2 <= 0.1 + 0.003
            centres += t[peaks].tolist()
        centres.sort()
        assert 1.0 - 0.002 <= centres[0] <= 1.5 + 0.002
        gaps = np.diff(centres)
        assert np.all(gaps >= 1.0 - 0.004) and np.all(gaps <= 1.5 + 0.004)


def test_final_state_success_box() -> None:
    # RealAIGym v2: q1 mod 2π, q2 wrapped to [-π, π); |q1-π|<0.35, |q2|<0.35, |dq|<1, strict
    assert final_state_success(
        [[math.pi, 0, 0, 0], [3 * math.pi + 0.34, 2 * math.pi - 0.3, 0.99, -0.99]]
    ).all()
    for bad in (
        [math.pi + 0.35, 0, 0, 0],
        [math.pi, 0.35, 0, 0],
        [math.pi, 0, 1.0, 0],
        [0.0, 0, 0, 0],
    ):
        assert not final_state_success([bad])[0]


def test_family_levels_are_realaigyms() -> None:
    vn = levels("velocity_noise")
    assert [lv.value for lv in vn] == pytest.approx([0.5 * i / 20 for i in range(21)])
    assert all(lv.runs == 10 for lv in vn)
    tn = levels("torque_noise")
    assert tn[-1].value == pytest.approx(1.1) and len(tn) == 21 and tn[0].runs == 10
    k = [lv.value for lv in levels("responsiveness")]
    assert k == pytest.approx([0.1 + 0.095 * i for i in range(21)])
    assert min(abs(v - 1.05) for v in k) < 1e-12 and min(abs(v - 1.0) for v in k) > 0.04
    assert [lv.value for lv in levels("delay")] == list(range(21))
    assert len(levels("perturbations")) == 50
    model = levels("model")
    assert len(model) == 210
    # every level runs, each in RealAIGym's model of its plant
    assert not [lv for lv in model if lv.reason or lv.arm is None]
    nominal = [lv for lv in model if lv.parameter == "I2" and lv.value == pytest.approx(1.0)]
    assert nominal[0].arm is not None
    assert nominal[0].arm.I2 == pytest.approx(arm().I2, rel=1e-12)
    by = {(lv.parameter, round(lv.value, 6)): lv.arm for lv in model}
    assert by[("Ir", 0.0)] == arm() and by[("b1", 0.0)] == arm() and by[("cf2", 0.0)] == arm()
    top = by[("Ir", 1e-4)]
    assert (top.rotor_inertia, top.gear_ratio) == (1e-4, 6.0)
    # negative damping and Coulomb friction: explicit non-physical arms
    assert type(by[("b1", -0.1)]) is NonphysicalArmParams and by[("b1", -0.1)].friction1 == -0.1
    assert by[("cf2", -0.2)].coulomb2 == pytest.approx(-0.2) and by[("cf2", 0.2)].coulomb2 == 0.2
    assert type(by[("cf2", 0.2)]) is ArmParams
    # r1 = l1 nominal: m1r1 above 1 moves the centre of link 1 beyond its end with
    # the inertia about the joint kept (at 1.25 the centre-of-mass inertia is negative)
    m1r1 = by[("m1r1", 1.25)]
    assert type(m1r1) is NonphysicalArmParams and m1r1.lc1 == pytest.approx(0.25)
    assert m1r1.I1 < 0 and m1r1.I1 + m1r1.m1 * m1r1.lc1**2 == pytest.approx(
        arm().I1 + 0.5234602302310271 * 0.04
    )


def test_model_arm_between_the_levels() -> None:
    # the ranges of RealAIGym's model family: factors 0.75-1.25, or the absolute spans
    assert set(MODEL_RANGES) == set(MODEL_PARAMETERS)
    assert MODEL_RANGES["m2"] == (0.75, 1.25) and MODEL_RANGES["cf1"] == (-0.2, 0.2)
    assert MODEL_RANGES["Ir"] == (0.0, 1e-4) and MODEL_RANGES["b2"] == (-0.1, 0.1)
    nominal = arm()
    heavy = model_arm("m2", 1.1)
    assert heavy.m2 == pytest.approx(1.1 * nominal.m2, rel=1e-12)
    # RealAIGym's I2 is about the joint: the centre-of-mass inertia takes the added m2 r2²
    assert heavy.I2 + heavy.m2 * heavy.lc2**2 == pytest.approx(
        nominal.I2 + nominal.m2 * nominal.lc2**2, rel=1e-12
    )
    assert model_arm("b1", 0.03).friction1 == 0.03 and model_arm("cf2", -0.1).coulomb2 == -0.1
    assert model_arm("I1", 1.0) == nominal
    with pytest.raises(ValueError, match=r"name must be one of \['Ir', 'm1r1'"):
        model_arm("mass", 1.0)


def test_published_boards_have_their_source() -> None:
    data = json.loads(BOARDS_FILE.read_text())
    assert data["source"]["repository"] == "dfki-ric-underactuated-lab/real_ai_gym_leaderboard"
    assert len(data["source"]["commit"]) == 40
    for board in ("performance", "robustness"):
        for robot in ("acrobot", "pendubot"):
            entry = PUBLISHED[board][robot]
            assert entry["path"] == f"leaderboards/{robot}_simulation_{board}_leaderboard_v2.csv"
            assert len(entry["rows"]) == 7
    best = {
        r: max(x["score"] for x in PUBLISHED["performance"][r]["rows"])
        for r in ("acrobot", "pendubot")
    }
    assert best == {"acrobot": 0.655, "pendubot": 0.682}
    assert max(x["score"] for x in PUBLISHED["robustness"]["pendubot"]["rows"]) == 0.913
