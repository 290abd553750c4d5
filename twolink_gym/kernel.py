"""The step kernel: dynamics, RK4, speed limit, task logic and observation, compiled together.

This module holds the interface every task kernel is written against (the
named tuples :class:`Arm`, :class:`Step` and :class:`Outcome`, and
:class:`TaskKernel`, the one statement of its signature) and the one loop that
runs a task kernel over a batch of arms. :func:`step_kernels` compiles three
copies of that loop per task:

``step``
    one control step of every arm on the calling thread: RK4 of the
    equations of motion (:func:`twolink_gym.integrators.rk4`), the speed
    limit, the task kernel and the observation;
``step_parallel``
    the same, with the arms spread over numba's thread pool (``prange``);
``observe``
    the task kernel and the observation of every arm where it is (episode
    starts, and :meth:`Task.evaluate <twolink_gym.tasks.Task.evaluate>`).

The batched core (:mod:`twolink_gym.core`) calls ``step`` with one arm for
the single env and with all copies for the vector env (``step_parallel`` with
threads): the same per-arm machine code, so their trajectories are
bit-identical. It calls the loop through numba's own dispatch, which checks the
type, dimensions and layout of every array at each call. The loop is written
once, as a template that calls the module-level names ``task_kernel_bound``,
``Options`` and ``Memory``; each task gets its own compiled copies with those
names bound to its kernel and its named tuple types
(:func:`twolink_gym._jit.bound_kernel`), built on first use (memoised per
process), compiled on their first call and cached on disk under a key of the
sources they embed.

The loop's arguments are the fields of :data:`LoopArrays`, taken from the
loop's signature (``n`` arms; all C-contiguous; :func:`loop_arrays` allocates
them)::

    arms     (n, 12) float64   per-copy arm vectors (dynamics.ARM_VECTOR_FIELDS)
    config   (5,)   float64    [max_torque1, max_torque2, max_speed, dt, substeps]
    options  (k,)   float64    the task's options vector (Task.kernel_options)
    steps    (n,)   int64      control steps taken in each arm's episode so far;
                               step: each count is advanced by one
    state    (n, 4) float64    [q1, q2, dq1, dq2]; step: read, then overwritten
    action   (n, 2) float64    normalised actions, already clipped to [-1, 1]
    goal     (n, g) float64    read only
    memory   (n, m) float64    the task's per-episode memory (Task.Memory), read and
                               rewritten
    obs      (n, 6 + e) float32   written: [cos q1, sin q1, cos q2, sin q2, dq1, dq2, *extras]
    outcome  (n,) OUTCOME      written: reward, distance, tip (2,) [m], terminated,
                               success; time [s]: step writes the time after the
                               step, steps·dt; observe reads the time of each state
    terms    (n, t) float64    written: the reward's terms (Task.Terms, in field order)
    extras   (n, e) float64    written: the observation extras in float64
"""

from __future__ import annotations

import functools
import inspect
import math
import typing
from typing import Any, NamedTuple, Protocol

import numpy as np
from numba import prange, types
from numba.extending import overload
from numpy.typing import ArrayLike, NDArray

from twolink_gym._jit import bound_kernel, kernel, sincos
from twolink_gym.dynamics import ARM_VECTOR_FIELDS
from twolink_gym.integrators import rk4
from twolink_gym.kinematics import tip_from_trig

__all__ = [
    "OUTCOME",
    "Arm",
    "LoopArrays",
    "NoMemory",
    "Outcome",
    "Step",
    "StepKernels",
    "TaskKernel",
    "clip_actions",
    "from_vector",
    "loop_arrays",
    "step_kernels",
    "task_kernel",
    "to_row",
]

Array = NDArray[np.float64]

#: The record of one arm's outcome (the loop's ``outcome`` array): named fields,
#: read as ``outcome["reward"]`` (a view over the arms).
OUTCOME = np.dtype(
    [
        ("reward", np.float64),
        ("distance", np.float64),
        ("tip", np.float64, (2,)),
        ("terminated", np.bool_),
        ("success", np.bool_),
        ("time", np.float64),
    ]
)

# entries of ``config``
_TORQUE1 = 0
_TORQUE2 = 1
_MAX_SPEED = 2
_DT = 3
_SUBSTEPS = 4
_CONFIG_SIZE = 5


# -- the task kernel's interface ---------------------------------------------
#: The arm as a task kernel reads it: ``arm.l1``, ``arm.l2`` (link lengths [m]) and
#: the other entries of the arm vector (:data:`twolink_gym.dynamics.ARM_VECTOR_FIELDS`).
Arm = NamedTuple("Arm", [(name, float) for name in ARM_VECTOR_FIELDS])  # type: ignore[misc]
Arm.__module__ = __name__


class Step(NamedTuple):
    """The step's inputs to a task kernel: the state after the step and the applied action.

    Attributes
    ----------
    t : float
        Episode time of the state [s] (0 at reset, ``k·dt`` after ``k`` steps).
    q1, q2, dq1, dq2 : float
        The state [rad, rad, rad/s, rad/s].
    c1, s1, c12, s12 : float
        ``cos q1``, ``sin q1``, ``cos(q1 + q2)``, ``sin(q1 + q2)``.
    a1, a2 : float
        The applied normalised action, in ``[-1, 1]``.
    """

    t: float
    q1: float
    q2: float
    dq1: float
    dq2: float
    c1: float
    s1: float
    c12: float
    s12: float
    a1: float
    a2: float


class Outcome(NamedTuple):
    """A task kernel's verdict on one state.

    Attributes
    ----------
    reward : float
    terminated : bool
        The episode ends here (e.g. balance: the arm fell).
    success : bool
        The state meets the task's success condition.
    distance : float
        The task's distance to its goal (m for reach and track, rad for balance).
    """

    reward: float
    terminated: bool
    success: bool
    distance: float


class NoMemory(NamedTuple):
    """The per-episode memory of a task that keeps none (no fields)."""


class TaskKernel(Protocol):
    """The signature of every task kernel (the one place it is written).

    ``kernel(arm, options, x, goal, memory, extras) -> (outcome, terms, memory)``

    Parameters
    ----------
    arm : Arm
        The arm, read by name (``arm.l1``).
    options : Task.Options
        The task's options, read by name (``options.tolerance``): a named
        tuple of the task's numeric dataclass fields that are not episode
        options (:meth:`Task.options_type <twolink_gym.tasks.Task.options_type>`).
    x : Step
        The state after the step, its trigonometry, the time and the action.
    goal : ndarray, shape (goal_size,)
        The episode's goal (read only).
    memory : Task.Memory
        The episode's memory before this step (all zeros at the episode's start).
    extras : ndarray, shape (extras_size,)
        Written: the observation extras, in :meth:`Task.extras_names` order.

    Returns
    -------
    outcome : Outcome
    terms : Task.Terms
        The reward's terms, floats, by name (the field names are ``term_names``).
    memory : Task.Memory
        The episode's memory after this step (return the argument if unchanged).
    """

    def __call__(
        self, arm: Any, options: Any, x: Step, goal: Array, memory: Any, extras: Array
    ) -> tuple[Outcome, Any, Any]:
        """One arm's step (see the class notes)."""
        ...


def task_kernel(fn: Any) -> Any:
    """Compile a task kernel (a decorator; the signature is :class:`TaskKernel`'s).

    Everything a task computes per step goes into this one function, written
    on floats and named tuples; the single env, the vector env and the batched
    :meth:`Task.evaluate <twolink_gym.tasks.Task.evaluate>` all run it.
    """
    return kernel(inline=True)(fn)


def _field_kinds(cls: type) -> list[type]:
    """The Python type (float, int or bool) of each field of a named tuple class."""
    hints = typing.get_type_hints(cls)
    return [hints.get(name, float) for name in cls._fields]  # type: ignore[attr-defined]


def from_vector(cls: Any, vector: Array) -> Any:
    """The named tuple ``cls`` of a float vector: field ``j`` from ``vector[j]``.

    ``bool`` fields are ``vector[j] != 0``, ``int`` fields ``int(vector[j])``,
    the rest floats. Compiled code gets an unrolled constructor per class
    (the class must be a compile-time constant, e.g. a global).
    """
    converted = []
    for kind, value in zip(_field_kinds(cls), vector, strict=False):
        converted.append(value != 0.0 if kind is bool else (int(value) if kind is int else value))
    return cls(*converted)


@overload(from_vector)
def _from_vector_overload(cls, vector):  # type: ignore[no-untyped-def,unused-ignore]  # numba matches names
    if not isinstance(cls, types.NamedTupleClass):
        return None
    items = []
    for j, kind in enumerate(_field_kinds(cls.instance_class)):
        if kind is bool:
            items.append(f"vector[{j}] != 0.0")
        elif kind is int:
            items.append(f"int(vector[{j}])")
        else:
            items.append(f"vector[{j}]")
    source = "def impl(cls, vector):\n    return cls(" + "".join(f"{x}, " for x in items) + ")\n"
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    return namespace["impl"]


def to_row(values: Any, row: Array) -> None:
    """Write the entries of a tuple (a named tuple of floats) into ``row``, in order."""
    for j, value in enumerate(values):
        row[j] = value


@overload(to_row)
def _to_row_overload(values, row):  # type: ignore[no-untyped-def,unused-ignore]  # numba matches names
    if not isinstance(values, types.BaseTuple):
        return None
    body = "".join(f"    row[{j}] = values[{j}]\n" for j in range(len(values))) or "    pass\n"
    namespace: dict[str, Any] = {}
    exec("def impl(values, row):\n" + body, namespace)
    return namespace["impl"]


def _from_row(cls: Any, matrix: Array, i: int) -> Any:
    """``from_vector(cls, matrix[i])``, read entry by entry (compiled: no row view)."""
    return from_vector(cls, matrix[i])


@overload(_from_row)
def _from_row_overload(cls, matrix, i):  # type: ignore[no-untyped-def,unused-ignore]  # numba matches names
    if not isinstance(cls, types.NamedTupleClass):
        return None
    items = []
    for j, kind in enumerate(_field_kinds(cls.instance_class)):
        if kind is bool:
            items.append(f"matrix[i, {j}] != 0.0")
        elif kind is int:
            items.append(f"int(matrix[i, {j}])")
        else:
            items.append(f"matrix[i, {j}]")
    source = "def impl(cls, matrix, i):\n    return cls(" + "".join(f"{x}, " for x in items) + ")\n"
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    return namespace["impl"]


def _to_row_of(values: Any, matrix: Array, i: int) -> None:
    """``to_row(values, matrix[i])``, written entry by entry (compiled: no row view)."""
    to_row(values, matrix[i])


@overload(_to_row_of)
def _to_row_of_overload(values, matrix, i):  # type: ignore[no-untyped-def,unused-ignore]  # numba matches names
    if not isinstance(values, types.BaseTuple):
        return None
    body = (
        "".join(f"    matrix[i, {j}] = values[{j}]\n" for j in range(len(values))) or "    pass\n"
    )
    namespace: dict[str, Any] = {}
    exec("def impl(values, matrix, i):\n" + body, namespace)
    return namespace["impl"]


@kernel()
def clip_actions(actions: NDArray[np.floating[Any]], command: Array) -> bool:
    """Clip ``actions`` ``(n, m)`` to ``[-1, 1]`` into ``command`` ``(n, m)``, if all finite.

    One compiled pass in place of a finiteness check and two numpy clip calls
    (what a small batch's step pays for). Returns ``False``, leaving
    ``command`` untouched, if an entry is NaN or infinite; the same values as
    ``np.minimum(np.maximum(actions, -1), 1)`` otherwise.
    """
    n, m = actions.shape
    for i in range(n):
        for j in range(m):
            if not math.isfinite(actions[i, j]):
                return False
    for i in range(n):
        for j in range(m):
            command[i, j] = min(max(float(actions[i, j]), -1.0), 1.0)
    return True


# -- the loop -----------------------------------------------------------------
#: Bound per copy of the loop (:func:`step_kernels`); never used through these
#: module attributes: the task kernel, the task's options and memory classes,
#: and whether the copy advances the arms (step) or only observes them.
task_kernel_bound: Any = None
Options: Any = None
Memory: Any = None
ADVANCE = True


def _loop_template(
    arms: Array,
    config: Array,
    options: Array,
    steps: NDArray[np.int64],
    state: Array,
    action: Array,
    goal: Array,
    memory: Array,
    obs: NDArray[np.float32],
    outcome: NDArray[np.void],
    terms: Array,
    extras: Array,
) -> None:
    """Every arm of the batch (see the module notes); copies bind the module's globals.

    This signature is the one statement of the loop's arguments:
    :data:`LoopArrays` takes its fields from it. Per arm: (step: RK4, the speed
    limit and the step count,) the task kernel, its outcome and the
    observation. The arrays are read and written by ``[i, j]``, not through row
    views, and the arm is a named tuple of floats: a row view costs two atomic
    reference-count updates in compiled code, and these ran about 25 times per
    arm. Only the task kernel's ``goal`` and ``extras`` are views.
    """
    torque1 = config[_TORQUE1]
    torque2 = config[_TORQUE2]
    limit = config[_MAX_SPEED]
    dt = config[_DT]
    substeps = int(config[_SUBSTEPS])
    # prange is range when compiled without parallel=True
    for i in prange(state.shape[0]):
        arm = _from_row(Arm, arms, i)
        q1, q2, dq1, dq2 = state[i, 0], state[i, 1], state[i, 2], state[i, 3]
        a1, a2 = action[i, 0], action[i, 1]
        verdict = outcome[i]
        if ADVANCE:
            q1, q2, dq1, dq2 = rk4(arm, q1, q2, dq1, dq2, a1 * torque1, a2 * torque2, dt, substeps)
            dq1 = min(max(dq1, -limit), limit)
            dq2 = min(max(dq2, -limit), limit)
            state[i, 0] = q1
            state[i, 1] = q2
            state[i, 2] = dq1
            state[i, 3] = dq2
            steps[i] += 1
            verdict["time"] = steps[i] * dt
        t = verdict["time"]
        s1, c1 = sincos(q1)
        s2, c2 = sincos(q2)
        c12 = c1 * c2 - s1 * s2
        s12 = s1 * c2 + c1 * s2
        step = Step(t, q1, q2, dq1, dq2, c1, s1, c12, s12, a1, a2)
        # the options built per arm: a parallel loop cannot take a named tuple from outside
        task_options = from_vector(Options, options)
        result, reward_terms, new_memory = task_kernel_bound(
            arm, task_options, step, goal[i], _from_row(Memory, memory, i), extras[i]
        )
        _to_row_of(reward_terms, terms, i)
        _to_row_of(new_memory, memory, i)
        tip_x, tip_y = tip_from_trig(arm, c1, s1, c12, s12)
        verdict["reward"] = result.reward
        verdict["distance"] = result.distance
        verdict["tip"][0] = tip_x
        verdict["tip"][1] = tip_y
        verdict["terminated"] = result.terminated
        verdict["success"] = result.success
        obs[i, 0] = c1
        obs[i, 1] = s1
        obs[i, 2] = c2
        obs[i, 3] = s2
        obs[i, 4] = dq1
        obs[i, 5] = dq2
        for j in range(extras.shape[1]):
            obs[i, 6 + j] = extras[i, j]


#: The loop's arrays, a named tuple whose fields are the loop's parameters in
#: order (taken from :func:`_loop_template`'s signature, never written out
#: again): build it by name, call a loop with ``loop(*arrays)``.
def _arguments_of(fn: Any, name: str) -> Any:
    """A named tuple class whose fields are the parameters of ``fn``, in order."""
    fields = [(parameter, np.ndarray) for parameter in inspect.signature(fn).parameters]
    cls = typing.NamedTuple(name, fields)  # type: ignore[misc]
    cls.__module__ = __name__
    return cls


LoopArrays: Any = _arguments_of(_loop_template, "LoopArrays")


def loop_arrays(task: Any, n: int, config: ArrayLike | None = None) -> Any:
    """Zeroed :data:`LoopArrays` for ``n`` arms of ``task`` (the one place they are allocated).

    Parameters
    ----------
    task : Task
        Its options vector (:meth:`Task.kernel_options`) is filled in; the
        goal, memory, extras and terms get its sizes.
    n : int
        Number of arms.
    config : array_like, shape (5,), optional
        ``[max_torque1, max_torque2, max_speed, dt, substeps]`` (default
        zeros: enough for ``observe``).

    Returns
    -------
    LoopArrays
        ``arms`` ``(n, 12)``, ``state`` ``(n, 4)``, ``action`` ``(n, 2)``,
        ``goal`` ``(n, goal_size)``, ``memory`` ``(n, memory_size)``, ``steps``
        ``(n,)`` int64, ``obs`` ``(n, 6 + extras_size)`` float32, ``outcome``
        ``(n,)`` of :data:`OUTCOME`, ``terms`` ``(n, len(term_names))``,
        ``extras`` ``(n, extras_size)``: zeros.
    """
    return LoopArrays(
        arms=np.zeros((n, len(ARM_VECTOR_FIELDS))),
        config=np.zeros(_CONFIG_SIZE) if config is None else np.array(config, dtype=np.float64),
        options=task.kernel_options(),
        steps=np.zeros(n, dtype=np.int64),
        state=np.zeros((n, 4)),
        action=np.zeros((n, 2)),
        goal=np.zeros((n, task.goal_size)),
        memory=np.zeros((n, task.memory_size)),
        obs=np.zeros((n, 6 + task.extras_size), dtype=np.float32),
        outcome=np.zeros(n, dtype=OUTCOME),
        terms=np.zeros((n, len(task.term_names))),
        extras=np.zeros((n, task.extras_size)),
    )


class StepKernels(NamedTuple):
    """The compiled loops of one task (their arguments: :data:`LoopArrays`).

    Attributes
    ----------
    step : numba dispatcher
        One control step of every arm on the calling thread.
    step_parallel : numba dispatcher
        The same, with the arms spread over numba's thread pool.
    observe : numba dispatcher
        The task kernel and observation of every arm where it is, at the times
        in ``outcome["time"]``.
    """

    step: Any
    step_parallel: Any
    observe: Any


def step_kernels(task: Any) -> StepKernels:
    """The loops of a task (memoised per kernel and types, and process; compiled on first call).

    Parameters
    ----------
    task : Task or Task subclass
        Its ``kernel``, ``options_type()`` and ``Memory`` are bound into the loop.
    """
    return _step_kernels(task.kernel, task.options_type(), task.Memory)


@functools.cache
def _step_kernels(kernel_fn: Any, options_cls: Any, memory_cls: Any) -> StepKernels:
    def bound(advance: bool, parallel: bool = False) -> Any:
        bindings = {
            "task_kernel_bound": kernel_fn,
            "Options": options_cls,
            "Memory": memory_cls,
            "ADVANCE": advance,
        }
        variant = ("step" if advance else "observe") + ("-parallel" if parallel else "")
        return bound_kernel(_loop_template, bindings, parallel=parallel, variant=variant)

    return StepKernels(step=bound(True), step_parallel=bound(True, True), observe=bound(False))
