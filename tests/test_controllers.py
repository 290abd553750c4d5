"""Classical controllers: designs checked independently, then measured on the env's own episodes."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import scipy.linalg
import scipy.signal

import twolink_gym as tg
from twolink_gym.controllers import (
    CONTROLLERS,
    ComputedTorqueController,
    ImpedanceController,
    LQRController,
    PDGravityController,
    controllers_for,
    design_lqr,
    discrete_lqr,
    nearest_ik,
    quintic,
    simulation_of,
)
from twolink_gym.controllers.lqr import discretize
from twolink_gym.controllers.trajectory import fastest_feasible_duration

EPISODES = 200
SEED = 12345


def run_episodes(env: tg.TwoLinkVectorEnv, controller, seed: int = SEED, options=None):
    """One episode per copy through ``predict`` (state and episode_start passed as SB3 does).

    Returns the final ``is_success``, whether the episode terminated early, the
    final distance, and the largest |action| of each episode.
    """
    n = env.num_envs
    obs, _ = env.reset(seed=seed, options=options)
    state, start = None, np.ones(n, dtype=bool)
    success = np.zeros(n, dtype=bool)
    terminated_early = np.zeros(n, dtype=bool)
    distance = np.zeros(n)
    peak_action = np.zeros(n)
    for _ in range(env.max_episode_steps):
        action, state = controller.predict(obs, state, start)
        assert action.shape == (n, 2) and action.dtype == np.float32
        peak_action = np.maximum(peak_action, np.abs(action).max(axis=1))
        obs, _, terminated, truncated, info = env.step(action)
        start = terminated | truncated
        terminated_early |= terminated
        if truncated.all():
            success, distance = info["is_success"].copy(), info["distance"].copy()
    return success & ~terminated_early, terminated_early, distance, peak_action


@pytest.fixture(scope="module")
def balance_env():
    return tg.TwoLinkVectorEnv(EPISODES, task="balance")


@pytest.fixture(scope="module")
def reach_env():
    return tg.TwoLinkVectorEnv(EPISODES, task="reach")


# -- the name map -------------------------------------------------------------
def test_controllers_map_names_to_classes_and_tasks():
    assert set(CONTROLLERS) == {
        "lqr",
        "computed_torque",
        "pd_gravity",
        "impedance",
        "energy_swingup",
        "acrobot_swingup",
        "pendubot_swingup",
        "feedforward",
    }
    assert CONTROLLERS["lqr"].task_names() == ("balance",)
    assert CONTROLLERS["energy_swingup"].task_names() == ("swingup",)
    assert set(controllers_for("swingup")) == {"energy_swingup"}  # the full arm's
    assert set(controllers_for("swingup", "acrobot")) == {"acrobot_swingup"}
    assert set(controllers_for("swingup", "pendubot")) == {"pendubot_swingup"}
    assert CONTROLLERS["impedance"].task_names() == ("reach", "track")
    assert set(controllers_for("track")) == {"computed_torque", "impedance", "feedforward"}
    assert set(controllers_for("reach")) == {"computed_torque", "pd_gravity", "impedance"}
    assert set(controllers_for("balance")) == {"lqr", "computed_torque", "pd_gravity"}


@pytest.mark.parametrize("actuation", ["full", "acrobot", "pendubot"])
@pytest.mark.parametrize("task", ["reach", "balance", "swingup", "track"])
def test_controllers_for_lists_exactly_those_that_build_and_act_on_that_arm(task, actuation):
    # the reference: every controller tried on an env of that task and arm
    env = gym.make("TwoLink-v0", task=task, actuation=actuation, max_episode_steps=5)
    obs, _ = env.reset(seed=0)
    works = set()
    for name, cls in CONTROLLERS.items():
        try:
            controller = cls.from_env(env)
        except ValueError:
            continue
        action, _ = controller.predict(obs, deterministic=True)
        assert env.action_space.contains(np.asarray(action, dtype=np.float32))
        works.add(name)
    assert set(controllers_for(task, actuation)) == works
    assert set(controllers_for(tg.make_task(task), actuation)) == works


def test_controllers_for_rejects_an_unknown_actuation():
    with pytest.raises(
        ValueError, match=r"actuation must be one of \['acrobot', 'full', 'pendubot'\]"
    ):
        controllers_for("swingup", "elbow")


# -- LQR ----------------------------------------------------------------------
def test_zero_order_hold_discretisation_matches_scipy_signal():
    a, b = tg.linearize(tg.ArmParams(), [np.pi / 2, 0, 0, 0])
    a_d, b_d = discretize(a, b, 0.02)
    ref = scipy.signal.cont2discrete((a, b, np.eye(4), np.zeros((4, 2))), 0.02, method="zoh")
    np.testing.assert_allclose(a_d, ref[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(b_d, ref[1], rtol=1e-12, atol=1e-14)


def test_discrete_model_predicts_one_env_step():
    """The design model (A_d, B_d) is the env's sampled plant, to second order."""
    env = gym.make("TwoLink-v0", task="balance")
    design = LQRController.from_env(env).design
    rng = np.random.default_rng(0)
    for _ in range(5):
        dx = 1e-5 * rng.standard_normal(4)
        action = 1e-4 * rng.standard_normal(2)
        env.reset(options={"state": design.state_eq + dx})
        env.step(action.astype(np.float32))
        predicted = design.a_d @ dx + design.b_d @ (action.astype(np.float32) * [30.0, 10.0])
        measured = design.error(env.unwrapped.state)
        np.testing.assert_allclose(measured, predicted, rtol=0, atol=1e-8)


def test_lqr_design_is_a_stabilising_riccati_solution():
    controller = LQRController.from_env(gym.make("TwoLink-v0", task="balance"))
    d = controller.design
    # the upright is open-loop unstable with two unstable modes (docs/physics.md, Equilibria)
    assert np.sum(np.linalg.eigvals(d.a).real > 0) == 2
    # P solves the discrete Riccati equation and K is its gain
    bpb = d.r + d.b_d.T @ d.p @ d.b_d
    residual = (
        d.a_d.T @ d.p @ d.a_d
        - d.p
        - d.a_d.T @ d.p @ d.b_d @ np.linalg.solve(bpb, d.b_d.T @ d.p @ d.a_d)
        + d.q
    )
    assert np.abs(residual).max() < 1e-8 * np.abs(d.p).max()
    # closed-loop eigenvalues strictly inside the unit circle
    eig = np.linalg.eigvals(d.a_d - d.b_d @ d.k)
    assert np.max(np.abs(eig)) < 0.95
    np.testing.assert_allclose(np.sort_complex(eig), np.sort_complex(d.eigenvalues))


def test_lqr_balances_every_episode(balance_env):
    controller = LQRController.from_env(balance_env)
    success, fell, distance, _ = run_episodes(balance_env, controller)
    assert not fell.any()
    assert success.all(), f"{np.sum(~success)} of {EPISODES} episodes failed"
    assert distance.max() < 1e-3


def test_lqr_cost_on_the_linear_loop_equals_riccati_prediction():
    d = LQRController().design
    closed = d.a_d - d.b_d @ d.k
    rng = np.random.default_rng(1)
    for _ in range(5):
        x0 = rng.standard_normal(4)
        x, cost = x0.copy(), 0.0
        for _ in range(300):
            u = -d.k @ x
            cost += x @ d.q @ x + u @ d.r @ u
            x = closed @ x
        cost += x @ d.p @ x
        assert cost == pytest.approx(x0 @ d.p @ x0, rel=1e-10)


def test_lqr_realised_cost_on_the_env_matches_riccati_prediction():
    """Small perturbations on the nonlinear env: Σ dxᵀQdx + τᵀRτ (+ tail) ≈ dx0ᵀ P dx0.

    The gap is the nonlinearity, which shrinks with the perturbation (second
    order here: the arm is mirror-symmetric about the upright).
    """
    n = 8
    env = tg.TwoLinkVectorEnv(n, task="balance")
    controller = LQRController.from_env(env)
    d = controller.design
    directions = np.random.default_rng(2).standard_normal((n, 4))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    gaps = []
    for amplitude in (1e-3, 1e-2):
        x0 = d.state_eq + amplitude * directions
        obs, _ = env.reset(options={"state": x0})
        cost = np.zeros(n)
        for _ in range(env.max_episode_steps):
            action, _ = controller.predict(obs)
            tau = action.astype(np.float64) * env.sim.max_torque
            dx = d.error(env.state)
            cost += np.einsum("ni,ij,nj->n", dx, d.q, dx) + np.einsum("ni,ij,nj->n", tau, d.r, tau)
            obs, *_ = env.step(action)
        cost += d.cost_to_go(env.state)
        gaps.append(np.max(np.abs(cost / d.cost_to_go(x0) - 1.0)))
    assert gaps[0] < 1e-5
    assert gaps[1] < 1e-3
    assert gaps[0] < gaps[1]


def test_lqr_rejects_bad_configuration():
    with pytest.raises(ValueError, match=r"Q must have shape \(4, 4\)"):
        LQRController(Q=np.eye(3))
    with pytest.raises(ValueError, match="R must be positive definite"):
        LQRController(R=[1.0, 0.0])
    with pytest.raises(ValueError, match="Q must be positive semi-definite"):
        LQRController(Q=[1.0, -1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"applies to task\(s\) \['balance'\], got task 'reach'"):
        LQRController.from_env(gym.make("TwoLink-v0", task="reach"))
    # an uncontrollable pair: the unstable mode 1.5 is not reached by the input
    with pytest.raises(ValueError, match="not controllable"):
        discrete_lqr(np.diag([1.5, 0.5]), [[0.0], [1.0]], np.eye(2), [[1.0]])
    with pytest.raises(ValueError, match="dt must be"):
        LQRController(dt=0.0)


def test_lqr_from_model_params_differs_from_plant():
    env = gym.make("TwoLink-v0", task="balance")
    heavy = tg.ArmParams(m1=1.2, m2=1.2)
    controller = LQRController.from_env(env, model_params=heavy)
    assert controller.params == heavy
    np.testing.assert_allclose(
        controller.design.k, design_lqr(heavy, 0.02, controller.design.q, controller.design.r).k
    )
    assert not np.allclose(controller.design.k, LQRController.from_env(env).design.k)


# -- trajectories and inverse kinematics --------------------------------------
def test_quintic_meets_its_boundary_conditions_and_is_consistent():
    rng = np.random.default_rng(3)
    q0, v0, qf = rng.standard_normal((3, 5, 2))
    duration = rng.uniform(0.5, 2.0, 5)
    q, dq, ddq = quintic(q0, v0, qf, duration, np.zeros(5))
    np.testing.assert_allclose(q, q0)
    np.testing.assert_allclose(dq, v0)
    np.testing.assert_allclose(ddq, 0.0, atol=1e-12)
    q, dq, ddq = quintic(q0, v0, qf, duration, duration)
    np.testing.assert_allclose(q, qf, atol=1e-12)
    np.testing.assert_allclose(dq, 0.0, atol=1e-12)
    np.testing.assert_allclose(ddq, 0.0, atol=1e-12)
    # derivatives by central differences inside the interval
    t, h = 0.4 * duration, 1e-5
    qp, dqp, _ = quintic(q0, v0, qf, duration, t + h)
    qm, dqm, _ = quintic(q0, v0, qf, duration, t - h)
    _, dq, ddq = quintic(q0, v0, qf, duration, t)
    np.testing.assert_allclose((qp - qm) / (2 * h), dq, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose((dqp - dqm) / (2 * h), ddq, rtol=1e-6, atol=1e-6)


def test_fastest_feasible_duration_respects_the_torque_limit():
    params = tg.ArmParams()
    q0 = np.array([[-np.pi / 2, 0.0]])
    qf = np.array([[np.pi / 2 - 0.3, 0.6]])
    limit = np.array([24.0, 8.0])
    candidates = np.arange(0.5, 3.0, 0.1)
    best = fastest_feasible_duration(params, q0, np.zeros((1, 2)), qf, candidates, limit)[0]
    t = np.linspace(0.0, best, 400)
    q, dq, ddq = quintic(q0, np.zeros((1, 2)), qf, np.full(400, best), t)
    assert np.all(np.abs(tg.inverse_dynamics(params, q, dq, ddq)) <= limit * 1.01)
    faster = best - 0.1
    q, dq, ddq = quintic(q0, np.zeros((1, 2)), qf, np.full(400, faster), t * faster / best)
    assert np.any(np.abs(tg.inverse_dynamics(params, q, dq, ddq)) > limit)


def test_nearest_ik_reaches_the_target_on_the_nearer_branch():
    params = tg.ArmParams()
    rng = np.random.default_rng(4)
    q_true = np.column_stack([rng.uniform(-np.pi, np.pi, 50), rng.uniform(0.3, 2.8, 50)])
    q_true[::2, 1] *= -1
    target = tg.tip_position(params, q_true)
    q_now = q_true + rng.uniform(-0.2, 0.2, q_true.shape)
    q = nearest_ik(params, target, q_now)
    np.testing.assert_allclose(tg.tip_position(params, q), target, atol=1e-9)
    np.testing.assert_allclose(tg.wrap_angle(q - q_true), 0.0, atol=1e-9)
    assert np.all(np.abs(q - q_now) <= np.pi + 1e-12)  # the short way round


# -- computed torque ----------------------------------------------------------
def test_computed_torque_reaches_every_target_within_the_limits(reach_env):
    controller = ComputedTorqueController.from_env(reach_env)
    success, _, distance, peak = run_episodes(reach_env, controller)
    assert success.all(), f"{np.sum(~success)} of {EPISODES} failed; distances {distance[~success]}"
    assert peak.max() < 1.0  # the demanded torque never reached a limit


def test_computed_torque_commands_the_pd_acceleration_through_the_model():
    """forward_dynamics(q, q̇, τ) = q̈_ref + Kp e + Kd ė for the torque the controller outputs."""
    params = tg.ArmParams()
    controller = ComputedTorqueController(params=params, max_torque=1e6)
    sim = tg.simulation.Simulation.create(task="reach")
    rng = np.random.default_rng(11)
    n = 16
    state = np.column_stack([rng.uniform(-np.pi, np.pi, (n, 2)), rng.uniform(-2, 2, (n, 2))])
    target = rng.uniform(-1.0, 1.0, (n, 2))
    plan = np.column_stack(
        [
            rng.uniform(-np.pi, np.pi, (n, 2)),
            rng.uniform(-1, 1, (n, 2)),
            rng.uniform(-np.pi, np.pi, (n, 2)),
            target,
            rng.uniform(1.0, 2.0, n),
            rng.uniform(0.0, 1.0, n),
        ]
    )
    obs = sim.observe(state, target)
    q, dq = tg.decode_observation(obs, sim.task).state[:, :2], state[:, 2:]
    action, new_plan = controller.predict(obs, plan, np.zeros(n, dtype=bool))
    np.testing.assert_allclose(new_plan[:, 9], plan[:, 9] + 0.02)
    q_ref, dq_ref, ddq_ref = quintic(
        plan[:, 0:2], plan[:, 2:4], plan[:, 4:6], plan[:, 8], plan[:, 9]
    )
    expected = ddq_ref + 100.0 * tg.wrap_angle(q_ref - q) + 20.0 * (dq_ref - dq)
    realised = tg.forward_dynamics(params, q, dq, action.astype(np.float64) * 1e6)
    np.testing.assert_allclose(realised, expected, rtol=1e-5, atol=1e-3)


def test_computed_torque_tracks_its_reference():
    """With an exact model the joint error obeys ë + Kd ė + Kp e = 0 between samples.

    What is left comes from holding the torque over each 20 ms step (about
    0.02 rad); a model without friction roughly doubles it.
    """

    def worst_tracking_error(model):
        env = tg.TwoLinkVectorEnv(20, task="reach")
        controller = ComputedTorqueController.from_env(env, model_params=model)
        obs, _ = env.reset(seed=5)
        state, start, worst = None, np.ones(20, dtype=bool), 0.0
        for _ in range(env.max_episode_steps - 1):
            action, state = controller.predict(obs, state, start)
            start[:] = False
            obs, *_ = env.step(action)
            q_ref, _, _ = quintic(
                state[:, 0:2], state[:, 2:4], state[:, 4:6], state[:, 8], state[:, 9]
            )
            worst = max(worst, np.abs(tg.wrap_angle(q_ref - env.state[:, :2])).max())
        return worst

    exact = worst_tracking_error(None)
    assert exact < 0.03
    assert worst_tracking_error(tg.ArmParams(friction1=0.0, friction2=0.0)) > 1.5 * exact


def test_computed_torque_balances(balance_env):
    controller = ComputedTorqueController.from_env(balance_env)
    success, fell, _, _ = run_episodes(balance_env, controller)
    assert not fell.any() and success.all()


def test_computed_torque_with_evaluate_policy_and_sb3_vec_env():
    from stable_baselines3.common.evaluation import evaluate_policy
    from twolink_gym.training.sb3_vec_env import make_sb3_vec_env

    venv = make_sb3_vec_env(4, seed=7, task="reach")
    controller = ComputedTorqueController.from_env(venv)
    outcomes = []

    def record(local_vars, _globals):
        if local_vars["done"]:
            outcomes.append(local_vars["info"]["is_success"])

    evaluate_policy(controller, venv, n_eval_episodes=8, callback=record, warn=False)
    assert len(outcomes) >= 8 and all(outcomes)


def test_computed_torque_without_state_replans_when_the_target_changes():
    env = gym.make("TwoLink-v0", task="reach")
    controller = ComputedTorqueController.from_env(env)
    for target in ([1.2, 0.8], [-0.5, -1.4]):
        obs, _ = env.reset(seed=8, options={"target": target})
        for _ in range(200):
            action, _ = controller.predict(obs)  # no state, no episode_start
            obs, _, _, _, info = env.step(action)
        assert info["is_success"], info["distance"]


def test_computed_torque_rejects_a_foreign_state():
    controller = ComputedTorqueController()
    obs = np.zeros((3, 10), dtype=np.float32)
    obs[:, 0] = 1.0
    obs[:, 2] = 1.0
    obs[:, 6] = 1.0
    with pytest.raises(ValueError, match=r"state must be the finite plan of shape \(3, 10\)"):
        controller.predict(obs, state=np.zeros((3, 4)))


# -- PD with gravity compensation ----------------------------------------------
def _sampled_spectral_radius(params, q, joint_stiffness, joint_damping, dt=0.02):
    """Spectral radii of the sampled loop linearised about still poses ``q`` ``(n, 2)``.

    ``joint_stiffness`` and ``joint_damping`` ``(n, 2, 2)`` are the controller's
    -dτ/dq and -dτ/dq̇ there; the holding torque is supplied exactly.
    """
    n = len(q)
    a, b = tg.linearize(params, np.column_stack([q, np.zeros((n, 2))]))
    block = np.zeros((n, 6, 6))
    block[:, :4, :4], block[:, :4, 4:] = a, b
    e = scipy.linalg.expm(block * dt)  # batched zero-order hold
    a_d, b_d = e[:, :4, :4], e[:, :4, 4:]
    gain = np.concatenate([joint_stiffness, joint_damping], axis=2)
    return np.max(np.abs(np.linalg.eigvals(a_d - b_d @ gain)), axis=1)


def _poses(q2_values):
    return np.array([(q1, q2) for q1 in np.linspace(-np.pi, np.pi, 9) for q2 in q2_values])


def test_pd_gravity_sampled_loop_is_stable_at_every_pose():
    params, c = tg.ArmParams(), PDGravityController()
    q = _poses(np.linspace(-np.pi, np.pi, 25))
    # τ = Kp (q* - q) - Kd q̇ + G(q): -dτ/dq = Kp - dG/dq, -dτ/dq̇ = Kd
    stiffness = np.diag(c.kp) - tg.gravity_jacobian(params, q)
    damping = np.broadcast_to(np.diag(c.kd), stiffness.shape)
    assert _sampled_spectral_radius(params, q, stiffness, damping).max() < 0.97


def test_pd_gravity_reach(reach_env):
    controller = PDGravityController.from_env(reach_env)
    success, _, _, _ = run_episodes(reach_env, controller)
    assert success.mean() >= 0.98, f"success rate {success.mean()}"


def test_pd_gravity_balances(balance_env):
    controller = PDGravityController.from_env(balance_env)
    success, fell, _, _ = run_episodes(balance_env, controller)
    assert not fell.any() and success.all()


# -- impedance ------------------------------------------------------------------
def test_impedance_torque_is_the_gradient_of_the_tip_spring():
    """At rest, τ - G = -∂/∂q ½ (x* - tip(q))ᵀ K (x* - tip(q)) (virtual work), by finite differences."""
    params = tg.ArmParams()
    k = np.array([[120.0, 20.0], [20.0, 80.0]])
    controller = ImpedanceController(params=params, stiffness=k, damping=10.0)
    sim = tg.simulation.Simulation.create(task="reach")
    rng = np.random.default_rng(9)
    q = rng.uniform(-np.pi, np.pi, (6, 2))
    target = rng.uniform(-1.0, 1.0, (6, 2))
    state = np.column_stack([q, np.zeros((6, 2))])
    obs = sim.observe(state, target)
    tau = controller._torque(tg.decode_observation(obs, sim.task), None, np.zeros(6, bool))[0]

    def energy(qq):
        e = target - tg.tip_position(params, qq)
        return 0.5 * np.einsum("ni,ij,nj->n", e, k, e)

    h = 1e-6
    grad = np.column_stack(
        [(energy(q + h * np.eye(2)[i]) - energy(q - h * np.eye(2)[i])) / (2 * h) for i in range(2)]
    )
    # the observation carries x* - tip in float32
    np.testing.assert_allclose(tau - tg.gravity_torque(params, q), -grad, rtol=1e-4, atol=1e-3)


def test_impedance_sampled_loop_is_stable_at_the_target_poses():
    """Over the poses of reach targets (|q2| from 0.6 to 2.8 rad, away from the singularities)."""
    params, c = tg.ArmParams(), ImpedanceController()
    q = _poses(np.concatenate([np.linspace(0.6, 2.8, 12), -np.linspace(0.6, 2.8, 12)]))
    jac = tg.jacobian(params, q)
    jac_t = np.swapaxes(jac, 1, 2)
    stiffness = jac_t @ c.stiffness @ jac - tg.gravity_jacobian(params, q)
    damping = jac_t @ c.damping @ jac + np.diag(c.joint_damping)
    assert _sampled_spectral_radius(params, q, stiffness, damping).max() < 0.99


def test_impedance_reach(reach_env):
    controller = ImpedanceController.from_env(reach_env)
    success, _, _, _ = run_episodes(reach_env, controller)
    assert success.mean() >= 0.98, f"success rate {success.mean()}"


def test_impedance_does_not_apply_to_balance():
    with pytest.raises(ValueError, match=r"applies to task\(s\) \['reach', 'track'\]"):
        ImpedanceController.from_env(tg.TwoLinkVectorEnv(1, task="balance"))


# -- the shared protocol --------------------------------------------------------
@pytest.mark.parametrize(
    "name,task", [(n, t) for n, cls in CONTROLLERS.items() for t in cls.task_names()]
)
def test_batched_predict_equals_a_loop_of_single_calls(name, task):
    actuation = CONTROLLERS[name].actuations[0]  # the full arm, or the one arm it drives
    env = tg.TwoLinkVectorEnv(6, task=task, actuation=actuation)
    controller = CONTROLLERS[name].from_env(env)
    single = CONTROLLERS[name].from_env(env)
    obs, _ = env.reset(seed=10)
    state, states = None, [None] * 6
    start = np.ones(6, dtype=bool)
    for _ in range(15):
        action, state = controller.predict(obs, state, start)
        for i in range(6):
            a_i, states[i] = single.predict(obs[i], states[i], start[i])
            assert a_i.shape == (env.sim.action_size,)
            np.testing.assert_allclose(a_i, action[i], rtol=1e-6, atol=1e-7)
            if state is not None:
                np.testing.assert_allclose(states[i], state[i], rtol=1e-12)
        start[:] = False
        obs, *_ = env.step(action)


def test_from_env_reads_one_configuration_from_every_kind_of_env():
    kwargs = {"task": "reach", "dt": 0.01, "max_torque": (20.0, 5.0), "params": {"m1": 1.5}}
    from twolink_gym.training.sb3_vec_env import make_sb3_vec_env

    envs = [
        gym.make("TwoLink-v0", **kwargs),
        tg.TwoLinkVectorEnv(2, **kwargs),
        make_sb3_vec_env(2, **kwargs),
    ]
    for env in envs:
        sim = simulation_of(env)
        controller = PDGravityController.from_env(env)
        assert controller.dt == 0.01 and controller.params.m1 == 1.5
        np.testing.assert_array_equal(controller.max_torque, [20.0, 5.0])
        assert controller.task is sim.task
        # the controller keeps the configuration, not the env or its simulation
        assert not any(
            isinstance(v, (tg.simulation.Simulation, gym.Env)) for v in vars(controller).values()
        )
    with pytest.raises(ValueError, match="env must be a twolink_gym environment"):
        PDGravityController.from_env(object())


def test_actions_are_the_saturated_normalised_torque():
    controller = PDGravityController(kp=1000.0, kd=0.0)
    sim = tg.simulation.Simulation.create(task="reach")
    state = np.array([[-np.pi / 2, 0.1, 0.0, 0.0]])
    obs = sim.observe(state, np.array([[1.0, 1.0]]))
    action, _ = controller.predict(obs[0])
    # a huge gain pushes both joints to their limits; the sign follows the error
    q_goal = nearest_ik(sim.params, [[1.0, 1.0]], state[:, :2])[0]
    np.testing.assert_array_equal(action, np.sign(q_goal - state[0, :2]))


def test_predict_rejects_observations_of_another_task_or_non_finite():
    controller = LQRController()
    with pytest.raises(ValueError, match="built for task 'balance'"):
        controller.predict(np.zeros(10, dtype=np.float32))
    bad = np.array([0.0, 1.0, 1.0, 0.0, np.nan, 0.0])
    with pytest.raises(ValueError, match="observation must be finite"):
        controller.predict(bad)
    with pytest.raises(ValueError, match="episode_start must have one entry per observation"):
        controller.predict(np.tile([0.0, 1.0, 1.0, 0.0, 0.0, 0.0], (3, 1)), None, [True, False])
    with pytest.raises(ValueError, match="kp must be finite and >= 0"):
        PDGravityController(kp=(-1.0, 2.0))
    with pytest.raises(ValueError, match="kd must be a number or a pair"):
        PDGravityController(kd=(1.0, 2.0, 3.0))
