"""`manage.py mirror`: keep the database equal to the cluster (list+watch every DRA kind).

With DRADASH_MIRROR_LEADER_ELECTION=true several replicas may run: the one holding the Lease
DRADASH_MIRROR_LEASE_NAMESPACE/DRADASH_MIRROR_LEASE_NAME mirrors, the others wait to take over.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from dradash.stopsignals import on_stop_signals
from inventory.kube import KubeError, connect
from inventory.mirror.leader import LeaderElector, default_identity
from inventory.mirror.probe import serve_probes
from inventory.mirror.runner import ElectedMirror, Mirror


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
        if options["once"]:
            started = time.monotonic()
            try:
                result = Mirror(client).sync_once()
            except KubeError as exc:
                raise CommandError(f"listing failed: {exc}") from exc
            self.stdout.write(
                f"mirrored {result.count} changes across {len(result.resource_versions)} kinds "
                f"in {time.monotonic() - started:.2f}s"
            )
            return
        stop = threading.Event()

        def on_signal(signum: int) -> None:
            self.stdout.write(f"signal {signum}: stopping after the current batch")
            stop.set()

        on_stop_signals(on_signal)
        if settings.DRADASH_MIRROR_LEADER_ELECTION:
            self._run_elected(client, stop)
        else:
            self._run_single(client, stop)

    def _run_single(self, client: Any, stop: threading.Event) -> None:
        handle = Mirror(client).start(stop)
        self._probes(lambda: (handle.is_alive(), {"role": "single", "writer": handle.is_alive()}))
        self.stdout.write(f"mirroring {client.host} ({len(handle.reflectors)} kinds); SIGTERM stops")
        while not stop.wait(1.0):
            if not handle.is_alive():
                raise CommandError("the mirror writer stopped unexpectedly")
        handle.stop(timeout=15)
        if handle.lost_commits:  # the writer stopped itself (the event is shared): say why, and fail
            raise CommandError(
                f"the database lost committed batches of {', '.join(handle.lost_commits)}; start the mirror "
                "again: it resumes from what the database holds and the watch replays the rest"
            )
        self.stdout.write("stopped")

    def _run_elected(self, client: Any, stop: threading.Event) -> None:
        elector = LeaderElector(
            client,
            name=settings.DRADASH_MIRROR_LEASE_NAME,
            namespace=settings.DRADASH_MIRROR_LEASE_NAMESPACE,
            identity=default_identity(settings.DRADASH_POD_NAME),
            duration_seconds=settings.DRADASH_MIRROR_LEASE_DURATION_SECONDS,
        )
        elected = ElectedMirror(client, elector)

        def ready() -> tuple[bool, dict[str, Any]]:
            handle = elected.handle
            writer = handle is not None and handle.is_alive()
            body = {
                "role": elector.role,
                "identity": elector.identity,
                "holder": elector.holder,
                "writer": writer,
            }
            return (writer or elector.role != "leader"), body

        self._probes(ready)
        self.stdout.write(
            f"{elector.identity}: campaigning for lease {elector.namespace}/{elector.name} "
            f"({elector.duration}s) to mirror {client.host}; SIGTERM stops"
        )
        runner = threading.Thread(target=elected.run, args=(stop,), name="mirror-election", daemon=True)
        runner.start()
        while not stop.wait(1.0):
            handle = elected.handle
            if (
                elector.role == "leader"
                and handle is not None
                and not handle.is_alive()
                and elector.may_write()
            ):
                stop.set()
                runner.join(20)
                raise CommandError("the mirror writer stopped unexpectedly (lease released)")
        runner.join(20)
        self.stdout.write("stopped")

    def _probes(self, ready: Any) -> None:
        port = settings.DRADASH_MIRROR_PROBE_PORT
        if port:
            serve_probes(port, healthy=lambda: True, ready=ready)
            self.stdout.write(f"probes on :{port} (/healthz, /readyz)")
