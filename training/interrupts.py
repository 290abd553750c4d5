"""Where a worker process may be interrupted: inside training, not in a storage's bookkeeping.

A study's worker (``twolink tune``, ``twolink sweep --storage``) runs a trial
between two writes to the storage: Optuna marks the trial running, calls the
objective, then records its state. A ``KeyboardInterrupt`` raised by SIGINT at
an arbitrary point can land between those writes (after the objective has
returned, before its state is recorded) and leave the trial marked running
for good; a local sweep's worker interrupted while saving a finished run
would leave it half written. So a worker runs inside :func:`deferred_interrupts`
(or calls :func:`defer_interrupts` when it starts): SIGINT then raises
``KeyboardInterrupt`` at once only inside :func:`interruptible` (which
:func:`~twolink_gym.training.train.train` wraps around the learning loop, whose
interruption it handles by saving the run). A SIGINT that arrives elsewhere is
remembered: :func:`interruptible` raises on entry, and the worker checks
:func:`interrupt_requested` between trials. A second SIGINT outside the
learning loop raises at once (a user's second Ctrl-C is not ignored).

Outside :func:`deferred_interrupts`, SIGINT keeps Python's
behaviour and :func:`interruptible` does nothing.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["defer_interrupts", "deferred_interrupts", "interrupt_requested", "interruptible"]


class _Gate:
    """The interrupt state of the process (one per process)."""

    deferring = False  # inside deferred_interrupts()
    open = False  # inside interruptible()
    requested = 0  # SIGINTs received while deferring


_gate = _Gate()


def _on_interrupt(signum: int, frame: Any) -> None:
    _gate.requested += 1
    if _gate.open or _gate.requested > 1:
        raise KeyboardInterrupt


def _install(handled: tuple[int, ...]) -> list[Any]:
    """Start deferring with a clear state; handle ``handled``; the handlers they had."""
    before = [signal.getsignal(s) for s in handled]
    _gate.deferring, _gate.open, _gate.requested = True, False, 0
    for signum in handled:
        signal.signal(signum, _on_interrupt)
    return before


def defer_interrupts() -> None:
    """Handle SIGINT as described in the module docstring for the rest of this process.

    For a worker process (its initialiser); in the main thread. A process started
    in the background by a non-interactive shell (``cmd &``, ``nohup``) inherits
    SIGINT ignored: this installs a handler all the same, so that the SIGINT
    its parent sends stops it.
    """
    _install((signal.SIGINT,))


@contextlib.contextmanager
def deferred_interrupts(*signals: int) -> Iterator[None]:
    """Inside: SIGINT (and ``signals``) are handled as described in the module docstring.

    SIGINT is handled even if it was ignored before (see :func:`defer_interrupts`).
    On exit the earlier handlers and state come back (a deferred interrupt is
    then forgotten: check :func:`interrupt_requested` before leaving). Outside
    the main thread it changes nothing: Python runs signal handlers in the main
    thread only.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handled = (signal.SIGINT, *signals)
    state = (_gate.deferring, _gate.open, _gate.requested)
    before = _install(handled)
    try:
        yield
    finally:
        for signum, handler in zip(handled, before, strict=True):
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        _gate.deferring, _gate.open, _gate.requested = state


def interrupt_requested() -> bool:
    """Whether a deferred SIGINT arrived (always False outside :func:`deferred_interrupts`)."""
    return _gate.deferring and _gate.requested > 0


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """A block that SIGINT interrupts at once (``KeyboardInterrupt``).

    Raises
    ------
    KeyboardInterrupt
        On entry, if an interrupt was deferred before it.
    """
    if interrupt_requested():
        raise KeyboardInterrupt
    was_open, _gate.open = _gate.open, True
    try:
        yield
    finally:
        _gate.open = was_open
