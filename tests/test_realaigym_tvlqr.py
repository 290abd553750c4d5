"""The trajectory-optimised swing-up and its TVLQR on RealAIGym's acrobot board."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg

from twolink_gym.codec import ACTUATIONS
from twolink_gym.controllers.lqr import discretize
from twolink_gym.dynamics import linearize, state_derivative
from twolink_gym.integrators import step
from twolink_gym.kinematics import wrap_angle
from twolink_gym.realaigym.arm import TORQUE_LIMITS, arm
from twolink_gym.realaigym.controllers import TVLQR_GAINS, variant_runner
from twolink_gym.realaigym.protocol import (
    DT,
    STEPS,
    Conditions,
    PolicyRunner,
    final_state_success,
    make_policy_env,
    run,
)
from twolink_gym.realaigym.scoring import criteria
from twolink_gym.realaigym.trajopt import (
    SOFT_BOX,
    TRACKING_Q,
    TRACKING_R,
    SwingupCost,
    TVLQRController,
    _total_cost,
    discrete_jacobians,
    load_nominal,
    optimize_swingup,
    rollout,
    start_state,
    tvlqr_gains,
    tvlqr_riccati,
)

UP = np.array([math.pi / 2, 0.0, 0.0, 0.0])


ROBOTS = ("acrobot", "pendubot")


@pytest.fixture(scope="module", params=ROBOTS)
def nominal(request):
    return load_nominal(request.param)


@pytest.fixture(scope="module")
def gains(nominal):
    return tvlqr_gains(arm(), nominal)


def test_nominal_starts_hanging_and_reintegrates_with_the_project_integrator(nominal):
    assert nominal.x.shape == (nominal.u.shape[0] + 1, 4)
    np.testing.assert_array_equal(nominal.x[0], [-math.pi / 2, 0.0, 0.0, 0.0])
    x = nominal.x[0]
    worst = 0.0
    for k, tau in enumerate(nominal.torques()):
        x = step(arm(), x, tau, DT)
        worst = max(worst, float(np.max(np.abs(x - nominal.x[k + 1]))))
    assert worst <= 1e-9


def test_each_nominal_step_solves_the_equations_of_motion(nominal):
    # an adaptive integrator of the vector field (not the RK4 code) over each held step
    params = arm()
    torques = nominal.torques()
    for k in range(0, nominal.u.shape[0], 37):
        tau = torques[k]
        sol = scipy.integrate.solve_ivp(
            lambda t, y, tau=tau: state_derivative(params, y, tau),
            (0.0, DT),
            nominal.x[k],
            method="DOP853",
            rtol=1e-12,
            atol=1e-12,
        )
        # RK4's local error at 2 ms (O(DT⁵)) is ~1e-8 at the swing's fastest points
        np.testing.assert_allclose(sol.y[:, -1], nominal.x[k + 1], rtol=0, atol=1e-7)


def test_nominal_respects_the_torque_limit_and_ends_upright(nominal):
    (active,) = ACTUATIONS[nominal.robot]
    assert np.max(np.abs(nominal.u)) <= nominal.cost.u_max <= TORQUE_LIMITS[nominal.robot][active]
    assert np.all(nominal.torques()[:, 1 - active] == 0.0)
    err = nominal.x[-1] - UP
    err[:2] = wrap_angle(err[:2])
    assert np.all(np.abs(err[:2]) < 0.01)  # rad
    assert np.all(np.abs(err[2:]) < 0.05)  # rad/s
    assert abs(nominal.u[-1]) < 0.1  # N·m: the upright needs no holding torque
    # the tip ends above RealAIGym's line 0.9 (l1 + l2) = 0.45 m
    q1, q2 = nominal.x[-1, :2]
    assert 0.2 * math.sin(q1) + 0.3 * math.sin(q1 + q2) > 0.45


def test_batched_discretisation_matches_the_lqr_one(nominal):
    params = arm()
    idx = [0, 100, nominal.u.shape[0] - 1]
    (active,) = ACTUATIONS[nominal.robot]
    a_d, b_d = discrete_jacobians(params, nominal.robot, nominal.x[idx], nominal.u[idx])
    for i, k in enumerate(idx):
        a, b = linearize(params, nominal.x[k], nominal.torques()[k])
        a_ref, b_ref = discretize(a, b[:, [active]], DT)
        np.testing.assert_allclose(a_d[i], a_ref, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(b_d[i], b_ref[:, 0], rtol=1e-12, atol=1e-14)


def _rk4_jacobians_at_upright(active: int) -> tuple[np.ndarray, np.ndarray]:
    """Central differences of one RK4 step at the upright (not the linearise/expm path)."""
    params, h = arm(), 1e-6
    du = np.zeros(2)
    du[active] = h
    a = np.empty((4, 4))
    for i in range(4):
        e = np.zeros(4)
        e[i] = h
        a[:, i] = (step(params, UP + e, [0, 0], DT) - step(params, UP - e, [0, 0], DT)) / (2 * h)
    b = (step(params, UP, du, DT) - step(params, UP, -du, DT)) / (2 * h)
    return a, b[:, None]


def test_riccati_gains_at_the_end_equal_the_discrete_are_gain(nominal, gains):
    k_tv, _ = gains
    a, b = _rk4_jacobians_at_upright(ACTUATIONS[nominal.robot][0])
    q, r = np.diag(TRACKING_Q), np.array([[TRACKING_R]])
    p = scipy.linalg.solve_discrete_are(a, b, q, r)
    k_are = np.linalg.solve(r + b.T @ p @ b, b.T @ p @ a)[0]
    np.testing.assert_allclose(k_tv[-1], k_are, rtol=1e-5)
    # the last nominal point is next to the upright: its gain is close to it
    np.testing.assert_allclose(k_tv[-2], k_are, rtol=0.05)


def _dare_gain(active: int, r: float) -> np.ndarray:
    a, b = _rk4_jacobians_at_upright(active)
    q, rm = np.diag(TRACKING_Q), np.array([[r]])
    p = scipy.linalg.solve_discrete_are(a, b, q, rm)
    return np.linalg.solve(rm + b.T @ p @ b, b.T @ p @ a)[0]


def test_balance_is_soft_inside_the_box_and_stiff_outside(nominal):
    # after the nominal: the discrete-ARE gain of (Q, soft_R) inside SOFT_BOX, of (Q, R) outside
    robot = nominal.robot
    (active,) = ACTUATIONS[robot]
    env = make_policy_env(robot)
    controller = TVLQRController.from_env(env, **TVLQR_GAINS)
    obs, _ = env.reset(options={"state": UP[None]})
    for k in range(nominal.u.shape[0]):
        controller.predict(obs, episode_start=np.array([k == 0]))
    for err, r in (
        ([0.05, -0.05, 0.2, -0.3], TVLQR_GAINS["soft_R"]),  # inside (0.2, 0.2, 1, 1)
        ([0.08, -0.21, 0.0, 0.0], TVLQR_GAINS["R"]),  # outside: |q2 error| > 0.2
    ):
        inside = bool(np.all(np.abs(err) <= SOFT_BOX))
        assert inside == (r == TVLQR_GAINS["soft_R"])
        obs, _ = env.reset(options={"state": (UP + np.array(err))[None]})
        action, _ = controller.predict(obs, episode_start=np.array([False]))
        expected = -_dare_gain(active, r) @ np.array(err)
        assert abs(expected) < TORQUE_LIMITS[robot][active]  # not clipped
        np.testing.assert_allclose(action[0, 0] * TORQUE_LIMITS[robot][active], expected, rtol=1e-4)
    env.close()


@pytest.mark.parametrize(("robot", "delay"), [("acrobot", 14), ("pendubot", 17)])
def test_soft_balance_holds_a_delayed_arm_the_stiff_one_loses(robot, delay):
    # a measurement delay of `delay` 2 ms steps, unperturbed otherwise
    world = Conditions.create(1, None, 0.0, 0.0, 1.0, delay)
    env = make_policy_env(robot)
    stiff = TVLQRController.from_env(env, R=TVLQR_GAINS["R"])
    soft = TVLQRController.from_env(env, **TVLQR_GAINS)
    assert not final_state_success(run(PolicyRunner(stiff, env.sim), robot, world).final)[0]
    assert final_state_success(run(PolicyRunner(soft, env.sim), robot, world).final)[0]
    env.close()


def _closed_loop(controller, x0, steps, feedback=True):
    """States ``(steps + 1, 4)`` under the controller (or its nominal torques, open loop)."""
    env = make_policy_env(controller.actuation)
    obs, _ = env.reset(options={"state": x0[None]})
    xs = [env.state[0].copy()]
    for k in range(steps):
        if feedback:
            action, _ = controller.predict(obs, episode_start=np.array([k == 0]))
        else:
            u = controller.nominal.u[k] if k < controller.nominal.u.shape[0] else 0.0
            action = np.array([[u / 6.0]])
        obs, *_ = env.step(action)
        xs.append(env.state[0].copy())
    env.close()
    return np.array(xs)


def test_tvlqr_brings_a_perturbed_start_back_to_the_nominal(nominal):
    env = make_policy_env(nominal.robot)
    controller = TVLQRController.from_env(env)
    env.close()
    x0 = nominal.x[0] + np.array([0.05, -0.05, 0.1, 0.0])
    n = nominal.u.shape[0]
    closed = _closed_loop(controller, x0, n + 500)
    opened = _closed_loop(controller, x0, n, feedback=False)
    err_closed = np.abs(wrap_angle(closed[n, :2] - nominal.x[n, :2]))
    err_open = np.abs(wrap_angle(opened[n, :2] - nominal.x[n, :2]))
    assert np.max(err_closed) < 0.05 < np.max(err_open)
    # and it stays balanced afterwards, inside the robustness board's box
    final = closed[-1] - UP
    final[:2] = wrap_angle(final[:2])
    assert np.all(np.abs(final) < [0.35, 0.35, 1.0, 1.0])


def test_controller_restarts_its_clock_at_an_episode_start():
    env = make_policy_env("acrobot")
    controller = TVLQRController.from_env(env)
    obs, _ = env.reset(options={"state": start_state()[None]})
    first, _ = controller.predict(obs, episode_start=np.array([True]))
    for _ in range(5):
        controller.predict(obs, episode_start=np.array([False]))
    again, _ = controller.predict(obs, episode_start=np.array([True]))
    np.testing.assert_array_equal(first, again)
    env.close()


def test_variant_swings_up_on_the_performance_board(nominal):
    robot = nominal.robot
    runner = variant_runner(f"realaigym_{robot}_tvlqr", robot)
    runs = run(runner, robot, record=True)
    c = criteria(runs.trajectory(), robot, "v2")
    assert c.success == 1
    assert c.swingup_time <= nominal.cost.horizon
    (active,) = ACTUATIONS[robot]
    assert np.max(np.abs(runs.u[0, :, 1 - active])) == 0.0
    assert np.max(np.abs(runs.u[0, :, active])) <= 6.0


def test_riccati_costs_satisfy_the_recursion_and_end_at_the_upright_lqr(nominal):
    params = arm()
    k_tv, p, design = tvlqr_riccati(params, nominal)
    np.testing.assert_array_equal(k_tv, tvlqr_gains(params, nominal)[0])
    np.testing.assert_allclose(p[-1], design.p, rtol=1e-12)
    # P_k = Q + K_kᵀ R K_k + (A_k - B_k K_k)ᵀ P_{k+1} (A_k - B_k K_k): the closed-loop
    # (Joseph) form, algebraically equal to the recursion's form at the optimal gain
    mid = 0.5 * (nominal.x[:-1] + nominal.x[1:])
    q, r = np.diag(TRACKING_Q), TRACKING_R
    for k in (0, 400, nominal.u.shape[0] - 1):
        a_d, b_d = discrete_jacobians(params, nominal.robot, mid[k : k + 1], nominal.u[k : k + 1])
        closed = a_d[0] - np.outer(b_d[0], k_tv[k])
        joseph = q + r * np.outer(k_tv[k], k_tv[k]) + closed.T @ p[k + 1] @ closed
        np.testing.assert_allclose(p[k], joseph, rtol=1e-8, atol=1e-8 * np.max(np.abs(p[k])))
        assert np.all(np.linalg.eigvalsh(p[k]) > 0)


def test_resync_index_is_the_brute_force_nearest_point(nominal):
    env = make_policy_env(nominal.robot)
    controller = TVLQRController.from_env(env, resync=30)
    env.close()
    rng = np.random.default_rng(5)
    n_steps = nominal.u.shape[0]
    centres = np.array([0, 10, 300, 700, n_steps - 5, n_steps - 1])
    states = nominal.x[np.clip(centres + rng.integers(-40, 40, centres.shape[0]), 0, n_steps)]
    states = states + rng.normal(0.0, 0.2, states.shape)
    chosen = controller.nearest_index(states, centres)
    for x, c, j in zip(states, centres, chosen, strict=True):
        best, best_cost = -1, math.inf
        for cand in range(max(c - 30, 0), min(c + 30, n_steps - 1) + 1):
            err = x - nominal.x[cand]
            err[:2] = (err[:2] + math.pi) % (2 * math.pi) - math.pi
            cost = float(err @ controller.costs[cand] @ err)
            if cost < best_cost:
                best, best_cost = cand, cost
        assert j == best


#: The gentle weights with which re-synchronisation was measured (docs/realaigym.md).
GENTLE = {"Q": (10.0, 10.0, 1.0, 1.0), "R": 100.0}
SYNC = {"resync": 200, "resync_level": 1.0e4}


def _pulsed(controller_kwargs: dict, robot: str, pulse: np.ndarray) -> np.ndarray:
    env = make_policy_env(robot)
    runner = PolicyRunner(TVLQRController.from_env(env, **controller_kwargs), env.sim)
    world = Conditions.create(1, None, 0.0, 0.0, 1.0, 0, pulse[None])
    return run(runner, robot, world).final


def test_resync_recovers_from_a_pulse_the_clocked_tracker_does_not():
    # a -3 N·m pulse on the acrobot's elbow (its motor) at 1.4 s (σ 0.05 s), mid-swing
    t = np.arange(STEPS) * DT
    pulse = np.zeros((STEPS, 2))
    pulse[:, 1] = -3.0 * np.exp(-((t - 1.4) ** 2) / (2 * 0.05**2))
    clocked = _pulsed(GENTLE, "acrobot", pulse)
    synced = _pulsed(GENTLE | SYNC, "acrobot", pulse)
    assert not final_state_success(clocked)[0]
    assert final_state_success(synced)[0]


@pytest.mark.parametrize("weights", [GENTLE, TVLQR_GAINS], ids=["gentle", "variant"])
def test_resync_keeps_the_unperturbed_swing_up_on_the_clock(nominal, weights):
    # unperturbed, the arm stays near the nominal (cost below resync_level): the same run
    robot = nominal.robot
    env = make_policy_env(robot)
    plain = run(PolicyRunner(TVLQRController.from_env(env, **weights), env.sim), robot, record=True)
    sync = TVLQRController.from_env(env, **weights, **SYNC)
    synced = run(PolicyRunner(sync, env.sim), robot, record=True)
    assert plain.u is not None and synced.u is not None
    np.testing.assert_array_equal(synced.u, plain.u)


def test_ilqr_lowers_the_cost_of_its_initial_guess():
    cost = SwingupCost(horizon=0.2)
    t = np.arange(cost.steps) * DT
    u0 = 2.0 * np.sin(2 * math.pi * t / 0.2)
    x0 = rollout(arm(), "acrobot", start_state(), u0)
    nom = optimize_swingup("acrobot", cost, u_init=u0, iterations=5)
    assert _total_cost(cost, nom.x, nom.u) < _total_cost(cost, x0, u0)
    np.testing.assert_array_equal(nom.x, rollout(arm(), "acrobot", start_state(), nom.u))


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="horizon"):
        SwingupCost(horizon=0.0011)
    with pytest.raises(ValueError, match="robot"):
        load_nominal("cartpole")
    with pytest.raises(ValueError, match="resync"):
        TVLQRController(actuation="acrobot", resync=-1)
    with pytest.raises(ValueError, match="soft_R"):
        TVLQRController(actuation="acrobot", soft_R=0.0)
    with pytest.raises(ValueError, match="soft_box"):
        TVLQRController(actuation="acrobot", soft_R=1.0, soft_box=(0.1, 0.1, 0.5))
