"""One valid object per kind simcluster serves, and the REST path of each."""

from __future__ import annotations

import copy
from typing import Any

from simcluster.resources import BY_PLURAL, ResourceDef

CONTAINER = {"name": "main", "image": "registry.example.com/app:1.0"}
GPU_SELECTOR = {"cel": {"expression": 'device.driver == "gpu.example.com"'}}
CLAIM_SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}

_SAMPLES: dict[str, dict[str, Any]] = {
    "namespaces": {"metadata": {"name": "team-a"}},
    "nodes": {"metadata": {"name": "node-a", "labels": {"kubernetes.io/hostname": "node-a"}}, "spec": {}},
    "pods": {"metadata": {"name": "web"}, "spec": {"containers": [CONTAINER]}},
    "events": {
        "metadata": {"name": "web.1"},
        "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default"},
        "reason": "Scheduled",
        "message": "assigned",
        "type": "Normal",
    },
    "poddisruptionbudgets": {
        "metadata": {"name": "web"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
    },
    "replicasets": {
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [CONTAINER]}},
        },
    },
    "jobs": {
        "metadata": {"name": "batch"},
        "spec": {"template": {"spec": {"containers": [CONTAINER], "restartPolicy": "Never"}}},
    },
    "deviceclasses": {"metadata": {"name": "gpu.example.com"}, "spec": {"selectors": [GPU_SELECTOR]}},
    "resourceclaims": {"metadata": {"name": "gpu-claim"}, "spec": CLAIM_SPEC},
    "resourceclaimtemplates": {"metadata": {"name": "gpu-template"}, "spec": {"spec": CLAIM_SPEC}},
    "resourceslices": {
        "metadata": {"name": "node-a-gpu"},
        "spec": {
            "driver": "gpu.example.com",
            "nodeName": "node-a",
            "pool": {"name": "node-a", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "h200"}}}],
        },
    },
    "devicetaintrules": {
        "metadata": {"name": "drain-node-a"},
        "spec": {
            "deviceSelector": {"driver": "gpu.example.com", "pool": "node-a"},
            "taint": {"key": "example.com/maintenance", "value": "drain", "effect": "None"},
        },
    },
    "resourcepoolstatusrequests": {"metadata": {"name": "gpu-pools"}, "spec": {"driver": "gpu.example.com"}},
    "replicationcontrollers": {
        "metadata": {"name": "legacy"},
        "spec": {
            "template": {"metadata": {"labels": {"app": "legacy"}}, "spec": {"containers": [CONTAINER]}}
        },
    },
    "daemonsets": {
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [CONTAINER]}},
        },
    },
    "statefulsets": {
        "metadata": {"name": "db"},
        "spec": {
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [CONTAINER]}},
        },
    },
    "controllerrevisions": {
        "metadata": {"name": "agent-5d4c8b7f9", "labels": {"app": "agent"}},
        "data": {"spec": {"template": {"$patch": "replace", "spec": {"containers": [CONTAINER]}}}},
        "revision": 1,
    },
    "cronjobs": {
        "metadata": {"name": "nightly"},
        "spec": {
            "schedule": "0 3 * * *",
            "jobTemplate": {
                "spec": {"template": {"spec": {"containers": [CONTAINER], "restartPolicy": "Never"}}}
            },
        },
    },
    "ingresses": {
        "metadata": {"name": "web"},
        "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}},
    },
    "endpoints": {
        "metadata": {"name": "web"},
        "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 8080}]}],
    },
    "endpointslices": {
        "metadata": {"name": "web-abcde", "labels": {"kubernetes.io/service-name": "web"}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.1"]}],
        "ports": [{"port": 8080}],
    },
    "persistentvolumeclaims": {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    },
    "persistentvolumes": {
        "metadata": {"name": "pv-a"},
        "spec": {
            "capacity": {"storage": "5Gi"},
            "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/data/a"},
        },
    },
}


def sample(plural: str, **metadata: Any) -> dict[str, Any]:
    resource = BY_PLURAL[plural]
    obj = copy.deepcopy(_SAMPLES[plural])
    obj.update({"apiVersion": resource.api_version, "kind": resource.kind})
    obj["metadata"].update(metadata)
    return obj


def collection_path(resource: ResourceDef, namespace: str | None = "default") -> str:
    base = f"/apis/{resource.group}/{resource.version}" if resource.group else "/api/v1"
    if resource.namespaced and namespace is not None:
        return f"{base}/namespaces/{namespace}/{resource.plural}"
    return f"{base}/{resource.plural}"


def object_path(resource: ResourceDef, name: str, namespace: str = "default") -> str:
    return f"{collection_path(resource, namespace)}/{name}"


ALL_PLURALS = sorted(_SAMPLES)
