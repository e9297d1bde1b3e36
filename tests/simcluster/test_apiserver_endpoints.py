"""kube-apiserver's endpoint reconciler: the `kubernetes` Service in `default` has its Endpoints and its
EndpointSlice, naming the API server's advertised address and secure port (the Service's targetPort). Deleted
or edited, they are put back; other edits stay."""

from __future__ import annotations

import uuid

import pytest
from kubernetes import client

from simcluster.store import APISERVER_ADVERTISE_ADDRESS, APISERVER_SECURE_PORT
from tests.simcluster.conftest import Http, Kubectl


def test_the_kubernetes_service_has_its_endpoints_and_endpoint_slice(api: client.ApiClient) -> None:
    core, discovery = client.CoreV1Api(api), client.DiscoveryV1Api(api)
    service = core.read_namespaced_service("kubernetes", "default")
    assert service.spec.ports[0].target_port == APISERVER_SECURE_PORT

    endpoints = core.read_namespaced_endpoints("kubernetes", "default")
    assert endpoints.metadata.labels == {"endpointslice.kubernetes.io/skip-mirror": "true"}
    [subset] = endpoints.subsets
    assert [a.ip for a in subset.addresses] == [APISERVER_ADVERTISE_ADDRESS]
    assert [(p.name, p.port, p.protocol) for p in subset.ports] == [("https", APISERVER_SECURE_PORT, "TCP")]

    slices = discovery.list_namespaced_endpoint_slice(
        "default", label_selector="kubernetes.io/service-name=kubernetes"
    )
    [eps] = slices.items
    assert eps.address_type == "IPv4"
    assert [(e.addresses, e.conditions.ready) for e in eps.endpoints] == [
        ([APISERVER_ADVERTISE_ADDRESS], True)
    ]
    assert [(p.name, p.port) for p in eps.ports] == [("https", APISERVER_SECURE_PORT)]


def test_deleted_or_edited_they_are_put_back(api: client.ApiClient) -> None:
    core, discovery = client.CoreV1Api(api), client.DiscoveryV1Api(api)
    before = core.read_namespaced_endpoints("kubernetes", "default")

    core.delete_namespaced_endpoints("kubernetes", "default")
    again = core.read_namespaced_endpoints("kubernetes", "default")
    assert again.metadata.uid != before.metadata.uid
    assert again.subsets[0].addresses[0].ip == APISERVER_ADVERTISE_ADDRESS

    core.patch_namespaced_endpoints(
        "kubernetes", "default",
        {"metadata": {"annotations": {"team": "net"}}, "subsets": [{"addresses": [{"ip": "10.9.9.9"}],
                                                                      "ports": [{"port": 1}]}]},
    )  # fmt: skip
    repaired = core.read_namespaced_endpoints("kubernetes", "default")
    assert repaired.subsets[0].addresses[0].ip == APISERVER_ADVERTISE_ADDRESS
    assert repaired.metadata.annotations == {"team": "net"}  # not the reconciler's: it stays

    discovery.delete_namespaced_endpoint_slice("kubernetes", "default")
    assert discovery.read_namespaced_endpoint_slice("kubernetes", "default").endpoints[0].addresses == [
        APISERVER_ADVERTISE_ADDRESS
    ]


def test_other_endpoints_stay_as_written(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_endpoints(
        "default",
        {
            "metadata": {"name": "db"},
            "subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 5432}]}],
        },
    )
    core.delete_namespaced_endpoints("db", "default")
    assert [e.metadata.name for e in core.list_namespaced_endpoints("default").items] == ["kubernetes"]


@pytest.mark.kubectl
def test_kubectl_describes_the_kubernetes_service_with_its_endpoints(kubectl: Kubectl) -> None:
    described = kubectl("describe", "service", "kubernetes")
    assert described.returncode == 0, described.stderr
    endpoint = f"{APISERVER_ADVERTISE_ADDRESS}:{APISERVER_SECURE_PORT}"
    assert any(line.split() == ["Endpoints:", endpoint] for line in described.stdout.splitlines()), (
        described.stdout
    )
    listed = kubectl(
        "get",
        "endpointslices",
        "-o",
        "custom-columns=NAME:.metadata.name,PORT:.ports[0].port",
        "--no-headers",
    )
    assert (listed.returncode, listed.stdout.split()) == (0, ["kubernetes", str(APISERVER_SECURE_PORT)]), (
        listed.stderr
    )


@pytest.mark.parametrize(
    "path",
    [
        "/apis/resource.k8s.io/v1/deviceclasses",
        "/apis/resource.k8s.io/v1/deviceclasses/nope",
        "/healthz",
        "/version",
    ],
)
def test_it_answers_with_the_headers_of_the_apiservers_handler_chain(http: Http, path: str) -> None:
    _, headers, _ = http.get(path)
    # WithAuditInit and WithCacheControl; Go's net/http sends no Server header
    assert "Server" not in headers
    assert headers["Cache-Control"] == "no-cache, private"
    assert str(uuid.UUID(headers["Audit-Id"])) == headers["Audit-Id"]
    _, again, _ = http.get(path)
    assert again["Audit-Id"] != headers["Audit-Id"]
