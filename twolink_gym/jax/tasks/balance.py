"""The twin of :class:`twolink_gym.tasks.BalanceTask` (:func:`~twolink_gym.tasks.balance.balance_kernel`)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from twolink_gym.jax.tasks import TaskTwin, register_twin
from twolink_gym.jax.tasks.common import control_factor, named, perturbed_state, upright_terms
from twolink_gym.kernel import Outcome
from twolink_gym.tasks import BalanceTask
from twolink_gym.tasks.balance import BalanceTerms
from twolink_gym.tasks.base import UPRIGHT

__all__ = ["BalanceTwin"]


@register_twin
class BalanceTwin(TaskTwin):
    """Balance upright from a perturbed upright start (see :class:`~twolink_gym.tasks.BalanceTask`)."""

    task_class = BalanceTask

    def sample(self, key: jax.Array, params: Any, arm: Any) -> tuple[jax.Array, jax.Array]:
        """Upright, uniformly perturbed; no goal."""
        e = params.episode
        state = perturbed_state(key, UPRIGHT, e["init_angle_noise"], e["init_speed_noise"])
        return state, jnp.zeros((0,), state.dtype)

    def kernel(
        self, arm: Any, options: Any, x: Any, goal: jax.Array, memory: Any
    ) -> tuple[Outcome, BalanceTerms, Any, jax.Array]:
        """The bounded reward ``upright · ctrl · still``, the fall and success."""
        upright, still, dist, success = upright_terms(x, options)
        ctrl = control_factor(x.a1, x.a2, options.ctrl_weight)
        terms = named(BalanceTerms, reward_upright=upright, reward_ctrl=ctrl, reward_still=still)
        outcome = named(Outcome, upright * ctrl * still, dist > options.fall_angle, success, dist)
        return outcome, terms, memory, jnp.zeros((0,), dist.dtype)
