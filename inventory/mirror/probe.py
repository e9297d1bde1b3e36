"""The mirror process's probes: a tiny HTTP server (stdlib) on DRADASH_MIRROR_PROBE_PORT.

`/healthz`: the process's main loop runs. `/readyz`: its role — `{"role": "leader"|"follower"|"single",
"identity", "holder", "writer"}`. A follower is ready (it stands by; failing it would stall every rollout);
a leader or single mirror whose writer stopped is not (503), and exits soon after anyway.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

log = logging.getLogger(__name__)

Status = Callable[[], tuple[bool, dict[str, Any]]]


def serve_probes(port: int, *, healthy: Callable[[], bool], ready: Status) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            if self.path == "/healthz":
                ok, body = healthy(), {}
            elif self.path == "/readyz":
                ok, body = ready()
            else:
                self.send_error(404)
                return
            payload = json.dumps({"status": "ok" if ok else "not ready", **body}).encode()
            self.send_response(200 if ok else 503)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("probe: " + format, *args)

    server = ThreadingHTTPServer(("0.0.0.0", port), Handler)  # noqa: S104 (the kubelet probes the pod IP)
    threading.Thread(target=server.serve_forever, name="mirror-probes", daemon=True).start()
    return server
