"""Name formats: apimachinery's DNS labels and subdomains, qualified names and label values, and the
DRA names built on them (driver, pool, device, attribute and capacity names, extended resource names).

Each check takes a ``Causes``, the field path and the value, and reports what breaks the format in
apimachinery's wording, so that kubectl users see familiar text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from simcluster.schema import Causes

_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN_FMT: Final = _LABEL_FMT + r"(\." + _LABEL_FMT + ")*"
_QUALIFIED_NAME_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT: Final = "(" + _QUALIFIED_NAME_FMT + ")?"
_C_IDENTIFIER_FMT: Final = "[A-Za-z_][A-Za-z0-9_]*"

_LABEL_RE: Final = re.compile(f"^{_LABEL_FMT}$")
_SUBDOMAIN_RE: Final = re.compile(f"^{_SUBDOMAIN_FMT}$")
_QUALIFIED_NAME_RE: Final = re.compile(f"^{_QUALIFIED_NAME_FMT}$")
_LABEL_VALUE_RE: Final = re.compile(f"^{_LABEL_VALUE_FMT}$")
_C_IDENTIFIER_RE: Final = re.compile(f"^{_C_IDENTIFIER_FMT}$")

DNS1123_LABEL_MSG: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    f"and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '{_LABEL_FMT}')"
)
DNS1123_SUBDOMAIN_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    f"'{_SUBDOMAIN_FMT}')"
)
QUALIFIED_NAME_MSG: Final = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    f"'{_QUALIFIED_NAME_FMT}')"
)
LABEL_VALUE_MSG: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    f"for validation is '{_LABEL_VALUE_FMT}')"
)
C_IDENTIFIER_MSG: Final = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric "
    "characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is "
    f"'{_C_IDENTIFIER_FMT}')"
)


def _given(causes: Causes, path: str, value: Any, *, required: bool) -> str | None:
    """The name to check further; None when it is missing (reported if required) or not a string."""
    if not value:
        if required:
            causes.required(path)
        return None
    return value if isinstance(value, str) else None  # the schema already reported the type


def dns_label(causes: Causes, path: str, value: Any, *, required: bool = True) -> None:
    name = _given(causes, path, value, required=required)
    if name is None:
        return
    if len(name) > 63:
        causes.invalid(path, name, "must be no more than 63 characters")
    if not _LABEL_RE.match(name):
        causes.invalid(path, name, DNS1123_LABEL_MSG)


def dns_subdomain(
    causes: Causes, path: str, value: Any, *, required: bool = True, max_len: int = 253
) -> None:
    name = _given(causes, path, value, required=required)
    if name is None:
        return
    if len(name) > max_len:
        if max_len == 253:
            causes.invalid(path, name, "must be no more than 253 characters")
        else:
            causes.too_long(path, max_len)
    if not _SUBDOMAIN_RE.match(name):
        causes.invalid(path, name, DNS1123_SUBDOMAIN_MSG)


def qualified_name(causes: Causes, path: str, value: Any, *, required: bool = True) -> None:
    """Label keys, annotation keys, taint keys, finalizers: ``[prefix/]name``."""
    if _given(causes, path, value, required=required) is None:
        return
    parts = value.split("/")
    if len(parts) > 2:
        causes.invalid(
            path,
            value,
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
            "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
            f"validation is '{_QUALIFIED_NAME_FMT}') with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')",
        )
        return
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            causes.invalid(path, value, "prefix part must be non-empty")
        elif len(prefix) > 253:
            causes.invalid(path, value, "prefix part must be no more than 253 characters")
        elif not _SUBDOMAIN_RE.match(prefix):
            causes.invalid(path, value, "prefix part " + DNS1123_SUBDOMAIN_MSG)
    if not name:
        causes.invalid(path, value, "name part must be non-empty")
    elif len(name) > 63:
        causes.invalid(path, value, "name part must be no more than 63 characters")
    elif not _QUALIFIED_NAME_RE.match(name):
        causes.invalid(path, value, QUALIFIED_NAME_MSG)


def label_value(causes: Causes, path: str, value: Any) -> None:
    if not isinstance(value, str) or not value:
        return
    if len(value) > 63:
        causes.invalid(path, value, "must be no more than 63 characters")
    if not _LABEL_VALUE_RE.match(value):
        causes.invalid(path, value, LABEL_VALUE_MSG)


DRIVER_NAME_MAX: Final = 63
POOL_NAME_MAX: Final = 253
DEVICE_ID_MAX: Final = 32
DEVICE_DOMAIN_MAX: Final = 63


def driver_name(causes: Causes, path: str, value: Any) -> None:
    name = _given(causes, path, value, required=True)
    if name is None:
        return
    if len(name) > DRIVER_NAME_MAX:
        causes.too_long(path, DRIVER_NAME_MAX)
    if not _SUBDOMAIN_RE.match(name):
        causes.invalid(path, name, DNS1123_SUBDOMAIN_MSG)


def pool_name(causes: Causes, path: str, value: Any, *, required: bool = True) -> None:
    name = _given(causes, path, value, required=required)
    if name is None:
        return
    if len(name) > POOL_NAME_MAX:
        causes.too_long(path, POOL_NAME_MAX)
    for segment in name.split("/"):
        if not segment or len(segment) > 253 or not _SUBDOMAIN_RE.match(segment):
            causes.invalid(
                path, name, "each part of the pool name separated by '/' must be " + DNS1123_SUBDOMAIN_MSG
            )
            break


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
        if not _C_IDENTIFIER_RE.match(ident):
            causes.invalid(path, ident, C_IDENTIFIER_MSG)
    if fully and len(parts) == 1:
        causes.invalid(path, value, "a fully qualified name must be a domain and a name separated by a slash")


def is_extended_resource_name(value: Any) -> bool:
    """Domain-prefixed, outside ``kubernetes.io/``, and a qualified name after ``requests.``."""
    if not isinstance(value, str) or "/" not in value or "kubernetes.io/" in value:
        return False
    if value.startswith("requests."):
        return False
    probe = Causes()
    qualified_name(probe, "", "requests." + value)
    return not probe


def extended_resource_name(causes: Causes, path: str, value: Any, class_name: str) -> None:
    """Kept for callers outside this module; the rule is ``is_extended_resource_name``."""
    if not is_extended_resource_name(value):
        causes.invalid(path, value, "must be a valid extended resource name")
