"""SIGTERM and SIGHUP as exceptions, so `finally` blocks that remove what linerate created run
when a user or a supervisor stops it (SIGINT already raises KeyboardInterrupt). SIGKILL cannot be
caught: for that, every creation is recorded first (lab/registry.py) and `lab clean` finishes.

A SIGHUP or SIGINT that linerate was started with ignored stays ignored, as POSIX tools keep it:
`nohup` (nohup(1): "run a command immune to hangups") and a non-interactive shell's background job
(POSIX Shell Command Language, 2.9.3.1 Asynchronous AND-OR Lists: SIGINT and SIGQUIT ignored) ask
for exactly that. SIGTERM (systemd, timeout(1), kill) always ends a run.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator

from linerate.errors import Interrupted

TERMINATIONS = (signal.SIGTERM, signal.SIGHUP)


class _Deferring(threading.local):
    active = False  # a terminations_deferred block is running on this thread


_deferring = _Deferring()


def _kept_ignored(sig: int) -> bool:
    """A SIGHUP or SIGINT ignored now (nohup, a background job) stays so; SIGTERM never does."""
    return sig != signal.SIGTERM and signal.getsignal(sig) == signal.SIG_IGN


def raise_interrupted(signum, _frame):
    raise Interrupted(f"stopped by {signal.Signals(signum).name}; what was created was removed", signum)


@contextlib.contextmanager
def terminations_raise() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # handlers can only be set on the main thread; the caller's own handlers stay
        return
    saved = {sig: signal.signal(sig, raise_interrupted) for sig in TERMINATIONS if not _kept_ignored(sig)}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def terminations_deferred() -> Iterator[None]:
    """A block that must not be cut in half (putting a DUT's knobs back, removing what a run made): a
    SIGINT, SIGTERM or SIGHUP that arrives inside is held until the block has finished, then raised
    (KeyboardInterrupt or Interrupted) — unless the block ends by an exception of its own, which goes on,
    or the block is a clean-up run while a signal already ends the command (a second Ctrl-C or TERM):
    that one is already on its way out, and raising again would skip the clean-ups after this one."""
    if threading.current_thread() is not threading.main_thread() or _deferring.active:
        yield  # a block inside a deferring one: the outer block holds the signal until it has finished
        return
    ending = isinstance(sys.exc_info()[1], (KeyboardInterrupt, Interrupted))
    held: list[int] = []
    saved = {sig: signal.signal(sig, lambda signum, _frame: held.append(signum))
             for sig in (*TERMINATIONS, signal.SIGINT) if not _kept_ignored(sig)}
    _deferring.active = True
    try:
        yield
    finally:
        _deferring.active = False
        for sig, handler in saved.items():
            signal.signal(sig, handler)
    if held and not ending and held[0] == signal.SIGINT:
        raise KeyboardInterrupt
    if held and not ending:
        raise_interrupted(held[0], None)
