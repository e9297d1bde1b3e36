"""A kind the server no longer serves (an alpha API whose feature gate was turned off, a downgrade): the
server holds none of its objects, so neither may the database. The status leaves a kind "not served" out
of its problems and of the data's age, so rows left from when it was served would be shown as current."""

from __future__ import annotations

from typing import Any

import pytest

from inventory.kube import connect
from inventory.mirror.runner import Mirror, wait_for_sync
from inventory.models import NOT_SERVED, KubeObject, WatchState
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db(transaction=True)

KIND = "resourcepoolstatusrequests"


def not_serving(simcluster: Any) -> Any:
    """A client of a server without the kind (simcluster serves every kind: discovery says otherwise)."""
    client = connect(str(simcluster.kubeconfig_path))
    served = client.served_resources
    client.served_resources = lambda group_version: served(group_version) - {KIND}  # type: ignore[method-assign]
    return client


def held_request() -> None:
    request = {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourcePoolStatusRequest",
        "metadata": f.meta("left-over", rv=7),
        "spec": {"driver": "gpu.example.com"},
    }
    f.replace(KIND, [request], rv="7")
    assert WatchState.objects.get(kind=KIND).resource_version == "7"


def test_the_running_mirror_forgets_the_objects_of_a_kind_the_server_does_not_serve(simcluster: Any) -> None:
    client = not_serving(simcluster)
    held_request()

    handle = Mirror(client, inactivity_timeout=30).start(resume=True)
    try:
        assert wait_for_sync(handle, timeout=30)
    finally:
        handle.stop()

    state = WatchState.objects.get(kind=KIND)
    assert (state.state, state.error, state.resource_version) == ("stopped", NOT_SERVED, "")
    assert not KubeObject.objects.filter(kind=KIND).exists()


def test_sync_once_forgets_them_too(simcluster: Any) -> None:
    client = not_serving(simcluster)
    held_request()

    Mirror(client).sync_once()

    state = WatchState.objects.get(kind=KIND)
    assert (state.state, state.error, state.resource_version) == ("stopped", NOT_SERVED, "")
    assert not KubeObject.objects.filter(kind=KIND).exists()
