"""The functional JAX twin of the two-link arm (gymnax's interface; ``pip install twolink-gym[jax]``).

``env, params = twolink_gym.jax.make(env_id, **env_kwargs)`` for every
registered id, with the keywords of ``gym.make``; then, jitted and vmapped as
one likes::

    import jax
    import twolink_gym.jax

    env, params = twolink_gym.jax.make("TwoLinkBalance-v0")
    obs, state = env.reset(jax.random.key(0), params)
    obs, state, reward, done, info = env.step(jax.random.key(1), state, action, params)

The dynamics (:mod:`twolink_gym.jax.dynamics`) and each task's kernel
(:mod:`twolink_gym.jax.tasks`) are the compiled env's formulas, held equal to
it by ``tests/test_jax_equivalence.py`` (under ``jax_enable_x64``, to 1e-12).
``import twolink_gym`` does not import this subpackage (nor JAX).
"""

from __future__ import annotations

from twolink_gym.jax.env import TwoLinkJaxEnv, make
from twolink_gym.jax.params import NO_LIMIT, EnvParams, EnvState
from twolink_gym.jax.render import render, to_numpy
from twolink_gym.jax.tasks import TWINS, TaskTwin, register_twin, twin_for

__all__ = [
    "NO_LIMIT",
    "TWINS",
    "EnvParams",
    "EnvState",
    "TaskTwin",
    "TwoLinkJaxEnv",
    "make",
    "register_twin",
    "render",
    "to_numpy",
    "twin_for",
]
