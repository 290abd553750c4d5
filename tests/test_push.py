"""The swing-up task's push starts: a RealAIGym v3 push on its own, compiled and in JAX.

References: the v3 simulator's own run (:func:`twolink_gym.realaigym.v3.run_v3`,
held by tests/test_realaigym_v3.py to the publisher's data), whose first push
starts from a fresh PID as :func:`twolink_gym.tasks.push.push` does; the draw
order the task documents, replayed by hand; and, for the twin, the compiled
push and the compiled sampler's distribution.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from twolink_gym.params import ArmParams
from twolink_gym.realaigym.arm import arm as realaigym_arm
from twolink_gym.realaigym.arm import from_realaigym_state
from twolink_gym.realaigym.v3 import run_v3, schedule
from twolink_gym.tasks import SwingupTask
from twolink_gym.tasks.base import UPRIGHT, perturbed_state
from twolink_gym.tasks.push import PUSH_STEPS, push, push_target, push_turns, wound


@pytest.mark.parametrize("robot", ["pendubot", "acrobot"])
def test_a_push_is_the_first_push_of_a_v3_run(robot: str) -> None:
    # the v3 run with no policy: its first push (a fresh PID) from the state it meets
    run = run_v3(None, robot, steps=6000)
    start = int(np.argmax(run.pushed))
    assert run.pushed[start : start + PUSH_STEPS].all()
    target = schedule(robot).targets[0, :2] - np.array([math.pi / 2, 0.0])  # to our angles
    after = push(realaigym_arm(), from_realaigym_state(run.trajectory.x[start]), target)
    expected = from_realaigym_state(run.trajectory.x[start + PUSH_STEPS])
    np.testing.assert_allclose(after, expected, rtol=0, atol=1e-12)
    assert np.abs(after[2:]).max() > 1.0  # the push sets the arm moving


def test_push_turns_are_uniform_over_the_range() -> None:
    draws = (np.arange(1000) + 0.5) / 1000
    turns = [push_turns(w, 2) for w in draws]
    assert sorted(set(turns)) == [-2, -1, 0, 1, 2]
    assert all(turns.count(k) == 200 for k in range(-2, 3))
    assert push_turns(0.999, 0) == 0


def test_push_targets_cover_the_circle_in_realaigym_angles() -> None:
    corners = np.array([push_target([0.0, 0.0]), push_target([1 - 1e-12, 1 - 1e-12])])
    np.testing.assert_allclose(corners[0], [-1.5 * math.pi, -math.pi])
    np.testing.assert_allclose(corners[1], [0.5 * math.pi, math.pi], atol=1e-9)


def test_push_starts_follow_the_documented_draws() -> None:
    task = SwingupTask(push_fraction=1.0, catch_angle=0.2, catch_speed=0.5)
    params = realaigym_arm()
    rng, replay = np.random.default_rng(4), np.random.default_rng(4)
    for _ in range(5):
        state = task.sample_initial_state(rng, params)
        replay.uniform()  # the kind of start
        held = perturbed_state(replay, UPRIGHT, 0.2, 0.5)
        turn, wound, a, b = replay.uniform(size=4)
        held[0] -= 2 * math.pi if turn < 0.5 else 0.0
        held[1] += 2 * math.pi * (math.floor(wound * 5) - 2)  # -2 ... 2 turns
        np.testing.assert_array_equal(state, push(params, held, push_target([a, b])))
    # mixed with the other starts: the shares of each kind
    task = SwingupTask(explore_fraction=0.2, catch_fraction=0.3, push_fraction=0.4)
    rng = np.random.default_rng(5)
    starts = np.array([task.sample_initial_state(rng, params) for _ in range(400)])
    hanging = np.abs(starts[:, 0] + math.pi / 2) < 0.06
    assert 0.04 < hanging.mean() < 0.18  # 10 % hanging (the rest of the draws)
    # a push of an arm wound a turn or two spins it (v3's hand-backs reach 50 rad/s)
    assert np.mean(np.abs(starts[:, 2:]).max(axis=1) > 15.0) > 0.1


def test_push_options_are_checked() -> None:
    with pytest.raises(ValueError, match="push_fraction"):
        SwingupTask(push_fraction=1.5)
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="push_turns"):
            SwingupTask(push_turns=bad)
    with pytest.raises(ValueError, match="explore_fraction \\+ catch_fraction \\+ push_fraction"):
        SwingupTask(explore_fraction=0.5, catch_fraction=0.3, push_fraction=0.3)


# -- the twin ------------------------------------------------------------------------


@pytest.fixture()
def x64() -> Any:
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        yield


@pytest.mark.parametrize(
    "params", [realaigym_arm(), ArmParams(friction1=0.1, coulomb1=0.2, coulomb2=0.05)]
)
def test_twin_push_equals_the_compiled_push(params: ArmParams, x64: Any) -> None:
    import jax
    import jax.numpy as jnp

    from twolink_gym.dynamics import arm_vector, has_coulomb
    from twolink_gym.jax.params import arm_of
    from twolink_gym.jax.tasks.push import push as twin_push
    from twolink_gym.jax.tasks.push import push_target as twin_target

    coulomb = bool(has_coulomb(arm_vector(params)))
    run = jax.jit(lambda x, t: twin_push(arm_of(params, jnp.float64), x, t, coulomb))
    rng = np.random.default_rng(6)
    for _ in range(4):
        state = np.concatenate([rng.uniform(-4, 4, 2), rng.uniform(-10, 10, 2)])
        draws = rng.uniform(size=2)
        np.testing.assert_allclose(np.asarray(twin_target(jnp.asarray(draws))), push_target(draws))
        expected = push(params, state, push_target(draws))
        got = np.asarray(run(jnp.asarray(state), jnp.asarray(push_target(draws))))
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_twin_push_starts_are_the_compiled_push_of_its_draws(x64: Any) -> None:
    import jax
    import jax.numpy as jnp

    import twolink_gym.jax as tj

    params = realaigym_arm()
    options = {"push_fraction": 1.0, "catch_angle": 0.2, "catch_speed": 0.5}
    env, env_params = tj.make(
        "TwoLink-v0", task="swingup", actuation="pendubot", params=params, task_options=options
    )
    sample = jax.jit(lambda k: env.twin.sample(k, env_params, env_params.arm)[0])
    twin_states = []
    for key in jax.random.split(jax.random.PRNGKey(0), 200):
        twin_states.append(np.asarray(sample(key)))
    # the first few: the compiled push of the twin's own draws (the documented order)
    for key, state in zip(
        jax.random.split(jax.random.PRNGKey(0), 200)[:3], twin_states, strict=False
    ):
        _, draw = jax.random.split(key)
        held = np.array(
            jnp.asarray(UPRIGHT)
            + jax.random.uniform(draw, (4,), jnp.float64, -1.0, 1.0)
            * jnp.asarray([0.2, 0.2, 0.5, 0.5])
        )
        w = np.asarray(jax.random.uniform(jax.random.fold_in(draw, 1), (4,), jnp.float64))
        held[0] -= 2 * math.pi if w[0] < 0.5 else 0.0
        held[1] += 2 * math.pi * (math.floor(w[1] * 5) - 2)
        np.testing.assert_allclose(
            state, push(params, held, push_target(w[2:])), rtol=0, atol=1e-12
        )
    # the whole sample: the compiled sampler's distribution (mean speed, share spinning fast)
    task = SwingupTask(**options)
    rng = np.random.default_rng(7)
    compiled = np.array([task.sample_initial_state(rng, params) for _ in range(200)])
    twin = np.array(twin_states)
    for states in (twin, compiled):
        assert np.all(np.isfinite(states))
    speed_t, speed_c = np.abs(twin[:, 2:]).max(axis=1), np.abs(compiled[:, 2:]).max(axis=1)
    se = math.sqrt((speed_t.var() + speed_c.var()) / 200)
    assert abs(speed_t.mean() - speed_c.mean()) < 5 * se, (speed_t.mean(), speed_c.mean())


def _uprights() -> list[tuple[int, int, float, float]]:
    """The upright at shoulder turn k1 and elbow turn k2: ``(k1, k2, q1, q2)``, our angles."""
    return [
        (k1, k2, math.pi / 2 + 2 * math.pi * k1, 2 * math.pi * k2)
        for k1 in range(-3, 3)
        for k2 in range(-2, 3)
    ]


def test_wound_is_an_upright_outside_the_push_targets_range() -> None:
    # the range of push_target's angles (its extreme draws), not UNWOUND
    low, high = push_target([0.0, 0.0]), push_target([1.0, 1.0])
    for k1, k2, q1, q2 in _uprights():
        in_range = low[0] - 1e-9 <= q1 <= high[0] + 1e-9 and low[1] <= q2 < high[1]
        assert wound(q1, q2) == (0.0 if in_range else 1.0), (k1, k2)
        # the shoulder's two uprights in range (π/2, -3π/2) and the elbow's one (0)
        assert in_range == (k1 in (-1, 0) and k2 == 0)
    # half a turn either side belongs to the nearest upright
    rng = np.random.default_rng(7)
    q = rng.uniform(-5 * math.pi, 5 * math.pi, (2000, 2))
    nearest1 = np.round((q[:, 0] - math.pi / 2) / (2 * math.pi))
    nearest2 = np.round(q[:, 1] / (2 * math.pi))
    expected = ~(np.isin(nearest1, (-1, 0)) & (nearest2 == 0))
    got = np.array([wound(a, b) for a, b in q])
    np.testing.assert_array_equal(got, expected.astype(float))


def test_a_push_hands_a_wound_elbow_back_faster() -> None:
    """What wound means physically: from the upright held at rest, pushes towards the same
    targets hand an arm with its elbow unwound back at under half the speed of one with
    its elbow a turn round (the PID drives the elbow back through the turn). (A shoulder a
    turn round is handed back hardly faster: the push cannot swing the whole arm a turn in
    0.2 s; in a v3 run its error stays in the PID's integral, which is never cleared.)"""
    params = realaigym_arm()
    targets = [push_target(w) for w in np.random.default_rng(8).uniform(size=(20, 2))]

    def speed(q1: float, q2: float) -> float:
        after = [push(params, np.array([q1, q2, 0.0, 0.0]), t) for t in targets]
        return float(np.mean([np.abs(a[2:]).max() for a in after]))

    unwound, wound_up = [(math.pi / 2, 0.0), (-1.5 * math.pi, 0.0)], []
    for q1 in (math.pi / 2, -1.5 * math.pi):
        wound_up += [(q1, 2 * math.pi), (q1, -2 * math.pi)]
    assert not any(wound(*q) for q in unwound) and all(wound(*q) for q in wound_up)
    slowest_wound = min(speed(*q) for q in wound_up)
    fastest_unwound = max(speed(*q) for q in unwound)
    assert 2 * fastest_unwound < slowest_wound, (fastest_unwound, slowest_wound)


@pytest.mark.parametrize("weight", [0.0, 0.4, 1.0])
def test_wound_weight_withholds_the_line_term_from_a_wound_arm(weight: float) -> None:
    params = realaigym_arm()
    rows = _uprights()
    x = np.array([[q1 + 0.01, q2 - 0.02, 0.0, 0.0] for _, _, q1, q2 in rows])
    unwound = np.array([k1 in (-1, 0) and k2 == 0 for k1, k2, _, _ in rows])
    task = SwingupTask(line_weight=1.0, ctrl_weight=0.0, wound_weight=weight)
    ev = task.evaluate(params, x, np.zeros((len(rows), 0)))
    # every state is above the line; the wound ones pay 1 - weight
    np.testing.assert_allclose(ev.reward, np.where(unwound, 1.0, 1.0 - weight), rtol=0, atol=0)
    np.testing.assert_allclose(ev.terms["reward_line"], ev.reward, rtol=0, atol=0)
    with pytest.raises(ValueError, match="wound_weight"):
        SwingupTask(wound_weight=1.5)


@pytest.mark.parametrize("weight", [0.0, 0.4, 1.0])
def test_wound_shaped_weight_withholds_the_shaped_half_from_a_wound_arm(weight: float) -> None:
    params = realaigym_arm()
    rows = _uprights()
    x = np.array([[q1 + 0.01, q2 - 0.02, 0.3, -0.2] for _, _, q1, q2 in rows])
    unwound = np.array([k1 in (-1, 0) and k2 == 0 for k1, k2, _, _ in rows])
    goal = np.zeros((len(rows), 0))
    plain = SwingupTask(ctrl_weight=0.0).evaluate(params, x, goal).reward
    # the turns do not change the plain reward (it sees the angles through sines and cosines)
    np.testing.assert_allclose(plain, plain[0], rtol=0, atol=1e-12)
    task = SwingupTask(ctrl_weight=0.0, wound_shaped_weight=weight)
    got = task.evaluate(params, x, goal).reward
    np.testing.assert_allclose(got, np.where(unwound, plain, (1.0 - weight) * plain), atol=1e-15)
    # with the line withheld too, a wound arm earns nothing at all
    both = SwingupTask(ctrl_weight=0.0, line_weight=0.5, wound_weight=1.0, wound_shaped_weight=1.0)
    reward = both.evaluate(params, x, goal).reward
    assert np.all(reward[~unwound] == 0.0) and np.all(reward[unwound] > 0.5)
    with pytest.raises(ValueError, match="wound_shaped_weight"):
        SwingupTask(wound_shaped_weight=-0.1)


def test_twin_wound_equals_the_compiled_wound(x64: Any) -> None:
    import jax.numpy as jnp

    from twolink_gym.jax.tasks.push import wound as twin_wound
    from twolink_gym.tasks.push import UNWOUND

    rng = np.random.default_rng(9)
    q = rng.uniform(-8 * math.pi, 8 * math.pi, (3000, 2))
    edges = np.array([[a, b] for a in np.ravel(UNWOUND[0]) for b in np.ravel(UNWOUND[1])])
    q = np.concatenate([q, edges, np.nextafter(edges, -np.inf)])
    got = np.asarray(twin_wound(jnp.asarray(q[:, 0]), jnp.asarray(q[:, 1])))
    np.testing.assert_array_equal(got, [wound(a, b) for a, b in q])


def test_observed_turns_are_the_angles_in_turns() -> None:
    import gymnasium as gym

    from twolink_gym.tasks.swingup import TURNS_LIMIT

    env = gym.make("TwoLinkPendubotSwingup-v0", task_options={"observe_turns": True})
    assert env.observation_space.shape == (8,)
    np.testing.assert_array_equal(env.observation_space.high[6:], [TURNS_LIMIT, TURNS_LIMIT])
    assert env.unwrapped.task.extras_names() == ("q1_turns", "q2_turns")
    for state in ([math.pi / 2, 2 * math.pi + 0.1], [-1.5 * math.pi, -4 * math.pi], [0.0, 200.0]):
        x = np.array([*state, 0.0, 0.0])
        obs, _ = env.reset(seed=0, options={"state": x})
        expected = np.clip(x[:2] / (2 * math.pi), -16, 16)  # clipped at 16 turns
        np.testing.assert_allclose(obs[6:], expected, rtol=1e-7)
        # the state encoding in front is unchanged
        np.testing.assert_allclose(obs[:6], [*_trig(x[0]), *_trig(x[1]), 0, 0], atol=1e-7)
    env.reset(seed=0, options={"state": np.array([math.pi / 2, 2.1 * math.pi, 3.0, -5.0])})
    obs, *_ = env.step(env.action_space.sample())
    q = env.unwrapped.state[:2]
    np.testing.assert_allclose(obs[6:], q / (2 * math.pi), rtol=1e-6)
    # off by default: the six state entries only
    assert gym.make("TwoLinkPendubotSwingup-v0").observation_space.shape == (6,)
    with pytest.raises(ValueError, match="observe_turns must be True or False"):
        SwingupTask(observe_turns=1)  # type: ignore[arg-type]


def _trig(angle: float) -> tuple[float, float]:
    return math.cos(angle), math.sin(angle)


def test_the_v3_protocol_shows_an_agent_its_turns() -> None:
    """The board's runner encodes the measured state with the agent's extras: its turns."""
    from twolink_gym.realaigym.protocol import PolicyRunner
    from twolink_gym.simulation import Simulation

    seen = []

    class Recorder:
        def predict(self, obs: Any, state: Any, episode_start: Any, deterministic: bool) -> Any:
            seen.append(np.array(obs))
            return np.zeros((obs.shape[0], 1)), state

    sim = Simulation.create(
        task=SwingupTask(observe_turns=True),
        params=realaigym_arm(),
        dt=0.01,
        max_torque=6.0,
        actuation="pendubot",
    )
    runner = PolicyRunner(Recorder(), sim, 5)
    measured = np.array([[math.pi / 2, 2 * math.pi, 1.0, -2.0], [-1.5 * math.pi, 0.3, 0.0, 0.0]])
    torque, _ = runner.command(measured, None, True)
    np.testing.assert_array_equal(torque, np.zeros((2, 2)))
    np.testing.assert_allclose(seen[0][:, 6:], measured[:, :2] / (2 * math.pi), rtol=1e-7)
