"""The observation codec and the actuation table: what a controller needs of an env.

This module sits below the tasks and the simulation (it imports neither at run
time), so controllers decode observations and map actions without the env core.

Observation layout (float32), the state encoding followed by the task's extras::

    [cos q1, sin q1, cos q2, sin q2, dq1, dq2, *extras]

The encoding is lossless (angles come back with ``atan2``) and
:func:`decode_observation` inverts it. An actuation names the joints with a
motor (:data:`ACTUATIONS`); :func:`expand_action` maps an action of those
joints to both joints' normalised torques.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from twolink_gym.imperfections import OBSERVATIONS

if TYPE_CHECKING:
    from twolink_gym.tasks import Task

__all__ = [
    "ACTUATIONS",
    "STATE_OBS_NAMES",
    "DecodedObservation",
    "check_action",
    "check_actuation",
    "decode_observation",
    "encode_state",
    "expand_action",
]

Array = NDArray[np.float64]

#: The actuated joints of each actuation (the one map from actuation names):
#: both joints, the elbow only (an acrobot) or the shoulder only (a pendubot).
ACTUATIONS: dict[str, tuple[int, ...]] = {"full": (0, 1), "acrobot": (1,), "pendubot": (0,)}

#: Names of the state-encoding entries at the start of every observation.
STATE_OBS_NAMES = ("cos_q1", "sin_q1", "cos_q2", "sin_q2", "dq1", "dq2")


def check_actuation(actuation: object) -> str:
    """``actuation`` if it is a key of :data:`ACTUATIONS`.

    Raises
    ------
    ValueError
        Naming the argument and the allowed values.
    """
    if not isinstance(actuation, str) or actuation not in ACTUATIONS:
        raise ValueError(f"actuation must be one of {sorted(ACTUATIONS)}, got {actuation!r}")
    return actuation


def check_action(action: ArrayLike, shape: tuple[int, ...]) -> Array:
    """Validate an action batch and clip it to ``[-1, 1]`` (documented behaviour).

    Parameters
    ----------
    action : array_like, shape ``shape``
        Normalised actions.
    shape : tuple of int
        The expected shape.

    Returns
    -------
    ndarray, shape ``shape``
        The action as float64, clipped to ``[-1, 1]`` (a new array).

    Raises
    ------
    ValueError
        On a wrong shape or a NaN or infinite entry.
    """
    try:
        a = np.asarray(action, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"action must be numeric with shape {shape}, got {action!r}") from exc
    if a.shape != shape:
        raise ValueError(f"action must have shape {shape}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"action must be finite, got {a.tolist()}")
    return np.clip(a, -1.0, 1.0)


def expand_action(action: Array, actuated: tuple[int, ...]) -> Array:
    """Actions ``(n, len(actuated))`` → both joints' normalised torques ``(n, 2)``.

    ``actuated`` is a value of :data:`ACTUATIONS`; a joint without a motor gets
    0. With both joints actuated, the result is ``action`` itself when it is
    already C-contiguous.
    """
    if len(actuated) == 2:
        return np.ascontiguousarray(action)
    full = np.zeros((action.shape[0], 2))
    full[:, actuated[0]] = action[:, 0]
    return full


def encode_state(state: Array) -> Array:
    """State ``(n, 4)`` → ``(n, 6)`` encoding ``[cos q1, sin q1, cos q2, sin q2, dq1, dq2]``."""
    q1, q2 = state[:, 0], state[:, 1]
    return np.stack([np.cos(q1), np.sin(q1), np.cos(q2), np.sin(q2), state[:, 2], state[:, 3]], 1)


@dataclasses.dataclass(frozen=True)
class DecodedObservation:
    """What a controller can recover from an observation.

    Attributes
    ----------
    state : ndarray, shape (..., 4)
        ``[q1, q2, dq1, dq2]`` with angles in ``(-pi, pi]`` (float32 precision).
    goal : ndarray
        What the observation shows of the task's goal
        (:meth:`~twolink_gym.tasks.Task.goal_from_extras`): the target tip
        position ``(..., 2)`` for reach, the current reference point ``(..., 2)``
        for track, empty for balance and swing-up.
    extras : ndarray, shape (..., extras_size)
        All task-specific entries.
    """

    state: Array
    goal: Array
    extras: Array


def decode_observation(
    observation: ArrayLike, task: Task, kind: str = "state"
) -> DecodedObservation:
    """Invert the observation encoding of ``task``.

    Parameters
    ----------
    observation : array_like, shape (k + task.extras_size,) or (..., k + task.extras_size)
        ``k = 6`` for ``kind="state"``, 4 for ``"angles"``.
    task : Task
        The task whose observations these are (it says which extras show its
        goal, :meth:`~twolink_gym.tasks.Task.goal_from_extras`).
    kind : {"state", "angles"}
        The env's ``observation`` (:data:`twolink_gym.imperfections.OBSERVATIONS`).
        An angles-only observation has no speeds: the decoded ``dq1, dq2`` are NaN.

    Raises
    ------
    ValueError
        If the last axis does not match the task's observation size, or on an
        unknown ``kind``.
    """
    if kind not in OBSERVATIONS:
        raise ValueError(f"kind must be one of {sorted(OBSERVATIONS)}, got {kind!r}")
    obs = np.asarray(observation, dtype=np.float64)
    k = len(OBSERVATIONS[kind])
    size = k + task.extras_size
    if obs.ndim == 0 or obs.shape[-1] != size:
        raise ValueError(
            f"observation must have shape ({size},) or (..., {size}) for task "
            f"{task.name!r} and observation {kind!r}, got {obs.shape}"
        )
    speeds = (obs[..., 4], obs[..., 5]) if k == 6 else (np.full(obs.shape[:-1], np.nan),) * 2
    state = np.stack(
        [
            np.arctan2(obs[..., 1], obs[..., 0]),
            np.arctan2(obs[..., 3], obs[..., 2]),
            *speeds,
        ],
        -1,
    )
    extras = obs[..., k:]
    return DecodedObservation(state=state, goal=task.goal_from_extras(extras), extras=extras)
