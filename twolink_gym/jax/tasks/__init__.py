"""Task twins: each compiled task's episode draws and kernel, as pure JAX functions.

A *task twin* is the JAX counterpart of one :class:`~twolink_gym.tasks.Task`
class. It subclasses :class:`TaskTwin`, names the task class it mirrors
(``task_class``) and registers itself with :func:`register_twin`; the JAX env
(:func:`twolink_gym.jax.make`) finds the twin of an env's task with
:func:`twin_for` (by the task's exact class). A twin implements:

``sample(key, params, arm) -> (state (4,), goal (goal_size,))``
    One episode start, drawn with ``jax.random`` from the episode options in
    ``params.episode`` (the same distributions as the task's
    ``sample_episode``; not the same draws: the compiled env uses numpy's
    generator).
``kernel(arm, options, x, goal, memory) -> (outcome, terms, memory, extras)``
    The compiled task kernel's step (:class:`twolink_gym.kernel.TaskKernel`),
    on JAX scalars and without Python control flow on them (``jnp.where``):
    ``arm`` is a :class:`twolink_gym.kernel.Arm`, ``options`` the task's
    ``options_type()`` named tuple, ``x`` a :class:`twolink_gym.kernel.Step`,
    ``memory`` the task's ``Memory`` named tuple; it returns an
    :class:`twolink_gym.kernel.Outcome`, the task's ``Terms`` named tuple and
    ``Memory``, and the observation extras as an array ``(extras_size,)``
    (the compiled kernel writes them into an array instead).

and may override ``sample_on(key, params, arm, goal) -> (state, goal)`` (the
start when ``reset`` is given the goal; default: ``sample``'s state, as the
compiled ``Task.sample_episode``; track starts on its path), ``goal_from_option`` (a ``reset`` option that sets the goal
in the task's own terms: reach's ``"target"``; track's ``"path"``) and
``goal_info`` (the goal's entries of ``info``).

Adding a twin (track, or a task of one's own, see docs/jax.md): write
``twolink_gym/jax/tasks/<name>.py`` with a ``@register_twin`` subclass of
:class:`TaskTwin`, import it at the end of this module, and add its cases to
``tests/test_jax_equivalence.py`` (the compiled env is the reference).
"""

from __future__ import annotations

from typing import Any, ClassVar

import jax
import jax.numpy as jnp

from twolink_gym.kernel import Outcome
from twolink_gym.tasks import Task

__all__ = ["TWINS", "TaskTwin", "register_twin", "twin_for"]


class TaskTwin:
    """The JAX twin of a task class (see the module notes).

    Parameters
    ----------
    task : Task
        The compiled env's task object (its options); kept as :attr:`task`.
        Its numeric options reach the kernel through the env params
        (``params.options``, ``params.episode``), so they can be traced.
    """

    #: The compiled task class this twin mirrors.
    task_class: ClassVar[type[Task]]

    def __init__(self, task: Task) -> None:
        if type(task) is not self.task_class:
            raise TypeError(
                f"{type(self).__name__} mirrors {self.task_class.__name__}, got {type(task).__name__}"
            )
        self.task = task

    # -- episodes ----------------------------------------------------------
    def sample(self, key: jax.Array, params: Any, arm: Any) -> tuple[jax.Array, jax.Array]:
        """One episode start: the initial state ``(4,)`` and the goal ``(goal_size,)``."""
        raise NotImplementedError

    def sample_on(
        self, key: jax.Array, params: Any, arm: Any, goal: jax.Array
    ) -> tuple[jax.Array, jax.Array]:
        """One episode start with a given goal ``(goal_size,)``: ``(state (4,), goal)``.

        Default: :meth:`sample`'s state, with ``goal`` in place of the drawn one
        (as the compiled ``Task.sample_episode``); a task whose start depends on
        its goal (track starts on its path) overrides this.
        """
        return self.sample(key, params, arm)[0], goal

    def initial_memory(self, dtype: Any) -> Any:
        """The task's ``Memory`` named tuple, all zeros (what every episode starts from)."""
        memory_cls = self.task.Memory
        return memory_cls(*(jnp.zeros((), dtype) for _ in memory_cls._fields))  # type: ignore[attr-defined]

    def goal_from_option(self, name: str, value: Any, params: Any) -> jax.Array:
        """The goal vector ``(goal_size,)`` of a ``reset`` option ``name`` (``"goal"`` or the task's own).

        Default: the value itself, a goal vector.
        """
        return jnp.asarray(value, dtype=params.dt.dtype).reshape(self.task.goal_size)

    def goal_info(self, goal: jax.Array, extras: jax.Array) -> dict[str, jax.Array]:
        """The goal's entries of ``info`` (default: ``{"target": goal}`` for a task with a goal)."""
        return {"target": goal} if self.task.goal_size else {}

    # -- the step ------------------------------------------------------------
    def kernel(
        self, arm: Any, options: Any, x: Any, goal: jax.Array, memory: Any
    ) -> tuple[Outcome, Any, Any, jax.Array]:
        """The task's step on JAX scalars (see the module notes)."""
        raise NotImplementedError


#: Twin classes by the task class they mirror.
TWINS: dict[type[Task], type[TaskTwin]] = {}


def register_twin(cls: type[TaskTwin]) -> type[TaskTwin]:
    """Register a twin under its ``task_class`` (a class decorator)."""
    TWINS[cls.task_class] = cls
    return cls


def twin_for(task: Task) -> TaskTwin:
    """The twin of ``task`` (looked up by its exact class).

    Raises
    ------
    ValueError
        If the task's class has no twin (listing the classes that have one).
    """
    cls = TWINS.get(type(task))
    if cls is None:
        names = sorted(c.__name__ for c in TWINS)
        raise ValueError(
            f"task {type(task).__name__} ({task.name!r}) has no JAX twin; the tasks with one are "
            f"{names} (docs/jax.md says how to add one)"
        )
    return cls(task)


# the twins register themselves on import
from twolink_gym.jax.tasks import balance, reach, swingup, track  # noqa: E402, F401
