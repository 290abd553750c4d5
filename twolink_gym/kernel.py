"""The step kernel: dynamics, RK4, speed limit, task logic and observation, compiled together.

:func:`step_kernels` compiles, for one task kernel (see
:mod:`twolink_gym.tasks.base`), three loops over a batch of arms:

``step``
    one control step of every arm on the calling thread: RK4 of the
    equations of motion (:func:`twolink_gym.integrators.rk4`), the speed
    limit, the task kernel and the observation;
``step_parallel``
    the same, with the arms spread over numba's thread pool (``prange``);
``observe``
    the task kernel and the observation of every arm where it is (episode starts).

The single env calls ``step`` with one arm, the vector env ``step`` or
``step_parallel`` with all its copies: the same per-arm machine code, so
their trajectories are bit-identical. The loops are written once, as
templates that call the module-level name ``task_kernel``; each task gets its
own compiled copies with that name bound to its kernel
(:func:`twolink_gym._jit.bound_kernel`), built on first use (memoised per
process), compiled on their first call and cached on disk under a key of the
sources they embed.

Array arguments of the loops (``n`` arms; all C-contiguous)::

    arms         (n, 9) float64   per-copy arm vectors (dynamics.ARM_VECTOR_FIELDS)
    config       (5,)   float64   [max_torque1, max_torque2, max_speed, dt, substeps]
    options      (k,)   float64   the task's options vector (Task.kernel_options)
    steps        (n,)   int64     control steps taken in each arm's episode so far: the
                                  task kernel sees the time steps·dt (observe) or
                                  (steps + 1)·dt (step, the time after it)
    state        (n, 4) float64   [q1, q2, dq1, dq2]; step: read, then overwritten
    action       (n, 2) float64   normalised actions, already clipped to [-1, 1]
    goal         (n, g) float64
    obs          (n, 6 + e) float32   written: [cos q1, sin q1, cos q2, sin q2, dq1, dq2, *extras]
    out          (n, 6) float64   written: reward, distance, tip x, tip y, terminated, success
                                  (the column constants of twolink_gym.tasks.base)
    terms        (n, t) float64   written: the reward's terms (Task.term_names)
    extras       (n, e) float64   written: the observation extras in float64
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np
from numba import prange
from numpy.typing import NDArray

from twolink_gym._jit import bound_kernel, kernel
from twolink_gym.integrators import rk4
from twolink_gym.tasks.base import evaluate_one

__all__ = ["StepKernels", "step_kernels"]

# entries of ``config``
_TORQUE1, _TORQUE2, _MAX_SPEED, _DT, _SUBSTEPS = range(5)

Array = NDArray[np.float64]


class StepKernels(NamedTuple):
    """The compiled loops of one task (see the module notes for their arguments)."""

    step: Any
    step_parallel: Any
    observe: Any


@kernel(cache=False, inline=True)
def _observe_one(
    task_kernel: Any,
    i: int,
    arm: Array,
    options: Array,
    t: float,
    q1: float,
    q2: float,
    dq1: float,
    dq2: float,
    action: Array,
    goal: Array,
    obs: NDArray[np.float32],
    out: Array,
    terms: Array,
    extras: Array,
) -> None:
    """Task outcome (:func:`~twolink_gym.tasks.base.evaluate_one`) and observation of arm ``i``."""
    c1, s1, c2, s2 = evaluate_one(
        task_kernel,
        arm,
        options,
        t,
        q1,
        q2,
        dq1,
        dq2,
        action[i, 0],
        action[i, 1],
        goal[i],
        out[i],
        terms[i],
        extras[i],
    )
    ob = obs[i]
    ob[0] = c1
    ob[1] = s1
    ob[2] = c2
    ob[3] = s2
    ob[4] = dq1
    ob[5] = dq2
    for j in range(extras.shape[1]):
        ob[6 + j] = extras[i, j]


@kernel(cache=False, inline=True)
def _step_one(
    task_kernel: Any,
    i: int,
    arms: Array,
    config: Array,
    options: Array,
    steps: NDArray[np.int64],
    state: Array,
    action: Array,
    goal: Array,
    obs: NDArray[np.float32],
    out: Array,
    terms: Array,
    extras: Array,
) -> None:
    """One control step of arm ``i``: RK4, speed limit, task outcome, observation."""
    arm = arms[i]
    x = state[i]
    q1, q2, dq1, dq2 = rk4(
        arm,
        x[0],
        x[1],
        x[2],
        x[3],
        action[i, 0] * config[_TORQUE1],
        action[i, 1] * config[_TORQUE2],
        config[_DT],
        int(config[_SUBSTEPS]),
    )
    limit = config[_MAX_SPEED]
    dq1 = min(max(dq1, -limit), limit)
    dq2 = min(max(dq2, -limit), limit)
    x[0] = q1
    x[1] = q2
    x[2] = dq1
    x[3] = dq2
    t = (steps[i] + 1) * config[_DT]
    _observe_one(
        task_kernel, i, arm, options, t, q1, q2, dq1, dq2, action, goal, obs, out, terms, extras
    )


#: The task kernel the loop templates call: bound per task in each copy's own
#: globals (:func:`step_kernels`); never called through this module attribute.
task_kernel: Any = None


def _step_template(
    arms: Array,
    config: Array,
    options: Array,
    steps: NDArray[np.int64],
    state: Array,
    action: Array,
    goal: Array,
    obs: NDArray[np.float32],
    out: Array,
    terms: Array,
    extras: Array,
) -> None:
    """``step`` and ``step_parallel``: one control step of every arm (see the module notes)."""
    # prange is range when compiled without parallel=True
    for i in prange(state.shape[0]):
        _step_one(
            task_kernel,
            i,
            arms,
            config,
            options,
            steps,
            state,
            action,
            goal,
            obs,
            out,
            terms,
            extras,
        )


def _observe_template(
    arms: Array,
    config: Array,
    options: Array,
    steps: NDArray[np.int64],
    state: Array,
    action: Array,
    goal: Array,
    obs: NDArray[np.float32],
    out: Array,
    terms: Array,
    extras: Array,
) -> None:
    """``observe``: the task outcome and observation of every arm where it is."""
    for i in range(state.shape[0]):
        x = state[i]
        _observe_one(
            task_kernel,
            i,
            arms[i],
            options,
            steps[i] * config[_DT],
            x[0],
            x[1],
            x[2],
            x[3],
            action,
            goal,
            obs,
            out,
            terms,
            extras,
        )


@functools.cache
def step_kernels(task_kernel: Any) -> StepKernels:
    """The step loops of a task kernel (memoised per kernel and process; compiled on first call)."""
    bindings = {"task_kernel": task_kernel}
    return StepKernels(
        step=bound_kernel(_step_template, bindings),
        step_parallel=bound_kernel(_step_template, bindings, parallel=True, variant="parallel"),
        observe=bound_kernel(_observe_template, bindings),
    )
