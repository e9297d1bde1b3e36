"""Kubernetes name formats, as the v1.37 API server checks them (apimachinery's `util/validation` and
`api/validate/content`).

Each `*_errors` function returns upstream's list of messages, in upstream's words, empty when the value is
valid; the caller puts each message in a field error of its own (`Invalid value: "x": <message>`).

* DNS-1123 label (≤ 63): namespaces, device, request and container names. A value that would be a valid
  subdomain is told it "must not contain dots".
* DNS-1123 subdomain (≤ 253): most object names, driver names, each part of a pool name.
* qualified name (label key): ``[<DNS subdomain>/]<name>``, name ≤ 63 — label, annotation and taint keys,
  finalizers, condition types.
* label value (≤ 63, may be empty): label values, taint and toleration values.
* C identifier: the name part of DRA attribute and capacity names.
* DRA pool name (≤ 253): DNS subdomains separated by '/'. A driver name is a subdomain of ≤ 63.

Length limits of DNS names count characters, those of label keys and values bytes, as upstream words them.
"""

from __future__ import annotations

import re
from typing import Final

DNS1123_LABEL_MAX: Final = 63
DNS1123_SUBDOMAIN_MAX: Final = 253
QUALIFIED_NAME_MAX: Final = 63
LABEL_VALUE_MAX: Final = 63
#: DRA (resource.k8s.io/v1 `DriverNameMaxLength`, `PoolNameMaxLength`)
DRIVER_NAME_MAX: Final = 63
POOL_NAME_MAX: Final = 253

DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT: Final = DNS1123_LABEL_FMT + r"(\." + DNS1123_LABEL_FMT + ")*"
QUALIFIED_NAME_FMT: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_VALUE_FMT: Final = "(" + QUALIFIED_NAME_FMT + ")?"
C_IDENTIFIER_FMT: Final = "[A-Za-z_][A-Za-z0-9_]*"

# `fullmatch`, never `match` with `$`: Python's `$` also matches before a trailing newline, Go's does not.
_DNS1123_LABEL_RE: Final = re.compile(DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE: Final = re.compile(DNS1123_SUBDOMAIN_FMT)
_QUALIFIED_NAME_RE: Final = re.compile(QUALIFIED_NAME_FMT)
_LABEL_VALUE_RE: Final = re.compile(LABEL_VALUE_FMT)
_C_IDENTIFIER_RE: Final = re.compile(C_IDENTIFIER_FMT)


def _size(value: str) -> int:
    """Go's `len`: bytes, not characters."""
    return len(value.encode())


def regex_error(message: str, fmt: str, *examples: str) -> str:
    """Upstream's `RegexError`: the rule, examples, and the regular expression it is checked with."""
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    """`MaxLenError` of util/validation (DNS names)."""
    return f"must be no more than {length} characters"


def max_bytes_error(length: int) -> str:
    """`MaxLenError` of api/validate/content (label keys and values)."""
    return f"must be no more than {length} bytes"


EMPTY_ERROR: Final = "must be non-empty"

DNS1123_LABEL_MSG: Final = regex_error(
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
    "and end with an alphanumeric character",
    DNS1123_LABEL_FMT,
    "my-name",
    "123-abc",
)
DNS1123_SUBDOMAIN_MSG: Final = regex_error(
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character",
    DNS1123_SUBDOMAIN_FMT,
    "example.com",
)
_QUALIFIED_NAME_RULE: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character"
)
QUALIFIED_NAME_MSG: Final = regex_error(
    _QUALIFIED_NAME_RULE, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"
)
LABEL_VALUE_MSG: Final = regex_error(
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character",
    LABEL_VALUE_FMT,
    "MyValue",
    "my_value",
    "12345",
)
C_IDENTIFIER_MSG: Final = regex_error(
    "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric "
    "characters or '_'",
    C_IDENTIFIER_FMT,
    "my_name",
    "MY_NAME",
    "MyName",
)


def is_dns1123_label(value: str) -> bool:
    return _size(value) <= DNS1123_LABEL_MAX and _DNS1123_LABEL_RE.fullmatch(value) is not None


def is_dns1123_subdomain(value: str) -> bool:
    return _size(value) <= DNS1123_SUBDOMAIN_MAX and _DNS1123_SUBDOMAIN_RE.fullmatch(value) is not None


def is_qualified_name(value: str) -> bool:
    return not qualified_name_errors(value)


def is_label_value(value: str) -> bool:
    return _size(value) <= LABEL_VALUE_MAX and _LABEL_VALUE_RE.fullmatch(value) is not None


def is_c_identifier(value: str) -> bool:
    return _C_IDENTIFIER_RE.fullmatch(value) is not None


def dns1123_label_errors(value: str) -> list[str]:
    """`IsDNS1123Label`."""
    errors: list[str] = []
    if _size(value) > DNS1123_LABEL_MAX:
        errors.append(max_len_error(DNS1123_LABEL_MAX))
    if not _DNS1123_LABEL_RE.fullmatch(value):
        # A name that is a valid subdomain only lacks being a single label: say so, as upstream does.
        errors.append(
            "must not contain dots" if _DNS1123_SUBDOMAIN_RE.fullmatch(value) else DNS1123_LABEL_MSG
        )
    return errors


DNS1035_LABEL_FMT: Final = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_RE: Final = re.compile(DNS1035_LABEL_FMT)
DNS1035_LABEL_MSG: Final = regex_error(
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character",
    DNS1035_LABEL_FMT,
    "my-name",
    "abc-123",
)


def dns1035_label_errors(value: str) -> list[str]:
    """`IsDNS1035Label` (Service names)."""
    errors: list[str] = []
    if _size(value) > DNS1123_LABEL_MAX:
        errors.append(max_len_error(DNS1123_LABEL_MAX))
    if not _DNS1035_LABEL_RE.fullmatch(value):
        errors.append(DNS1035_LABEL_MSG)
    return errors


def dns1123_subdomain_errors(value: str, *, content: bool = False) -> list[str]:
    """`IsDNS1123Subdomain`; `content` words the length limit in bytes, as the label-key prefix check does."""
    errors: list[str] = []
    if _size(value) > DNS1123_SUBDOMAIN_MAX:
        errors.append((max_bytes_error if content else max_len_error)(DNS1123_SUBDOMAIN_MAX))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errors.append(DNS1123_SUBDOMAIN_MSG)
    return errors


def qualified_name_errors(value: str) -> list[str]:
    """`IsQualifiedName` (= `content.IsLabelKey`): an optional DNS subdomain prefix and '/', then a name."""
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a valid label key "
            + regex_error(_QUALIFIED_NAME_RULE, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    errors: list[str] = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errors.append("prefix part " + EMPTY_ERROR)
        else:
            errors.extend("prefix part " + e for e in dns1123_subdomain_errors(prefix, content=True))
    if not name:
        errors.append("name part " + EMPTY_ERROR)
    elif _size(name) > QUALIFIED_NAME_MAX:
        errors.append("name part " + max_bytes_error(QUALIFIED_NAME_MAX))
    if not _QUALIFIED_NAME_RE.fullmatch(name):
        errors.append("name part " + QUALIFIED_NAME_MSG)
    return errors


def label_value_errors(value: str) -> list[str]:
    """`IsValidLabelValue` (= `content.IsLabelValue`)."""
    errors: list[str] = []
    if _size(value) > LABEL_VALUE_MAX:
        errors.append(max_bytes_error(LABEL_VALUE_MAX))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errors.append(LABEL_VALUE_MSG)
    return errors


def c_identifier_errors(value: str) -> list[str]:
    """`IsCIdentifier`."""
    return [] if _C_IDENTIFIER_RE.fullmatch(value) else [C_IDENTIFIER_MSG]


POOL_NAME_MSG: Final = "each part of the pool name separated by '/' must be " + DNS1123_SUBDOMAIN_MSG


def pool_name_errors(value: str) -> list[str]:
    """The format of a DRA pool name (its length, ≤ `POOL_NAME_MAX`, is the caller's "Too long")."""
    return [] if all(is_dns1123_subdomain(part) for part in value.split("/")) else [POOL_NAME_MSG]


#: an attribute's or a capacity's name after its domain (`ValidateQualifiedName` of resource/v1)
DEVICE_ID_MAX: Final = 32


def fully_qualified_attribute_errors(value: str) -> list[str]:
    """A fully qualified attribute name (`partitionTypeAttribute`, `defaultPartitionTypeAttribute`):
    ``<domain>/<C identifier>``, the domain a DNS subdomain, the identifier at most 32 characters."""
    parts = value.split("/")
    if len(parts) != 2:
        return [
            "must not contain more than one slash"
            if len(parts) > 2
            else "a fully qualified name must be a domain and a name separated by a slash"
        ]
    domain, ident = parts
    errors = ["the domain must not be empty"] if not domain else dns1123_subdomain_errors(domain)
    if not ident:
        return [*errors, "the name must not be empty"]
    if len(ident) > DEVICE_ID_MAX:
        errors.append(max_len_error(DEVICE_ID_MAX))
    return errors + c_identifier_errors(ident)
