"""dra.upgrade gives what the API server gives back (`kubectl get -o yaml` after the old manifest is
stored and read as v1): its defaults, its canonical quantities, no empty fields it does not keep."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from dra.upgrade import upgrade_object, upgrade_text
from dra.upgrade.schema import schema_problems

JSON = dict[str, Any]


def claim(version: str, *requests: JSON, status: JSON | None = None) -> JSON:
    obj: JSON = {
        "apiVersion": f"resource.k8s.io/{version}",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "ml"},
        "spec": {"devices": {"requests": list(requests)}},
    }
    if status is not None:
        obj["status"] = status
    return obj


def slice_(version: str, *devices: JSON, **spec: Any) -> JSON:
    return {
        "apiVersion": f"resource.k8s.io/{version}",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": "node-9", "generation": 1, "resourceSliceCount": 1},
            "devices": list(devices),
            **spec,
        },
    }


def converted(obj: JSON) -> JSON:
    outcome = upgrade_object(copy.deepcopy(obj))
    assert outcome.action == "converted", outcome.problems
    (new,) = outcome.objects
    assert schema_problems(new) == []
    return new


def requests_of(obj: JSON) -> list[JSON]:
    result: list[JSON] = converted(obj)["spec"]["devices"]["requests"]
    return result


@pytest.mark.parametrize("version", ["v1alpha3", "v1beta1"])
def test_a_request_shows_the_allocation_mode_and_count_the_server_defaults(version: str) -> None:
    """Upstream pkg/apis/resource/v1beta1/defaults_test.go TestSetDefaultAllocationMode (and v1's
    SetDefaults_ExactDeviceRequest, which the object read back as v1 gets)."""
    defaulted = requests_of(claim(version, {"name": "r", "deviceClassName": "device-class"}))
    assert defaulted == [
        {
            "name": "r",
            "exactly": {"deviceClassName": "device-class", "allocationMode": "ExactCount", "count": 1},
        }
    ]
    kept = requests_of(
        claim(version, {"name": "r", "deviceClassName": "c", "allocationMode": "ExactCount", "count": 10})
    )
    assert kept[0]["exactly"] == {"deviceClassName": "c", "allocationMode": "ExactCount", "count": 10}
    everything = requests_of(claim(version, {"name": "r", "deviceClassName": "c", "allocationMode": "All"}))
    assert everything[0]["exactly"] == {"deviceClassName": "c", "allocationMode": "All"}
    # count 0 is "not set": ExactCount makes it 1
    zero = requests_of(claim(version, {"name": "r", "deviceClassName": "c", "count": 0}))
    assert zero[0]["exactly"] == {"deviceClassName": "c", "allocationMode": "ExactCount", "count": 1}


@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_first_available_subrequests_show_the_servers_defaults(version: str) -> None:
    """Upstream pkg/apis/resource/v1beta1/defaults_test.go TestSetDefaultAllocationModeWithSubRequests:
    the subrequests are defaulted, the request holding them gets nothing."""
    subrequests = [{"name": "subReq-1", "deviceClassName": "a"}, {"name": "subReq-2", "deviceClassName": "b"}]
    (request,) = requests_of(claim(version, {"name": "req-1", "firstAvailable": subrequests}))
    assert request == {
        "name": "req-1",
        "firstAvailable": [
            {"name": "subReq-1", "deviceClassName": "a", "allocationMode": "ExactCount", "count": 1},
            {"name": "subReq-2", "deviceClassName": "b", "allocationMode": "ExactCount", "count": 1},
        ],
    }
    ten = [{**s, "allocationMode": "ExactCount", "count": 10} for s in subrequests]
    (request,) = requests_of(claim(version, {"name": "req-1", "firstAvailable": copy.deepcopy(ten)}))
    assert request["firstAvailable"] == ten


def test_a_toleration_without_an_operator_reads_back_as_equal() -> None:
    """The `+default="Equal"` of DeviceToleration.operator, in requests, subrequests and allocation results
    (upstream zz_generated.defaults.go SetObjectDefaults_ResourceClaim)."""
    toleration = {"key": "example.com/maintenance", "value": "fw", "effect": "NoSchedule"}
    result = {"request": "gpu", "driver": "d", "pool": "p", "device": "g", "tolerations": [dict(toleration)]}
    new = converted(
        claim(
            "v1beta1",
            {"name": "gpu", "deviceClassName": "c", "tolerations": [dict(toleration)]},
            {
                "name": "alt",
                "firstAvailable": [{"name": "a", "deviceClassName": "c", "tolerations": [dict(toleration)]}],
            },
            status={"allocation": {"devices": {"results": [result]}}},
        )
    )
    equal = {"key": "example.com/maintenance", "operator": "Equal", "value": "fw", "effect": "NoSchedule"}
    requests = new["spec"]["devices"]["requests"]
    assert requests[0]["exactly"]["tolerations"] == [equal]
    assert requests[1]["firstAvailable"][0]["tolerations"] == [equal]
    assert new["status"]["allocation"]["devices"]["results"][0]["tolerations"] == [equal]
    assert list(requests[0]["exactly"]["tolerations"][0]) == ["key", "operator", "value", "effect"]


def test_quantities_read_back_in_the_servers_canonical_form() -> None:
    """resource.Quantity is stored parsed and written canonically (a number becomes a string)."""
    device = {
        "name": "gpu-0",
        "basic": {
            "capacity": {
                "memory": {"value": "1.5Gi"},
                "cores": {"value": 64},
                "bandwidth": {
                    "value": "1000M",
                    "requestPolicy": {"default": "0.5", "validRange": {"min": "100m", "step": "0.1"}},
                },
            },
            "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "1024Mi"}}}],
        },
    }
    new = converted(slice_("v1beta1", device, nodeName="node-9"))
    capacity = new["spec"]["devices"][0]["capacity"]
    assert capacity["memory"] == {"value": "1536Mi"}
    assert capacity["cores"] == {"value": "64"}
    assert capacity["bandwidth"] == {
        "value": "1G",
        "requestPolicy": {"default": "500m", "validRange": {"min": "100m", "step": "100m"}},
    }
    assert new["spec"]["devices"][0]["consumesCounters"][0]["counters"] == {"memory": {"value": "1Gi"}}
    asked = requests_of(
        claim(
            "v1beta1", {"name": "r", "deviceClassName": "c", "capacity": {"requests": {"memory": "2048Mi"}}}
        )
    )
    assert asked[0]["exactly"]["capacity"] == {"requests": {"memory": "2Gi"}}
    v1alpha3 = converted(
        slice_("v1alpha3", {"name": "nic-0", "basic": {"capacity": {"queues": 64}}}, allNodes=True)
    )
    assert v1alpha3["spec"]["devices"][0]["capacity"] == {"queues": {"value": "64"}}


def test_a_value_that_is_not_a_quantity_is_refused_naming_its_field() -> None:
    outcome = upgrade_object(
        slice_("v1beta1", {"name": "g", "basic": {"capacity": {"memory": {"value": "80 GB"}}}}, allNodes=True)
    )
    assert outcome.action == "refused"
    assert [(p.path, p.converted_path) for p in outcome.problems] == [
        ("spec.devices[0].basic.capacity.memory.value", "spec.devices[0].capacity.memory.value")
    ]
    assert "quantities must match the regular expression" in outcome.problems[0].message


def test_empty_and_null_fields_the_server_does_not_keep_are_left_out() -> None:
    """omitempty: null, [] and {} are not written, nor "" and 0 of a plain field; a pointer keeps false and
    a map keeps its entries."""
    new = converted(
        claim(
            "v1beta1",
            {
                "name": "gpu",
                "deviceClassName": "c",
                "selectors": [],
                "adminAccess": False,
                "tolerations": [{"key": "", "operator": "Exists", "value": "", "tolerationSeconds": None}],
            },
            status={
                "allocation": {
                    "devices": {
                        "results": [
                            {"request": "gpu", "driver": "d", "pool": "p", "device": "g", "adminAccess": None}
                        ]
                    },
                    "nodeSelector": None,
                }
            },
        )
    )
    assert new["spec"]["devices"]["requests"][0]["exactly"] == {
        "deviceClassName": "c",
        "allocationMode": "ExactCount",
        "count": 1,
        "adminAccess": False,
        "tolerations": [{"operator": "Exists"}],
    }
    assert new["status"] == {
        "allocation": {
            "devices": {"results": [{"request": "gpu", "driver": "d", "pool": "p", "device": "g"}]}
        }
    }
    device = {
        "name": "g",
        "basic": {"attributes": {}, "capacity": {"memory": {"value": "1Gi"}}, "taints": [], "allNodes": True},
    }
    sliced = converted(slice_("v1beta1", device, perDeviceNodeSelection=True))
    assert sliced["spec"]["devices"] == [
        {"name": "g", "capacity": {"memory": {"value": "1Gi"}}, "allNodes": True}
    ]


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        # unset flat fields beside firstAvailable: upstream's hasAnyMainRequestFieldsSet says no `exactly`
        (
            {
                "name": "r",
                "firstAvailable": [{"name": "a", "deviceClassName": "c"}],
                "count": 0,
                "selectors": None,
                "deviceClassName": "",
            },
            {
                "name": "r",
                "firstAvailable": [
                    {"name": "a", "deviceClassName": "c", "allocationMode": "ExactCount", "count": 1}
                ],
            },
        ),
        # an empty firstAvailable is no alternatives at all
        (
            {"name": "r", "deviceClassName": "c", "firstAvailable": []},
            {"name": "r", "exactly": {"deviceClassName": "c", "allocationMode": "ExactCount", "count": 1}},
        ),
    ],
)
def test_a_request_converts_as_the_server_decides_which_of_its_fields_are_set(
    request_: JSON, expected: JSON
) -> None:
    """Upstream pkg/apis/resource/v1beta1/conversion.go Convert_v1beta1_DeviceRequest_To_resource_DeviceRequest:
    `exactly` exists when a flat field is set (non-empty class or mode, non-zero count, non-null list or
    pointer); conversion_test.go's "v1beta1 to internal with/without alternatives" are the cases above and
    test_upgrade_rules.py's."""
    assert requests_of(claim("v1beta1", request_)) == [expected]


def test_the_yaml_shows_the_defaults_next_to_the_moved_fields() -> None:
    text = (
        "apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n"
        "    requests:\n    - name: gpu\n      deviceClassName: c   # the class\n      selectors: []\n"
    )
    assert upgrade_text(text).text == (
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n"
        "    requests:\n    - name: gpu\n      exactly:\n        deviceClassName: c   # the class\n"
        "        allocationMode: ExactCount\n        count: 1\n"
    )


@pytest.mark.parametrize("version", ["v1alpha3", "v1beta1"])
def test_a_slice_with_node_name_empty_or_all_nodes_false_converts_to_one_a_v1_server_accepts(
    version: str,
) -> None:
    """Upstream pkg/apis/resource/v1beta1/conversion.go Convert_v1beta1_ResourceSliceSpec_To_resource_ResourceSliceSpec:
    the old plain `nodeName: ""` / `allNodes: false` become unset pointers; v1 refuses them as values
    ("must be either unset or set to …")."""
    by_name = converted(slice_(version, {"name": "g"}, nodeName="node-9", allNodes=False))
    assert "allNodes" not in by_name["spec"] and by_name["spec"]["nodeName"] == "node-9"
    everywhere = converted(slice_(version, {"name": "g"}, nodeName="", allNodes=True))
    assert "nodeName" not in everywhere["spec"] and everywhere["spec"]["allNodes"] is True


def test_a_v1beta2_slice_keeps_all_nodes_false_which_was_already_a_pointer() -> None:
    new = converted(slice_("v1beta2", {"name": "g"}, nodeName="node-9", allNodes=False))
    assert new["spec"]["allNodes"] is False  # v1beta2's server refused it too: nothing to convert


@pytest.mark.parametrize("version", ["v1alpha3", "v1beta1", "v1beta2"])
def test_a_1_33_slice_with_both_shared_counters_and_devices_is_refused_naming_shared_counters(
    version: str,
) -> None:
    """1.33 let a slice carry counter sets and devices; upstream validation (validateResourceSliceSpec) now
    says "only one of `sharedCounters` or `devices` is allowed", and the split cannot be guessed."""
    counters = [{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}]
    device = {
        "name": "g",
        "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "40Gi"}}}],
    }
    if version != "v1beta2":
        device = {"name": "g", "basic": {"consumesCounters": device["consumesCounters"]}}
    outcome = upgrade_object(slice_(version, device, nodeName="node-9", sharedCounters=counters))
    assert outcome.action == "refused"
    assert [p.path for p in outcome.problems] == ["spec.sharedCounters"]
    assert "only one of `sharedCounters` or `devices` is allowed" in outcome.problems[0].message
    assert "ResourceSlice of their own" in outcome.problems[0].message
