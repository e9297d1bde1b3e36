"""Live progress of a run over its websocket: the current state on connect, then every change — sent
by the worker process and relayed through the web process onto its in-memory channel layer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser, User

from allocation.routing import websocket_urlpatterns
from allocation.services import whatif_run_create
from allocation.supervisor import start_embedded_worker, stop_embedded_worker
from tests.allocation import whatif_objects as o
from tests.allocation.whatif_objects import _migrated_sqlite_file, shared_db  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def worker(shared_db: str) -> Iterator[None]:  # noqa: F811
    yield
    stop_embedded_worker()


def communicator(run_id: Any, user: Any) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(URLRouter(websocket_urlpatterns), f"/ws/whatif/{run_id}/")
    comm.scope["user"] = user
    return comm


@database_sync_to_async
def create_run() -> tuple[User, str]:
    o.store(*o.small_cluster().values())
    user = User.objects.create_user("wanda")
    run = whatif_run_create(
        kind="headroom", input={"source": "class", "deviceClassName": o.DRIVER}, user=user
    )
    return user, str(run.id)


async def test_it_streams_a_runs_progress_from_pending_to_succeeded(worker: None) -> None:
    user, run_id = await create_run()
    comm = communicator(run_id, user)
    connected, _ = await comm.connect()
    assert connected
    first = json.loads(await comm.receive_from(timeout=10))["run"]
    assert first["state"] == "pending"  # the state at connect time, before any worker has it
    await database_sync_to_async(start_embedded_worker)()
    seen = [first]
    while not seen[-1]["finished"]:
        seen.append(json.loads(await comm.receive_from(timeout=20))["run"])
    await comm.disconnect()
    assert seen[-1]["state"] == "succeeded"
    assert seen[-1]["percent"] == 100
    running = [s for s in seen if s["state"] == "running"]
    assert running and running[0]["phase"] == "reading the inventory"
    assert "placing copies node by node" in {s["phase"] for s in running}


async def test_it_refuses_a_websocket_without_login() -> None:
    _, run_id = await create_run()
    comm = communicator(run_id, AnonymousUser())
    connected, code = await comm.connect()
    assert not connected
    assert code == 4401


async def test_a_run_that_ends_while_the_socket_connects_is_not_shown_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The run ends (and says so to its group) just after the socket read its state: the page must
    still learn it ended, not show "pending" for ever."""
    from channels.layers import get_channel_layer

    from allocation.consumers import WhatIfRunConsumer
    from allocation.publish import run_group

    user, run_id = await create_run()
    read_state = WhatIfRunConsumer.__dict__["_state"]  # the decorated method, unbound

    async def state_then_the_run_ends(self: WhatIfRunConsumer, rid: str) -> dict[str, Any] | None:
        state = await read_state.__get__(self, WhatIfRunConsumer)(rid)
        assert state is not None
        ended = {**state, "state": "succeeded", "finished": True, "percent": 100}
        await get_channel_layer().group_send(run_group(rid), {"type": "whatif.progress", "run": ended})
        return state

    monkeypatch.setattr(WhatIfRunConsumer, "_state", state_then_the_run_ends)
    comm = communicator(run_id, user)
    connected, _ = await comm.connect()
    assert connected
    assert json.loads(await comm.receive_from(timeout=5))["run"]["state"] == "pending"
    assert json.loads(await comm.receive_from(timeout=5))["run"]["state"] == "succeeded"
    await comm.disconnect()
