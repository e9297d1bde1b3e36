"""`manage.py drain_driver`: a process that drives every running drain (maintenance.driver) until stopped."""

from __future__ import annotations

import threading
from typing import Any

from django.core.management.base import BaseCommand

from dradash.stopsignals import on_stop_signals
from maintenance.driver import DrainDriver


class Command(BaseCommand):
    help = "Drive the running device drains (PDB-aware evictions) from the database until stopped."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--every", type=float, default=1.0, help="seconds between steps (default 1)")

    def handle(self, *args: Any, **options: Any) -> None:
        stop = threading.Event()
        on_stop_signals(lambda _signum: stop.set())
        driver = DrainDriver(every=float(options["every"])).start()
        self.stdout.write(f"drain driver {driver.token} running", ending="\n")
        self.stdout.flush()
        stop.wait()
        driver.stop()
