"""How upstream names a value's type in two runtime errors, so both backends say what cel-go says.

* A selector whose result is not a bool: ``CEL result of type <TypeName> could not be converted to
  bool``, with cel-go's type name (``list``, ``map``, ``google.protobuf.Duration``,
  ``kubernetes.Quantity`` …): :func:`cel_type_name`.
* A comprehension (``all``, ``exists``, ``map`` …) over a value that is neither a list nor a map:
  ``got '<Go type>', expected iterable type``, with the Go type of cel-go's value (``types.Int``,
  ``cel.Semver`` …): :func:`not_iterable_message`.

Values are the plain Python data both engines hand to library functions (Kubernetes values as tagged
bytes, see :mod:`.tagged`). An unsigned int cannot be told from an int there and is named as one.
"""

from __future__ import annotations

import datetime

_TAGGED = {b"Q": "Quantity", b"V": "Semver", b"I": "IP", b"C": "CIDR"}
#: cel-go's TypeName() of the Kubernetes types (k8s.io/apiserver/pkg/cel)
_KUBE_TYPE_NAMES = {
    "Quantity": "kubernetes.Quantity",
    "Semver": "kubernetes.Semver",
    "IP": "net.IP",
    "CIDR": "net.CIDR",
}


def _tag(value: bytes | bytearray) -> str | None:
    return _TAGGED.get(bytes(value[:1])) if len(value) > 1 else None


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bytes | bytearray):
        return _tag(value) or "bytes"
    if isinstance(value, list | tuple):
        return "list"
    if isinstance(value, dict):
        return "map"
    if isinstance(value, datetime.timedelta):
        return "duration"
    if isinstance(value, datetime.datetime):
        return "timestamp"
    return type(value).__name__


_CEL_NAMES = {
    "null": "null_type",
    "duration": "google.protobuf.Duration",
    "timestamp": "google.protobuf.Timestamp",
    **_KUBE_TYPE_NAMES,
}
_GO_NAMES = {
    "null": "types.Null",
    "bool": "types.Bool",
    "int": "types.Int",
    "uint": "types.Uint",
    "double": "types.Double",
    "string": "types.String",
    "bytes": "types.Bytes",
    "duration": "types.Duration",
    "timestamp": "types.Timestamp",
    "Quantity": "cel.Quantity",
    "Semver": "cel.Semver",
    "IP": "cel.IP",
    "CIDR": "cel.CIDR",
}


def cel_type_name(value: object) -> str:
    """cel-go's ``Type().TypeName()`` of a value."""
    kind = _kind(value)
    return _CEL_NAMES.get(kind, kind)


def cel_type_name_of_kind(kind: str, value: object = None) -> str:
    """cel-go's type name for an engine's own type name (``list<dyn>``, ``bytes``, ``timestamp`` …);
    bytes are named by their tag when ``value`` is given."""
    base = kind.split("<", 1)[0].strip()
    if base == "bytes" and isinstance(value, bytes | bytearray) and (tag := _tag(value)):
        base = tag
    if base == "null_type":
        base = "null"
    return _CEL_NAMES.get(base, base)


def not_iterable_message(value: object) -> str:
    """cel-go's error for a comprehension over a value that is neither a list nor a map."""
    kind = _kind(value)
    return f"got '{_GO_NAMES.get(kind, kind)}', expected iterable type"
