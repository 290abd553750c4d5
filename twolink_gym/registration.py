"""Gymnasium registration of the per-task ids and of the generic ``TwoLink-v0``.

Every id is an ordinary Gymnasium registration: the entry point is
:class:`~twolink_gym.env.TwoLinkEnv` (``vector_entry_point``:
:class:`~twolink_gym.vector_env.TwoLinkVectorEnv`), which never truncates by
itself, and the id's spec carries one ``max_episode_steps``, which ``gym.make``
applies with its ``TimeLimit``. So, for every id and every keyword:

* ``gym.make(id)`` truncates after the spec's ``max_episode_steps``;
* ``gym.make(id, max_episode_steps=N)`` truncates after exactly ``N`` steps,
  longer or shorter than the spec's;
* ``gym.make(id, max_episode_steps=-1)`` never truncates;
* ``env.spec.max_episode_steps`` is the limit in force (``None``: none), and
  ``gym.make(env.spec)`` makes an env with the same limit;
* ``gym.make_vec(id, n, ...)`` gives each copy the same limit, whether
  ``vectorization_mode="sync"`` (``gym.make`` per copy) or
  ``"vector_entry_point"`` (``gym.make_vec`` passes the limit, or ``-1``, to
  :class:`~twolink_gym.vector_env.TwoLinkVectorEnv` as its
  ``max_episode_steps``).

The lengths, in control steps:

* the per-task ids (:data:`CONVENIENCE_IDS`, :data:`UNDERACTUATED_IDS`) carry
  their task's length at the default control period of 0.02 s: reach 200
  (4 s), balance and track 500 (10 s), swing-up 750 (15 s);
* ``TwoLink-v0`` serves every task through its ``task`` keyword (default
  ``"reach"``) and carries one length for all of them,
  :data:`GENERIC_MAX_EPISODE_STEPS` = 200, the default task's. A Gymnasium spec
  holds one ``max_episode_steps`` whatever the keywords, and ``gym.make`` never
  tells the entry point the ``max_episode_steps`` it was given, so an env that
  truncated itself at its task's own length could not also end exactly at a
  longer ``N``, or never with ``-1``. Hence ``gym.make("TwoLink-v0",
  task="balance")`` truncates after 200 steps and says so in its spec; for a
  task's own length use its per-task id (:func:`task_env_id`), or pass
  ``max_episode_steps``.

A spec's length is a number of steps: ``dt`` or a task option such as track's
``seconds`` changes how long an episode lasts in seconds, not its number of
steps. :attr:`TwoLinkEnv.default_max_episode_steps
<twolink_gym.env.TwoLinkEnv.default_max_episode_steps>` gives the task's own
length at the env's ``dt``, to pass as ``max_episode_steps``. A
:class:`~twolink_gym.vector_env.TwoLinkVectorEnv` built directly counts its own
steps and truncates after its task's own length unless given
``max_episode_steps``. Only public Gymnasium API is used
(:func:`gymnasium.register`).
"""

from __future__ import annotations

import gymnasium as gym

from twolink_gym.codec import ACTUATIONS
from twolink_gym.simulation import Simulation
from twolink_gym.tasks import TASKS

__all__ = [
    "CONVENIENCE_IDS",
    "ENV_ID",
    "GENERIC_MAX_EPISODE_STEPS",
    "UNDERACTUATED_IDS",
    "register_envs",
    "task_env_id",
]

ENV_ID = "TwoLink-v0"
#: Per-task ids of the full arm, from the task names (the primary registration).
CONVENIENCE_IDS = {name: f"TwoLink{name.capitalize()}-v0" for name in TASKS}
#: Ids of the underactuated variants, ``(task, actuation) -> id``: one motor can
#: hold the upright (balance) and pump energy (swing-up), but not hold a reach
#: target, so reach has none.
UNDERACTUATED_IDS = {
    (name, actuation): f"TwoLink{actuation.capitalize()}{name.capitalize()}-v0"
    for name in ("balance", "swingup")
    for actuation in ("acrobot", "pendubot")
}
#: The ``max_episode_steps`` of ``TwoLink-v0``, for every task: the length of
#: its default task (reach, 4 s at the default 0.02 s control period).
GENERIC_MAX_EPISODE_STEPS = Simulation.create().max_episode_steps

_ENTRY_POINT = "twolink_gym.env:TwoLinkEnv"
_VECTOR_ENTRY_POINT = "twolink_gym.vector_env:TwoLinkVectorEnv"


def task_env_id(task: str, actuation: str = "full") -> str:
    """The per-task id of ``task`` with ``actuation`` (it carries the task's episode length).

    Parameters
    ----------
    task : str
        A task name, a key of :data:`twolink_gym.tasks.TASKS`.
    actuation : {"full", "acrobot", "pendubot"}

    Returns
    -------
    str
        E.g. ``"TwoLinkBalance-v0"``, ``"TwoLinkPendubotSwingup-v0"``.

    Raises
    ------
    ValueError
        For an unknown task or actuation, or a pair without an id (listing the pairs that have one).
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {sorted(TASKS)}, got {task!r}")
    if actuation not in ACTUATIONS:
        raise ValueError(f"actuation must be one of {sorted(ACTUATIONS)}, got {actuation!r}")
    if actuation == "full":
        return CONVENIENCE_IDS[task]
    if (task, actuation) not in UNDERACTUATED_IDS:
        pairs = sorted(UNDERACTUATED_IDS)
        raise ValueError(
            f"no registered id for task {task!r} with actuation {actuation!r}; the "
            f"underactuated ids are for {pairs} (or use gym.make({ENV_ID!r}, "
            f"task={task!r}, actuation={actuation!r}, max_episode_steps=...))"
        )
    return UNDERACTUATED_IDS[(task, actuation)]


def register_envs() -> None:
    """Register the per-task ids and ``TwoLink-v0`` (idempotent)."""
    ids = {(name, "full"): env_id for name, env_id in CONVENIENCE_IDS.items()} | UNDERACTUATED_IDS
    for (name, actuation), env_id in ids.items():
        if env_id not in gym.registry:
            kwargs = (
                {"task": name} if actuation == "full" else {"task": name, "actuation": actuation}
            )
            gym.register(
                id=env_id,
                entry_point=_ENTRY_POINT,
                vector_entry_point=_VECTOR_ENTRY_POINT,
                max_episode_steps=Simulation.create(task=name).max_episode_steps,
                kwargs=kwargs,
            )
    if ENV_ID not in gym.registry:
        gym.register(
            id=ENV_ID,
            entry_point=_ENTRY_POINT,
            vector_entry_point=_VECTOR_ENTRY_POINT,
            max_episode_steps=GENERIC_MAX_EPISODE_STEPS,
            kwargs={"task": "reach"},
        )
