"""What a Gymnasium wrapper stack holds, read through public API only (a test helper)."""

from __future__ import annotations

import gymnasium as gym
from gymnasium.wrappers import TimeLimit


def time_limits(env: gym.Env) -> list[int | None]:
    """The lengths of every ``TimeLimit`` in the wrapper stack, outermost first.

    Each ``TimeLimit`` states its length in its own ``spec.max_episode_steps``.
    """
    limits: list[int | None] = []
    e = env
    while isinstance(e, gym.Wrapper):
        if isinstance(e, TimeLimit):
            assert e.spec is not None, "a TimeLimit of an env made without a spec"
            limits.append(e.spec.max_episode_steps)
        e = e.env
    return limits
