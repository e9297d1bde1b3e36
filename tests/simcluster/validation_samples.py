"""Well-formed objects of every kind simcluster validates, and the table machinery the validation tests
share: a `Case` mutates a sample and names the field, reason and message the API server answers with.
(Not a test module.)"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from simcluster.defaulting import apply_defaults
from simcluster.resources import BY_PLURAL
from simcluster.validation import validate
from tests.simcluster.samples import sample


@dataclass(frozen=True)
class Kind:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool


SLICE = Kind("resource.k8s.io", "v1", "ResourceSlice", "resourceslices", False)


CLASS = Kind("resource.k8s.io", "v1", "DeviceClass", "deviceclasses", False)


CLAIM = Kind("resource.k8s.io", "v1", "ResourceClaim", "resourceclaims", True)


TEMPLATE = Kind("resource.k8s.io", "v1", "ResourceClaimTemplate", "resourceclaimtemplates", True)


RULE = Kind("resource.k8s.io", "v1", "DeviceTaintRule", "devicetaintrules", False)


POOL_REQUEST = Kind(
    "resource.k8s.io", "v1alpha3", "ResourcePoolStatusRequest", "resourcepoolstatusrequests", False
)


POD = Kind("", "v1", "Pod", "pods", True)


NAMESPACE = Kind("", "v1", "Namespace", "namespaces", False)


Obj = dict[str, Any]


def gpu(index: int) -> Obj:
    return {
        "name": f"gpu-{index}",
        "attributes": {
            "model": {"string": "h200"},
            "driverVersion": {"version": "1.2.3"},
            "resource.kubernetes.io/numaNode": {"int": index % 2},
        },
        "capacity": {"memory": {"value": "141Gi"}},
    }


def a_slice() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "node-1-gpu.example.com-abcde"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "node-1",
            "pool": {"name": "node-1", "generation": 3, "resourceSliceCount": 1},
            "devices": [gpu(i) for i in range(4)],
        },
    }


def a_class() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {
            "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
            "extendedResourceName": "example.com/gpu",
        },
    }


def a_claim() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "firstAvailable": [
                            {"name": "big", "deviceClassName": "gpu.example.com", "count": 2},
                            {"name": "small", "deviceClassName": "gpu.example.com", "count": 4},
                        ],
                    },
                    {
                        "name": "nic",
                        "exactly": {
                            "deviceClassName": "nic.example.com",
                            "tolerations": [
                                {
                                    "key": "nic.example.com/maintenance",
                                    "operator": "Exists",
                                    "effect": "NoExecute",
                                }
                            ],
                        },
                    },
                ],
                "constraints": [
                    {"requests": ["gpu", "nic"], "matchAttribute": "resource.kubernetes.io/numaNode"}
                ],
            }
        },
    }


def a_template() -> Obj:
    claim = a_claim()
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {"metadata": {"labels": {"team": "ml"}}, "spec": claim["spec"]},
    }


def a_rule() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": "drain-node-1-gpus"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
            "taint": {"key": "example.com/maintenance", "value": "drain", "effect": "None"},
        },
    }


def a_pool_request() -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1alpha3",
        "kind": "ResourcePoolStatusRequest",
        "metadata": {"name": "gpus"},
        "spec": {"driver": "gpu.example.com", "limit": 100},
    }


def a_pod() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "trainer", "namespace": "ml"},
        "spec": {
            "containers": [
                {
                    "name": "trainer",
                    "image": "registry.example.com/trainer:1.4",
                    "resources": {"claims": [{"name": "gpus"}]},
                }
            ],
            "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "train"}],
        },
    }


def _defaulted(plural: str) -> Callable[[], Obj]:
    """The CRUD sample of `plural` as the server validates it: after its defaults."""

    def make() -> Obj:
        obj = sample(plural)
        apply_defaults(plural, obj, None, "2026-01-01T00:00:00Z")
        return obj

    return make


#: The workload, networking and storage kinds beyond DRA's: judged after their defaults, as by the server.
MORE_KINDS: dict[Kind, Callable[[], Obj]] = {
    Kind(r.group, r.version, r.kind, r.plural, r.namespaced): _defaulted(r.plural)
    for r in (BY_PLURAL[p] for p in ("replicationcontrollers", "daemonsets", "statefulsets", "controllerrevisions",
                                     "cronjobs", "ingresses",
                                     "persistentvolumeclaims", "persistentvolumes", "endpoints", "endpointslices"))
}  # fmt: skip

FACTORIES: dict[Kind, Callable[[], Obj]] = {
    SLICE: a_slice,
    CLASS: a_class,
    CLAIM: a_claim,
    TEMPLATE: a_template,
    RULE: a_rule,
    POOL_REQUEST: a_pool_request,
    POD: a_pod,
    **MORE_KINDS,
}


def devices(obj: Obj) -> list[Obj]:
    result: list[Obj] = obj["spec"]["devices"]
    return result


def requests(obj: Obj) -> list[Obj]:
    result: list[Obj] = obj["spec"]["devices"]["requests"]
    return result


def many_devices(count: int, *, tainted: bool = False) -> Callable[[Obj], None]:
    def mutate(obj: Obj) -> None:
        obj["spec"]["devices"] = [gpu(i) for i in range(count)]
        if tainted:
            obj["spec"]["devices"][0]["taints"] = [{"key": "example.com/ecc", "effect": "NoSchedule"}]

    return mutate


@dataclass(frozen=True)
class Case:
    id: str
    kind: Kind
    mutate: Callable[[Obj], None]
    field: str
    reason: str
    message: str


def set_path(path: str, value: Any) -> Callable[[Obj], None]:
    """A mutation that sets a dotted path (list indexes as numbers) to ``value``; ``...`` deletes it."""

    def mutate(obj: Obj) -> None:
        node: Any = obj
        parts = path.split(".")
        for part in parts[:-1]:
            node = node[int(part)] if part.isdigit() else node[part]
        last = parts[-1]
        if value is ...:
            del node[int(last) if last.isdigit() else last]
        elif last.isdigit():
            node[int(last)] = copy.deepcopy(value)
        else:
            node[last] = copy.deepcopy(value)

    return mutate


def do_all(*mutations: Callable[[Obj], None]) -> Callable[[Obj], None]:
    def mutate(obj: Obj) -> None:
        for mutation in mutations:
            mutation(obj)

    return mutate


LONG_CEL = "device.driver == '" + "x" * 10240 + "'"


SUBDOMAIN_MSG = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters"


LABEL_MSG = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'"


def assert_rejected(case: Case) -> None:
    """The sample is valid; mutated by the case, validation names the case's field, reason and message."""
    obj = FACTORIES[case.kind]()
    assert validate(case.kind, obj, None)[0] == [], "the base object must be valid"
    case.mutate(obj)
    causes, _ = validate(case.kind, obj, None)
    matching = [c for c in causes if c["field"] == case.field]
    assert matching, f"no cause for {case.field}; got {causes}"
    assert any(c["reason"] == case.reason and case.message in c["message"] for c in matching), matching
