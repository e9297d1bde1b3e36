"""Name formats as field errors: `dra.names` (the API server's checks, in its words) turned into causes,
and the DRA names built on them (driver, pool, device, attribute and capacity names).

Each check takes a ``Causes``, the field path and the value; a missing required name is "Required value",
a value of the wrong type is left to the schema, and every message of a failed check becomes one cause.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from dra import names
from simcluster.schema import Causes


def invalid_name(causes: Causes, path: str, value: str, messages: list[str]) -> None:
    """One cause per message, as upstream turns each message of a name check into a field error."""
    for message in messages:
        causes.invalid(path, value, message)


def _given(causes: Causes, path: str, value: Any, *, required: bool) -> str | None:
    """The name to check further; None when it is missing (reported if required) or not a string."""
    if not value:
        if required:
            causes.required(path)
        return None
    return value if isinstance(value, str) else None  # the schema already reported the type


def dns_label(causes: Causes, path: str, value: Any, *, required: bool = True) -> None:
    name = _given(causes, path, value, required=required)
    if name is not None:
        invalid_name(causes, path, name, names.dns1123_label_errors(name))


def dns_subdomain(causes: Causes, path: str, value: Any, *, required: bool = True) -> None:
    name = _given(causes, path, value, required=required)
    if name is not None:
        invalid_name(causes, path, name, names.dns1123_subdomain_errors(name))


def qualified_name(causes: Causes, path: str, value: Any, *, required: bool = True) -> None:
    """Label keys, annotation keys, taint keys, finalizers: ``[prefix/]name``."""
    name = _given(causes, path, value, required=required)
    if name is not None:
        invalid_name(causes, path, name, names.qualified_name_errors(name))


def label_value(causes: Causes, path: str, value: Any) -> None:
    if isinstance(value, str) and value:
        invalid_name(causes, path, value, names.label_value_errors(value))


DRIVER_NAME_MAX: Final = names.DRIVER_NAME_MAX
POOL_NAME_MAX: Final = names.POOL_NAME_MAX
DEVICE_ID_MAX: Final = 32


def driver_name(causes: Causes, path: str, value: Any) -> None:
    name = _given(causes, path, value, required=True)
    if name is None:
        return
    if len(name) > DRIVER_NAME_MAX:
        causes.too_long(path, DRIVER_NAME_MAX)
    # Upstream reuses the CSI driver-name rule, which checks the lowercased name: "GPU.example.com" is
    # valid (a ResourceSlice write only draws a warning), the error still quotes the name as given.
    invalid_name(causes, path, name, names.dns1123_subdomain_errors(name.lower()))


def pool_name(causes: Causes, path: str, value: Any, *, required: bool = True) -> None:
    name = _given(causes, path, value, required=required)
    if name is None:
        return
    if len(name) > POOL_NAME_MAX:
        causes.too_long(path, POOL_NAME_MAX)
    # Upstream checks each part separately and names the part, not the whole name, in each error.
    for segment in name.split("/"):
        invalid_name(causes, path, segment, names.dns1123_subdomain_errors(segment))


# Names that passed before: drivers repeat the same attribute names on every device of every slice.
_KNOWN_GOOD: Final[set[tuple[str, str]]] = set()
_KNOWN_GOOD_MAX: Final = 4096


def _check_and_remember(causes: Causes, kind: str, value: Any, check: Callable[[], None]) -> None:
    """Run ``check``; remember ``value`` as known good if it reported nothing."""
    before = len(causes)
    check()
    if len(causes) == before and isinstance(value, str) and len(_KNOWN_GOOD) < _KNOWN_GOOD_MAX:
        _KNOWN_GOOD.add((kind, value))


def device_name(causes: Causes, path: str, value: Any) -> None:
    """A device's name: a DNS label."""
    if not (isinstance(value, str) and ("lbl", value) in _KNOWN_GOOD):
        _check_and_remember(causes, "lbl", value, lambda: dns_label(causes, path, value))


def device_qualified_name(causes: Causes, path: str, value: str, *, fully: bool = False) -> None:
    """Attribute and capacity names: ``[<domain>/]<C identifier>``; ``fully`` demands the domain."""
    kind = "fqn" if fully else "qn"
    if (kind, value) not in _KNOWN_GOOD:
        _check_and_remember(
            causes, kind, value, lambda: _device_qualified_name(causes, path, value, fully=fully)
        )


def _device_qualified_name(causes: Causes, path: str, value: str, *, fully: bool) -> None:
    parts = value.split("/")
    if len(parts) > 2:
        causes.invalid(path, value, "must not contain more than one slash")
        return
    if len(parts) == 2:
        domain, ident = parts
        if not domain:
            causes.invalid(path, "", "the domain must not be empty")
        else:
            driver_name(causes, path, domain)
    else:
        ident = value
    if not ident:
        causes.invalid(path, "", "the name must not be empty")
    else:
        if len(ident) > DEVICE_ID_MAX:
            causes.too_long(path, DEVICE_ID_MAX)
        invalid_name(causes, path, ident, names.c_identifier_errors(ident))
    if fully and len(parts) == 1:
        causes.invalid(path, value, "a fully qualified name must be a domain and a name separated by a slash")
