"""The robustness models of the JAX twin against the compiled env's.

Deterministic parts (the arm vector of drawn fields, the action delay, the
first-order torque response, the angles-only observation) against the
compiled env under ``jax.enable_x64(True)``, step by step; the random parts
(JAX's generator, not numpy's) against their declared distributions: means
and standard deviations over many draws, ranges, clipping, and the joints
and entries that must stay exact.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

import twolink_gym  # noqa: E402, F401
import twolink_gym.jax as tj  # noqa: E402
from twolink_gym.dynamics import arm_vector  # noqa: E402
from twolink_gym.imperfections import RANDOMIZABLE  # noqa: E402
from twolink_gym.jax import imperfections as ji  # noqa: E402
from twolink_gym.params import ArmParams  # noqa: E402
from twolink_gym.realaigym.arm import arm as realaigym_arm  # noqa: E402

TOL = 1e-12


@pytest.fixture(scope="module")
def x64() -> Any:
    with jax.enable_x64(True):
        yield


def test_arm_of_fields_is_the_arm_vector(x64: Any) -> None:
    arms = [ArmParams(), realaigym_arm(), ArmParams(m1=0.7, l2=0.6, lc2=0.35, I2=0.03, gravity=3.7)]
    for arm in arms:
        fields = jnp.asarray([getattr(arm, f) for f in RANDOMIZABLE])
        twin = np.array(ji.arm_of_fields(fields))
        assert np.max(np.abs(twin - arm_vector(arm))) <= 1e-15 * np.max(np.abs(arm_vector(arm)))


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("TwoLinkBalance-v0", {"action_delay": 3, "torque_response": 0.3, "observation": "angles"}),
    ],
)
def test_delay_response_and_angles_match_the_compiled_env_x64(
    env_id: str, kwargs: dict[str, Any], x64: Any
) -> None:
    compiled = gym.make(env_id, **kwargs).unwrapped
    obs, _ = compiled.reset(seed=3)
    env, params = tj.make(env_id, **kwargs)
    space = env.observation_space(params)
    np.testing.assert_array_equal(np.asarray(space.low), compiled.observation_space.low)
    np.testing.assert_array_equal(np.asarray(space.high), compiled.observation_space.high)
    options = {"state": compiled.state}
    if compiled.goal.size:
        options["goal"] = compiled.goal
    reset = jax.jit(lambda o: env.reset_env(jax.random.key(0), params, o))
    obs_j, state = reset({k: jnp.asarray(v) for k, v in options.items()})
    assert np.all(np.asarray(obs_j).astype(np.float32) == obs)
    step = jax.jit(env.step_env)
    rng = np.random.default_rng(1)
    for k in range(120):
        a = rng.uniform(-1.2, 1.2, compiled.action_space.shape)
        obs, reward, terminated, _, info = compiled.step(a)
        obs_j, state, reward_j, _, info_j = step(jax.random.key(k), state, jnp.asarray(a), params)
        assert np.max(np.abs(np.asarray(info_j["state"]) - info["state"])) <= TOL
        assert abs(float(reward_j) - reward) <= TOL
        assert np.all(np.asarray(obs_j).astype(np.float32) == obs)
        assert bool(info_j["terminated"]) == terminated
        if terminated:
            break


def test_observation_noise_has_the_declared_distribution(x64: Any) -> None:
    """Independent N(0, std) per noisy entry, the noiseless entries exact, clipped to the bounds."""
    std = jnp.asarray([0.05, 0.05, 0.0, 0.2, 0.1, 0.0])
    obs = jnp.asarray([0.6, -0.8, 0.3, 0.1, 2.0, 0.4])
    low, high = jnp.full(6, -5.0), jnp.full(6, 5.0)
    n = 20000
    draw = jax.jit(jax.vmap(lambda k: ji.observe(k, obs, (0, 1, 2, 3, 4, 5), std, low, high)))
    noise = np.asarray(draw(jax.random.split(jax.random.key(1), n))) - np.asarray(obs)
    noisy = np.asarray(std) > 0
    np.testing.assert_array_equal(noise[:, ~noisy], 0.0)
    sigma = np.asarray(std)[noisy]
    assert np.all(np.abs(noise[:, noisy].mean(0)) < 5 * sigma / math.sqrt(n))
    assert np.all(np.abs(noise[:, noisy].std(0) / sigma - 1.0) < 0.03)
    corr = np.corrcoef(noise[:, noisy].T)
    assert np.max(np.abs(corr - np.eye(len(sigma)))) < 0.04
    # clipping to the bounds: an entry 0.25 std below its upper bound is there with P(z > 0.25)
    high = jnp.asarray([0.61, 5.0, 5.0, 5.0, 5.0, 5.0])
    clipped = jax.jit(jax.vmap(lambda k: ji.observe(k, obs, (0, 1, 2, 3, 4, 5), std, low, high)))
    first = np.asarray(clipped(jax.random.split(jax.random.key(2), n)))[:, 0]
    p = 0.5 * math.erfc(0.2 / math.sqrt(2))
    assert first.max() == 0.61 and abs(np.mean(first == 0.61) - p) < 5 * math.sqrt(p / n)


def test_observation_noise_in_the_env(x64: Any) -> None:
    """Reach with ``obs_noise=0.05``: the state entries noisy, the target and the error exact."""
    env, params = tj.make("TwoLinkReach-v0", obs_noise=0.05)
    x = jnp.asarray([0.3, -0.2, 1.0, 2.0])
    goal = jnp.asarray([0.5, 0.9])
    reset = jax.jit(lambda k: env.reset_env(k, params, {"state": x, "goal": goal})[0])
    obs = np.array([reset(k) for k in jax.random.split(jax.random.key(1), 12)])
    clean = np.array([math.cos(0.3), math.sin(0.3), math.cos(-0.2), math.sin(-0.2), 1.0, 2.0])
    noise = obs[:, :6] - clean
    assert np.all(noise != 0.0) and np.all(np.abs(noise) < 6 * 0.05)
    assert len(np.unique(obs[:, 0])) == len(obs)
    tip = np.array([math.cos(0.3) + math.cos(0.1), math.sin(0.3) + math.sin(0.1)])
    expected = np.concatenate([np.asarray(goal), np.asarray(goal) - tip])
    assert np.max(np.abs(obs[:, 6:] - expected)) <= TOL
    space = env.observation_space(params)
    assert np.all(obs >= np.asarray(space.low)) and np.all(obs <= np.asarray(space.high))


def test_torque_noise_has_the_declared_distribution(x64: Any) -> None:
    """``clip(tau + noise · z, -1, 1)`` on the motor joint only (an acrobot: the elbow)."""
    state = ji.ActuatorState(jnp.zeros(2), jnp.zeros((0, 2)))
    motors = jnp.asarray([0.0, 1.0])

    def applied(key: Any, command: Any, noise: float) -> Any:
        return ji.actuate(key, command, state, jnp.asarray(noise), jnp.asarray(1.0), motors)[0]

    keys = jax.random.split(jax.random.key(0), 20000)
    run = jax.jit(jax.vmap(applied, (0, None, None)))
    a = np.asarray(run(keys, jnp.asarray([0.0, 0.5]), 0.1))
    np.testing.assert_array_equal(a[:, 0], 0.0)
    assert abs(a[:, 1].mean() - 0.5) < 5 * 0.1 / math.sqrt(len(a))
    assert abs(a[:, 1].std() / 0.1 - 1.0) < 0.03
    # saturation: a command of 0.95 with noise 0.2 is 1 with probability P(z > 0.25)
    a = np.asarray(run(keys, jnp.asarray([0.0, 0.95]), 0.2))
    assert a[:, 1].max() == 1.0 and a[:, 1].min() >= -1.0
    p = 0.5 * math.erfc(0.25 / math.sqrt(2))
    assert abs(np.mean(a[:, 1] == 1.0) - p) < 5 * math.sqrt(p * (1 - p) / len(a))


def test_randomization_draws_uniform_arms(x64: Any) -> None:
    """``m2`` by a factor in [0.8, 1.2], ``friction1`` absolute in [0, 0.2]; the rest nominal."""
    randomize = {"m2": (0.8, 1.2), "friction1": {"absolute": (0.0, 0.2)}, "l1": (0.9, 1.1)}
    compiled = gym.make("TwoLinkReach-v0", randomize=randomize).unwrapped
    env, params = tj.make("TwoLinkReach-v0", randomize=randomize)
    # the space covers every arm the ranges allow, as the compiled env's
    np.testing.assert_array_equal(
        np.asarray(env.observation_space(params).high), compiled.observation_space.high
    )
    # the drawn fields (the twin's draw_arm, vmapped), then the env's arms from a few resets
    m = params.models
    n = 20000
    draw = jax.jit(
        jax.vmap(lambda k: ji.draw_arm(k, m.nominal, m.index, m.low, m.high, m.absolute))
    )
    fields = np.asarray(draw(jax.random.split(jax.random.key(0), n)))
    assert np.all(fields[:, 4:9] == np.asarray(m.nominal)[4:9])  # not drawn: nominal, exact
    reset = jax.jit(lambda k: env.reset_env(k, params)[1].arm)
    arms = [reset(k) for k in jax.random.split(jax.random.key(1), 4)]
    assert len({float(arm.l1) for arm in arms}) == 4
    nominal = ArmParams()
    col = {name: fields[:, RANDOMIZABLE.index(name)] for name in ("m2", "friction1", "l1")}
    m2, f1, l1 = col["m2"] / nominal.m2, col["friction1"], col["l1"] / nominal.l1
    for values, low, high in ((m2, 0.8, 1.2), (f1, 0.0, 0.2), (l1, 0.9, 1.1)):
        width = high - low
        assert values.min() >= low and values.max() <= high
        assert values.min() < low + 0.01 * width and values.max() > high - 0.01 * width
        assert abs(values.mean() - (low + high) / 2) < 5 * width / math.sqrt(12 * n)
        assert abs(values.std() / (width / math.sqrt(12)) - 1.0) < 0.03
    assert abs(np.corrcoef(m2, f1)[0, 1]) < 0.04
    # an env's episode arm is the arm vector of its drawn fields
    for arm in arms:
        drawn = nominal.replace(
            m2=float(arm.b) / (float(arm.l1) * nominal.lc2),
            friction1=float(arm.f1),
            l1=float(arm.l1),
        )
        assert np.max(np.abs(np.array(arm) - arm_vector(drawn))) <= 1e-14


def test_push_arm_is_the_compiled_push_of_the_same_draws(x64: Any) -> None:
    """``push_arm``'s three uniforms decide as the compiled model's: push or keep, to 1e-12."""
    from twolink_gym.tasks.push import push, push_target

    params = realaigym_arm()
    _, env_params = tj.make(
        "TwoLink-v0", task="swingup", actuation="acrobot", params=params.to_dict(), push_rate=1.0
    )
    arm = env_params.arm
    x = jnp.asarray([-1.2, 0.7, 3.0, -8.0])
    keys = jax.random.split(jax.random.key(3), 12)
    run = jax.jit(lambda k: ji.push_arm(k, x, arm, jnp.asarray(0.5)))
    kinds = set()
    for key in keys:
        pushed_x, pushed = run(key)
        u = np.asarray(jax.random.uniform(key, (3,), jnp.float64))
        expected = push(params, np.asarray(x), push_target(u[1:])) if u[0] < 0.5 else np.asarray(x)
        assert bool(pushed) is bool(u[0] < 0.5)
        np.testing.assert_allclose(np.asarray(pushed_x), expected, rtol=0, atol=TOL)
        kinds.add(bool(pushed))
    assert kinds == {True, False}


def test_pushes_in_the_env_step_and_at_the_declared_rate(x64: Any) -> None:
    """A step of an env with pushes is the ideal env's step from ``push_arm``'s state; the rate."""
    settings = {"task": "swingup", "actuation": "acrobot", "dt": 0.01, "substeps": 5}
    env, params = tj.make("TwoLink-v0", push_rate=40.0, **settings)
    ideal, ideal_params = tj.make("TwoLink-v0", **settings)
    _, state = env.reset(jax.random.key(0), params)
    p = 1.0 - math.exp(-40.0 * 0.01)
    assert float(params.models.push_probability) == pytest.approx(p, rel=1e-15)
    action = jnp.asarray([0.3])
    step = jax.jit(env.step_env)
    kinds = set()
    for key in jax.random.split(jax.random.key(1), 8):
        # pushes are the only drawing model: the step's key is the push's own
        start, pushed = ji.push_arm(key, state.x, state.arm, params.models.push_probability)
        _, after, _, _, info = step(key, state, action, params)
        _, ref, *_ = ideal.step_env(key, state.replace(x=start), action, ideal_params)
        assert bool(info["pushed"]) is bool(pushed)
        np.testing.assert_allclose(np.asarray(after.x), np.asarray(ref.x), rtol=0, atol=TOL)
        kinds.add(bool(pushed))
        state = after
    assert kinds == {True, False}
    # the share of pushed steps over many keys: 1 - exp(-rate dt) within 5 binomial sigmas
    _, state = env.reset(jax.random.key(2), params)
    n = 4000
    flags = jax.jit(jax.vmap(lambda k: env.step_env(k, state, action, params)[4]["pushed"]))(
        jax.random.split(jax.random.key(4), n)
    )
    assert abs(float(np.mean(np.asarray(flags))) - p) < 5 * math.sqrt(p * (1 - p) / n)
    assert "pushed" not in ideal.step_env(key, state, action, ideal_params)[4]
