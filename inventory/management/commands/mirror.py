"""`manage.py mirror`: keep the database equal to the cluster (list+watch every DRA kind)."""

from __future__ import annotations

import signal
import threading
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from inventory.kube import KubeError, connect
from inventory.mirror.runner import Mirror


class Command(BaseCommand):
    help = "Mirror the cluster's DRA objects, pods and nodes into the database (list + watch)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--kubeconfig",
            default=settings.DRADASH_KUBECONFIG,
            help="kubeconfig path (default DRADASH_KUBECONFIG; empty = in-cluster config)",
        )
        parser.add_argument("--context", default=settings.DRADASH_KUBE_CONTEXT, help="kubeconfig context")
        parser.add_argument("--once", action="store_true", help="list everything, write it, and exit")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            client = connect(options["kubeconfig"] or None, options["context"] or None)
        except (KubeError, OSError, ValueError) as exc:
            raise CommandError(f"cannot reach the cluster: {exc}") from exc
        mirror = Mirror(client)
        if options["once"]:
            started = time.monotonic()
            try:
                result = mirror.sync_once()
            except KubeError as exc:
                raise CommandError(f"listing failed: {exc}") from exc
            self.stdout.write(
                f"mirrored {len(result.changes)} changes across {len(result.resource_versions)} kinds "
                f"in {time.monotonic() - started:.2f}s"
            )
            return
        stop = threading.Event()

        def on_signal(signum: int, frame: object) -> None:
            self.stdout.write(f"signal {signum}: stopping after the current batch")
            stop.set()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        handle = mirror.start(stop)
        self.stdout.write(f"mirroring {client.host} ({len(handle.reflectors)} kinds); SIGTERM stops")
        while not stop.wait(1.0):
            if not handle.is_alive():
                raise CommandError("the mirror writer stopped unexpectedly")
        handle.stop(timeout=15)
        self.stdout.write("stopped")
