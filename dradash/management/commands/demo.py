"""`manage.py demo`: the whole product on one machine.

Starts the simulated cluster as its own process (product code talks to it only over HTTP, through the
kubeconfig it writes), migrates the database, creates the roles and a demo admin (printing the
password), then serves the dashboard with the mirror in a thread and the what-if worker as a child process
(started by the ASGI lifespan, restarted if it dies, gone with the server).
"""

from __future__ import annotations

import ctypes
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from dradash.env import env_features


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _die_with_parent() -> None:
    """In the simcluster child: get SIGTERM when the demo process dies, however it dies (Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Command(BaseCommand):
    help = "Start simcluster (demo topology) and the dashboard at http://127.0.0.1:8000 with demo data."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--topology", default="demo", help="simcluster topology (default: demo)")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000, help="dashboard port (default: 8000)")
        parser.add_argument("--cluster-port", type=int, default=6443, help="simcluster port (default: 6443)")
        parser.add_argument(
            "--kubeconfig",
            default="",
            help="use this existing cluster instead of starting simcluster (e.g. a real cluster)",
        )
        parser.add_argument(
            "--admin-password", default="", help="password for the demo admin (default: random)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        var = Path(settings.BASE_DIR) / "var"
        (var / "staticfiles").mkdir(parents=True, exist_ok=True)
        cluster: subprocess.Popen[bytes] | None = None
        mirror: Any = None
        # SIGTERM (kill, systemd, a container runtime) stops the demo like Ctrl-C: the `finally` below runs
        # and stops simcluster. uvicorn hands the signal back to this handler after its own shutdown.
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
        kubeconfig = options["kubeconfig"]
        if not kubeconfig:
            kubeconfig = str(var / "demo-kubeconfig")
            cluster = self.start_simcluster(options["topology"], options["cluster_port"], Path(kubeconfig))
            # the what-if allocator assumes the gates the demo cluster runs with
            os.environ["DRADASH_FEATURES"] = "all"
            settings.DRADASH_FEATURES = env_features("DRADASH_FEATURES")
        try:
            call_command("migrate", interactive=False, verbosity=0)
            self.create_users(options["admin_password"])
            settings.DRADASH_KUBECONFIG = kubeconfig
            os.environ["DRADASH_KUBECONFIG"] = kubeconfig
            mirror = self.start_background_work(kubeconfig)
            self.serve(options["host"], options["port"])
        finally:
            # the mirror first: its watches would otherwise report the cluster gone, kind by kind
            if mirror is not None:
                mirror.stop(timeout=10)
            if cluster is not None:
                cluster.terminate()
                try:
                    cluster.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    cluster.kill()
            self.stdout.write("demo stopped")

    def start_simcluster(self, topology: str, port: int, kubeconfig: Path) -> subprocess.Popen[bytes]:
        kubeconfig.unlink(missing_ok=True)
        # The cluster's CA and keys stay in var/demo-pki: a restarted demo cluster keeps its identity.
        pki_dir = kubeconfig.parent / "demo-pki"
        command = [
            sys.executable, "-m", "simcluster",
            "--topology", topology,
            "--listen", f"127.0.0.1:{port}",
            "--kubeconfig", str(kubeconfig),
            "--pki-dir", str(pki_dir),
            "--features", "all",  # the demo shows every 1.37 beta and alpha (DRADASH_FEATURES=all below)
        ]  # fmt: skip
        self.stdout.write(f"Starting simcluster: {' '.join(command[1:])}")
        process = subprocess.Popen(command, cwd=settings.BASE_DIR, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise CommandError(f"simcluster exited with code {process.returncode}; is port {port} free?")
            try:
                if kubeconfig.exists():  # written once the server listens; /readyz is open to anyone
                    tls = ssl.create_default_context(cafile=str(pki_dir / "ca.crt"))
                    with urllib.request.urlopen(
                        f"https://127.0.0.1:{port}/readyz", timeout=1, context=tls
                    ) as response:
                        if response.status == 200:
                            return process
            except OSError:
                pass
            time.sleep(0.2)
        process.terminate()
        raise CommandError("simcluster did not become ready within 60 s")

    def create_users(self, password: str) -> None:
        call_command("create_roles", verbosity=0)
        args = ["--password", password] if password else []
        call_command("create_demo_admin", *args)

    def start_background_work(self, kubeconfig: str) -> Any:
        """The mirror runs as a thread here (its handle is returned, to stop it); the embedded what-if
        worker process starts with the ASGI app."""
        from inventory.mirror.runner import start_mirror_thread

        return start_mirror_thread(kubeconfig=kubeconfig, context=settings.DRADASH_KUBE_CONTEXT or None)

    def serve(self, host: str, port: int) -> None:
        import uvicorn

        self.stdout.write(
            self.style.SUCCESS(f"dradash is up: http://{host}:{port}/  (Ctrl-C stops everything)")
        )
        from dradash.asgi import WEBSOCKET_PROTOCOL

        uvicorn.run(
            "dradash.asgi:application",
            host=host,
            port=port,
            lifespan="on",
            log_level="warning",
            ws=WEBSOCKET_PROTOCOL,
        )
