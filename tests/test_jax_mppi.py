"""The MPPI controller (:mod:`twolink_gym.jax.mppi`) and its RealAIGym variants.

Checked against sources outside the planner: the numpy LQR design (its catch), RealAIGym's
own tip height and RK4 (tests/test_realaigym_v3.py) and the compiled v3 run
(:func:`twolink_gym.realaigym.v3.run_v3`, numba kernels and a Python supervisor, which
tests/test_realaigym_v3.py holds to the publisher's run) for its swing-up and for the JAX
run of :mod:`twolink_gym.jax.realaigym_v3` with a stateful policy.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

jax = pytest.importorskip("jax")

from test_realaigym_global import their_tip_height  # noqa: E402
from test_realaigym_v3 import their_rk4  # noqa: E402

from twolink_gym.jax import realaigym_v3 as jv3  # noqa: E402
from twolink_gym.jax.mppi import MPPIController, MPPISettings  # noqa: E402
from twolink_gym.realaigym.controllers import VARIANTS, variant_runner  # noqa: E402
from twolink_gym.realaigym.protocol import make_policy_env  # noqa: E402
from twolink_gym.realaigym.v3 import run_v3  # noqa: E402

#: Small planners for the tests (the variants' are larger).
SMALL = {"samples": 64, "horizon": 20}


def controller(robot: str = "pendubot", **options: object) -> MPPIController:
    env = make_policy_env(robot, dt=0.01)
    return MPPIController.from_env(env, **{"settings": SMALL, **options})


@pytest.mark.parametrize(("robot", "motor"), [("pendubot", 0), ("acrobot", 1)])
def test_the_catch_is_the_upright_lqr_at_any_turn(robot: str, motor: int) -> None:
    # inside the catch level the torque is the numpy LQR design's, clipped: through predict
    # (the env's observation), and through the pure decision for the upright a turn round
    env = make_policy_env(robot, dt=0.01)
    ctrl = controller(robot, catch_level=4000.0)
    near = np.array([[math.pi / 2 + 0.05, -0.08, 0.3, -0.2], [math.pi / 2 - 0.02, 0.04, -0.1, 0.5]])
    assert np.all(ctrl.design.cost_to_go(near) < 4000.0)
    expected = np.clip(ctrl.design.torque(near)[:, motor], -6.0, 6.0)
    action, state = ctrl.predict(env.sim.observe(near, np.zeros((2, 0))), None, np.ones(2, bool))
    np.testing.assert_allclose(action[:, 0] * 6.0, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(state[:, 0], 1.0)  # caught
    wound = near + np.array([2 * math.pi, -2 * math.pi, 0.0, 0.0])
    for x, torque in zip(wound, expected, strict=True):
        tau, memory = ctrl.decide(x, ctrl.initial_memory())
        # float32 (JAX's default): the angle a turn round keeps ~1e-6 rad, times gains of ~100
        np.testing.assert_allclose(float(tau[motor]), torque, rtol=0, atol=1e-3)
        assert float(tau[1 - motor]) == 0.0 and bool(memory.caught)


def test_the_pendubot_variant_swings_up_from_rest_and_holds() -> None:
    # the shipped variant on the compiled v3 plant (RealAIGym's arm, ±6 N·m, 2 ms RK4) through
    # the first push (3.806-4.006 s): the tip (their height) is above 0.45 m within 1.5 s and
    # for the whole last second before the push; the passive elbow gets no torque outside the
    # push; every step replays through RealAIGym's own RK4 with the applied torque
    runner = variant_runner("realaigym_pendubot_mppi", "pendubot")
    assert runner.decision_steps == 5
    run = run_v3(runner, "pendubot", steps=2200)
    x, u, t = run.trajectory.x, run.trajectory.u, run.trajectory.t
    height = their_tip_height(x)
    assert np.flatnonzero(height > 0.45)[0] * 0.002 < 1.5
    last_second = (t >= 2.8) & (t < 3.8)
    assert np.all(height[last_second] > 0.45), height[last_second].min()
    assert run.pushed.sum() in (100, 101) and not run.pushed[t < 3.8].any()
    np.testing.assert_array_equal(u[~run.pushed, 1], 0.0)
    np.testing.assert_allclose(their_rk4(x, u), np.vstack([x[1:], run.final]), rtol=0, atol=1e-12)


def observed(x: jax.Array) -> jax.Array:
    """The state as the runner's policy sees it: through the float32 observation (cos, sin, speeds)."""
    jnp = jax.numpy

    def f32(v: jax.Array) -> jax.Array:
        return v.astype(jnp.float32).astype(x.dtype)

    q1 = jnp.arctan2(f32(jnp.sin(x[0])), f32(jnp.cos(x[0])))
    q2 = jnp.arctan2(f32(jnp.sin(x[1])), f32(jnp.cos(x[1])))
    return jnp.stack([q1, q2, f32(x[2]), f32(x[3])])


def acted(torque: jax.Array, memory: object) -> tuple[jax.Array, object]:
    """The torque as the runner applies it: through the float32 action (torque / 6 N·m)."""
    action = jax.numpy.clip(torque / 6.0, -1.0, 1.0).astype(jax.numpy.float32)
    return action.astype(torque.dtype) * 6.0, memory


@pytest.mark.parametrize("robot", ["pendubot", "acrobot"])
def test_jax_run_of_the_stateful_planner_equals_the_compiled_run(robot: str) -> None:
    # the same controller through the compiled v3 run (its float32 observations encoded and
    # decoded, its float32 actions, asked every fifth step) and through the JAX run as a
    # stateful policy shown the same observation and acting through the same action, both in
    # float64: the same states and torques over the first 1.4 s (140 plans) to 1e-5 (the
    # float32 actions may round a few units apart), after which the paths part
    from twolink_gym.realaigym.protocol import PolicyRunner

    with jax.enable_x64(True):
        ctrl = controller(robot)
        sim = make_policy_env(robot, dt=0.01).sim
        reference = run_v3(PolicyRunner(ctrl, sim, 5), robot, steps=1000)
        twin = controller(robot)
        record = jax.jit(
            lambda s: jv3.run(
                lambda x, m: acted(*twin.decide(observed(x), m)),
                s,
                decision_steps=5,
                steps=1000,
                memory=twin.initial_memory(),
            )
        )(jax.tree.map(lambda a: a[0], jv3.pushes(robot)))
        x, u = np.asarray(record.x)[:700], np.asarray(record.u)[:700]
        np.testing.assert_allclose(x, reference.trajectory.x[:700], rtol=0, atol=1e-5)
        np.testing.assert_allclose(u, reference.trajectory.u[:700], rtol=0, atol=1e-5)
        assert np.abs(reference.trajectory.u[:, 0 if robot == "pendubot" else 1]).max() > 1.0


def test_plans_are_reproducible_per_seed_and_rows_are_independent() -> None:
    env = make_policy_env("pendubot", dt=0.01)
    states = np.array([[-math.pi / 2, 0.0, 0.0, 0.0], [0.3, 1.0, 4.0, -3.0]])
    obs = env.sim.observe(states, np.zeros((2, 0)))
    start = np.ones(2, dtype=bool)
    a, state_a = controller().predict(obs, None, start)
    b, _ = controller().predict(obs, None, start)
    c, _ = controller(settings={**SMALL, "seed": 1}).predict(obs, None, start)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a[1], c[1])
    assert state_a.shape == (2, 2 + SMALL["horizon"])
    np.testing.assert_array_equal(state_a[:, 1], 1.0)  # one decision each
    # a row alone is the row in the batch
    single, _ = controller().predict(obs[1], None, True)
    np.testing.assert_allclose(single, a[1], rtol=1e-6)
    # episode_start restarts a row: its plan and count are zeroed before the decision
    again, state_b = controller().predict(obs, state_a, np.array([True, False]))
    np.testing.assert_array_equal(state_b[:, 1], [1.0, 2.0])
    np.testing.assert_array_equal(again[0], a[0])


def test_settings_and_levels_are_checked() -> None:
    for key, bad in (
        ("samples", 1),
        ("horizon", 0),
        ("sigma", 0.0),
        ("temperature", -1.0),
        ("terminal_weight", float("nan")),
        ("angle_weight", -0.1),
        ("speed_weight", True),
        ("substeps", 1.5),
        ("seed", "x"),
    ):
        with pytest.raises(ValueError, match=key):
            MPPISettings(**{key: bad})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['horizn'\]"):
        controller(settings={"horizn": 10})
    with pytest.raises(ValueError, match="release_level must be >= catch_level"):
        controller(catch_level=10.0, release_level=5.0)
    with pytest.raises(ValueError, match="cannot drive actuation 'full'"):
        MPPIController("swingup", actuation="full")
    with pytest.raises(ValueError, match=r"state must be the array of shape \(1, 22\)"):
        ctrl = controller()
        obs = make_policy_env("pendubot", dt=0.01).sim.observe(np.zeros((1, 4)), np.zeros((1, 0)))
        ctrl.predict(obs, np.zeros((1, 5)), np.zeros(1, dtype=bool))


def test_the_mppi_variants_are_registered_with_their_period() -> None:
    for robot in ("pendubot", "acrobot"):
        variant = VARIANTS[f"realaigym_{robot}_mppi"]
        assert variant.robot == robot and variant.dt == 0.01
        assert variant.controller_class() is MPPIController
