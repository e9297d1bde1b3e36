"""The Redis channel layer the websockets run on in production (the Helm chart's, REDIS_URL's).

channels_redis's layer, with two timings set deliberately and one Python 3.11 hazard closed:

- A socket waits for its next message with a BZPOPMIN of `brpop_timeout` seconds, then asks again.
  redis-py 8 gives up on any reply after its socket timeout (5 s unless told), the same 5 s as
  channels_redis's BZPOPMIN: an idle live page's read timed out, its consumer died, and the page dropped
  and reconnected every few seconds. Here the wait is 2 s and the timeout 8 s, so an idle read always
  has its answer in time, and a Redis that stops answering is still noticed within seconds (the sockets
  close, and the pages say they are not live) instead of hanging every page on a dead connection.
- With a socket timeout, redis-py sends each command inside `asyncio.wait_for`, which on Python 3.11
  swallows a cancellation that arrives as the send completes. A cancelled receive then went on waiting
  for messages for ever (a closed page's consumer, the session guard's listener, an event loop that
  never finished closing). `_brpop_with_clean` honours a cancellation still pending on its task after
  each wait; a message it took is kept in channels_redis's backup queue and given to the next receive.
"""

from __future__ import annotations

import asyncio
from typing import Any

from channels_redis.core import RedisChannelLayer as _RedisChannelLayer

#: seconds a socket's BZPOPMIN waits for a message before asking again: well inside SOCKET_TIMEOUT
BRPOP_TIMEOUT = 2
#: seconds redis-py waits for any reply: a Redis silent for longer is treated as gone
SOCKET_TIMEOUT = 8.0
CONNECT_TIMEOUT = 5.0


class RedisChannelLayer(_RedisChannelLayer):  # type: ignore[misc]
    brpop_timeout = BRPOP_TIMEOUT

    async def _brpop_with_clean(self, index: int, channel: str, timeout: float) -> Any:
        member = await super()._brpop_with_clean(index, channel, timeout)
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            # a cancel the send's wait_for swallowed (Python 3.11): the task is to stop, not wait again
            raise asyncio.CancelledError
        return member


def redis_channel_layer(
    url: str, *, capacity: int, socket_timeout: float = SOCKET_TIMEOUT
) -> dict[str, object]:
    """CHANNEL_LAYERS["default"] for the Redis at `url` (`socket_timeout` above BRPOP_TIMEOUT)."""
    if socket_timeout <= BRPOP_TIMEOUT:
        raise ValueError(
            f"socket_timeout {socket_timeout} s must exceed the {BRPOP_TIMEOUT} s wait for a message"
        )
    return {
        "BACKEND": "dradash.channel_layer.RedisChannelLayer",
        "CONFIG": {
            # Measured: the default pool (100) and capacity (100) drop group messages silently under load.
            "hosts": [
                {
                    "address": url,
                    "max_connections": 1000,
                    "socket_timeout": socket_timeout,
                    "socket_connect_timeout": CONNECT_TIMEOUT,
                }
            ],
            "capacity": capacity,
            "expiry": 60,
        },
    }
