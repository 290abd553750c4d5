"""The task interface: what differs between reach, balance, ... (batched)."""

from __future__ import annotations

import abc
import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numpy.typing import NDArray

from twolink_gym.params import ArmParams

__all__ = ["ARRAY_OPS", "SCALAR_OPS", "ArmFrame", "Ops", "Outcome", "Task"]

Array = NDArray[np.float64]


class Ops(NamedTuple):
    """Elementwise math of one backend of the component-wise fast paths."""

    cos: Callable[[Any], Any]
    sin: Callable[[Any], Any]
    sqrt: Callable[[Any], Any]
    exp: Callable[[Any], Any]
    maximum: Callable[[Any, Any], Any]


def _exp_scalar(x: float) -> float:
    # numpy's exp (not math.exp, which differs in the last bit) so that the
    # scalar and the batched fast paths agree bit for bit
    return float(np.exp(x))


# The two backends give bit-identical results where numpy's float64 cos/sin call
# the C library like math.cos/sin (checked on Linux x86-64 with numpy 2.x; sqrt
# is correctly rounded everywhere), so the single env and the vector env produce
# identical numbers. Vector lengths are sqrt(x² + y²) rather than hypot, whose
# Python and numpy versions differ in the last bit.
#: Python floats (the single env's scalar path).
SCALAR_OPS = Ops(math.cos, math.sin, math.sqrt, _exp_scalar, max)
#: numpy arrays of shape ``(n,)`` (the vector env's batched path).
ARRAY_OPS = Ops(np.cos, np.sin, np.sqrt, np.exp, np.maximum)


class ArmFrame(NamedTuple):
    """The arrival state and its kinematics, component-wise, computed once per step.

    Every field is a Python float (scalar path) or an ndarray of shape ``(n,)``
    (batched path). ``c1 = cos q1``, ``s12 = sin(q1 + q2)``, etc.; ``tip_x``,
    ``tip_y`` is the tip position [m].
    """

    q1: Any
    q2: Any
    dq1: Any
    dq2: Any
    c1: Any
    s1: Any
    c2: Any
    s2: Any
    c12: Any
    s12: Any
    tip_x: Any
    tip_y: Any


class Outcome(NamedTuple):
    """What :meth:`Task.outcome` returns (floats, or arrays of shape ``(n,)``).

    ``terms`` maps the reward's term names to values; ``extras`` is the tuple of
    observation extras (length ``extras_size``); ``terminated`` may be the
    Python bool ``False`` for a task that never terminates.
    """

    reward: Any
    terms: dict[str, Any]
    terminated: Any
    success: Any
    distance: Any
    extras: tuple[Any, ...]


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

    def __post_init__(self) -> None:
        """Check each option against its declared type (subclasses call this first).

        ``float`` options must be finite real numbers (stored as float), ``bool``
        options ``True`` or ``False``.

        Raises
        ------
        ValueError
            Naming the task, the option and the value.
        """
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.type in ("bool", bool):
                if not isinstance(value, (bool, np.bool_)):
                    raise ValueError(
                        f"{self.name} task option {field.name} must be True or False, got {value!r}"
                    )
                object.__setattr__(self, field.name, bool(value))
            elif field.type in ("float", float):
                if (
                    isinstance(value, (bool, np.bool_))
                    or not isinstance(value, (int, float, np.integer, np.floating))
                    or not math.isfinite(value)
                ):
                    raise ValueError(
                        f"{self.name} task option {field.name} must be a finite number, got {value!r}"
                    )
                object.__setattr__(self, field.name, float(value))

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

    # -- fast path (optional) -------------------------------------------
    def outcome(
        self,
        params: ArmParams,
        ops: Ops,
        frame: ArmFrame,
        goal: Sequence[Any],
        a1: Any,
        a2: Any,
    ) -> Outcome | None:
        """Reward, termination, success, distance and extras in one pass (fast path).

        The component-wise twin of :meth:`reward`, :meth:`terminated`,
        :meth:`is_success`, :meth:`distance` and :meth:`observation_extras`,
        computing each shared quantity once, on Python floats
        (``ops=SCALAR_OPS``) or on arrays of shape ``(n,)`` (``ops=ARRAY_OPS``).
        It must return the same values as those methods up to round-off
        (``tests/test_fast_paths.py`` checks the built-in tasks). The default
        returns ``None``: the environments then use the batched methods.

        Parameters
        ----------
        params : ArmParams
        ops : Ops
            The backend's elementwise functions.
        frame : ArmFrame
            The state after the step and its kinematics.
        goal : sequence
            The goal's ``goal_size`` components.
        a1, a2 : float or ndarray
            The applied normalised action, in ``[-1, 1]``.
        """
        return None

    def options(self) -> dict[str, Any]:
        """The task's options as a JSON-friendly dict."""
        return dataclasses.asdict(self)
