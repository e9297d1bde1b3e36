"""Stopping a long-running command on SIGTERM or SIGINT without a deadlock.

A Python signal handler runs in the main thread between two bytecodes, possibly while that thread holds a
lock, such as the Condition that `threading.Event.wait` holds around its checks. A handler that sets an
Event (or takes any lock) can then wait forever on its own thread: simcluster kept serving after its parent
died that way (CI; py-spy showed the handler's `Event.set` blocked inside the main thread's `Event.wait`).
Here the interpreter's C-level handler writes the signal's number to a pipe (`signal.set_wakeup_fd`) and a
thread of its own reads it and calls `on_signal`, outside anything the main thread holds.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterable
from types import FrameType

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def on_stop_signals(
    on_signal: Callable[[int], None], signals: Iterable[signal.Signals] = STOP_SIGNALS
) -> None:
    """From now on, each of `signals` calls `on_signal(signum)` from the thread "stop-signals". Call it from
    the main thread (Python's rule for signal handlers), once per process: it takes the wakeup fd."""
    wanted = {int(signum) for signum in signals}
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    for signum in wanted:
        signal.signal(signum, _through_the_pipe)

    def relay() -> None:
        while data := os.read(read_fd, 64):
            for signum in data:
                if signum in wanted:
                    on_signal(signum)

    threading.Thread(target=relay, name="stop-signals", daemon=True).start()


def _through_the_pipe(signum: int, frame: FrameType | None) -> None:
    """Nothing to do here, in the main thread: the signal's number reached the wakeup fd already."""
