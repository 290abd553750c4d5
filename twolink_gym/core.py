"""The batched core: ``n`` arms of one configuration, their episodes, and their step.

:class:`Core` owns everything that changes from step to step for ``n`` arms
(the single env is ``n = 1``, the vector env ``n = num_envs``): the arm
vectors, states, goals, task memory, step counts, applied actions, each arm's
random generator, the actuators' state and the randomised arms. It offers
:meth:`Core.reset` and :meth:`Core.step`, which return a :class:`StepResult`
of named arrays; :func:`step_info` is the one function that turns a result
into Gymnasium's ``info`` (the single env takes row 0). A step is one call of
the task's compiled loop (:mod:`twolink_gym.kernel`) through numba's dispatch::

    TwoLinkEnv.step / TwoLinkVectorEnv.step     (twolink_gym.env, .vector_env)
      -> Core.step                               (twolink_gym.core)
        -> StepKernels.step(*LoopArrays)          (twolink_gym.kernel: the loop)
      <- StepResult  -> step_info                (twolink_gym.core)

The core knows nothing of Gymnasium: autoreset, truncation, masks and spaces
are the envs' (thin adapters), the configuration is the :class:`Simulation`'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from twolink_gym import _jit
from twolink_gym.codec import check_action
from twolink_gym.imperfections import RANDOMIZABLE
from twolink_gym.kernel import clip_actions, loop_arrays, step_kernels
from twolink_gym.params import ArmParams
from twolink_gym.simulation import Simulation
from twolink_gym.tasks import Task

__all__ = ["ArmRows", "Core", "StepResult", "step_info"]

Array = NDArray[np.float64]


@dataclasses.dataclass(slots=True)
class StepResult:
    """What a step (or an episode start) gives for ``n`` arms: named arrays, leading axis ``n``.

    :meth:`Core.step` returns the same object every time, its fields views of
    the core's arrays (valid until the next step or reset: copy what you
    keep), with a new ``obs``; :meth:`Core.reset` of some rows gives arrays of
    those rows alone.

    Attributes
    ----------
    obs : ndarray, shape (n, obs_size), float32
        What the agents observe (through the observation model; a new array).
    reward : ndarray, shape (n,)
    terminated : ndarray of bool, shape (n,)
    success : ndarray of bool, shape (n,)
    distance : ndarray, shape (n,)
        The task's distance to its goal (:attr:`Task.distance_unit`).
    tip : ndarray, shape (n, 2)
        Tip positions [m].
    time : ndarray, shape (n,)
        Episode time of the state [s].
    terms : ndarray, shape (n, len(task.term_names))
        The reward's terms, in :attr:`Task.term_names` order.
    extras : ndarray, shape (n, extras_size)
        The observation extras (float64, before any observation model).
    state : ndarray, shape (n, 4)
        The true states ``[q1, q2, dq1, dq2]``.
    goal : ndarray, shape (n, goal_size)
        The episodes' goals.
    pushed : ndarray of bool, shape (n,), or None
        Which arms were pushed at the step's start (all False at an episode
        start); ``None`` without pushes (:class:`~twolink_gym.imperfections.PushModel`).
    """

    obs: NDArray[np.float32]
    reward: Array
    terminated: NDArray[np.bool_]
    success: NDArray[np.bool_]
    distance: Array
    tip: Array
    time: Array
    terms: Array
    extras: Array
    state: Array
    goal: Array
    pushed: NDArray[np.bool_] | None = None
    _arms: dict[int, ArmRows] = dataclasses.field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def arm(self, i: int) -> ArmRows:
        """Arm ``i``'s rows of ``state``, ``tip`` and ``terms``, as views made once and kept.

        Indexing a row costs about as much as copying it, and the single env
        reads row 0 on every step; the fields these views are of are never
        reassigned (only ``obs`` is).
        """
        rows = self._arms.get(i)
        if rows is None:
            rows = self._arms[i] = ArmRows(self.state[i], self.tip[i], self.terms[i])
        return rows


@dataclasses.dataclass(frozen=True, slots=True)
class ArmRows:
    """One arm's rows of a :class:`StepResult` (views, see :meth:`StepResult.arm`).

    Attributes
    ----------
    state : ndarray, shape (4,)
    tip : ndarray, shape (2,)
    terms : ndarray, shape (len(task.term_names),)
    """

    state: Array
    tip: Array
    terms: Array


def _result(
    obs: NDArray[np.float32], arrays: Any, pushed: NDArray[np.bool_] | None = None
) -> StepResult:
    """The :class:`StepResult` over the loop's ``arrays`` (views) with observation ``obs``."""
    outcome = arrays.outcome
    return StepResult(
        obs=obs,
        reward=outcome["reward"],
        terminated=outcome["terminated"],
        success=outcome["success"],
        distance=outcome["distance"],
        tip=outcome["tip"],
        time=outcome["time"],
        terms=arrays.terms,
        extras=arrays.extras,
        state=arrays.state,
        goal=arrays.goal,
        pushed=pushed,
    )


def step_info(
    result: StepResult, task: Task, row: int | None = None, params: Any = None
) -> dict[str, Any]:
    """The ``info`` of a step or reset: the one place its entries are built.

    Entries, in order: ``state``, ``tip``, ``distance``, ``is_success``,
    ``time``, the task's goal entries (:meth:`Task.goal_info`, for a task with
    a goal), the reported reward terms (:meth:`Task.reported_terms`),
    ``pushed`` with pushes, and ``params`` if given.

    Parameters
    ----------
    result : StepResult
    task : Task
    row : int, optional
        ``None``: every arm's entries as new arrays of leading axis ``n`` (the
        vector env's form, before its masks). An index: that arm's entries
        (floats, a bool, new arrays; the single env's form).
    params : object, optional
        The ``params`` entry (the randomised arm), if any.
    """
    if row is None:
        info: dict[str, Any] = {
            "state": result.state.copy(),
            "tip": result.tip.copy(),
            "distance": result.distance.copy(),
            "is_success": result.success.copy(),
            "time": result.time.copy(),
        }
        if task.goal_size:
            info.update(task.goal_info(result.goal, result.extras))
        terms = result.terms.T.copy()  # rows of one fresh block
    else:
        arm = result.arm(row)
        info = {
            "state": arm.state.copy(),
            "tip": arm.tip.copy(),
            "distance": result.distance.item(row),  # .item: a Python float or bool
            "is_success": result.success.item(row),
            "time": result.time.item(row),
        }
        if task.goal_size:
            for key, value in task.goal_info(result.goal, result.extras).items():
                info[key] = value[row]
        terms = arm.terms.tolist()
    for name, j in task.reported_columns:
        info[name] = terms[j]
    if result.pushed is not None:
        info["pushed"] = result.pushed.copy() if row is None else result.pushed.item(row)
    if params is not None:
        info["params"] = params
    return info


class Core:
    """``n`` arms of one :class:`Simulation`: their state, their episodes and their step.

    Parameters
    ----------
    sim : Simulation
        The configuration shared by every arm.
    rngs : sequence of numpy Generator
        One generator per arm (episode starts, randomised arms, noises).
    params : sequence of ArmParams, optional
        Each arm's nominal parameters (default: ``sim.params`` for all).
    num_threads : int
        Threads of the step loop (1: the calling thread).

    Attributes
    ----------
    sim : Simulation
    n : int
    arrays : LoopArrays
        The compiled loop's arrays (:func:`twolink_gym.kernel.loop_arrays`),
        updated in place: ``arrays.state`` ``(n, 4)``, ``arrays.goal``,
        ``arrays.steps`` (control steps into each episode), ``arrays.action``
        (the applied normalised actions ``(n, 2)``), ...
    rngs : list of numpy Generator
    params : list of ArmParams
        Each arm's current parameters (with a randomisation, its latest draw).
    param_table : ndarray, shape (n, len(RANDOMIZABLE))
        ``params`` as columns of :data:`~twolink_gym.imperfections.RANDOMIZABLE`.
    obs_bounds : tuple of 2 ndarray of float32
        The observation's finite bounds (:meth:`Simulation.observation_bounds`).
    num_threads : int
    """

    def __init__(
        self,
        sim: Simulation,
        rngs: Sequence[np.random.Generator],
        params: Sequence[ArmParams] | None = None,
        num_threads: int = 1,
    ) -> None:
        n = len(rngs)
        self.sim = sim
        self.n = n
        self.rngs = list(rngs)
        self.num_threads = num_threads
        self._nominal = list(params) if params is not None else [sim.params] * n
        self.params = list(self._nominal)
        self.param_table = np.array(
            [[getattr(arm, f) for f in RANDOMIZABLE] for arm in self.params], dtype=np.float64
        ).reshape(n, len(RANDOMIZABLE))
        self.obs_bounds = sim.observation_bounds(params)
        self.arrays = loop_arrays(sim.task, n, sim.config)
        self.arrays.arms[:] = sim.arms(params, n)
        model = sim.actuator_model
        self.actuator = None if model is None else model.new_state(n)
        # read on every step: plain attributes (the configuration is frozen)
        self._actuator_model = model
        self._observation_model = sim.observation_model
        self._push_model = sim.push_model
        #: Which arms were pushed at the last step's start (``None`` without pushes).
        self.pushed = None if sim.push_model is None else np.zeros(n, dtype=bool)
        self._bind()

    def _bind(self) -> None:
        """Look up the task's compiled loops (memoised) and name the views of the arrays.

        Also after unpickling, which copies the arrays (views included).
        """
        self._loops = step_kernels(self.sim.task)
        self._result = _result(self.arrays.obs, self.arrays, self.pushed)

    def __getstate__(self) -> dict[str, Any]:
        """The core's attributes without the compiled loops."""
        state = self.__dict__.copy()
        del state["_loops"], state["_result"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore the attributes and look up the loops again."""
        self.__dict__.update(state)
        self._bind()

    # -- episodes ----------------------------------------------------------
    def reset(
        self, rows: NDArray[np.intp] | None = None, options: dict[str, Any] | None = None
    ) -> StepResult:
        """Start new episodes in arms ``rows`` (default: every arm).

        Per arm, from its own generator: a new arm (with a randomisation), the
        episode start (:meth:`Simulation.initial_conditions`, ``options``
        replacing the draws), then the observation noise. Step counts and
        applied actions are zeroed, the task memory too, the actuators reset.

        Returns
        -------
        StepResult
            The new episodes' start (``time`` 0), for ``rows`` only; for every
            arm, views of the core's arrays.
        """
        sim = self.sim
        every = rows is None
        idx = np.arange(self.n) if rows is None else rows
        self._draw_arms(idx)
        rngs = [self.rngs[i] for i in idx]
        params = [self.params[i] for i in idx]
        states, goals = sim.initial_conditions(rngs, options, len(idx), params)
        a = self.arrays
        a.state[idx] = states
        a.goal[idx] = goals
        a.steps[idx] = 0
        a.action[idx] = 0.0
        if self.actuator is not None:
            if every:
                self.actuator.reset()
            else:
                self.actuator.reset(idx)
        if every:
            part = a
        else:
            part = loop_arrays(sim.task, len(idx), sim.config)
            part.arms[:] = a.arms[idx]
            part.state[:] = states
            part.goal[:] = goals
        part.memory[:] = 0.0
        part.outcome["time"] = 0.0
        self._loops.observe(*part)
        obs = self._observe(part.obs, rngs)
        if self.pushed is not None:
            self.pushed[idx] = False
        if every:
            self._result.obs = obs
            return self._result
        for name in ("memory", "obs", "outcome", "terms", "extras"):
            getattr(a, name)[idx] = getattr(part, name)  # each arm's latest state
        return _result(obs, part, None if self.pushed is None else np.zeros(len(idx), dtype=bool))

    def _draw_arms(self, idx: NDArray[np.intp]) -> None:
        """New arms for ``idx`` from the randomisation, each from its own generator."""
        randomization = self.sim.randomization
        if randomization is None:
            return
        rows = idx.tolist()
        drawn = randomization.draw([self.rngs[i] for i in rows], [self._nominal[i] for i in rows])
        for i, arm in zip(rows, drawn, strict=True):
            self.params[i] = arm
        self.arrays.arms[idx] = self.sim.arms(drawn, len(rows))
        self.param_table[idx] = [[getattr(arm, f) for f in RANDOMIZABLE] for arm in drawn]

    # -- the step ----------------------------------------------------------
    def set_command(self, actions: Any) -> None:
        """Check actions ``(n, action_size)`` into ``arrays.action`` ``(n, 2)``, in place.

        Clipped to ``[-1, 1]``; a joint without a motor gets 0.

        Raises
        ------
        ValueError
            On a wrong shape or a NaN or infinite entry (:func:`~twolink_gym.codec.check_action`).
        """
        command = self.arrays.action
        shape = (self.n, self.sim.action_size)
        # the common case, a float32/64 array of the right shape: checked and clipped in
        # one compiled pass, without the general checks' copies
        if (
            type(actions) is np.ndarray
            and actions.shape == shape
            and actions.dtype.char in "fd"
            and shape[1] == 2
            and clip_actions(actions, command)
        ):
            return
        checked = check_action(actions, shape)  # raises, or a float64 copy
        if shape[1] == 2:
            np.minimum(np.maximum(checked, -1.0, out=command), 1.0, out=command)
            return
        joint = self.sim.actuated[0]
        command[:, 1 - joint] = 0.0
        column = command[:, joint]
        np.minimum(np.maximum(checked[:, 0], -1.0, out=column), 1.0, out=column)

    def step(self, actions: Any = None, rows: NDArray[np.intp] | None = None) -> StepResult:
        """One control step of every arm.

        Per arm, from its own generator: the actuator model's noise, the push
        draw (:class:`~twolink_gym.imperfections.PushModel`: a pushed arm
        starts the step where the push leaves it), then, after the compiled
        loop, the observation noise.

        Parameters
        ----------
        actions : array_like, shape (n, action_size), optional
            Normalised actions (:meth:`set_command`); ``None``: the command
            already in ``arrays.action``.
        rows : ndarray of int, optional
            The arms that draw this step's actuator noise, push and observation
            noise (default: every arm; the others are restarted right after the
            step and draw a reset's instead).

        Returns
        -------
        StepResult
            Views of the core's arrays (and a new ``obs``).
        """
        if actions is not None:
            self.set_command(actions)
        a = self.arrays
        model = self._actuator_model
        if model is not None:
            assert self.actuator is not None  # made with the model
            a.action[:] = model.apply(a.action, self.actuator, self.rngs, rows)
        if self._push_model is not None:
            assert self.pushed is not None  # made with the model
            self.pushed[:] = self._push_model.apply(
                a.state, self.params, self.rngs, self.sim.dt, rows
            )
        if self.num_threads == 1:
            self._loops.step(*a)
        else:
            previous = _jit.get_num_threads()
            _jit.set_num_threads(self.num_threads)
            try:
                self._loops.step_parallel(*a)
            finally:
                _jit.set_num_threads(previous)
        result = self._result
        if self._observation_model is None:
            result.obs = a.obs.copy()
        else:
            result.obs = self._observe(a.obs, self.rngs, rows)
        return result

    def _observe(
        self,
        kernel_obs: NDArray[np.float32],
        rngs: Sequence[np.random.Generator],
        rows: NDArray[np.intp] | None = None,
    ) -> NDArray[np.float32]:
        """What the agents see of the loop's observations (a new array; the observation model)."""
        model = self.sim.observation_model
        if model is None:
            return kernel_obs.copy()
        return model.apply(kernel_obs, rngs, *self.obs_bounds, rows)

    def time(self, i: int = 0) -> float:
        """Time since arm ``i``'s episode started [s]."""
        return int(self.arrays.steps[i]) * self.sim.dt
