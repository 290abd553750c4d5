"""The robustness models of the JAX env (per episode and per step): the hook points.

The JAX env (:class:`twolink_gym.jax.env.TwoLinkJaxEnv`) calls a
:class:`Models` object at four points; :func:`build` makes it from the validated
env settings. This module holds the ideal models (no randomisation, no noise,
ideal motors); :mod:`twolink_gym.jax.imperfections` the compiled env's models.

Hook points (all pure, jittable; ``params.models`` holds their parameters):

``draw_arm(key, params) -> Arm``
    The episode's arm at reset (ideal: ``params.arm``).
``init_actuator(key, params, dtype) -> pytree``
    The actuator model's state at reset (ideal: ``()``).
``actuate(key, command (2,), actuator, params) -> (applied (2,), actuator)``
    The applied normalised action from the command, before the dynamics (ideal: the command).
``push(key, x (4,), arm, params) -> (x (4,), pushed)``
    The state the step starts from: where a push leaves the arm, or ``x``
    itself (ideal: ``x``, never pushed).
``observe(key, obs, params) -> obs``
    The returned observation from the kernel's (ideal: unchanged).
``bounds(low, high) -> (low, high)``
    The observation space's bounds (numpy, float64) from the kernel's.
``info(state) -> dict``
    Extra ``info`` entries (ideal: none).

``Models.draws`` names the hooks that draw random numbers (static): the env
splits a key only among those (and the task's episode draw).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from twolink_gym.env_config import ideal_defaults

__all__ = ["Models", "build"]


class Models:
    """The ideal models (see the module notes)."""

    #: The hooks that draw from their key (``"draw_arm"``, ``"init_actuator"``,
    #: ``"actuate"``, ``"push"``, ``"observe"``); the ideal models draw nothing.
    draws: frozenset[str] = frozenset()

    def params(self, dtype: Any) -> Any:
        """The models' parameters for ``EnvParams.models`` (ideal: ``None``)."""
        return None

    def draw_arm(self, key: jax.Array, params: Any) -> Any:
        """The episode's arm: the nominal one."""
        return params.arm

    def init_actuator(self, key: jax.Array, params: Any, dtype: Any) -> Any:
        """No actuator state."""
        return ()

    def actuate(
        self, key: jax.Array, command: jax.Array, actuator: Any, params: Any
    ) -> tuple[jax.Array, Any]:
        """The command itself."""
        return command, actuator

    def push(
        self, key: jax.Array, x: jax.Array, arm: Any, params: Any
    ) -> tuple[jax.Array, jax.Array]:
        """The state itself, not pushed."""
        return x, jnp.zeros((), bool)

    def observe(self, key: jax.Array, obs: jax.Array, params: Any) -> jax.Array:
        """The kernel's observation itself."""
        return obs

    def bounds(self, low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The kernel's bounds."""
        return low, high

    def info(self, state: Any) -> dict[str, Any]:
        """No entries."""
        return {}


def build(checked: dict[str, Any]) -> Models:
    """The models of validated env settings (:meth:`EnvConfig.checked`).

    The ideal :class:`Models` when no robustness setting is given, else
    :class:`twolink_gym.jax.imperfections.ImperfectModels`.
    """
    ideal = ideal_defaults()
    given = {
        "randomize": checked["randomize"] is not None,
        "obs_noise": checked["obs_noise"] is not None,
        "torque_noise": checked["torque_noise"] != ideal["torque_noise"],
        "torque_response": checked["torque_response"] != ideal["torque_response"],
        "action_delay": checked["action_delay"] != ideal["action_delay"],
        "push_rate": checked["push_rate"] != ideal["push_rate"],
    }
    if any(given.values()) or checked["observation"] != "state":
        from twolink_gym.codec import ACTUATIONS
        from twolink_gym.jax.imperfections import ImperfectModels

        return ImperfectModels(checked, ACTUATIONS[checked["actuation"]])
    return Models()
