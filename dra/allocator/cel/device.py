"""What a DRA selector sees: one device, converted once from ResourceSlice JSON."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dra.quantity import Quantity, QuantityError

from .errors import CelError
from .library_net import net_text
from .semver import Semver, SemverError
from .tagged import decode_quantity, decode_semver, encode_quantity, encode_semver, is_quantity, is_semver

_SCALAR_KINDS = ("int", "bool", "string", "version")
_LIST_KINDS = ("ints", "bools", "strings", "versions")


def to_cel_value(value: object) -> object:
    if isinstance(value, Quantity):
        return encode_quantity(value)
    if isinstance(value, Semver):
        return encode_semver(value)
    if isinstance(value, list | tuple):
        return [to_cel_value(item) for item in value]
    return value


def from_cel_value(value: object) -> object:
    """CEL result data back to Python: tagged bytes become Quantity/Semver, containers recurse."""
    if isinstance(value, bytes | bytearray):
        try:
            if is_quantity(value):
                return decode_quantity(value)
            if is_semver(value):
                return decode_semver(value)
        except ValueError:  # bytes that merely start like a tag (e.g. built with bytes()) stay bytes
            return bytes(value)
        return net_text(value) or bytes(value)
    if isinstance(value, list):
        return [from_cel_value(item) for item in value]
    if isinstance(value, dict):
        return {from_cel_value(k): from_cel_value(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class DeviceInput:
    """The ``device`` variable of a selector. Build one per device and reuse it for every selector."""

    driver: str
    attributes: Mapping[str, Mapping[str, object]]
    capacity: Mapping[str, Mapping[str, Quantity]]
    allow_multiple_allocations: bool = False
    # Engine-private cache of converted activations (keyed by engine and thread): converted once per device.
    _activations: dict[object, object] = field(default_factory=dict, compare=False, repr=False, hash=False)

    @functools.cached_property
    def cel_data(self) -> dict[str, Any]:
        """The device as plain CEL data: Quantity and Semver become tagged bytes (see tagged.py)."""
        return {
            "driver": self.driver,
            "attributes": {
                domain: {name: to_cel_value(value) for name, value in values.items()}
                for domain, values in self.attributes.items()
            },
            "capacity": {
                domain: {name: encode_quantity(value) for name, value in values.items()}
                for domain, values in self.capacity.items()
            },
            "allowMultipleAllocations": self.allow_multiple_allocations,
        }

    def __getstate__(self) -> dict[str, Any]:
        # Activations are native, thread-bound objects: pickles and copies start without them.
        state = {k: v for k, v in self.__dict__.items() if k not in ("_activations", "cel_data")}
        state["_activations"] = {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


def split_qualified_name(name: str, default_domain: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (default_domain, name)


def _attribute_value(name: str, attribute: Mapping[str, Any]) -> object:
    if type(attribute) is dict and len(attribute) == 1:
        # The common case, one plain string, int or bool: what the checks below accept, unchanged.
        ((kind, raw),) = attribute.items()
        if kind == "string" and type(raw) is str:
            return raw
        if kind == "bool" and type(raw) is bool:
            return raw
        if kind == "int" and type(raw) is int and -(2**63) <= raw < 2**63:
            return raw
    if not isinstance(attribute, Mapping):
        raise CelError(
            f"attributes[{name}]: must be an object with one of {', '.join(_SCALAR_KINDS + _LIST_KINDS)}"
        )
    kinds = [kind for kind in _SCALAR_KINDS + _LIST_KINDS if attribute.get(kind) is not None]
    if len(kinds) != 1:
        raise CelError(
            f"attributes[{name}]: exactly one of int, bool, string, version (or a list form) must be set"
        )
    kind = kinds[0]
    raw = attribute[kind]
    try:
        if kind == "version":
            return Semver.parse(raw)
        if kind == "versions":
            return [Semver.parse(item) for item in raw]
    except SemverError as exc:
        raise CelError(f"attributes[{name}].{kind}: {exc}") from exc
    expected: type = {"int": int, "bool": bool, "string": str}.get(kind.rstrip("s"), object)
    values = raw if kind in _LIST_KINDS else [raw]
    if kind in _LIST_KINDS and not isinstance(raw, list):
        raise CelError(f"attributes[{name}].{kind}: must be a list")
    for item in values:
        if not isinstance(item, expected) or (expected is int and isinstance(item, bool)):
            raise CelError(f"attributes[{name}].{kind}: {item!r} is not a {expected.__name__}")
        if isinstance(item, int) and not -(2**63) <= item < 2**63:
            raise CelError(f"attributes[{name}].{kind}: {item} is outside the int64 range")
    return list(raw) if kind in _LIST_KINDS else raw


def device_input_from_api(driver: str, device: Mapping[str, Any]) -> DeviceInput:
    """Convert one ``ResourceSlice.spec.devices[]`` entry; unprefixed names go under the driver's domain."""
    attributes: dict[str, dict[str, object]] = {}
    for name, attribute in (device.get("attributes") or {}).items():
        domain, ident = split_qualified_name(name, driver)
        attributes.setdefault(domain, {})[ident] = _attribute_value(name, attribute)
    capacity: dict[str, dict[str, Quantity]] = {}
    for name, entry in (device.get("capacity") or {}).items():
        domain, ident = split_qualified_name(name, driver)
        raw = entry.get("value") if isinstance(entry, Mapping) else None
        if not isinstance(raw, str | int):
            raise CelError(f'capacity[{name}].value: required, a quantity such as "80Gi"')
        try:
            capacity.setdefault(domain, {})[ident] = Quantity.parse(str(raw))
        except QuantityError as exc:
            raise CelError(f"capacity[{name}].value: {exc}") from exc
    return DeviceInput(
        driver=driver,
        attributes=attributes,
        capacity=capacity,
        allow_multiple_allocations=bool(device.get("allowMultipleAllocations", False)),
    )
