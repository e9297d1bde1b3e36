"""The mirror process's own probes: /healthz, and /readyz saying leader or follower (a follower is ready)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from inventory.mirror.probe import serve_probes


def get(port: int, path: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_it_reports_the_role_and_is_unready_only_for_a_leader_whose_writer_stopped() -> None:
    state: dict[str, Any] = {"role": "follower", "writer": False}

    def ready() -> tuple[bool, dict[str, Any]]:
        return state["writer"] or state["role"] != "leader", dict(state)

    server = serve_probes(0, healthy=lambda: True, ready=ready)
    port = server.server_address[1]
    try:
        assert get(port, "/healthz") == (200, {"status": "ok"})
        assert get(port, "/readyz") == (200, {"status": "ok", "role": "follower", "writer": False})
        state.update(role="leader", writer=True)
        assert get(port, "/readyz")[0] == 200
        state["writer"] = False
        assert get(port, "/readyz") == (503, {"status": "not ready", "role": "leader", "writer": False})
    finally:
        server.shutdown()
