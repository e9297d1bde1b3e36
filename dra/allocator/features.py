"""Upstream DRA feature names understood by the allocator."""

from __future__ import annotations

from collections.abc import Iterable

from .errors import AllocationError

#: Features that change allocation behaviour.
ALLOCATION_FEATURES = frozenset(
    {
        "AdminAccess",
        "PrioritizedList",
        "PartitionableDevices",
        "DeviceTaints",
        "DeviceTaintRules",
        "ConsumableCapacity",
        "DeviceBindingAndStatus",
        "ListTypeAttributes",
        "FractionalCapacityRange",
        "DerivedAttributes",
        "DeviceCompatibilityGroups",
        "OptionalNodeOperations",
    }
)
#: Known 1.37 DRA gates accepted without changing what the allocator computes: on by default
#: and irrelevant here, or features outside allocation. ``NodeAllocatableResources`` is applied
#: after allocation (`dra.node_allocatable`); ``WorkloadResourceClaims`` reserves claims for a
#: PodGroup, which the allocator never sees; partition types only feed pool status summaries.
NEUTRAL_FEATURES = frozenset(
    {
        "DynamicResourceAllocation",
        "ExtendedResource",
        "ResourceClaimDeviceStatus",
        "DeviceBindingConditions",
        "SchedulerFilterTimeout",
        "ResourceClaimGranularStatusAuthorization",
        "WorkloadResourceClaims",
        "NodeAllocatableResources",
        "ResourcePoolStatus",
        "PartitionableDevicesType",
    }
)

#: What upstream's "stable" allocator supports. Upstream picks the first of its allocators
#: (stable, incubating, experimental) that supports every enabled feature; within this set it
#: is the stable one, whose answers differ in a few deterministic ways (see `Allocator`).
STABLE_FEATURES = frozenset({"AdminAccess", "PrioritizedList", "PartitionableDevices", "DeviceTaints"})

#: The Kubernetes 1.37 defaults: everything GA or beta-on.
DEFAULT_FEATURES = frozenset(
    {
        "AdminAccess",
        "PrioritizedList",
        "PartitionableDevices",
        "DeviceTaints",
        "DeviceTaintRules",
        "ConsumableCapacity",
        "DeviceBindingAndStatus",
        "ExtendedResource",
        "ResourceClaimDeviceStatus",
        "FractionalCapacityRange",
    }
)


def normalize_features(features: Iterable[str]) -> frozenset[str]:
    """Accept upstream names with or without the ``DRA`` gate prefix; refuse unknown ones.

    The allocator feature ``DeviceBindingAndStatus`` may be named directly; from gate names it
    takes both ``DRADeviceBindingConditions`` and ``DRAResourceClaimDeviceStatus``, as
    kube-scheduler derives it."""
    out = set()
    for name in features:
        bare = name[3:] if name.startswith("DRA") and name != "DynamicResourceAllocation" else name
        if bare not in ALLOCATION_FEATURES and bare not in NEUTRAL_FEATURES:
            known = ", ".join(sorted(ALLOCATION_FEATURES | NEUTRAL_FEATURES))
            raise AllocationError(f"features: unknown feature {name!r} (known: {known})")
        out.add(bare)
    if {"DeviceBindingConditions", "ResourceClaimDeviceStatus"} <= out:
        out.add("DeviceBindingAndStatus")
    return frozenset(out)


def parse_feature_list(text: str) -> frozenset[str]:
    """The 1.37 defaults plus the gates named in a comma-separated list; "all" turns on every
    allocation and neutral feature. Unknown names raise AllocationError naming them."""
    if text.strip() == "all":
        return DEFAULT_FEATURES | ALLOCATION_FEATURES | NEUTRAL_FEATURES
    return DEFAULT_FEATURES | normalize_features(n.strip() for n in text.split(",") if n.strip())
