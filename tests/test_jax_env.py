"""The JAX env's interface: make() for every id, gymnax's API (jit, vmap, auto-reset), rejax, rendering.

The dynamics and the tasks are held equal to the compiled env in
``tests/test_jax_equivalence.py``; this file checks the interface around them
against the compiled env (spaces, frames) and against gymnax's and rejax's
own code (the rejax PPO example of docs/jax.md runs here).
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy
pytest.importorskip("gymnax")

import twolink_gym  # noqa: E402
import twolink_gym.jax as tj  # noqa: E402
from twolink_gym.env_config import EnvConfigError  # noqa: E402
from twolink_gym.registration import CONVENIENCE_IDS, ENV_ID, UNDERACTUATED_IDS  # noqa: E402

PACKAGE_IDS = sorted({*CONVENIENCE_IDS.values(), *UNDERACTUATED_IDS.values(), ENV_ID})


def test_import_twolink_gym_imports_no_jax() -> None:
    code = (
        "import sys, twolink_gym, gymnasium as gym; gym.make('TwoLinkBalance-v0').reset(seed=0); "
        "bad = sorted(m for m in ('jax', 'jaxlib', 'flax', 'gymnax', 'rejax', 'twolink_gym.jax') "
        "if m in sys.modules); print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("env_id", PACKAGE_IDS)
def test_make_every_registered_id_has_the_compiled_envs_spaces(env_id: str) -> None:
    compiled = gym.make(env_id)
    env, params = tj.make(env_id)
    obs_space = env.observation_space(params)
    assert obs_space.shape == compiled.observation_space.shape
    np.testing.assert_array_equal(np.asarray(obs_space.low), compiled.observation_space.low)
    np.testing.assert_array_equal(np.asarray(obs_space.high), compiled.observation_space.high)
    act_space = env.action_space(params)
    assert act_space.shape == compiled.action_space.shape
    assert (act_space.low, act_space.high) == (-1.0, 1.0)
    assert params.max_steps_in_episode == compiled.spec.max_episode_steps
    np.testing.assert_array_equal(np.asarray(params.max_torque), compiled.unwrapped.max_torque)
    assert float(params.dt) == pytest.approx(compiled.unwrapped.dt)
    assert params.substeps == compiled.unwrapped.substeps


def test_make_takes_gym_make_keywords() -> None:
    env, params = tj.make("TwoLink-v0", task="balance", dt=0.01, max_episode_steps=-1)
    assert env.task.name == "balance"
    assert float(params.dt) == pytest.approx(0.01)
    assert params.max_steps_in_episode == tj.NO_LIMIT
    env, params = tj.make("TwoLinkReach-v0", max_episode_steps=7, task_options={"tolerance": 0.1})
    assert params.max_steps_in_episode == 7
    assert float(params.options.tolerance) == pytest.approx(0.1)


def test_make_rejects_bad_input_naming_it() -> None:
    with pytest.raises(ValueError, match="env_id must be one of"):
        tj.make("CartPole-v1")
    with pytest.raises(EnvConfigError, match="dt"):
        tj.make("TwoLinkBalance-v0", dt=-1.0)
    with pytest.raises(TypeError, match="unknown env setting"):
        tj.make("TwoLinkBalance-v0", colour="red")
    with pytest.raises(ValueError, match="max_episode_steps"):
        tj.make("TwoLinkBalance-v0", max_episode_steps=0)
    with pytest.raises(ValueError, match="actuation must be 'full' for TwoLinkReach-v0"):
        tj.make("TwoLinkReach-v0", actuation="acrobot")
    env, params = tj.make("TwoLinkBalance-v0")
    with pytest.raises(ValueError, match=r"unknown reset option\(s\) \['target'\]"):
        env.reset_env(jax.random.key(0), params, {"target": jnp.zeros(2)})


def test_reset_draws_the_tasks_episode_starts() -> None:
    """Reach: starts within the perturbation of hanging; targets uniform by area in the annulus."""
    env, params = tj.make("TwoLinkReach-v0")
    keys = jax.random.split(jax.random.key(3), 4000)
    _, state = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(keys, params)
    x, goal = np.asarray(state.x, np.float64), np.asarray(state.goal, np.float64)
    task = env.task
    assert np.all(np.abs(x[:, 0] + np.pi / 2) <= task.init_angle_noise + 1e-6)
    assert np.all(np.abs(x[:, 2:]) <= task.init_speed_noise + 1e-6)
    r = np.hypot(goal[:, 0], goal[:, 1])
    r_min, r_max = task.target_radii(twolink_gym.ArmParams())
    assert r.min() >= r_min - 1e-6 and r.max() <= r_max + 1e-6
    # uniform by area: r² is uniform on [r_min², r_max²] (mean in the middle, 4 sigma)
    u = (r**2 - r_min**2) / (r_max**2 - r_min**2)
    assert abs(u.mean() - 0.5) < 4 * np.sqrt(1 / 12 / len(u))
    assert np.all(np.asarray(state.steps) == 0)


def test_step_jits_vmaps_and_auto_resets_under_x64() -> None:
    """gymnax's auto-reset: done (here truncation after 5 steps) returns a fresh episode.

    Under x64 (gymnax issue 111: mixed integer widths broke ``lax.select``).
    """
    with jax.enable_x64(True):
        env, params = tj.make("TwoLinkBalance-v0", max_episode_steps=5)
        n = 3
        reset = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))
        step = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))
        obs, state = reset(jax.random.split(jax.random.key(0), n), params)
        assert obs.dtype == jnp.float64 and state.steps.dtype == jnp.int32
        for k in range(5):
            keys = jax.random.split(jax.random.key(k + 1), n)
            obs, state, reward, done, info = step(keys, state, jnp.zeros((n, 2)), params)
            assert reward.shape == (n,) and reward.dtype == jnp.float64
        assert bool(jnp.all(done)) and bool(jnp.all(info["truncated"]))
        assert not bool(jnp.any(info["terminated"]))
        np.testing.assert_allclose(np.asarray(info["time"]), 5 * 0.02, rtol=1e-15)
        # the returned state and observation are a new episode's
        assert np.all(np.asarray(state.steps) == 0) and np.all(np.asarray(state.time) == 0)
        x = np.asarray(state.x)
        expected = np.stack(
            [np.cos(x[:, 0]), np.sin(x[:, 0]), np.cos(x[:, 1]), np.sin(x[:, 1]), x[:, 2], x[:, 3]],
            1,
        )
        np.testing.assert_allclose(np.asarray(obs), expected, atol=1e-15)


REJAX_EXAMPLE = """
import jax
from rejax import PPO

import twolink_gym.jax

env, params = twolink_gym.jax.make("TwoLinkBalance-v0")
algo = PPO.create(
    env=env,
    env_params=params,
    total_timesteps=8_192,
    eval_freq=8_192,
    skip_initial_evaluation=True,
    num_envs=16,
    num_steps=128,
    num_epochs=4,
    num_minibatches=8,
    normalize_observations=True,
)
train = jax.jit(algo.train)
train_state, (lengths, returns) = train(jax.random.key(0))
print("mean return of 128 evaluation episodes:", returns.mean())
act = algo.make_act(train_state)  # act(obs, key) -> action, for one observation
"""


def test_rejax_ppo_example_runs() -> None:
    """The example of docs/jax.md: rejax's PPO trains on the env as it stands."""
    namespace: dict[str, Any] = {}
    exec(compile(REJAX_EXAMPLE, "<docs/jax.md example>", "exec"), namespace)
    lengths, returns = namespace["lengths"], namespace["returns"]
    assert returns.shape == (1, 128) and lengths.shape == (1, 128)
    assert bool(jnp.all(jnp.isfinite(returns)))
    # balance rewards lie in [0, 1] per step, episodes at most 500 steps
    assert bool(jnp.all((returns >= 0) & (returns <= lengths + 1e-3)))
    assert bool(jnp.all((lengths >= 1) & (lengths <= 500)))
    obs, _state = namespace["env"].reset(jax.random.key(1), namespace["params"])
    action = namespace["act"](obs, jax.random.key(2))
    assert action.shape == (2,)


def test_docs_page_holds_the_rejax_example() -> None:
    page = os.path.join(os.path.dirname(__file__), os.pardir, "docs", "jax.md")
    with open(page, encoding="utf-8") as f:
        text = f.read()
    assert REJAX_EXAMPLE.strip() in text


@pytest.mark.parametrize(
    ("env_id", "start", "goal"),
    [
        ("TwoLinkReach-v0", [0.3, 0.8, 0.5, -1.0], [0.9, 0.7]),
        ("TwoLinkPendubotSwingup-v0", [1.0, -0.4, 0, 0], None),
    ],
)
def test_render_draws_a_jax_state_as_the_compiled_env_does(
    env_id: str, start: list[float], goal: list[float] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pygame")
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    options: dict[str, Any] = {"state": np.array(start)}
    if goal is not None:
        options["target"] = np.array(goal)
    compiled = gym.make(env_id, render_mode="rgb_array")
    compiled.reset(seed=0, options=options)
    expected = compiled.render()
    compiled.close()
    env, params = tj.make(env_id)
    # the jitted reset with the Gymnasium env's reset options
    _, state = env.reset(jax.random.key(0), params, {k: jnp.asarray(v) for k, v in options.items()})
    np.testing.assert_allclose(np.asarray(state.x), start, atol=1e-7)
    frame = tj.render(env, state, params)
    assert frame is not None and frame.shape == expected.shape and frame.dtype == np.uint8
    assert np.mean(frame != expected) < 1e-3  # the same picture (float32 state: a stray pixel)
    with pytest.raises(ValueError, match="one env's state"):
        tj.render(env, jax.tree.map(lambda a: jnp.stack([a, a]), state), params)


def test_coulomb_terms_are_static_and_follow_the_config() -> None:
    """``EnvParams.coulomb`` is on only for an arm (or a randomisation) with Coulomb friction.

    Off, the dynamics leave the terms out: the same numbers for an arm whose
    coefficients are 0 (exact zeros, as the compiled kernels' Coulomb-free
    variant), different ones for an arm that has them.
    """
    from twolink_gym.jax.dynamics import rk4
    from twolink_gym.jax.params import arm_of
    from twolink_gym.realaigym.arm import arm as realaigym_arm

    assert tj.make("TwoLinkBalance-v0")[1].coulomb is False
    assert tj.make("TwoLinkSwingup-v0", params=realaigym_arm("C.1/1.0"))[1].coulomb is True
    randomized = {"coulomb1": {"absolute": (0.0, 0.1)}}
    assert tj.make("TwoLinkBalance-v0", randomize=randomized)[1].coulomb is True
    assert tj.make("TwoLinkBalance-v0", randomize={"m2": (0.9, 1.1)})[1].coulomb is False
    with jax.enable_x64(True):
        x = (jnp.asarray(0.3), jnp.asarray(-0.2), jnp.asarray(0.7), jnp.asarray(-1.1))
        for params, equal in (
            (twolink_gym.ArmParams(), True),
            (realaigym_arm("C.1/1.0"), False),
        ):
            arm = arm_of(params)
            on = rk4(arm, *x, 0.5, -0.4, 0.02, 2, True)
            off = rk4(arm, *x, 0.5, -0.4, 0.02, 2, False)
            assert bool(np.all(np.asarray(on) == np.asarray(off))) is equal


def test_split_among_splits_a_key_only_among_the_parts_that_draw() -> None:
    from twolink_gym.jax.env import split_among

    key = jax.random.key(7)
    data = jax.random.key_data
    one = split_among(key, (False, True, False))
    assert all((data(k) == data(key)).all() for k in one)
    two = split_among(key, (True, False, True))
    expected = jax.random.split(key, 2)
    assert (data(two[0]) == data(expected[0])).all() and (data(two[2]) == data(expected[1])).all()
    assert not (data(two[0]) == data(two[2])).all()
