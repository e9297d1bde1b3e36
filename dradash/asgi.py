import asyncio
import os
from typing import Any

from django.conf import settings
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dradash.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from allocation.middleware import FORM_MAX_BYTES  # noqa: E402
from allocation.supervisor import start_embedded_worker, stop_embedded_worker  # noqa: E402
from dradash import realtime  # noqa: E402
from dradash.bodylimit import BodySizeGuard  # noqa: E402
from dradash.routing import websocket_urlpatterns  # noqa: E402
from dradash.sessionguard import SessionGuard  # noqa: E402
from maintenance.driver import start_drain_driver, stop_drain_driver  # noqa: E402

#: uvicorn's websocket protocol wherever it serves this app (`--ws` in the Containerfile and the chart, the
#: demo, the tests' server): its default, websockets' sans-I/O, never answers a handshake whose request
#: line is over 8 KiB and holds the connection open; wsproto answers it.
WEBSOCKET_PROTOCOL = "wsproto"


def _most_read_bytes() -> int:
    """Twice the largest body a view reads (the API's limit, the what-if form's): a body between the two
    still reaches the view, whose own 413 keeps the form and names the limit; anything bigger is absurd."""
    return 2 * max(settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0, FORM_MAX_BYTES)


#: every websocket's guard (the tests shorten its `check_seconds`)
session_guard = SessionGuard(URLRouter(websocket_urlpatterns))

router = ProtocolTypeRouter(
    {
        "http": BodySizeGuard(django_asgi_app, max_bytes=_most_read_bytes),
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(session_guard)),
    }
)


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The router, plus: remember the server's event loop so other threads can broadcast onto it, and
    run the embedded what-if worker process for as long as the server runs."""
    if scope["type"] == "lifespan":
        loop = asyncio.get_running_loop()
        realtime.register_server_loop(loop)
        embedded = settings.DRADASH_EMBEDDED_WORKER
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                if embedded:  # the what-if worker process; runs left pending by a restart start now
                    await asyncio.to_thread(start_embedded_worker, loop=loop)
                    # the drain driver (a thread): drains left running by a restart resume now
                    await asyncio.to_thread(start_drain_driver)
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if embedded:
                    await asyncio.to_thread(stop_drain_driver)
                    await asyncio.to_thread(stop_embedded_worker)
                await send({"type": "lifespan.shutdown.complete"})
                return
    realtime.register_server_loop(asyncio.get_running_loop())
    await router(scope, receive, send)
