"""Drawing a JAX state with the package's one renderer (:class:`twolink_gym.rendering.ArmRenderer`).

:func:`render` converts one env's :class:`~twolink_gym.jax.params.EnvState`
to numpy once (:func:`to_numpy`) and hands it to the pygame renderer the
compiled envs use, with the env's task (its render items), motors and torque
limits: the same picture as the Gymnasium env's ``render()`` of that state.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from twolink_gym.params import ArmParams

if TYPE_CHECKING:
    from twolink_gym.jax.env import TwoLinkJaxEnv
    from twolink_gym.jax.params import EnvParams, EnvState

__all__ = ["render", "to_numpy"]


def to_numpy(state: EnvState) -> dict[str, Any]:
    """One env's state as numpy float64 arrays and floats (what the renderer draws).

    Returns
    -------
    dict
        ``x`` ``(4,)``, ``goal`` ``(goal_size,)``, ``action`` ``(2,)``, ``time``
        [s], ``reward``, ``l1``, ``l2`` [m] (the episode arm's link lengths).

    Raises
    ------
    ValueError
        If ``state`` is a batch (``x`` not of shape ``(4,)``): index one env first.
    """
    x = np.asarray(state.x, dtype=np.float64)
    if x.shape != (4,):
        raise ValueError(
            f"state must be one env's state (x of shape (4,)), got x of shape {x.shape}; "
            "pick one with jax.tree.map(lambda a: a[i], state)"
        )
    return {
        "x": x,
        "goal": np.asarray(state.goal, dtype=np.float64),
        "action": np.asarray(state.action, dtype=np.float64),
        "time": float(state.time),
        "reward": float(state.reward),
        "l1": float(state.arm.l1),
        "l2": float(state.arm.l2),
    }


def render(
    env: TwoLinkJaxEnv,
    state: EnvState,
    params: EnvParams | None = None,
    render_mode: str = "rgb_array",
) -> NDArray[np.uint8] | None:
    """Draw one env's state: an ``(H, W, 3)`` uint8 frame (``"rgb_array"``), or in a window (``"human"``).

    The renderer is made on the first call (pygame; ``SDL_VIDEODRIVER=dummy``
    for none) and kept on the env; ``env.close_renderer()`` is not needed for
    ``"rgb_array"``. ``params`` gives the torque limits (default: the env's).
    """
    from twolink_gym.rendering import ArmRenderer

    s = to_numpy(state)
    nominal: ArmParams = env.config.checked()["params"]
    arm = nominal
    if (s["l1"], s["l2"]) != (nominal.l1, nominal.l2):
        arm = dataclasses.replace(
            nominal,
            l1=s["l1"],
            l2=s["l2"],
            lc1=min(nominal.lc1, s["l1"]),
            lc2=min(nominal.lc2, s["l2"]),
        )
    max_torque = np.asarray(
        (env.default_params if params is None else params).max_torque, dtype=np.float64
    )
    key = (render_mode, arm, tuple(max_torque))
    cache = getattr(env, "_renderers", None)
    if cache is None:
        cache = {}
        env._renderers = cache
    renderer = cache.get(key)
    if renderer is None:
        fps = max(1, round(1.0 / float(env.config.checked()["dt"])))
        renderer = ArmRenderer(
            arm,
            env.task,
            render_mode=render_mode,
            fps=fps,
            max_torque=max_torque,
            actuated=env.actuated,
        )
        cache[key] = renderer
    return renderer.draw(
        s["x"], s["goal"], time=s["time"], reward=s["reward"], torque=s["action"] * max_torque
    )
