"""Validation of an operator's taint and selector, with the rules and limits the API server applies
(dra-api.md §2, §3.4, §3.5), so a mistake is caught with a clear message before anything is written."""

from __future__ import annotations

import re
from dataclasses import dataclass

EFFECTS = ("None", "NoSchedule", "NoExecute")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


@dataclass(frozen=True)
class FieldError:
    field: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"field": self.field, "message": self.message}


def dns_subdomain_errors(field: str, value: str, *, max_length: int = 253) -> list[FieldError]:
    if not value:
        return [FieldError(field, "Required value")]
    if len(value) > max_length:
        return [FieldError(field, f"must be no more than {max_length} characters")]
    if not _DNS_SUBDOMAIN.match(value):
        return [
            FieldError(
                field,
                f"Invalid value: {value!r}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character",
            )
        ]
    return []


def dns_label_errors(field: str, value: str) -> list[FieldError]:
    if not value:
        return [FieldError(field, "Required value")]
    if len(value) > 63 or not _DNS_LABEL.match(value):
        return [
            FieldError(
                field,
                f"Invalid value: {value!r}: a lowercase RFC 1123 label must consist of lower case alphanumeric "
                "characters or '-', start and end with an alphanumeric character, and be at most 63 characters",
            )
        ]
    return []


def pool_name_errors(field: str, value: str) -> list[FieldError]:
    if not value:
        return [FieldError(field, "Required value")]
    if len(value) > 253:
        return [FieldError(field, "must be no more than 253 characters")]
    errors: list[FieldError] = []
    for part in value.split("/"):
        errors.extend(dns_subdomain_errors(field, part))
    return errors[:1]


def taint_key_errors(key: str) -> list[FieldError]:
    field = "taint.key"
    if not key:
        return [FieldError(field, "Required value: a taint needs a key, e.g. example.com/maintenance")]
    prefix, _, name = key.rpartition("/")
    errors: list[FieldError] = []
    if "/" in key and not prefix:
        errors.append(FieldError(field, f"Invalid value: {key!r}: prefix part must be non-empty"))
    if prefix:
        errors.extend(
            FieldError(field, f"prefix part {e.message}") for e in dns_subdomain_errors(field, prefix)
        )
    if not name or len(name) > 63 or not _QUALIFIED_NAME_PART.match(name):
        errors.append(
            FieldError(
                field,
                f"Invalid value: {key!r}: name part must consist of alphanumeric characters, '-', '_' or '.', "
                "must start and end with an alphanumeric character, and be at most 63 characters",
            )
        )
    return errors


def taint_value_errors(value: str) -> list[FieldError]:
    if len(value) > 63 or not _LABEL_VALUE.match(value):
        return [
            FieldError(
                "taint.value",
                f"Invalid value: {value!r}: a valid label value must be an empty string or consist of alphanumeric "
                "characters, '-', '_' or '.', must start and end with an alphanumeric character, "
                "and be at most 63 characters",
            )
        ]
    return []


def taint_effect_errors(effect: str) -> list[FieldError]:
    if not effect:
        return [FieldError("taint.effect", 'Required value: one of "None", "NoSchedule", "NoExecute"')]
    if effect not in EFFECTS:
        return [
            FieldError(
                "taint.effect",
                f'Unsupported value: {effect!r}: supported values: "NoExecute", "NoSchedule", "None"'
                + (" (PreferNoSchedule is not valid for devices)" if effect == "PreferNoSchedule" else ""),
            )
        ]
    return []


def taint_errors(*, key: str, value: str, effect: str) -> list[FieldError]:
    return [*taint_key_errors(key), *taint_value_errors(value), *taint_effect_errors(effect)]


def selector_errors(selector: dict[str, str] | None, *, confirm_all_devices: bool) -> list[FieldError]:
    """A missing selector matches no device (a rule that does nothing); an empty one matches every device
    in the cluster (kubernetes#141422 evicted a whole cluster that way). Both need an explicit decision."""
    if selector is None:
        return [FieldError("deviceSelector", "Required value: a rule without a selector matches no device")]
    errors: list[FieldError] = []
    unknown = sorted(set(selector) - {"driver", "pool", "device"})
    for name in unknown:
        errors.append(
            FieldError(f"deviceSelector.{name}", 'Unsupported field: only "driver", "pool" and "device"')
        )
    if not any(selector.get(k) for k in ("driver", "pool", "device")) and not confirm_all_devices:
        errors.append(
            FieldError(
                "deviceSelector",
                "An empty selector matches every device in the cluster; confirm "
                '"every device in the cluster" explicitly to allow it',
            )
        )
    if selector.get("driver"):
        errors.extend(dns_subdomain_errors("deviceSelector.driver", selector["driver"], max_length=63))
    if selector.get("pool"):
        errors.extend(pool_name_errors("deviceSelector.pool", selector["pool"]))
    if selector.get("device"):
        errors.extend(dns_label_errors("deviceSelector.device", selector["device"]))
    return errors
