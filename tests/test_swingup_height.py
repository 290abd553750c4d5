"""The swing-up reward's height guide stays finite where ``sin(q1 + q2)`` rounds below -1.

The step loops form ``s12 = s1 c2 + c1 s2`` (angle addition), which can round
to ``-1 - ulp`` when link 2 hangs straight down; ``sqrt`` of the negative
product then gave NaN (one NaN reward in a float32 batch of 512 swinging
RealAIGym pendubots within 3,000 steps destroyed a PPO run). The height of a
hanging link 2 is 0 by the formula (``(1 + sin(-pi/2)) / 2``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from twolink_gym.params import ArmParams
from twolink_gym.tasks import SwingupTask


def _hanging_link2(dtype: Any, n: int = 20_000) -> np.ndarray:
    """States with link 2 hanging (q1 + q2 = -pi/2 to rounding), link 1 anywhere."""
    rng = np.random.default_rng(0)
    q1 = (-np.pi / 2 + rng.uniform(-3.0, 3.0, n)).astype(dtype)
    q2 = (-np.pi / 2 - q1).astype(dtype)
    return np.c_[q1, q2, np.zeros((n, 2), dtype)]


def _below_minus_one(x: np.ndarray) -> np.ndarray:
    s1, c1, s2, c2 = np.sin(x[:, 0]), np.cos(x[:, 0]), np.sin(x[:, 1]), np.cos(x[:, 1])
    return s1 * c2 + c1 * s2 < -1.0


def test_compiled_height_is_zero_not_nan_float64() -> None:
    x = _hanging_link2(np.float64)
    assert _below_minus_one(x).any()  # the rounding this test is about occurs
    task = SwingupTask()
    n = len(x)
    ref = task.evaluate(ArmParams(), x, np.zeros((n, 0)), np.zeros((n, 2)), np.zeros(n))
    assert np.isfinite(ref.reward).all()
    assert np.max(np.abs(ref.terms["reward_height"])) <= 1e-7


def test_twin_height_is_zero_not_nan_float32() -> None:
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    import twolink_gym.jax as tj
    from twolink_gym.kernel import Step
    from twolink_gym.tasks.swingup import SwingupMemory

    x = _hanging_link2(np.float32)
    env, params = tj.make("TwoLinkPendubotSwingup-v0")

    def one(x: Any) -> Any:
        s1, c1, s2, c2 = jnp.sin(x[0]), jnp.cos(x[0]), jnp.sin(x[1]), jnp.cos(x[1])
        s12, c12 = s1 * c2 + c1 * s2, c1 * c2 - s1 * s2  # as the twin's step forms them
        zero = jnp.zeros((), x.dtype)
        step = Step(zero, x[0], x[1], x[2], x[3], c1, s1, c12, s12, zero, zero)
        memory = SwingupMemory(zero, zero, zero)
        outcome, terms, _, _ = env.twin.kernel(params.arm, params.options, step, None, memory)
        return s12, outcome.reward, terms.reward_height

    s12, reward, height = jax.jit(jax.vmap(one))(jnp.asarray(x))
    assert (np.asarray(s12) < -1.0).any()  # the rounding this test is about occurs
    assert np.isfinite(np.asarray(reward)).all()
    assert np.max(np.abs(np.asarray(height))) <= 1e-3
