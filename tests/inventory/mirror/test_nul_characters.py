"""An object holding a NUL character (an annotation, a container's termination message: Kubernetes accepts
any string there) cannot be stored as it is by PostgreSQL (jsonb refuses `\\u0000`, text refuses NUL).
The batch holding it must still be written — the NUL replaced — instead of being retried for ever while
every kind stays "synced" and nothing else reaches the database."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from inventory.kube import connect
from inventory.mirror.runner import Mirror, MirrorHandle, wait_for_sync
from inventory.models import KubeObject
from tests.inventory.mirror.helpers import wait_for_db_to_equal_cluster, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def mirror(simcluster: Any) -> Iterator[MirrorHandle]:
    handle = Mirror(connect(str(simcluster.kubeconfig_path)), inactivity_timeout=30).start()
    assert wait_for_sync(handle, timeout=30)
    yield handle
    handle.stop()


def test_an_object_with_a_nul_character_is_mirrored_and_later_events_follow(
    simcluster: Any, mirror: MirrorHandle
) -> None:
    node = simcluster.store.list("nodes")[0]["metadata"]["name"]
    simcluster.store.patch("nodes", node, {"metadata": {"annotations": {"example.com/note": "a\u0000b"}}})
    simcluster.store.patch("nodes", node, {"metadata": {"labels": {"example.com/after": "yes"}}})

    wait_for_db_to_equal_cluster(simcluster)
    raw = KubeObject.objects.get(kind="nodes", name=node).raw
    assert raw["metadata"]["labels"]["example.com/after"] == "yes"
    # SQLite keeps the NUL; PostgreSQL gets the replacement character.
    assert raw["metadata"]["annotations"]["example.com/note"] in ("a\u0000b", "a\ufffdb")
    wait_until(mirror.caught_up, what="the writer to catch up")
