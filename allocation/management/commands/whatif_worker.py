"""`manage.py whatif_worker`: run what-if runs taken from the database, until stopped.

The web server starts one as its child (`--embedded`, see allocation.supervisor); it can also run on
its own, like `celery -A dradash worker` does with Redis. SIGTERM or SIGINT stops it; runs it was
still answering end as failed with a message saying why, instead of waiting for the reaper.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from allocation.services import whatif_runs_abandon
from allocation.supervisor import PipeRelay
from allocation.worker import Worker, start_warmer
from dradash.realtime import forward_sends
from dradash.stopsignals import on_stop_signals

# The embedded worker yields the CPU to the web process it serves: with both busy on a small machine,
# the scheduler runs the web first (bench/bench_whatif_isolation.py).
EMBEDDED_NICENESS = 10
STOPPED = "the what-if worker stopped (the server shut down or restarted) while this ran — run it again"


class Command(BaseCommand):
    help = "Run what-if runs from the database (the embedded worker; Celery workers serve Redis)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--threads", type=int, default=settings.DRADASH_WHATIF_WORKER_THREADS)
        parser.add_argument(
            "--embedded", action="store_true", help="a child of the web server: stop at end of stdin"
        )
        parser.add_argument("--relay-fd", type=int, default=None, help="write broadcasts to this pipe")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["embedded"]:
            os.nice(EMBEDDED_NICENESS)
        if options["relay_fd"] is not None:
            forward_sends(PipeRelay(options["relay_fd"]))
        worker = Worker(threads=max(1, options["threads"]))

        def stop(*_: Any) -> None:
            worker.stop.set()
            worker.wake.set()

        on_stop_signals(stop)
        if options["embedded"]:
            threading.Thread(
                target=_follow_parent, args=(worker, stop), name="whatif-parent", daemon=True
            ).start()
        start_warmer(every=settings.DRADASH_WHATIF_WARM_SECONDS)
        worker.run()
        whatif_runs_abandon(run_ids=worker.in_flight(), error=STOPPED)


def _follow_parent(worker: Worker, stop: Any) -> None:
    """Each line on stdin is a wake-up; end of file means the web server is gone, so this goes too."""
    for _ in sys.stdin.buffer:
        worker.wake.set()
    stop()
