"""Typed, frozen views of the Kubernetes JSON the allocator consumes.

Input dicts are converted once (per `Allocator`, or per claim via `prepare_claim`); the
search then works on these objects only. Structural problems raise `AllocationError`
naming the field and the rule it broke.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dra.quantity import Quantity, QuantityError
from dra.selection import NodeSelector, SelectorError, device_selector
from dra.selection import parse_node_selector as dra_parse_node_selector
from dra.taints import FROM_RULE, FROM_SLICE, Taint, TaintRule, Toleration
from dra.taints import parse_taint as dra_parse_taint
from dra.taints import parse_toleration as dra_parse_toleration

from .errors import AllocationError

Json = Mapping[str, Any]
#: An attribute value tagged with its API type: ("int", 3), ("string", "a"), ("ints", (1, 2)) …
Attr = tuple[str, Any]

RESULTS_MAX = 32
_SCALAR_ATTR_TYPES = ("int", "bool", "string", "version")
_LIST_ATTR_TYPES = ("ints", "bools", "strings", "versions")


def parse_quantity(text: object, *, field: str) -> Quantity:
    """A quantity string such as ``80Gi``; `AllocationError` naming the field otherwise."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        raise AllocationError(f"{field}: quantity must be a string, got {text!r}")
    try:
        return Quantity.parse(str(text).strip())
    except QuantityError as exc:
        raise AllocationError(f"{field}: {exc}") from None


def _as_map(value: object, field: str) -> Json:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise AllocationError(f"{field}: must be an object")
    return value


def _as_list(value: object, field: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise AllocationError(f"{field}: must be a list")
    return value


def _refuse_unknown(obj: Json, allowed: Iterable[str], field: str) -> None:
    unknown = sorted(set(obj) - set(allowed))
    if unknown:
        raise AllocationError(f"{field}: unsupported field(s) {', '.join(unknown)}")


# --------------------------------------------------------------------------- nodes


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    labels: Mapping[str, str]


def parse_node(node: Json | None) -> Node | None:
    if node is None:
        return None
    meta = _as_map(node.get("metadata"), "node.metadata")
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise AllocationError("node.metadata.name: required")
    return Node(name=name, labels=dict(_as_map(meta.get("labels"), "node.metadata.labels")))


def parse_node_selector(raw: object, field: str) -> NodeSelector | None:
    if raw is None:
        return None
    try:
        return dra_parse_node_selector(raw, field)
    except SelectorError as exc:
        raise AllocationError(f"failed to parse node selector: {exc}") from None


def node_matches(
    node: Node | None, node_name: str | None, all_nodes: bool, selector: NodeSelector | None, field: str
) -> bool:
    """Upstream ``NodeMatches``: nodeName, else allNodes, else the node selector; none of them: no."""
    if node_name:
        return node is not None and node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return node is not None and selector.matches(node.name, node.labels)
    return False


# --------------------------------------------------------------------------- taints


def parse_taint(raw: object, field: str, source: str, rule: str | None = None) -> Taint:
    raw = _as_map(raw, field)
    key = raw.get("key")
    if not isinstance(key, str) or not key:
        raise AllocationError(f"{field}.key: required")
    return dra_parse_taint(raw, source=source, rule=rule)


def parse_toleration(raw: object, field: str) -> Toleration:
    raw = _as_map(raw, field)
    _refuse_unknown(raw, ("key", "operator", "value", "effect", "tolerationSeconds"), field)
    return dra_parse_toleration(raw)


def parse_taint_rule(raw: Json) -> TaintRule:
    name = str(_as_map(raw.get("metadata"), "DeviceTaintRule.metadata").get("name", ""))
    field = f"DeviceTaintRule {name}"
    spec = _as_map(raw.get("spec"), f"{field}.spec")
    sel = _as_map(spec.get("deviceSelector"), f"{field}.spec.deviceSelector")
    _refuse_unknown(sel, ("driver", "pool", "device"), f"{field}.spec.deviceSelector")
    return TaintRule(
        name=name,
        selector=device_selector(spec.get("deviceSelector")),
        taint=parse_taint(spec.get("taint"), f"{field}.spec.taint", source=FROM_RULE, rule=name),
    )


# --------------------------------------------------------------------------- slices


@dataclass(frozen=True, slots=True)
class CapacityPolicy:
    default: Quantity | None
    valid_values: tuple[Quantity, ...] | None
    range_min: Quantity | None
    range_max: Quantity | None
    range_step: Quantity | None


@dataclass(frozen=True, slots=True)
class Capacity:
    value: Quantity
    policy: CapacityPolicy | None


@dataclass(frozen=True, slots=True)
class CounterConsumption:
    counter_set: str
    counters: Mapping[str, int]


@dataclass(frozen=True, eq=False, slots=True)
class Device:
    key: str
    name: str
    driver: str
    pool: str
    slice_name: str
    attributes: Mapping[str, Attr]
    capacity: Mapping[str, Capacity]
    consumes_counters: tuple[CounterConsumption, ...]
    node_name: str | None
    node_selector: NodeSelector | None
    all_nodes: bool
    taints: tuple[Taint, ...]
    binds_to_node: bool
    binding_conditions: tuple[str, ...]
    binding_failure_conditions: tuple[str, ...]
    allow_multiple: bool
    raw: Json
    #: the first attribute with no value of a known type; evaluating a selector on the device
    #: is then an error naming it (upstream: "attribute X: unsupported attribute value")
    unsupported_attribute: str | None = None


@dataclass(frozen=True, eq=False, slots=True)
class Slice:
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str | None
    node_selector: NodeSelector | None
    all_nodes: bool
    per_device: bool
    #: ``perDeviceNodeSelection`` is set at all (even false): without PartitionableDevices
    #: upstream ignores such a slice
    per_device_set: bool
    devices: tuple[Device, ...]
    #: counter set name -> counter name -> value
    shared_counters: tuple[tuple[str, Mapping[str, int]], ...]


def device_key(driver: str, pool: str, device: str) -> str:
    return f"{driver}/{pool}/{device}"


def _parse_attr(raw: object, field: str) -> Attr | None:
    """The attribute's value, or None when it has no value of a known type (a missing or null
    value, or some future type)."""
    if not isinstance(raw, Mapping):
        raise AllocationError(f"{field}: must be an object")
    for kind in _SCALAR_ATTR_TYPES:
        if raw.get(kind) is not None:
            return (kind, raw[kind])
    for kind in _LIST_ATTR_TYPES:
        if raw.get(kind) is not None:
            return (kind, tuple(_as_list(raw[kind], f"{field}.{kind}")))
    return None


def _opt_qty(raw: Json, key: str, field: str) -> Quantity | None:
    value = raw.get(key)
    return None if value is None else parse_quantity(value, field=f"{field}.{key}")


def _parse_capacity(raw: object, field: str) -> Capacity:
    if type(raw) is dict and len(raw) == 1 and type(raw.get("value")) is str:
        # The common case, a plain value: no policy to read, no field names to build.
        try:
            return Capacity(value=Quantity.parse(raw["value"].strip()), policy=None)
        except QuantityError:
            pass  # reported with the field name below
    raw = _as_map(raw, field)
    value = parse_quantity(raw.get("value"), field=f"{field}.value")
    policy = None
    if raw.get("requestPolicy") is not None:
        p = _as_map(raw["requestPolicy"], f"{field}.requestPolicy")
        rng = p.get("validRange")
        r = _as_map(rng, f"{field}.requestPolicy.validRange")
        valid_values = None
        if p.get("validValues") is not None:
            valid_values = tuple(
                parse_quantity(v, field=f"{field}.requestPolicy.validValues[{i}]")
                for i, v in enumerate(_as_list(p["validValues"], f"{field}.requestPolicy.validValues"))
            )
        policy = CapacityPolicy(
            default=_opt_qty(p, "default", f"{field}.requestPolicy"),
            valid_values=valid_values,
            range_min=_opt_qty(r, "min", f"{field}.requestPolicy.validRange"),
            range_max=_opt_qty(r, "max", f"{field}.requestPolicy.validRange"),
            range_step=_opt_qty(r, "step", f"{field}.requestPolicy.validRange"),
        )
    return Capacity(value=value, policy=policy)


def _parse_counters(raw: object, field: str) -> dict[str, int]:
    return {
        name: parse_quantity(
            _as_map(c, f"{field}.{name}").get("value"), field=f"{field}.{name}.value"
        ).nano_value()
        for name, c in _as_map(raw, field).items()
    }


def _parse_device(
    raw: object, field: str, driver: str, pool: str, slice_name: str, rules: tuple[TaintRule, ...]
) -> Device:
    # Hot path when converting large inventories: field names for messages are only built
    # for the sections a device actually has.
    if not isinstance(raw, Mapping):
        raise AllocationError(f"{field}: must be an object")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise AllocationError(f"{field}.name: required")
    attributes: dict[str, Attr] = {}
    unsupported: str | None = None
    attrs_raw = raw.get("attributes")
    if attrs_raw:
        for attr_name, attr_raw in _as_map(attrs_raw, f"{field}.attributes").items():
            if type(attr_raw) is dict and len(attr_raw) == 1:
                kind, value = next(iter(attr_raw.items()))
                if kind in _SCALAR_ATTR_TYPES and value is not None:
                    attributes[attr_name] = (kind, value)
                    continue
            attr = _parse_attr(attr_raw, f"{field}.attributes[{attr_name}]")
            if attr is not None:
                attributes[attr_name] = attr
            elif unsupported is None:
                unsupported = attr_name
    capacity: dict[str, Capacity] = {}
    capacity_raw = raw.get("capacity")
    if capacity_raw:
        for cname, c in _as_map(capacity_raw, f"{field}.capacity").items():
            capacity[cname] = _parse_capacity(c, f"{field}.capacity[{cname}]")
    consumes: tuple[CounterConsumption, ...] = ()
    if raw.get("consumesCounters"):
        consumes = tuple(
            CounterConsumption(
                counter_set=str(_as_map(c, f"{field}.consumesCounters[{i}]").get("counterSet", "")),
                counters=_parse_counters(c.get("counters"), f"{field}.consumesCounters[{i}].counters"),
            )
            for i, c in enumerate(_as_list(raw["consumesCounters"], f"{field}.consumesCounters"))
        )
    taints: list[Taint] = []
    if raw.get("taints"):
        taints = [
            parse_taint(t, f"{field}.taints[{i}]", source=FROM_SLICE)
            for i, t in enumerate(_as_list(raw["taints"], f"{field}.taints"))
        ]
    if rules:
        taints.extend(rule.taint for rule in rules if rule.selects(driver, pool, name))
    node_selector = None
    if raw.get("nodeSelector") is not None:
        node_selector = parse_node_selector(raw["nodeSelector"], f"{field}.nodeSelector")
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    if raw.get("bindingConditions"):
        binding_conditions = tuple(_as_list(raw["bindingConditions"], f"{field}.bindingConditions"))
    if raw.get("bindingFailureConditions"):
        binding_failure_conditions = tuple(
            _as_list(raw["bindingFailureConditions"], f"{field}.bindingFailureConditions")
        )
    return Device(
        key=f"{driver}/{pool}/{name}",
        name=name,
        driver=driver,
        pool=pool,
        slice_name=slice_name,
        attributes=attributes,
        capacity=capacity,
        consumes_counters=consumes,
        node_name=raw.get("nodeName") or None,
        node_selector=node_selector,
        all_nodes=bool(raw.get("allNodes")),
        taints=tuple(taints),
        binds_to_node=bool(raw.get("bindsToNode")),
        binding_conditions=binding_conditions,
        binding_failure_conditions=binding_failure_conditions,
        allow_multiple=bool(raw.get("allowMultipleAllocations")),
        raw=raw,
        unsupported_attribute=unsupported,
    )


def parse_slice(raw: Json, rules: tuple[TaintRule, ...] = ()) -> Slice:
    name = str(_as_map(raw.get("metadata"), "ResourceSlice.metadata").get("name", ""))
    field = f"ResourceSlice {name}"
    spec = _as_map(raw.get("spec"), f"{field}.spec")
    driver = spec.get("driver")
    if not isinstance(driver, str) or not driver:
        raise AllocationError(f"{field}.spec.driver: required")
    pool = _as_map(spec.get("pool"), f"{field}.spec.pool")
    pool_name = pool.get("name")
    if not isinstance(pool_name, str) or not pool_name:
        raise AllocationError(f"{field}.spec.pool.name: required")
    devices = tuple(
        _parse_device(d, f"{field}.spec.devices[{i}]", driver, pool_name, name, rules)
        for i, d in enumerate(_as_list(spec.get("devices"), f"{field}.spec.devices"))
    )
    shared = tuple(
        (
            str(_as_map(cs, f"{field}.spec.sharedCounters[{i}]").get("name", "")),
            _parse_counters(cs.get("counters"), f"{field}.spec.sharedCounters[{i}].counters"),
        )
        for i, cs in enumerate(_as_list(spec.get("sharedCounters"), f"{field}.spec.sharedCounters"))
    )
    return Slice(
        name=name,
        driver=driver,
        pool=pool_name,
        generation=int(pool.get("generation") or 0),
        slice_count=int(pool.get("resourceSliceCount") or 0),
        node_name=spec.get("nodeName") or None,
        node_selector=parse_node_selector(spec.get("nodeSelector"), f"{field}.spec.nodeSelector"),
        all_nodes=bool(spec.get("allNodes")),
        per_device=bool(spec.get("perDeviceNodeSelection")),
        per_device_set=spec.get("perDeviceNodeSelection") is not None,
        devices=devices,
        shared_counters=shared,
    )


# --------------------------------------------------------------------------- classes


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    selectors: tuple[str, ...]
    config: tuple[Json, ...]


def _parse_selectors(raw: object, field: str, *, lenient: bool = False) -> tuple[str, ...]:
    """CEL expressions of the selectors. A selector without one (some future selector type) is an
    error here, or with ``lenient`` an empty string the allocator refuses when it validates the
    request, in upstream's order of checks."""
    out = []
    for i, sel in enumerate(_as_list(raw, field)):
        sel = _as_map(sel, f"{field}[{i}]")
        cel = sel.get("cel")
        expr = _as_map(cel, f"{field}[{i}].cel").get("expression")
        if not isinstance(expr, str) or not expr:
            if not lenient:
                raise AllocationError(f"{field}[{i}]: CEL expression empty (unsupported selector type?)")
            expr = ""
        out.append(expr)
    return tuple(out)


def parse_class(raw: Json) -> DeviceClass:
    name = str(_as_map(raw.get("metadata"), "DeviceClass.metadata").get("name", ""))
    spec = _as_map(raw.get("spec"), f"DeviceClass {name}.spec")
    return DeviceClass(
        name=name,
        selectors=_parse_selectors(spec.get("selectors"), f"DeviceClass {name}.spec.selectors"),
        config=tuple(_as_list(spec.get("config"), f"DeviceClass {name}.spec.config")),
    )


# --------------------------------------------------------------------------- claims

_EXACT_FIELDS = (
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
)
_SUB_FIELDS = ("name", "deviceClassName", "selectors", "allocationMode", "count", "tolerations", "capacity")


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """An `exactly` request or one `firstAvailable` subrequest."""

    name: str
    class_name: str
    selectors: tuple[str, ...]
    mode: str
    count: int
    admin_access: bool | None
    tolerations: tuple[Toleration, ...]
    tolerations_json: tuple[Json, ...]
    capacity: Mapping[str, Quantity] | None


@dataclass(frozen=True, slots=True)
class Request:
    name: str
    exact: RequestSpec | None
    first_available: tuple[RequestSpec, ...]


@dataclass(frozen=True, slots=True)
class Constraint:
    requests: frozenset[str]
    match_attribute: str | None
    distinct_attribute: str | None


@dataclass(frozen=True, eq=False, slots=True)
class PreparedClaim:
    """A claim converted once; reuse it across `Allocator.allocate` calls (identity-hashed)."""

    namespace: str
    name: str
    requests: tuple[Request, ...]
    constraints: tuple[Constraint, ...]
    config: tuple[Json, ...]
    #: validation results per allocator (see `Allocator.plan`)
    plans: dict[object, object] = field(default_factory=dict, repr=False)

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


def _parse_request_spec(raw: Json, name: str, field: str, allowed: tuple[str, ...]) -> RequestSpec:
    if "derivedAttributes" in raw:
        raise AllocationError(f"{field}.derivedAttributes: not supported (DRADerivedAttributes is alpha)")
    _refuse_unknown(raw, allowed, field)
    # An empty class name, an unknown mode or selector type are refused when the allocator
    # validates the request (`Allocator.plan`), with upstream's words and in its order.
    class_name = raw.get("deviceClassName") or ""
    if not isinstance(class_name, str):
        raise AllocationError(f"{field}.deviceClassName: must be a string")
    mode = raw.get("allocationMode") or "ExactCount"
    count_raw = raw.get("count")
    count = 1 if count_raw is None else count_raw
    if isinstance(count, bool) or not isinstance(count, int):
        raise AllocationError(f"{field}.count: must be an integer")
    if mode == "ExactCount" and count <= 0:
        raise AllocationError(f"{field}.count: must be greater than zero")
    tolerations_json = tuple(_as_list(raw.get("tolerations"), f"{field}.tolerations"))
    capacity = None
    if raw.get("capacity") is not None:
        cap = _as_map(raw["capacity"], f"{field}.capacity")
        _refuse_unknown(cap, ("requests",), f"{field}.capacity")
        capacity = {
            k: parse_quantity(v, field=f"{field}.capacity.requests[{k}]")
            for k, v in _as_map(cap.get("requests"), f"{field}.capacity.requests").items()
        }
    admin = raw.get("adminAccess")
    return RequestSpec(
        name=name,
        class_name=class_name,
        selectors=_parse_selectors(raw.get("selectors"), f"{field}.selectors", lenient=True),
        mode=str(mode),
        count=count,
        admin_access=None if admin is None else bool(admin),
        tolerations=tuple(
            parse_toleration(t, f"{field}.tolerations[{i}]") for i, t in enumerate(tolerations_json)
        ),
        tolerations_json=tolerations_json,
        capacity=capacity,
    )


def prepare_claim(raw: Json) -> PreparedClaim:
    """Convert a ResourceClaim (or a ResourceClaimTemplate's inner ``spec`` wrapped as a claim)."""
    meta = _as_map(raw.get("metadata"), "ResourceClaim.metadata")
    namespace = str(meta.get("namespace") or "")
    name = str(meta.get("name") or meta.get("generateName") or "")
    field = f"claim {namespace}/{name}" if namespace else f"claim {name}"
    spec = _as_map(raw.get("spec"), f"{field}.spec")
    devices = _as_map(spec.get("devices"), f"{field}.spec.devices")
    _refuse_unknown(devices, ("requests", "constraints", "config"), f"{field}.spec.devices")
    requests = []
    # Request names are not checked for uniqueness: the API server does, upstream's allocator
    # does not (two requests of one name are simply both allocated).
    for i, r in enumerate(_as_list(devices.get("requests"), f"{field}.spec.devices.requests")):
        r = _as_map(r, f"{field}.spec.devices.requests[{i}]")
        rname = r.get("name")
        rfield = f"{field}, request {rname}"
        if not isinstance(rname, str) or not rname:
            raise AllocationError(f"{field}.spec.devices.requests[{i}].name: required")
        _refuse_unknown(r, ("name", "exactly", "firstAvailable"), rfield)
        exact = r.get("exactly")
        first = _as_list(r.get("firstAvailable"), f"{rfield}.firstAvailable")
        if (exact is None) == (not first):
            raise AllocationError(f"{rfield}: exactly one of exactly or firstAvailable is required")
        if exact is not None:
            requests.append(
                Request(
                    rname,
                    _parse_request_spec(_as_map(exact, rfield), rname, f"{rfield}.exactly", _EXACT_FIELDS),
                    (),
                )
            )
        else:
            subs = []
            for j, s in enumerate(first):
                s = _as_map(s, f"{rfield}.firstAvailable[{j}]")
                sname = s.get("name")
                if not isinstance(sname, str) or not sname:
                    raise AllocationError(f"{rfield}.firstAvailable[{j}].name: required")
                subs.append(_parse_request_spec(s, sname, f"{rfield}/{sname}", _SUB_FIELDS))
            requests.append(Request(rname, None, tuple(subs)))
    constraints = []
    for i, c in enumerate(_as_list(devices.get("constraints"), f"{field}.spec.devices.constraints")):
        cfield = f"{field}, constraint #{i}"
        c = _as_map(c, cfield)
        _refuse_unknown(c, ("requests", "matchAttribute", "distinctAttribute"), cfield)
        match, distinct = c.get("matchAttribute"), c.get("distinctAttribute")
        if match and distinct:
            raise AllocationError(
                f"{cfield}: matchAttribute and distinctAttribute are both set, only one is allowed"
            )
        # Neither (some future constraint type) is refused by `Allocator.plan`, in upstream's words.
        constraints.append(
            Constraint(
                requests=frozenset(str(x) for x in _as_list(c.get("requests"), f"{cfield}.requests")),
                match_attribute=match or None,
                distinct_attribute=distinct or None,
            )
        )
    config = tuple(_as_list(devices.get("config"), f"{field}.spec.devices.config"))
    return PreparedClaim(
        namespace=namespace,
        name=name,
        requests=tuple(requests),
        constraints=tuple(constraints),
        config=config,
    )
