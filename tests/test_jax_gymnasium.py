"""The Gymnasium adapters of the JAX twin: the env checker, the twin's steps, the vector env.

References: Gymnasium's own ``check_env``; the twin's ``reset_env`` /
``step_env`` called with the keys Gymnasium's ``FunctionalJaxEnv`` derives
from the seed; the episode bookkeeping a vector env must keep (every copy
advances one step per step, a finished copy starts again at step 0).
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("array_api_compat")  # Gymnasium's JaxToNumpy, which check_env applies
jnp = jax.numpy

from gymnasium.utils.env_checker import check_env  # noqa: E402

from twolink_gym.jax.gymnasium import (  # noqa: E402
    make_gymnasium_env,
    make_gymnasium_vector_env,
)

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")


@pytest.fixture(scope="module")
def balance() -> Any:
    """One Gymnasium env over the balance twin, 6 steps an episode (compiled once)."""
    return make_gymnasium_env("TwoLinkBalance-v0", render_mode="rgb_array", max_episode_steps=6)


def test_the_functional_env_passes_gymnasiums_env_checker(balance: Any) -> None:
    env = balance
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    # the one a functional env cannot avoid: no spec to make other render modes from
    messages = [str(w.message) for w in caught]
    assert all("not having a spec" in m for m in messages), messages
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3


def test_the_gymnasium_env_steps_the_twin(balance: Any) -> None:
    """Observations, rewards and info of the twin's own functions, with Gymnasium's keys; the time limit."""
    env = balance
    func = env.unwrapped.func_env
    twin, params = func.env, func.get_default_params()
    obs, info = env.reset(seed=4)
    assert info == {}
    key, rest = jax.random.split(jax.random.PRNGKey(4))
    reset, step = jax.jit(twin.reset_env), jax.jit(twin.step_env)
    obs_t, state = reset(key, params)
    # one float32 rounding apart at most: the same functions, compiled in other fusions
    np.testing.assert_allclose(np.asarray(obs), np.asarray(obs_t), rtol=1e-6, atol=1e-7)
    assert env.observation_space.contains(np.asarray(obs))
    rng = np.random.default_rng(0)
    for k in range(6):
        action = rng.uniform(-1, 1, 2).astype(np.float32)
        obs, reward, terminated, truncated, info = env.step(action)
        key, rest = jax.random.split(rest)
        obs_t, state, reward_t, _, info_t = step(key, state, jnp.asarray(action), params)
        np.testing.assert_allclose(np.asarray(obs), np.asarray(obs_t), rtol=1e-6, atol=1e-7)
        assert abs(reward - float(reward_t)) <= 1e-6
        assert terminated == bool(info_t["terminated"])
        np.testing.assert_allclose(np.asarray(info["state"]), np.asarray(info_t["state"]), 1e-6)
        assert truncated == (k == 5)


def test_the_vector_env_advances_every_copy_and_restarts_finished_ones() -> None:
    """Falling balance copies end at different steps; the others still advance on those steps."""
    n = 16
    env = make_gymnasium_vector_env("TwoLinkBalance-v0", n, max_episode_steps=40)
    func = env.func_env
    obs, _ = env.reset(seed=0)
    assert obs.shape == (n, 6) and obs.dtype == jnp.float32
    steps = np.zeros(n, dtype=int)
    done = np.zeros(n, dtype=bool)
    ended = 0
    rng = np.random.default_rng(1)
    for _ in range(60):
        action = np.sign(rng.uniform(-1, 1, (n, 2))).astype(np.float32)
        obs, reward, terminated, truncated, _ = env.step(action)
        state = func.unpack(env.state)["state"]
        # a copy that ended at the last step restarts (step 0, reward 0); the others advance
        steps = np.where(done, 0, steps + 1)
        np.testing.assert_array_equal(np.asarray(state.steps), steps)
        assert np.all(np.asarray(reward)[done] == 0.0)
        assert np.all(np.asarray(obs) >= env.single_observation_space.low)
        done = np.asarray(terminated) | np.asarray(truncated)
        assert not np.any(done & (steps == 0))
        ended += int(done.sum())
        partial = done.any() and not done.all()
        if partial and ended > n:
            break
    assert ended > n, "the copies should end at different steps"
