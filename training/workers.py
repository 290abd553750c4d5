"""Local worker processes for the commands that share a study storage (``tune``, ``sweep --storage``).

Each worker is a fresh process (``spawn``: torch and forked threads do not
mix) that runs ``target(*args, index)``; one worker runs in this process.
SIGTERM is handled as Ctrl-C: every worker gets SIGINT, so that the run it
is training saves itself (as ``twolink train`` does on Ctrl-C) and its trial
is marked interrupted in the storage, and then ``KeyboardInterrupt`` is
raised here once they have exited. A worker defers an interrupt that arrives
outside training (:mod:`~twolink_gym.training.interrupts`) until its trial's
state is stored; the target checks
:func:`~twolink_gym.training.interrupts.interrupt_requested` between trials.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

from twolink_gym.training.interrupts import deferred_interrupts, interrupt_requested

__all__ = ["INTERRUPTED_EXIT", "run_workers"]

#: A worker's exit code when it stopped on an interrupt (as a shell reports SIGINT).
INTERRUPTED_EXIT = 130


def _worker(target: Callable[..., None], args: tuple[Any, ...]) -> None:
    """A worker process: defer interrupts outside training, run ``target(*args)``.

    Exits with :data:`INTERRUPTED_EXIT` (no traceback) when interrupted.
    """
    with deferred_interrupts():
        try:
            target(*args)
        except KeyboardInterrupt:
            sys.exit(INTERRUPTED_EXIT)
        if interrupt_requested():
            sys.exit(INTERRUPTED_EXIT)


def _interrupt_children(signum: int, frame: Any) -> None:
    """SIGTERM: interrupt every worker as Ctrl-C would, then stop."""
    for child in multiprocessing.active_children():
        if child.pid is not None:
            os.kill(child.pid, signal.SIGINT)
    raise KeyboardInterrupt


def run_workers(
    target: Callable[..., None], args: tuple[Any, ...], workers: int, what: str
) -> None:
    """Run ``target(*args, k)`` for ``k`` in ``range(workers)``; wait for all of them.

    Parameters
    ----------
    target : callable
        A module-level function (it is pickled into the worker processes).
    args : tuple
        Its arguments before the worker index (picklable).
    workers : int
        1: run here; more: that many spawned processes at once.
    what : str
        The workers' name in the error message (``"tune"``, ``"sweep"``).

    Raises
    ------
    KeyboardInterrupt
        On Ctrl-C or SIGTERM, after every worker has exited.
    RuntimeError
        If a worker process exited with an error.
    """
    if workers == 1:  # this process is the worker: SIGTERM interrupts it as SIGINT does
        with deferred_interrupts(signal.SIGTERM):
            target(*args, 0)
            if interrupt_requested():
                raise KeyboardInterrupt
        return
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _interrupt_children) if in_main else None
    try:
        context = multiprocessing.get_context("spawn")
        procs = [
            context.Process(target=_worker, args=(target, (*args, k)), daemon=False)
            for k in range(workers)
        ]
        try:
            for p in procs:
                p.start()
            for p in procs:
                p.join()
        except KeyboardInterrupt:
            for p in procs:
                p.join()
            raise
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)
    failed = [p.exitcode for p in procs if p.exitcode != 0]
    if failed and all(code == INTERRUPTED_EXIT for code in failed):
        raise KeyboardInterrupt  # the workers alone were interrupted (SIGINT sent to them)
    if failed:
        raise RuntimeError(
            f"{len(failed)} of {workers} {what} workers failed (exit codes {failed})"
        )
