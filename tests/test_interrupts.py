"""Deferred interrupts of a study's worker: SIGINT acts at once only inside training.

The signals are real (sent to this process's main thread); what is checked is where
``KeyboardInterrupt`` is raised and that the handlers in place before come back.
"""

from __future__ import annotations

import signal
import threading

import pytest
from twolink_gym.training.interrupts import (
    deferred_interrupts,
    interrupt_requested,
    interruptible,
)


def _signal(signum: int) -> None:
    """Send ``signum`` to the main thread, so that its Python handler runs before this returns.

    ``os.kill`` on the process lets the kernel deliver the signal to any thread
    (numba's, JAX's and torch's pools run here): the main thread then runs the
    handler only at a later check, possibly after the block under test has ended.
    """
    signal.pthread_kill(threading.main_thread().ident, signum)


def _sigint() -> None:
    _signal(signal.SIGINT)


def test_outside_the_gate_sigint_raises_as_python_does() -> None:
    # Python's own SIGINT handler, whatever this process inherited (a background job of
    # a non-interactive shell starts with SIGINT ignored, and Python then installs none)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert not interrupt_requested()
        with interruptible():  # does nothing outside deferred_interrupts
            pass
        with pytest.raises(KeyboardInterrupt):
            _sigint()
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_sigint_outside_training_waits_for_the_next_training_block() -> None:
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with deferred_interrupts(signal.SIGTERM):
        _sigint()  # in the bookkeeping between trials: nothing raised here
        assert interrupt_requested()
        with pytest.raises(KeyboardInterrupt), interruptible():
            raise AssertionError("a deferred interrupt must stop the block on entry")
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
    assert not interrupt_requested()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_inside_training_the_signal_raises_at_once(signum: int) -> None:
    with deferred_interrupts(signal.SIGTERM):
        reached = False
        with pytest.raises(KeyboardInterrupt), interruptible():
            _signal(signum)
            reached = True
        assert not reached


def test_a_second_sigint_outside_training_raises_at_once() -> None:
    with deferred_interrupts():
        _sigint()
        with pytest.raises(KeyboardInterrupt):
            _sigint()


def test_a_worker_started_with_sigint_ignored_still_hears_it() -> None:
    # a background job of a non-interactive shell inherits SIGINT ignored
    import subprocess
    import sys

    code = (
        "import os, signal\n"
        "from twolink_gym.training.interrupts import defer_interrupts, interrupt_requested\n"
        "defer_interrupts()\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "print(interrupt_requested())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert out.stdout.strip() == "True"


def test_outside_the_main_thread_the_gate_changes_nothing() -> None:
    # signal handlers can only be set, and only run, in the main thread
    import threading

    before = signal.getsignal(signal.SIGINT)
    errors: list[BaseException] = []

    def enter() -> None:
        try:
            with deferred_interrupts(signal.SIGTERM), interruptible():
                assert not interrupt_requested()
        except BaseException as exc:  # reported to the main thread
            errors.append(exc)

    worker = threading.Thread(target=enter)
    worker.start()
    worker.join()
    assert errors == [] and signal.getsignal(signal.SIGINT) == before
