"""The task interface: what differs between reach, balance, ... (batched)."""

from __future__ import annotations

import abc
import dataclasses
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
from numba import types
from numpy.typing import ArrayLike, NDArray

from twolink_gym._jit import bound_kernel, kernel, sincos
from twolink_gym.dynamics import arm_vectors
from twolink_gym.kinematics import tip_from_trig
from twolink_gym.params import ArmParams

__all__ = [
    "DEFAULT_MAX_TORQUE",
    "DISTANCE",
    "OUT_SIZE",
    "REWARD",
    "SUCCESS",
    "TASK_KERNEL_SIGNATURE",
    "TERMINATED",
    "TIP_X",
    "TIP_Y",
    "Evaluation",
    "Task",
    "evaluate_one",
    "evaluation_loop",
    "goal_batch",
    "perturbed_state",
    "task_kernel",
]

Array = NDArray[np.float64]

_F8 = types.float64
_ROW = types.Array(types.float64, 1, "C")
#: The signature every task kernel is compiled for::
#:
#:     (arm, options, t, q1, q2, dq1, dq2, c1, s1, c12, s12, a1, a2, goal, terms, extras)
#:         -> (reward, terminated, success, distance)
#:
#: ``arm`` (9,) is the arm vector (:data:`twolink_gym.dynamics.ARM_VECTOR_FIELDS`),
#: ``options`` the task's options vector (:meth:`Task.kernel_options`),
#: ``t`` the episode time of the state [s] (0 at reset, ``k·dt`` after ``k``
#: steps; only time-varying tasks such as ``track`` read it),
#: ``q1 … dq2`` the state [rad, rad/s], ``c1 = cos q1``, ``s12 = sin(q1 + q2)``,
#: etc., ``a1, a2`` the applied normalised action in ``[-1, 1]``, ``goal`` the
#: episode's goal ``(goal_size,)``. The kernel writes the reward's terms into
#: ``terms`` ``(len(term_names),)`` and the observation extras into ``extras``
#: ``(extras_size,)``, and returns the reward, whether the episode terminates,
#: whether it is in its success condition, and the task's distance to its goal.
TASK_KERNEL_SIGNATURE = types.Tuple((_F8, types.boolean, types.boolean, _F8))(
    _ROW, _ROW, *([_F8] * 11), _ROW, _ROW, _ROW
)

#: Default torque limits [N·m] of a task (:attr:`Task.default_max_torque`): 1.5x
#: and 2x the largest static gravity torques of the default arm (19.62 and
#: 4.905 N·m), so any static pose can be held.
DEFAULT_MAX_TORQUE = (30.0, 10.0)

# columns of an outcome row (``out`` of the step kernel)
REWARD, DISTANCE, TIP_X, TIP_Y, TERMINATED, SUCCESS = range(6)
OUT_SIZE = 6


def task_kernel(fn: Callable[..., Any]) -> Any:
    """Compile a task kernel for :data:`TASK_KERNEL_SIGNATURE` (a decorator).

    Everything a task computes per step goes into this one function, written
    component-wise on floats; the single env, the vector env and the batched
    :meth:`Task.evaluate` all run it.
    """
    return kernel(TASK_KERNEL_SIGNATURE, inline=True)(fn)


@kernel(cache=False, inline=True)
def evaluate_one(
    task_kernel: Any,
    arm: Array,
    options: Array,
    t: float,
    q1: float,
    q2: float,
    dq1: float,
    dq2: float,
    a1: float,
    a2: float,
    goal: Array,
    out: Array,
    terms: Array,
    extras: Array,
) -> tuple[float, float, float, float]:
    """Run a task kernel on one arm at episode time ``t`` [s] and fill its outcome row ``out``.

    ``out``'s columns are the module's column constants.

    Returns
    -------
    tuple of 4 floats
        ``(cos q1, sin q1, cos q2, sin q2)``, for the observation.
    """
    s1, c1 = sincos(q1)
    s2, c2 = sincos(q2)
    c12 = c1 * c2 - s1 * s2
    s12 = s1 * c2 + c1 * s2
    reward, terminated, success, distance = task_kernel(
        arm, options, t, q1, q2, dq1, dq2, c1, s1, c12, s12, a1, a2, goal, terms, extras
    )
    tip_x, tip_y = tip_from_trig(arm, c1, s1, c12, s12)
    out[REWARD] = reward
    out[DISTANCE] = distance
    out[TIP_X] = tip_x
    out[TIP_Y] = tip_y
    out[TERMINATED] = 1.0 if terminated else 0.0
    out[SUCCESS] = 1.0 if success else 0.0
    return c1, s1, c2, s2


def _evaluation_template(
    arms: Array,
    options: Array,
    times: Array,
    state: Array,
    action: Array,
    goal: Array,
    out: Array,
    terms: Array,
    extras: Array,
) -> None:
    """:func:`evaluate_one` over a batch; ``task_kernel`` is bound by :func:`evaluation_loop`."""
    for i in range(state.shape[0]):
        x = state[i]
        evaluate_one(
            task_kernel,  # in each compiled copy: the bound task kernel, not the decorator
            arms[i],
            options,
            times[i],
            x[0],
            x[1],
            x[2],
            x[3],
            action[i, 0],
            action[i, 1],
            goal[i],
            out[i],
            terms[i],
            extras[i],
        )


@functools.cache
def evaluation_loop(task_kernel: Any) -> Any:
    """The compiled loop of :func:`evaluate_one` over a batch, for one task kernel (memoised).

    ``loop(arms (n, 9), options (k,), times (n,), state (n, 4), action (n, 2),
    goal (n, g), out (n, 6), terms (n, t), extras (n, e))``: a copy of one
    template with ``task_kernel`` bound as a global
    (:func:`twolink_gym._jit.bound_kernel`), compiled on first use and cached on disk.
    """
    return bound_kernel(_evaluation_template, {"task_kernel": task_kernel})


def goal_batch(value: Any, key: str, size: int, n: int) -> Array:
    """Goal or state vectors from a reset option: shape ``(size,)`` for all ``n`` or ``(n, size)``.

    Returns a new ``(n, size)`` array.

    Raises
    ------
    ValueError
        Naming ``options[key]`` if the shape is wrong or an entry is not finite.
    """
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"options[{key!r}] must be numeric, got {value!r}") from exc
    if arr.shape == (size,):
        arr = np.broadcast_to(arr, (n, size))
    if arr.shape != (n, size):
        raise ValueError(
            f"options[{key!r}] must have shape ({size},) or ({n}, {size}), got {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"options[{key!r}] must be finite, got {arr.tolist()}")
    return arr.copy()


def perturbed_state(
    rng: np.random.Generator, centre: Any, angle_noise: float, speed_noise: float
) -> Array:
    """``centre`` ``[q1, q2, dq1, dq2]`` plus U(±angle_noise) per angle and U(±speed_noise) per speed.

    The episode start of the tasks that begin at an equilibrium (reach and
    swing-up near hanging, balance near upright); one draw of 4 uniforms from ``rng``.
    """
    noise = rng.uniform(-1.0, 1.0, size=4)
    scale = np.array([angle_noise, angle_noise, speed_noise, speed_noise])
    return np.asarray(centre, dtype=np.float64) + noise * scale


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """A task's verdict on a batch of states (all leading axis ``n``).

    Attributes
    ----------
    reward : ndarray, shape (n,)
    terms : dict of str to ndarray, shape (n,)
        The reward's reported terms (:meth:`Task.reported_terms`).
    terminated, success : ndarray of bool, shape (n,)
    distance : ndarray, shape (n,)
        The task's distance to its goal (m for reach, rad for balance).
    tip : ndarray, shape (n, 2)
        Tip positions [m].
    extras : ndarray, shape (n, extras_size)
        The observation extras.
    """

    reward: Array
    terms: dict[str, Array]
    terminated: NDArray[np.bool_]
    success: NDArray[np.bool_]
    distance: Array
    tip: Array
    extras: Array


@dataclasses.dataclass(frozen=True)
class Task(abc.ABC):
    """A task: episode initialisation, observation extras, reward, termination, success.

    A task is a small frozen dataclass whose fields are its options (reward
    weights, tolerances, initial perturbation sizes), plus one compiled *task
    kernel* (:func:`task_kernel`, :data:`TASK_KERNEL_SIGNATURE`) that computes
    everything per step: the reward and its terms, termination, success, the
    distance to the goal and the observation extras. The step kernel
    (:mod:`twolink_gym.kernel`) calls it for every arm of the single and the
    vector env; :meth:`evaluate` runs it on a batch of states. The sampling of
    episode starts and the spaces are plain Python.

    The *goal* of an episode is a float vector of length :attr:`goal_size`
    (the target tip position for reach; empty for balance), drawn at reset.

    Attributes
    ----------
    name : str
        The registered name (``"reach"``, ``"balance"``).
    episode_seconds : float
        Default episode length [s]; the env turns it into ``max_episode_steps``.
    default_max_torque : tuple of 2 floats
        The torque limits [N·m] an env of this task gets when made without
        ``max_torque`` (:data:`DEFAULT_MAX_TORQUE` unless the task sets its own),
        for the full arm; read them through :meth:`default_max_torque_for`.
    actuation_max_torque : mapping of str to tuple of 2 floats
        Default limits [N·m] of the actuations (keys of
        :data:`~twolink_gym.simulation.ACTUATIONS`) whose default differs from
        ``default_max_torque`` (empty unless the task sets it).
    goal_size : int
        Length of the goal vector.
    extras_size : int
        Number of task-specific observation entries appended to the state
        encoding.
    term_names : tuple of str
        The reward terms the kernel writes, in order.
    option_names : tuple of str
        The fields, in order, of the options vector the kernel reads
        (:meth:`kernel_options`; bools become 0.0 or 1.0).
    episode_option_names : tuple of str
        The options that only shape the episodes the task draws (the spread
        of the start states, the range of goals), not the observation, the
        reward, the success test or the episode length: an agent trained with
        other values of them acts on the same env (so the evaluation commands
        run it on the common episode set; ``EnvConfig.nominal`` in training).
    kernel : compiled function
        The task kernel (a class attribute: ``kernel = staticmethod(my_kernel)``).
    """

    name: ClassVar[str]
    episode_seconds: ClassVar[float]
    default_max_torque: ClassVar[tuple[float, float]] = DEFAULT_MAX_TORQUE
    actuation_max_torque: ClassVar[Mapping[str, tuple[float, float]]] = MappingProxyType({})
    goal_size: ClassVar[int]
    extras_size: ClassVar[int]
    term_names: ClassVar[tuple[str, ...]]
    option_names: ClassVar[tuple[str, ...]]
    episode_option_names: ClassVar[tuple[str, ...]] = ("init_angle_noise", "init_speed_noise")
    kernel: ClassVar[Any]

    @classmethod
    def default_max_torque_for(cls, actuation: str = "full") -> tuple[float, float]:
        """The torque limits [N·m] an env of this task and ``actuation`` gets by default.

        The one place that maps (task, actuation) to the default limits: the
        envs, the controllers and the training config call it when
        ``max_torque`` is ``None``.

        Parameters
        ----------
        actuation : str
            A key of :data:`~twolink_gym.simulation.ACTUATIONS` (checked by the caller).

        Returns
        -------
        tuple of 2 floats
            ``actuation_max_torque[actuation]`` if the task sets it, else
            ``default_max_torque``; for an underactuated arm only the motor
            joint's entry is used.
        """
        return cls.actuation_max_torque.get(actuation, cls.default_max_torque)

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

    def check_positive(self, *names: str) -> None:
        """Raise ``ValueError`` naming the task and the option unless each option is ``> 0``."""
        for name in names:
            value = getattr(self, name)
            if not value > 0:
                raise ValueError(f"{self.name} task option {name} must be > 0, got {value!r}")

    def check_in_range(self, names: tuple[str, ...], low: float, high: float = math.inf) -> None:
        """Raise ``ValueError`` naming the task and the option unless each lies in ``[low, high]``."""
        for name in names:
            value = getattr(self, name)
            if not low <= value <= high:
                text = f"be >= {low:g}" if high == math.inf else f"lie in [{low:g}, {high:g}]"
                raise ValueError(f"{self.name} task option {name} must {text}, got {value!r}")

    # -- episodes --------------------------------------------------------
    @abc.abstractmethod
    def sample_initial_state(self, rng: np.random.Generator, params: ArmParams) -> Array:
        """Draw one initial state ``[q1, q2, dq1, dq2]``, shape ``(4,)``."""

    @abc.abstractmethod
    def sample_goal(self, rng: np.random.Generator, params: ArmParams) -> Array:
        """Draw one goal, shape ``(goal_size,)``."""

    def validate_goal(self, params: ArmParams, goal: Array) -> None:  # noqa: B027
        """Raise ``ValueError`` if a user-given goal (shape ``(n, goal_size)``) is invalid."""

    def sample_episode(
        self, rng: np.random.Generator, params: ArmParams, goal: Array | None = None
    ) -> tuple[Array, Array]:
        """One episode start: the initial state ``(4,)`` and the goal ``(goal_size,)``.

        The default draws the state, then the goal (:meth:`sample_initial_state`,
        :meth:`sample_goal`), and replaces the goal by ``goal`` if one is given
        (after drawing it, so the generator advances as without it). A task whose
        start depends on its goal (``track`` starts on its path) overrides this.
        """
        state = self.sample_initial_state(rng, params)
        drawn = self.sample_goal(rng, params)
        return state, (drawn if goal is None else np.asarray(goal, dtype=np.float64))

    #: The ``reset`` option that sets the goal in the task's own terms (reach:
    #: ``"target"``, a tip position; track: ``"path"``), or ``None``.
    goal_option: ClassVar[str | None] = None

    def goals_from_option(self, value: Any, n: int, params: Sequence[ArmParams]) -> Array:
        """Goals ``(n, goal_size)`` of ``n`` episodes from the :attr:`goal_option` value.

        The default reads goal vectors: shape ``(goal_size,)`` for every episode
        or ``(n, goal_size)``, finite, then :meth:`validate_goal` per arm.

        Raises
        ------
        ValueError
            Naming ``options[goal_option]``.
        """
        return self.goal_vectors(value, n, params, self.goal_option or "goal")

    def goal_vectors(
        self, value: Any, n: int, params: Sequence[ArmParams], key: str = "goal"
    ) -> Array:
        """Goal vectors ``(n, goal_size)`` from ``options[key]``, checked by :meth:`validate_goal`.

        ``value`` has shape ``(goal_size,)`` (every episode) or ``(n, goal_size)``
        and is finite (the ``"goal"`` reset option of every task with a goal).

        Raises
        ------
        ValueError
            Naming ``options[key]``.
        """
        goals = goal_batch(value, key, self.goal_size, n)
        for arm in dict.fromkeys(params):
            mine = np.array([a == arm for a in params])
            self.validate_goal(arm, goals[mine])
        return goals

    def goal_info(self, goal: Array, extras: Array) -> dict[str, Array]:
        """The goal's entries of ``info``, from goals ``(n, goal_size)`` and extras ``(n, e)``.

        Default: ``{"target": goal}`` (a copy) if the task has a goal, else nothing.
        """
        return {"target": goal.copy()} if self.goal_size else {}

    def goal_from_extras(self, extras: Array) -> Array:
        """The goal an observation shows, from its extras ``(..., extras_size)``.

        By default the first ``goal_size`` extras (reach: the target); a task
        whose goal is not observed whole (``track``) returns what is observed of it.
        """
        return extras[..., : self.goal_size]

    # -- observation -----------------------------------------------------
    @abc.abstractmethod
    def extras_bounds(self, params: ArmParams) -> tuple[Array, Array]:
        """Finite lower and upper bounds of the observation extras, each ``(extras_size,)``."""

    def extras_names(self) -> tuple[str, ...]:
        """Names of the observation extras (for documentation and decoding)."""
        return ()

    # -- the kernel ------------------------------------------------------
    def kernel_options(self) -> Array:
        """The options vector the task kernel reads: :attr:`option_names` as floats, shape ``(k,)``."""
        return np.array([float(getattr(self, name)) for name in self.option_names])

    def reported_terms(self) -> tuple[str, ...]:
        """The reward terms reported in ``info`` (default: all of :attr:`term_names`)."""
        return self.term_names

    @functools.cached_property
    def reported_columns(self) -> tuple[tuple[str, int], ...]:
        """``(name, column of the kernel's terms)`` of each reported term, in order."""
        return tuple((name, self.term_names.index(name)) for name in self.reported_terms())

    def evaluate(
        self,
        params: ArmParams,
        state: Array,
        goal: Array,
        action: Array | None = None,
        time: ArrayLike | None = None,
    ) -> Evaluation:
        """Run the task kernel on a batch of states (the kernel's batched form).

        Parameters
        ----------
        params : ArmParams
        state : ndarray, shape (n, 4)
            ``[q1, q2, dq1, dq2]``, the state after the step.
        goal : ndarray, shape (n, goal_size)
            Copied: a task that keeps running statistics in its goal (``track``)
            does not change the caller's array.
        action : ndarray, shape (n, 2), optional
            The applied normalised action in ``[-1, 1]`` (default zero).
        time : float or array_like, shape (n,), optional
            Episode times of the states [s] (default 0, an episode's start).
        """
        state = np.ascontiguousarray(state, dtype=np.float64)
        n = state.shape[0]
        if action is None:
            action = np.zeros((n, 2))
        times = np.ascontiguousarray(
            np.broadcast_to(np.asarray(0.0 if time is None else time, dtype=np.float64), (n,))
        )
        out = np.empty((n, OUT_SIZE))
        terms = np.empty((n, len(self.term_names)))
        extras = np.empty((n, self.extras_size))
        evaluation_loop(self.kernel)(
            arm_vectors(params, n),
            self.kernel_options(),
            times,
            state,
            np.ascontiguousarray(action, dtype=np.float64),
            np.array(goal, dtype=np.float64).reshape(n, self.goal_size),
            out,
            terms,
            extras,
        )
        return self.evaluation(out, terms, extras)

    def evaluation(self, out: Array, terms: Array, extras: Array) -> Evaluation:
        """Wrap the kernel's output arrays ``(n, OUT_SIZE)``, ``(n, t)``, ``(n, e)`` (copies)."""
        return Evaluation(
            reward=out[:, REWARD].copy(),
            terms={name: terms[:, j].copy() for name, j in self.reported_columns},
            terminated=out[:, TERMINATED] != 0.0,
            success=out[:, SUCCESS] != 0.0,
            distance=out[:, DISTANCE].copy(),
            tip=out[:, TIP_X : TIP_Y + 1].copy(),
            extras=extras.copy(),
        )

    def options(self) -> dict[str, Any]:
        """The task's options as a JSON-friendly dict."""
        return dataclasses.asdict(self)
