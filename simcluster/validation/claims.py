"""ResourceClaim and ResourceClaimTemplate rules (dra-api.md §3): requests, subrequests, constraints,
configs, and the claim status (reservations, allocation, device status).
"""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any, Final

from simcluster.schema import Causes, child
from simcluster.validation.cel import CEL_MAX_LEN, COST_EXCEEDED, cel_problem, check_selectors
from simcluster.validation.names import (
    device_qualified_name,
    dns_label,
    dns_subdomain,
    driver_name,
    label_value,
    pool_name,
    qualified_name,
)
from simcluster.validation.shared import (
    as_list,
    as_map,
    check_binding_conditions,
    check_conditions,
    check_node_selector,
    check_opaque_config,
    check_raw_object,
    check_skip_node_operations,
    check_tolerations,
    entries,
    hashable,
    max_items,
    unique,
)

_UUID_RE: Final = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


# ---------------------------------------------------------------------------------------------------------
# the claim spec (a ResourceClaim's, or the one a ResourceClaimTemplate stamps out)


def check_claim_spec(causes: Causes, path: str, spec: dict[str, Any]) -> None:
    devices = as_map(spec.get("devices"))
    devices_path = child(path, "devices")
    requests = devices.get("requests")
    constraints = devices.get("constraints")
    known = request_references(requests)
    constrained = _constraint_attributes(constraints)
    names: set[str] = set()
    for entry, request in entries(causes, child(devices_path, "requests"), requests, 32):
        _check_request(causes, entry, as_map(request), constrained)
        name = as_map(request).get("name")
        if isinstance(name, str) and name:
            unique(causes, entry, name, names)

    for entry, constraint in entries(causes, child(devices_path, "constraints"), constraints, 32):
        con = as_map(constraint)
        _check_request_refs(causes, child(entry, "requests"), con.get("requests"), known)
        chosen = [f for f in ("matchAttribute", "distinctAttribute") if con.get(f) is not None]
        if not chosen:
            causes.required(
                entry,
                'exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set',
            )
        elif len(chosen) > 1:
            causes.invalid(
                entry,
                None,
                'exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set',
            )
        for field in chosen:
            if isinstance(con[field], str):
                device_qualified_name(causes, child(entry, field), con[field], fully=True)

    configs = devices.get("config")
    config_path = child(devices_path, "config")
    check_opaque_config(causes, config_path, configs)  # reports a list that is too long, once
    if len(as_list(configs)) <= 32:
        for index, config in enumerate(as_list(configs)):
            entry = f"{config_path}[{index}]"
            _check_request_refs(causes, child(entry, "requests"), as_map(config).get("requests"), known)


def request_references(requests: Any) -> set[str]:
    """What constraints, configs and results may name: ``req`` and, for prioritized lists, ``req/sub``."""
    known: set[str] = set()
    for request in as_list(requests):
        name = as_map(request).get("name")
        if not isinstance(name, str):
            continue
        known.add(name)
        for sub in as_list(as_map(request).get("firstAvailable")):
            known.add(f"{name}/{as_map(sub).get('name')}")
    return known


def _constraint_attributes(constraints: Any) -> dict[str, set[str]]:
    """Attribute names used by constraints, per targeted request ("" = every request)."""
    used: dict[str, set[str]] = {}
    for constraint in as_list(constraints):
        con = as_map(constraint)
        attribute = con.get("matchAttribute") or con.get("distinctAttribute")
        if not isinstance(attribute, str):
            continue
        for target in as_list(con.get("requests")) or [""]:
            used.setdefault(str(target), set()).add(attribute)
    return used


def _check_request_refs(causes: Causes, path: str, refs: Any, known: set[str]) -> None:
    seen: set[Any] = set()
    for ref_path, ref in entries(causes, path, refs, 32):
        _check_request_ref(causes, ref_path, ref, known)
        unique(causes, ref_path, ref, seen)


def _check_request_ref(causes: Causes, path: str, ref: Any, known: set[str]) -> None:
    if isinstance(ref, str) and ref.count("/") <= 1:
        # each part is a request name (a DNS label), then it must name a request of the claim
        for part in ref.split("/"):
            dns_label(causes, path, part)
    if not isinstance(ref, str) or ref.count("/") > 1 or ref not in known:
        causes.invalid(
            path,
            ref,
            "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
        )


def _check_request(
    causes: Causes, path: str, request: dict[str, Any], constrained: dict[str, set[str]]
) -> None:
    name = request.get("name")
    dns_label(causes, child(path, "name"), name)
    has_exactly = request.get("exactly") is not None
    has_first = bool(request.get("firstAvailable"))
    if not has_exactly and not has_first:
        causes.required(path, "exactly one of `exactly` or `firstAvailable` is required")
    elif has_exactly and has_first:
        causes.invalid(
            path,
            None,
            "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
        )
    elif has_exactly:
        _check_exact(causes, child(path, "exactly"), as_map(request["exactly"]), str(name), constrained)
    else:
        sub_names: set[str] = set()
        for entry, sub in entries(causes, child(path, "firstAvailable"), request["firstAvailable"], 8):
            sub_name = as_map(sub).get("name")
            dns_label(causes, child(entry, "name"), sub_name)
            _check_exact(causes, entry, as_map(sub), f"{name}/{sub_name}", constrained)
            if isinstance(sub_name, str) and sub_name:
                unique(causes, entry, sub_name, sub_names)


def _check_exact(
    causes: Causes, path: str, request: dict[str, Any], reference: str, constrained: dict[str, set[str]]
) -> None:
    """An ExactDeviceRequest or a DeviceSubRequest (``reference`` is ``req`` or ``req/sub``)."""
    dns_subdomain(causes, child(path, "deviceClassName"), request.get("deviceClassName"))
    check_selectors(causes, child(path, "selectors"), request.get("selectors"))
    mode = request.get("allocationMode") or "ExactCount"
    count = request.get("count")
    if mode not in ("ExactCount", "All"):
        causes.not_supported(child(path, "allocationMode"), mode, ["All", "ExactCount"])
    elif mode == "All" and count not in (None, 0):
        causes.invalid(child(path, "count"), count, "must not be specified when allocationMode is 'All'")
    elif mode == "ExactCount" and isinstance(count, int) and count <= 0:
        causes.invalid(child(path, "count"), count, "must be greater than zero")
    check_tolerations(causes, child(path, "tolerations"), request.get("tolerations"))
    capacity = as_map(as_map(request.get("capacity")).get("requests"))
    for cap_name in capacity:
        device_qualified_name(causes, child(child(path, "capacity"), "requests"), cap_name)
    parent = reference.split("/", 1)[0]
    usable = constrained.get("", set()) | constrained.get(reference, set()) | constrained.get(parent, set())
    seen: set[Any] = set()
    for entry, attribute in entries(
        causes, child(path, "derivedAttributes"), request.get("derivedAttributes"), 32
    ):
        attr_name = as_map(attribute).get("name")
        if not attr_name:
            causes.required(child(entry, "name"))
        elif isinstance(attr_name, str):
            device_qualified_name(causes, child(entry, "name"), attr_name, fully=True)
            if attr_name not in usable:
                causes.invalid(
                    child(entry, "name"),
                    attr_name,
                    "must be referenced by at least one matchAttribute or distinctAttribute constraint "
                    "targeting this request",
                )
        expression = as_map(attribute).get("expression")
        if not expression:
            causes.required(child(entry, "expression"))
        elif isinstance(expression, str) and len(expression.encode()) > CEL_MAX_LEN:
            causes.too_long(child(entry, "expression"), CEL_MAX_LEN)
        elif isinstance(expression, str):
            problem = cel_problem(expression, value=True)
            if problem == COST_EXCEEDED:
                causes.forbidden(child(entry, "expression"), problem)
            elif problem:
                causes.invalid(child(entry, "expression"), expression, problem)
        unique(causes, entry, attr_name, seen)


# ---------------------------------------------------------------------------------------------------------
# ResourceClaim and its status


def check_resource_claim(
    causes: Causes, obj: dict[str, Any], old: dict[str, Any] | None, subresource: str | None
) -> list[str]:
    spec = as_map(obj.get("spec"))
    if old is None:
        check_claim_spec(causes, "spec", spec)
    elif subresource != "status" and spec != as_map(old.get("spec")):
        # The spec is immutable: on update only that is reported, the old content is not re-judged.
        causes.immutable("spec", spec)
    if old is not None or obj.get("status"):
        _check_claim_status(causes, obj, old)
    return []


def _allocated_devices(allocation: dict[str, Any]) -> set[Any]:
    results = as_list(as_map(allocation.get("devices")).get("results"))
    return {
        hashable(
            (
                as_map(r).get("driver"),
                as_map(r).get("pool"),
                as_map(r).get("device"),
                as_map(r).get("shareID"),
            )
        )
        for r in results
    }


def _check_claim_status(causes: Causes, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
    status = as_map(obj.get("status"))
    old_status = as_map(as_map(old).get("status"))
    allocation = status.get("allocation")
    old_allocation = old_status.get("allocation")

    reserved = status.get("reservedFor")
    uids: set[Any] = set()
    for entry, consumer in entries(causes, "status.reservedFor", reserved, 256):
        ref = as_map(consumer)
        for field in ("resource", "name", "uid"):
            if not ref.get(field):
                causes.required(child(entry, field))
        unique(causes, entry, ref.get("uid"), uids)

    allocated = _allocated_devices(as_map(allocation))
    seen: set[tuple[Any, ...]] = set()
    for index, device_status in enumerate(as_list(status.get("devices"))):
        entry = f"status.devices[{index}]"
        ds = as_map(device_status)
        key = (ds.get("driver"), ds.get("pool"), ds.get("device"), ds.get("shareID"))
        driver_name(causes, child(entry, "driver"), ds.get("driver"))
        pool_name(causes, child(entry, "pool"), ds.get("pool"))
        dns_label(causes, child(entry, "device"), ds.get("device"))
        shown = "/".join(str(k) for k in key[:3]) + (f"/{key[3]}" if key[3] else "")
        if hashable(key) not in allocated:
            causes.invalid(entry, shown, "must be an allocated device in the claim")
        if hashable(key) in seen:
            causes.duplicate(entry, shown)
        seen.add(hashable(key))
        check_conditions(causes, child(entry, "conditions"), ds.get("conditions"), 8)
        if ds.get("data") is not None:
            check_raw_object(causes, child(entry, "data"), ds.get("data"))
        _check_network_data(causes, child(entry, "networkData"), ds.get("networkData"))

    if reserved:
        if allocation is None:
            causes.forbidden("status.reservedFor", "may not be specified when `allocated` is not set")
        elif as_map(obj.get("metadata")).get("deletionTimestamp"):
            before = {json.dumps(r, sort_keys=True) for r in as_list(old_status.get("reservedFor"))}
            if any(json.dumps(r, sort_keys=True) not in before for r in as_list(reserved)):
                causes.forbidden(
                    "status.reservedFor",
                    "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set",
                )

    if old_allocation is not None and allocation is not None:
        if allocation != old_allocation:
            causes.immutable("status.allocation", allocation)
    elif isinstance(allocation, dict):
        _check_allocation(causes, allocation, as_map(obj.get("spec")))


def _check_network_data(causes: Causes, path: str, network: Any) -> None:
    data = as_map(network)
    interface = data.get("interfaceName")
    if isinstance(interface, str) and len(interface.encode()) > 256:
        causes.too_long(child(path, "interfaceName"), 256)
    address = data.get("hardwareAddress")
    if isinstance(address, str) and len(address.encode()) > 128:
        causes.too_long(child(path, "hardwareAddress"), 128)
    seen: set[str] = set()
    for ip_path, ip in entries(causes, child(path, "ips"), data.get("ips"), 16):
        unique(causes, ip_path, ip, seen)
        canonical = _interface_address(str(ip))
        if canonical is None:
            causes.invalid(
                ip_path, ip, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)"
            )
        elif canonical != ip:
            causes.invalid(ip_path, ip, f"must be in canonical form ({json.dumps(canonical)})")


def _interface_address(value: str) -> str | None:
    """The canonical spelling of an "ifaddr"-style CIDR value (address and prefix length), or None if it is
    not one. Read leniently as upstream's IsValidInterfaceAddress does (leading zeros in IPv4 octets); an
    IPv4-mapped IPv6 address is an IPv4 address with the prefix length shortened by 96."""
    address, slash, length = value.partition("/")
    if not slash or not length.isdigit() or not length.isascii():
        return None
    octets = address.split(".")
    if ":" not in address and len(octets) == 4 and all(o.isdigit() and o.isascii() for o in octets):
        address = ".".join(str(int(o)) for o in octets)
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return None
    prefix = int(length)
    if prefix > ip.max_prefixlen:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip, prefix = ip.ipv4_mapped, prefix - 96 if prefix >= 96 else prefix
    return f"{ip}/{prefix}"


def _check_allocation(causes: Causes, allocation: dict[str, Any], spec: dict[str, Any]) -> None:
    known = request_references(as_map(spec.get("devices")).get("requests"))
    devices = as_map(allocation.get("devices"))
    for entry, result in entries(causes, "status.allocation.devices.results", devices.get("results"), 32):
        res = as_map(result)
        _check_request_ref(causes, child(entry, "request"), res.get("request"), known)
        driver_name(causes, child(entry, "driver"), res.get("driver"))
        pool_name(causes, child(entry, "pool"), res.get("pool"))
        dns_label(causes, child(entry, "device"), res.get("device"))
        check_binding_conditions(causes, entry, res)
        check_tolerations(causes, child(entry, "tolerations"), res.get("tolerations"))
        share_id = res.get("shareID")
        if share_id is not None and not _UUID_RE.fullmatch(str(share_id)):
            causes.invalid(
                child(entry, "shareID"),
                share_id,
                "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase "
                "hexadecimal characters",
            )
        check_skip_node_operations(causes, child(entry, "skipNodeOperations"), res.get("skipNodeOperations"))
    configs = devices.get("config")
    config_path = "status.allocation.devices.config"
    if max_items(causes, config_path, configs, 64):
        for index, config in enumerate(as_list(configs)):
            entry = f"{config_path}[{index}]"
            source = as_map(config).get("source")
            if not source:
                causes.required(child(entry, "source"))
            elif source not in ("FromClass", "FromClaim"):
                causes.not_supported(child(entry, "source"), source, ["FromClaim", "FromClass"])
            _check_request_refs(causes, child(entry, "requests"), as_map(config).get("requests"), known)
        check_opaque_config(causes, config_path, configs, 64)
    node_selector = allocation.get("nodeSelector")
    if isinstance(node_selector, dict):
        check_node_selector(causes, "status.allocation.nodeSelector", node_selector)


# ---------------------------------------------------------------------------------------------------------
# ResourceClaimTemplate


def check_resource_claim_template(
    causes: Causes, obj: dict[str, Any], old: dict[str, Any] | None
) -> list[str]:
    spec = as_map(obj.get("spec"))
    if old is not None:
        # The spec is immutable: on update only that is reported.
        if spec != as_map(old.get("spec")):
            causes.immutable("spec", spec)
        return []
    meta = as_map(spec.get("metadata"))
    for field in meta:
        if field not in ("labels", "annotations"):
            causes.forbidden(f"spec.metadata.{field}", "cannot be set")
    for key, value in as_map(meta.get("labels")).items():
        qualified_name(causes, "spec.metadata.labels", key)
        label_value(causes, "spec.metadata.labels", value)
    for key in as_map(meta.get("annotations")):
        qualified_name(causes, "spec.metadata.annotations", key.lower())
    check_claim_spec(causes, "spec.spec", as_map(spec.get("spec")))
    return []
