"""Tasks (reward variants) of the two-link arm, and the one map from task names to classes."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from twolink_gym.tasks.balance import BalanceTask
from twolink_gym.tasks.base import Evaluation, Task, task_kernel
from twolink_gym.tasks.reach import ReachTask
from twolink_gym.tasks.swingup import SwingupTask
from twolink_gym.tasks.track import TrackTask

__all__ = [
    "TASKS",
    "BalanceTask",
    "Evaluation",
    "ReachTask",
    "SwingupTask",
    "Task",
    "TrackTask",
    "make_task",
    "task_kernel",
]

#: Task classes by registered name: the only place task names are mapped to code.
TASKS: dict[str, type[Task]] = {
    cls.name: cls for cls in (ReachTask, BalanceTask, SwingupTask, TrackTask)
}


def make_task(task: str | Task, options: Mapping[str, Any] | None = None) -> Task:
    """Build a task from its name and options (or pass a :class:`Task` through).

    Parameters
    ----------
    task : str or Task
        A name from :data:`TASKS`, or a ready task object.
    options : mapping, optional
        Keyword options of the task class (reward weights, tolerances, ...).

    Raises
    ------
    ValueError
        On an unknown task name or option; the message lists the valid ones.
    """
    if isinstance(task, Task):
        if options:
            raise ValueError("task_options cannot be combined with a Task instance")
        return task
    if not isinstance(task, str) or task not in TASKS:
        raise ValueError(f"unknown task {task!r}; valid tasks are {sorted(TASKS)}")
    cls = TASKS[task]
    options = dict(options or {})
    valid = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise ValueError(
            f"unknown option(s) {unknown} for task {task!r}; valid options are {valid}"
        )
    return cls(**options)
