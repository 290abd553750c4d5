"""The task interface: what differs between reach, balance, ... (batched)."""

from __future__ import annotations

import abc
import dataclasses
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from twolink_gym.params import ArmParams

__all__ = ["Task"]

Array = NDArray[np.float64]


@dataclasses.dataclass(frozen=True)
class Task(abc.ABC):
    """A task: episode initialisation, observation extras, reward, termination, success.

    A task is a small frozen dataclass whose fields are its options (reward
    weights, tolerances, initial perturbation sizes). Every method is pure and
    batched over a leading axis of ``n`` episodes, so the single env and the
    vector env share one code path: the single env calls them with ``n = 1``.

    The *goal* of an episode is a float vector of length :attr:`goal_size`
    (the target tip position for reach; empty for balance), drawn at reset.

    Attributes
    ----------
    name : str
        The registered name (``"reach"``, ``"balance"``).
    episode_seconds : float
        Default episode length [s]; the env turns it into ``max_episode_steps``.
    goal_size : int
        Length of the goal vector.
    extras_size : int
        Number of task-specific observation entries appended to the state
        encoding.
    """

    name: ClassVar[str]
    episode_seconds: ClassVar[float]
    goal_size: ClassVar[int]
    extras_size: ClassVar[int]

    # -- episodes --------------------------------------------------------
    @abc.abstractmethod
    def sample_initial_state(self, rng: np.random.Generator, params: ArmParams) -> Array:
        """Draw one initial state ``[q1, q2, dq1, dq2]``, shape ``(4,)``."""

    @abc.abstractmethod
    def sample_goal(self, rng: np.random.Generator, params: ArmParams) -> Array:
        """Draw one goal, shape ``(goal_size,)``."""

    def validate_goal(self, params: ArmParams, goal: Array) -> None:  # noqa: B027
        """Raise ``ValueError`` if a user-given goal (shape ``(n, goal_size)``) is invalid."""

    # -- observation -----------------------------------------------------
    @abc.abstractmethod
    def observation_extras(self, params: ArmParams, state: Array, goal: Array) -> Array:
        """Task-specific observation entries, shape ``(n, extras_size)``.

        Parameters
        ----------
        params : ArmParams
        state : ndarray, shape (n, 4)
        goal : ndarray, shape (n, goal_size)
        """

    @abc.abstractmethod
    def extras_bounds(self, params: ArmParams) -> tuple[Array, Array]:
        """Finite lower and upper bounds of :meth:`observation_extras`, each ``(extras_size,)``."""

    def extras_names(self) -> tuple[str, ...]:
        """Names of the observation extras (for documentation and decoding)."""
        return ()

    # -- reward, termination, success -----------------------------------
    @abc.abstractmethod
    def reward(
        self, params: ArmParams, state: Array, goal: Array, action: Array
    ) -> tuple[Array, dict[str, Array]]:
        """Reward of arriving in ``state`` after applying ``action``.

        Parameters
        ----------
        params : ArmParams
        state : ndarray, shape (n, 4)
            The state after the step.
        goal : ndarray, shape (n, goal_size)
        action : ndarray, shape (n, 2)
            The normalised action in ``[-1, 1]`` that was applied.

        Returns
        -------
        reward : ndarray, shape (n,)
        terms : dict of str to ndarray, shape (n,)
            The reward's terms, reported in ``info``.
        """

    @abc.abstractmethod
    def distance(self, params: ArmParams, state: Array, goal: Array) -> Array:
        """The task's distance to its goal, shape ``(n,)`` (m for reach, rad for balance)."""

    def terminated(self, params: ArmParams, state: Array, goal: Array) -> NDArray[np.bool_]:
        """Whether each episode has ended in a terminal state, shape ``(n,)``."""
        return np.zeros(state.shape[0], dtype=bool)

    @abc.abstractmethod
    def is_success(self, params: ArmParams, state: Array, goal: Array) -> NDArray[np.bool_]:
        """Whether each episode is in its success condition now, shape ``(n,)``."""

    def options(self) -> dict[str, Any]:
        """The task's options as a JSON-friendly dict."""
        return dataclasses.asdict(self)
