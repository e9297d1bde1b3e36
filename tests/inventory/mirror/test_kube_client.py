"""inventory.kube against simcluster over HTTP: raw JSON lists, pages, watches, writes and errors."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from inventory.kube import KIND, KubeError, connect

RULE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceTaintRule",
    "metadata": {"name": "client-test"},
    "spec": {
        "deviceSelector": {"driver": "gpu.example.com"},
        "taint": {"key": "example.com/t", "effect": "None"},
    },
}


def test_it_lists_raw_json_in_pages_that_add_up_to_the_whole(simcluster: Any) -> None:
    client = connect(str(simcluster.kubeconfig_path))

    first, rv, token = client.list_objects("resourceslices", limit=2)
    everything, list_rv = client.list_all("resourceslices", page_size=2)

    assert len(first) == 2 and token and rv
    assert isinstance(first[0], dict) and first[0]["kind"] == "ResourceSlice"
    assert {s["metadata"]["uid"] for s in everything} == {
        s["metadata"]["uid"] for s in simcluster.store.list("resourceslices")
    }
    assert list_rv


def test_it_streams_watch_events_after_a_resource_version(simcluster: Any) -> None:
    client = connect(str(simcluster.kubeconfig_path))
    _items, rv = client.list_all("devicetaintrules")
    simcluster.store.create("devicetaintrules", RULE)

    events = list(
        itertools.islice(
            client.watch_objects("devicetaintrules", resource_version=rv, timeout_seconds=5, read_timeout=10),
            1,
        )
    )

    assert events[0][0] == "ADDED"
    assert events[0][1]["metadata"]["name"] == "client-test"


def test_it_raises_410_as_gone_for_a_compacted_resource_version(simcluster: Any) -> None:
    client = connect(str(simcluster.kubeconfig_path))
    _items, rv = client.list_all("deviceclasses")
    simcluster.store.create("devicetaintrules", RULE)
    simcluster.faults.compact_history()

    with pytest.raises(KubeError) as error:
        list(client.watch_objects("deviceclasses", resource_version=rv, timeout_seconds=5, read_timeout=10))

    assert error.value.is_gone


def test_it_creates_patches_and_deletes_taint_rules_with_dry_run_support(simcluster: Any) -> None:
    client = connect(str(simcluster.kubeconfig_path))

    dry = client.create_object("devicetaintrules", RULE, dry_run=True)
    assert dry["metadata"]["name"] == "client-test"
    assert not simcluster.store.list("devicetaintrules")

    created = client.create_object("devicetaintrules", RULE)
    patched = client.patch_object(
        "devicetaintrules", "client-test", {"spec": {"taint": {"effect": "NoSchedule"}}}
    )
    assert patched["spec"]["taint"]["effect"] == "NoSchedule"
    assert (
        client.get_object("devicetaintrules", "client-test")["metadata"]["uid"] == created["metadata"]["uid"]
    )

    client.delete_object("devicetaintrules", "client-test", uid=created["metadata"]["uid"])
    assert not simcluster.store.list("devicetaintrules")


def test_it_maps_api_errors_to_kube_error_with_reason_and_causes(simcluster: Any) -> None:
    client = connect(str(simcluster.kubeconfig_path))

    with pytest.raises(KubeError) as missing:
        client.get_object("devicetaintrules", "nope")
    bad = {**RULE, "spec": {"taint": {"key": "example.com/t", "effect": "Sometimes"}}}
    with pytest.raises(KubeError) as invalid:
        client.create_object("devicetaintrules", bad)

    assert (missing.value.status, missing.value.reason) == (404, "NotFound")
    assert invalid.value.status == 422 and invalid.value.reason == "Invalid"
    assert any("effect" in str(c.get("field", "")) for c in invalid.value.causes)


def test_it_refuses_a_uid_precondition_that_does_not_match(simcluster: Any) -> None:
    client = connect(str(simcluster.kubeconfig_path))
    client.create_object("devicetaintrules", RULE)

    with pytest.raises(KubeError) as conflict:
        client.delete_object("devicetaintrules", "client-test", uid="00000000-0000-0000-0000-000000000000")

    assert conflict.value.status == 409


def test_it_discovers_the_server_version_and_served_kinds(simcluster: Any) -> None:
    client = connect(str(simcluster.kubeconfig_path))

    version = client.server_version()
    served = client.served_resources("resource.k8s.io/v1")

    assert version.get("gitVersion", "").startswith("v1.37")
    assert {"resourceslices", "resourceclaims", "devicetaintrules", "deviceclasses"} <= served
    assert client.served_resources("example.com/v9") == set()
    assert all(isinstance(client.is_served(kind), bool) for kind in KIND)


def test_it_reports_a_connection_failure_as_kube_error(tmp_path: Any) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'http://127.0.0.1:9'}}]\n"
        "users: [{name: u, user: {}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
    )
    client = connect(str(kubeconfig))

    with pytest.raises(KubeError) as error:
        client.server_version()

    assert error.value.status == 0 and error.value.reason == "ConnectionError"


def test_it_refuses_an_unknown_kind_naming_the_known_ones(simcluster: Any) -> None:
    client = connect(str(simcluster.kubeconfig_path))

    with pytest.raises(ValueError, match="devicetaintrules"):
        client.list_objects("gadgets")


def test_it_records_dradash_as_the_field_manager_of_its_writes(simcluster: Any) -> None:
    client = connect(str(simcluster.kubeconfig_path))

    client.create_object("devicetaintrules", RULE)
    client.patch_object("devicetaintrules", "client-test", {"spec": {"taint": {"effect": "NoSchedule"}}})

    stored = simcluster.store.get("devicetaintrules", "client-test")
    # the eviction controller may have written the rule's status meanwhile, under its own name, as upstream's does
    spec_writers = {e["manager"] for e in stored["metadata"]["managedFields"] if not e.get("subresource")}
    assert spec_writers == {"dradash"}


def test_it_impersonates_a_user_with_one_header_line_per_group(simcluster: Any) -> None:
    from inventory.kube import Identity

    client = connect(str(simcluster.kubeconfig_path))
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}

    answer = client.create_object("selfsubjectreviews", review, as_user=Identity("alice", ("sre", "oncall")))

    info = answer["status"]["userInfo"]
    assert info["username"] == "alice"
    assert {"sre", "oncall"} <= set(info["groups"])
    assert not client.can_i(verb="create", resource="devicetaintrules", group="resource.k8s.io",
                            as_user=Identity("alice", ("sre",)))  # fmt: skip
    assert client.can_i(verb="create", resource="devicetaintrules", group="resource.k8s.io")


class _Stream:
    def __init__(self, *chunks: bytes) -> None:
        self.chunks = chunks

    def stream(self, amt: int, decode_content: bool = True) -> Any:
        return iter(self.chunks)


@pytest.mark.parametrize("line", [b"0", b"null", b'"ADDED"', b"[]", b'{"type": "ADDED", "object": [1]}'])
def test_a_watch_line_that_is_json_but_not_an_event_is_a_broken_stream(line: bytes) -> None:
    """A proxy that garbles a stream may leave a line that parses (a chunk size, `null`): a KubeError,
    which the reflector answers by watching again from its rv, not an AttributeError that ends its thread."""
    from inventory.kube.client import _split_events

    good = b'{"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "7"}}}\n'
    events = _split_events(_Stream(good, line + b"\n", good), "pods")
    assert next(events)[0] == "BOOKMARK"
    with pytest.raises(KubeError) as raised:
        next(events)
    assert raised.value.reason == "InvalidResponse"
