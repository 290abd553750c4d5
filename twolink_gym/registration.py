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
  :data:`GENERIC_MAX_EPISODE_STEPS` = 200, the default task's. It cannot follow
  the task's own length while still honouring Gymnasium's ``max_episode_steps``:
  a spec holds one length whatever the keywords, ``gym.make`` never tells the
  entry point the ``max_episode_steps`` it was given, and a spec without a
  length makes ``gym.make(id)`` and ``gym.make(id, max_episode_steps=-1)`` the
  same call. So ``gym.make("TwoLink-v0", task="swingup")`` truncates after 200
  steps, says so in its spec, and warns (:class:`EpisodeLengthWarning`, once
  per process for each task and length) when the task's own length at the
  env's ``dt`` is another; ``gym.make_vec`` warns likewise when the limit it
  passes is the generic 200. For a task's own length use its per-task id
  (:func:`task_env_id`), or pass ``max_episode_steps``.

Reach and track have no underactuated form: their ids refuse an ``actuation``
other than ``"full"`` (``ValueError`` naming the argument); ``TwoLink-v0``
accepts every task with every actuation, for experiments.

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

import warnings
from collections.abc import Callable
from typing import Any

import gymnasium as gym

from twolink_gym.codec import ACTUATIONS
from twolink_gym.env import TwoLinkEnv
from twolink_gym.simulation import Simulation
from twolink_gym.tasks import TASKS
from twolink_gym.vector_env import TwoLinkVectorEnv

__all__ = [
    "CONVENIENCE_IDS",
    "ENV_ID",
    "FULL_ARM_ONLY_TASKS",
    "GENERIC_MAX_EPISODE_STEPS",
    "UNDERACTUATED_IDS",
    "EpisodeLengthWarning",
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

#: Tasks without an underactuated form: their per-task ids take only ``actuation="full"``.
FULL_ARM_ONLY_TASKS = tuple(name for name in TASKS if name not in {t for t, _ in UNDERACTUATED_IDS})


class EpisodeLengthWarning(UserWarning):
    """``TwoLink-v0`` truncates a task after another number of steps than the task's own."""


#: (task name, own length, limit) already warned of: a notice once per process, so
#: that remaking an env from its spec (Gymnasium's env checker does) adds none.
_noticed: set[tuple[str, int, int]] = set()


def _notice_generic_length(env: TwoLinkEnv | TwoLinkVectorEnv, limit: int) -> None:
    """Warn once if ``TwoLink-v0``'s ``limit`` is not ``env``'s task's own length."""
    own = env.sim.max_episode_steps
    task = env.sim.task.name
    if own == limit or (task, own, limit) in _noticed:
        return
    _noticed.add((task, own, limit))
    ids = {(name, "full"): env_id for name, env_id in CONVENIENCE_IDS.items()} | UNDERACTUATED_IDS
    per_task = ids.get((task, env.sim.actuation))
    use = ""
    if per_task is not None and gym.spec(per_task).max_episode_steps == own:
        use = f"use {per_task!r} or "
    warnings.warn(
        f"{ENV_ID} truncates every task after {limit} steps unless given "
        f"max_episode_steps; task {task!r} lasts {own} steps at dt={env.sim.dt} s: "
        f"{use}pass max_episode_steps={own} (-1: no limit)",
        EpisodeLengthWarning,
        stacklevel=5,  # the caller of gym.make or gym.make_vec
    )


def _full_arm_only(kwargs: dict[str, Any]) -> None:
    """Refuse an underactuated arm for the ids of reach and track."""
    actuation = kwargs.get("actuation", "full")
    if actuation != "full":
        ids = [CONVENIENCE_IDS[name] for name in FULL_ARM_ONLY_TASKS]
        raise ValueError(
            f"actuation must be 'full' for {' and '.join(ids)} (reach and track have no "
            f"underactuated form), got {actuation!r}; the underactuated ids are "
            f"{sorted(UNDERACTUATED_IDS.values())}, and gym.make({ENV_ID!r}, task=..., "
            "actuation=...) takes any pair, for experiments"
        )


class _EntryPoint:
    """A Gymnasium entry point: ``factory(**kwargs)`` between a check of the keywords and of the env.

    Parameters
    ----------
    factory : type
        :class:`~twolink_gym.env.TwoLinkEnv` or
        :class:`~twolink_gym.vector_env.TwoLinkVectorEnv`; its ``metadata``
        (the render modes ``gym.make`` reads from an entry point) is this one's.
    before : callable, optional
        Called with the keywords before the env is built; raises on bad ones.
    after : callable, optional
        Called with the env and the keywords once it is built.
    """

    def __init__(
        self,
        factory: type[TwoLinkEnv] | type[TwoLinkVectorEnv],
        before: Callable[[dict[str, Any]], None] | None = None,
        after: Callable[[Any, dict[str, Any]], None] | None = None,
    ) -> None:
        self._factory = factory
        self._before = before
        self._after = after
        self.metadata = factory.metadata

    def __call__(self, **kwargs: Any) -> Any:
        if self._before is not None:
            self._before(kwargs)
        env = self._factory(**kwargs)
        if self._after is not None:
            self._after(env, kwargs)
        return env


def _generic_single(env: TwoLinkEnv, kwargs: dict[str, Any]) -> None:
    # gym.make adds its TimeLimit outside and never passes the length here: the
    # spec's length is the one in force unless the caller gave another
    _notice_generic_length(env, GENERIC_MAX_EPISODE_STEPS)


def _generic_vector(env: TwoLinkVectorEnv, kwargs: dict[str, Any]) -> None:
    if kwargs.get("max_episode_steps") == GENERIC_MAX_EPISODE_STEPS:
        _notice_generic_length(env, GENERIC_MAX_EPISODE_STEPS)


#: The entry points (``gym.make`` and ``gym.make_vec`` load them by name).
generic_env = _EntryPoint(TwoLinkEnv, after=_generic_single)
generic_vector_env = _EntryPoint(TwoLinkVectorEnv, after=_generic_vector)
full_arm_only_env = _EntryPoint(TwoLinkEnv, before=_full_arm_only)
full_arm_only_vector_env = _EntryPoint(TwoLinkVectorEnv, before=_full_arm_only)

_ENTRY_POINT = "twolink_gym.env:TwoLinkEnv"
_VECTOR_ENTRY_POINT = "twolink_gym.vector_env:TwoLinkVectorEnv"
_ENTRY_POINTS = {
    "generic": (
        "twolink_gym.registration:generic_env",
        "twolink_gym.registration:generic_vector_env",
    ),
    "full_arm_only": (
        "twolink_gym.registration:full_arm_only_env",
        "twolink_gym.registration:full_arm_only_vector_env",
    ),
    "plain": (_ENTRY_POINT, _VECTOR_ENTRY_POINT),
}


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
            entry, vector_entry = _ENTRY_POINTS[
                "full_arm_only" if name in FULL_ARM_ONLY_TASKS else "plain"
            ]
            gym.register(
                id=env_id,
                entry_point=entry,
                vector_entry_point=vector_entry,
                max_episode_steps=Simulation.create(task=name).max_episode_steps,
                kwargs=kwargs,
            )
    if ENV_ID not in gym.registry:
        entry, vector_entry = _ENTRY_POINTS["generic"]
        gym.register(
            id=ENV_ID,
            entry_point=entry,
            vector_entry_point=vector_entry,
            max_episode_steps=GENERIC_MAX_EPISODE_STEPS,
            kwargs={"task": "reach"},
        )
