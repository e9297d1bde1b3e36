"""Discovery: /version, the legacy documents and aggregated discovery, as clients read them."""

from __future__ import annotations

import json

from kubernetes import client

from dra.kinds import KINDS
from tests.simcluster.conftest import Http, Kubectl

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def test_it_reports_version_1_37_1(api: client.ApiClient) -> None:
    info = client.VersionApi(api).get_code()
    assert (info.major, info.minor, info.git_version) == ("1", "37", "v1.37.1")


def test_it_lists_groups_and_preferred_versions(api: client.ApiClient) -> None:
    groups = {g.name: g for g in client.ApisApi(api).get_api_versions().groups}
    assert set(groups) == {
        "apps", "authentication.k8s.io", "authorization.k8s.io", "batch", "coordination.k8s.io", "discovery.k8s.io",
        "networking.k8s.io", "policy", "rbac.authorization.k8s.io", "resource.k8s.io", "scheduling.k8s.io",
    }  # fmt: skip
    pod_groups = groups["scheduling.k8s.io"].preferred_version.group_version
    assert pod_groups == "scheduling.k8s.io/v1beta1"
    assert [v.version for v in groups["resource.k8s.io"].versions] == ["v1", "v1alpha3"]
    assert groups["resource.k8s.io"].preferred_version.group_version == "resource.k8s.io/v1"
    assert client.CoreApi(api).get_api_versions().versions == ["v1"]


def test_it_describes_the_resources_of_a_group_version(api: client.ApiClient) -> None:
    resources = {r.name: r for r in client.ResourceV1Api(api).get_api_resources().resources}
    assert set(resources) == {
        "deviceclasses",
        "devicetaintrules",
        "devicetaintrules/status",
        "resourceclaims",
        "resourceclaims/status",
        "resourceclaimtemplates",
        "resourceslices",
    }
    assert resources["resourceclaims"].namespaced is True
    assert resources["resourceslices"].namespaced is False
    assert resources["resourceclaims/status"].verbs == ["get", "patch", "update"]
    core = {r.name: r for r in client.CoreV1Api(api).get_api_resources().resources}
    assert core["pods"].short_names == ["po"]
    assert core["nodes"].short_names == ["no"]
    assert core["pods"].categories == ["all"]


def test_it_serves_aggregated_discovery_when_asked(http: Http) -> None:
    status, headers, body = http.get("/apis", headers={"Accept": f"{AGGREGATED},application/json"})
    assert status == 200
    assert headers["Content-Type"] == AGGREGATED
    assert body["kind"] == "APIGroupDiscoveryList"
    group = next(item for item in body["items"] if item["metadata"]["name"] == "resource.k8s.io")
    v1 = group["versions"][0]
    assert v1["version"] == "v1" and v1["freshness"] == "Current"
    rules = next(r for r in v1["resources"] if r["resource"] == "devicetaintrules")
    assert rules["scope"] == "Cluster"
    assert rules["responseKind"]["kind"] == "DeviceTaintRule"
    assert rules["subresources"][0]["subresource"] == "status"
    _, _, core = http.get("/api", headers={"Accept": AGGREGATED})
    pods = next(r for r in core["items"][0]["versions"][0]["resources"] if r["resource"] == "pods")
    assert pods["shortNames"] == ["po"] and pods["scope"] == "Namespaced"


def test_it_answers_health_probes(http: Http) -> None:
    for path in ("/healthz", "/livez", "/readyz"):
        assert http.get(path)[:3:2] == (200, "ok")


def test_it_answers_protobuf_requests_with_json(http: Http) -> None:
    status, headers, body = http.get(
        "/api/v1/namespaces", headers={"Accept": "application/vnd.kubernetes.protobuf,application/json"}
    )
    assert status == 200
    assert headers["Content-Type"].startswith("application/json")
    assert body["kind"] == "NamespaceList"


def test_it_serves_openapi_v3_per_group_version(http: Http) -> None:
    _, _, index = http.get("/openapi/v3")
    url = index["paths"]["apis/resource.k8s.io/v1"]["serverRelativeURL"]
    status, _, doc = http.get(url)
    assert status == 200
    schema = doc["components"]["schemas"]["io.k8s.api.resource.v1.DeviceTaintRule"]
    assert schema["x-kubernetes-group-version-kind"] == [
        {"group": "resource.k8s.io", "kind": "DeviceTaintRule", "version": "v1"}
    ]
    patch = doc["paths"]["/apis/resource.k8s.io/v1/devicetaintrules/{name}"]["patch"]
    assert "fieldValidation" in [p["name"] for p in patch["parameters"]]


def test_it_serves_every_kind_of_the_one_table_and_nothing_else(http: Http) -> None:
    served: set[tuple[str, str, str, bool, tuple[str, ...]]] = set()
    for path in ("/api", "/apis"):
        _, _, body = http.get(path, headers={"Accept": f"{AGGREGATED},application/json"})
        for group in body["items"]:
            for version in group["versions"]:
                for r in version["resources"]:
                    served.add(
                        (
                            group["metadata"].get("name", ""),
                            version["version"],
                            r["resource"],
                            r["scope"] == "Namespaced",
                            tuple(s["subresource"] for s in r.get("subresources") or []),
                        )
                    )
    assert served == {(k.group, k.version, k.plural, k.namespaced, k.subresources) for k in KINDS}


def test_it_lists_a_group_versions_resources_sorted_and_the_groups_by_priority(kubectl: Kubectl) -> None:
    listing = json.loads(kubectl("get", "--raw", "/apis/resource.k8s.io/v1").stdout)
    assert [r["name"] for r in listing["resources"]] == [
        "deviceclasses", "devicetaintrules", "devicetaintrules/status", "resourceclaims", "resourceclaims/status",
        "resourceclaimtemplates", "resourceslices",
    ]  # fmt: skip
    core = [r["name"] for r in json.loads(kubectl("get", "--raw", "/api/v1").stdout)["resources"]]
    assert core == sorted(core)
    groups = [g["name"] for g in json.loads(kubectl("get", "--raw", "/apis").stdout)["groups"]]
    assert groups == [
        "apps", "authentication.k8s.io", "authorization.k8s.io", "batch", "networking.k8s.io", "policy",
        "rbac.authorization.k8s.io", "scheduling.k8s.io", "coordination.k8s.io", "discovery.k8s.io",
        "resource.k8s.io",
    ]  # fmt: skip
