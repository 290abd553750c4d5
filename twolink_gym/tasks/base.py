"""The task interface: what differs between reach, balance, ... (batched).

A task is a frozen dataclass of options plus one compiled task kernel
(:class:`twolink_gym.kernel.TaskKernel`): it reads the arm, its options and the
step by name and returns its outcome, its reward terms and its episode memory
as named tuples. The render items at the end of this module are what a task
asks the renderer to draw (:meth:`Task.render_items`).
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import math
import typing
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym.dynamics import arm_vectors
from twolink_gym.kernel import (
    Arm,
    NoMemory,
    Outcome,
    Step,
    loop_arrays,
    step_kernels,
    task_kernel,
)
from twolink_gym.params import ArmParams

__all__ = [
    "DEFAULT_MAX_TORQUE",
    "HANGING",
    "UPRIGHT",
    "Arm",
    "Dots",
    "Evaluation",
    "NoMemory",
    "Outcome",
    "Polyline",
    "RenderItem",
    "Step",
    "Target",
    "Task",
    "UprightLine",
    "Wedge",
    "goal_batch",
    "perturbed_state",
    "task_kernel",
]

Array = NDArray[np.float64]

#: Default torque limits [N·m] of a task (:attr:`Task.default_max_torque`): 1.5x
#: and 2x the largest static gravity torques of the default arm (19.62 and
#: 4.905 N·m), so any static pose can be held.
DEFAULT_MAX_TORQUE = (30.0, 10.0)


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


#: The hanging equilibrium ``[q1, q2, dq1, dq2]`` (reach and swing-up start near it).
HANGING = (-math.pi / 2, 0.0, 0.0, 0.0)
#: Both links up, at rest ``[q1, q2, dq1, dq2]`` (balance and swing-up's catch starts).
UPRIGHT = (math.pi / 2, 0.0, 0.0, 0.0)


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
    kernel* (:func:`task_kernel`, signature :class:`~twolink_gym.kernel.TaskKernel`)
    that computes everything per step: the reward and its terms, termination,
    success, the distance to the goal and the observation extras. The kernel
    reads its options by name from :meth:`options_type`, a named tuple built
    from the dataclass fields, and returns its terms as the named tuple
    :attr:`Terms`, whose field names are :attr:`term_names`. The step kernel
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
        Length of the goal vector (default 0: a task without a goal).
    extras_size : int
        Number of task-specific observation entries appended to the state
        encoding (default 0).
    distance_unit : str
        The unit of the task's distance to its goal (``"m"``, ``"rad"``), for
        tables and plots.
    tolerance_option : str or None
        The option that is the task's distance tolerance (the settling time of
        the evaluation counts from the last entry within it), or ``None``.
    goal_conditioned : bool
        Whether the reward can be recomputed for another goal
        (``reward_at_distance`` and ``goal_free_term_names``): what hindsight
        experience replay needs (default ``False``).
    distance_log_axis : bool
        Whether distances are plotted on a log axis (default ``True``; a
        swing-up's tilt falls from pi to its band, which a log axis squeezes).
    success_over_episode : bool
        Whether success is judged on the error over the whole episode (its RMS
        and largest value, ``info["rms_error"]``, ``info["max_error"]``) rather
        than on the final state: tables then show those instead of the final
        distance and the settling time (default ``False``).
    Terms : NamedTuple class
        The reward terms the kernel returns, floats (declare it with
        ``class MyTerms(NamedTuple): reward_x: float``).
    term_names : tuple of str
        ``Terms._fields`` (set from :attr:`Terms` when the class is made).
    Memory : NamedTuple class
        The per-episode memory the kernel reads and returns, floats
        (:class:`~twolink_gym.kernel.NoMemory` unless the task keeps some, as
        track's running error statistics). The core keeps it beside the goal
        and zeroes it at every episode start.
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
    goal_size: ClassVar[int] = 0
    extras_size: ClassVar[int] = 0
    distance_unit: ClassVar[str]
    tolerance_option: ClassVar[str | None] = None
    goal_conditioned: ClassVar[bool] = False
    distance_log_axis: ClassVar[bool] = True
    success_over_episode: ClassVar[bool] = False
    Terms: ClassVar[type]
    term_names: ClassVar[tuple[str, ...]]
    Memory: ClassVar[type] = NoMemory
    episode_option_names: ClassVar[tuple[str, ...]] = ("init_angle_noise", "init_speed_noise")
    kernel: ClassVar[Any]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Derive :attr:`term_names` from the class's :attr:`Terms`."""
        super().__init_subclass__(**kwargs)
        terms = cls.__dict__.get("Terms")
        if terms is not None:
            cls.term_names = tuple(terms._fields)

    @classmethod
    def options_type(cls) -> Any:
        """The named tuple of options the kernel reads (one class per task class, memoised).

        Its fields are the task's dataclass fields of type ``float``, ``int`` or
        ``bool`` that are not :attr:`episode_option_names`, in declaration order.
        """
        return _options_type(cls)

    @property
    def memory_size(self) -> int:
        """Length of the per-episode memory vector (``len(Memory._fields)``)."""
        return len(self.Memory._fields)  # type: ignore[attr-defined]

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

    def sample_goal(self, rng: np.random.Generator, params: ArmParams) -> Array:
        """Draw one goal, shape ``(goal_size,)`` (default: none, for a task without a goal).

        Raises
        ------
        NotImplementedError
            For a task with a goal that does not override it.
        """
        if self.goal_size:
            raise NotImplementedError(f"task {self.name!r} has a goal: define sample_goal")
        return np.zeros(0)

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

        Both arguments are the core's arrays, read only: return new arrays
        (copies), each with leading axis ``n``. Default: ``{"target": goal}``
        (a copy) if the task has a goal, else nothing.
        """
        return {"target": goal.copy()} if self.goal_size else {}

    def goal_from_extras(self, extras: Array) -> Array:
        """The goal an observation shows, from its extras ``(..., extras_size)``.

        By default the first ``goal_size`` extras (reach: the target); a task
        whose goal is not observed whole (``track``) returns what is observed of it.
        """
        return extras[..., : self.goal_size]

    # -- observation -----------------------------------------------------
    def extras_bounds(self, params: ArmParams) -> tuple[Array, Array]:
        """Finite lower and upper bounds of the observation extras, each ``(extras_size,)``.

        Default: empty, for a task without extras.

        Raises
        ------
        NotImplementedError
            For a task with extras that does not override it.
        """
        if self.extras_size:
            raise NotImplementedError(f"task {self.name!r} has extras: define extras_bounds")
        return np.zeros(0), np.zeros(0)

    def extras_names(self) -> tuple[str, ...]:
        """Names of the observation extras (for documentation and decoding)."""
        return ()

    # -- the kernel ------------------------------------------------------
    def kernel_options(self) -> Array:
        """The options vector the loop passes to the kernel: :meth:`options_type`'s fields as floats.

        Shape ``(k,)``; bools become 0.0 or 1.0 (the compiled loop turns the
        vector back into the named tuple).
        """
        return np.array([float(getattr(self, name)) for name in self.options_type()._fields])

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
        memory: Array | None = None,
    ) -> Evaluation:
        """Run the task kernel on a batch of states (the kernel's batched form).

        Parameters
        ----------
        params : ArmParams
        state : ndarray, shape (n, 4)
            ``[q1, q2, dq1, dq2]``, the state after the step.
        goal : ndarray, shape (n, goal_size)
            Read only.
        action : ndarray, shape (n, 2), optional
            The applied normalised action in ``[-1, 1]`` (default zero).
        time : float or array_like, shape (n,), optional
            Episode times of the states [s] (default 0, an episode's start).
        memory : ndarray, shape (n, memory_size), optional
            The episodes' memory before these states (default zeros: a
            task with memory sees each state as its episode's first). Not changed.
        """
        n = np.shape(state)[0]
        arrays = loop_arrays(self, n)
        arrays.arms[:] = arm_vectors(params, n)
        arrays.state[:] = state
        arrays.goal[:] = np.asarray(goal, dtype=np.float64).reshape(n, self.goal_size)
        if action is not None:
            arrays.action[:] = action
        if memory is not None:
            arrays.memory[:] = memory
        arrays.outcome["time"] = 0.0 if time is None else time
        step_kernels(self).observe(*arrays)
        outcome = arrays.outcome
        return Evaluation(
            reward=outcome["reward"].copy(),
            terms={name: arrays.terms[:, j].copy() for name, j in self.reported_columns},
            terminated=outcome["terminated"].copy(),
            success=outcome["success"].copy(),
            distance=outcome["distance"].copy(),
            tip=outcome["tip"].copy(),
            extras=arrays.extras,
        )

    def options(self) -> dict[str, Any]:
        """The task's options as a JSON-friendly dict."""
        return dataclasses.asdict(self)

    # -- drawing -----------------------------------------------------------
    def render_items(
        self, params: ArmParams, state: Array, goal: Array, time: float
    ) -> list[RenderItem]:
        """What the renderer draws of the task's goal in a frame, in drawing order.

        Parameters
        ----------
        params : ArmParams
            The episode's arm.
        state : ndarray, shape (4,)
            ``[q1, q2, dq1, dq2]``.
        goal : ndarray, shape (goal_size,)
        time : float
            Time into the episode [s].

        Returns
        -------
        list of render items
            :class:`Target`, :class:`Polyline`, :class:`Dots`, :class:`Wedge`,
            :class:`UprightLine` (default: nothing).
        """
        return []


@functools.cache
def _options_type(cls: type[Task]) -> Any:
    """The options named tuple of task class ``cls`` (see :meth:`Task.options_type`)."""
    kinds = {"float": float, "int": int, "bool": bool, float: float, int: int, bool: bool}
    fields = [
        (f.name, kinds[f.type])
        for f in dataclasses.fields(cls)
        if f.type in kinds and f.name not in cls.episode_option_names
    ]
    options = typing.NamedTuple(f"{cls.__name__}Options", fields)  # type: ignore[misc]
    options.__module__ = cls.__module__
    options.__qualname__ = f"{cls.__qualname__}.Options"
    return options


# -- what a task asks the renderer to draw (Task.render_items) ------------------
@dataclasses.dataclass(frozen=True)
class Target:
    """A positional goal: a disc of ``radius`` [m] at ``point`` [m], ringed and marked.

    Drawn in the success colour while ``success``; at least ``min_pixels`` wide.
    """

    point: tuple[float, float]
    radius: float
    success: bool
    min_pixels: int = 2


@dataclasses.dataclass(frozen=True)
class Polyline:
    """A path: points ``(k, 2)`` [m] joined by a thin line, under the arm."""

    points: Array


@dataclasses.dataclass(frozen=True)
class Dots:
    """Small discs of ``radius`` [m] (at least ``min_pixels``) at points ``(k, 2)`` [m], in order."""

    points: Array
    radius: float
    min_pixels: int = 2


@dataclasses.dataclass(frozen=True)
class Wedge:
    """The sector of ``±half_angle`` [rad] about the upward vertical at ``apex`` [m].

    ``kind`` ``"zone"`` (the allowed tilts) or ``"band"`` (the success band)
    picks the colour; ``radius`` [m].
    """

    apex: tuple[float, float]
    radius: float
    half_angle: float
    kind: str


@dataclasses.dataclass(frozen=True)
class UprightLine:
    """The dashed upright reference from the base, ``length`` [m] long, over the arm."""

    length: float


RenderItem = Target | Polyline | Dots | Wedge | UprightLine
