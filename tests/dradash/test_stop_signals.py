"""SIGTERM stops a long-running process even when it lands while the main thread holds a lock: the stop
must not be taken in the signal handler (an `Event.set` there deadlocked inside the main thread's
`Event.wait`, and simcluster outlived the demo that started it)."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The main thread holds the Event's own lock (as `Event.wait` does around its checks) when SIGTERM arrives.
HELD_WHEN_SIGNALLED = """
import os, signal, threading, time
stop = threading.Event()
{install}
with stop._cond:
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(0.3)  # the signal's Python-level handler runs here, in this thread
print("stopped" if stop.wait(5) else "not stopped", flush=True)
"""
THROUGH_THE_PIPE = (
    "from dradash.stopsignals import on_stop_signals\non_stop_signals(lambda signum: stop.set())"
)
IN_THE_HANDLER = "signal.signal(signal.SIGTERM, lambda *_: stop.set())"


def _run(install: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
    code = textwrap.dedent(HELD_WHEN_SIGNALLED.format(install=install))
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def test_a_stop_signal_that_lands_while_the_main_thread_holds_the_events_lock_still_stops() -> None:
    done = _run(THROUGH_THE_PIPE)
    assert done.stdout.strip() == "stopped", done.stderr


def test_the_handler_that_sets_the_event_itself_deadlocks_there() -> None:
    """The case the module exists for, so the test above is known to be able to fail."""
    with pytest.raises(subprocess.TimeoutExpired):
        _run(IN_THE_HANDLER, timeout=4)


def test_on_stop_signals_calls_back_once_per_signal_with_its_number() -> None:
    code = textwrap.dedent("""
        import os, signal, threading
        from dradash.stopsignals import on_stop_signals
        seen, both = [], threading.Event()
        def note(signum):
            seen.append(signum)
            if len(seen) == 2:
                both.set()
        on_stop_signals(note)
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGTERM)
        print(sorted(seen) if both.wait(5) else "missing", flush=True)
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=20)
    assert done.stdout.strip() == str(sorted([int(signal.SIGINT), int(signal.SIGTERM)])), done.stderr
