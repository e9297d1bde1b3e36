"""Validation of an operator's taint and selector, with the rules and limits the API server applies
(dra-api.md §2, §3.4, §3.5), so a mistake is caught with a clear message before anything is written.

The name formats are `dra.names`, the API server's own checks; each message reads as the API server's
field error would (`Invalid value: "x": <rule>`), so an error caught here and one the cluster returns look
alike."""

from __future__ import annotations

import json
from dataclasses import dataclass

from dra import names

EFFECTS = ("None", "NoSchedule", "NoExecute")


@dataclass(frozen=True)
class FieldError:
    field: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"field": self.field, "message": self.message}


def _invalid(field: str, value: str, messages: list[str]) -> list[FieldError]:
    return [
        FieldError(field, f"Invalid value: {json.dumps(value, ensure_ascii=False)}: {m}") for m in messages
    ]


def _too_long(field: str, limit: int) -> FieldError:
    return FieldError(field, f"Too long: may not be more than {limit} bytes")


def dns_subdomain_errors(
    field: str, value: str, *, max_length: int = names.DNS1123_SUBDOMAIN_MAX
) -> list[FieldError]:
    if not value:
        return [FieldError(field, "Required value")]
    # A tighter limit than a subdomain's own (driver names: 63) is the API server's "Too long".
    tighter = max_length < names.DNS1123_SUBDOMAIN_MAX
    errors = [_too_long(field, max_length)] if tighter and len(value) > max_length else []
    return errors + _invalid(field, value, names.dns1123_subdomain_errors(value))


def dns_label_errors(field: str, value: str) -> list[FieldError]:
    if not value:
        return [FieldError(field, "Required value")]
    return _invalid(field, value, names.dns1123_label_errors(value))


def pool_name_errors(field: str, value: str) -> list[FieldError]:
    if not value:
        return [FieldError(field, "Required value")]
    errors = [_too_long(field, names.POOL_NAME_MAX)] if len(value) > names.POOL_NAME_MAX else []
    return errors + _invalid(field, value, names.pool_name_errors(value))


def taint_key_errors(key: str) -> list[FieldError]:
    field = "taint.key"
    if not key:
        return [FieldError(field, "Required value: a taint needs a key, e.g. example.com/maintenance")]
    return _invalid(field, key, names.qualified_name_errors(key))


def taint_value_errors(value: str) -> list[FieldError]:
    return _invalid("taint.value", value, names.label_value_errors(value))


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
        errors.extend(
            dns_subdomain_errors(
                "deviceSelector.driver", selector["driver"], max_length=names.DRIVER_NAME_MAX
            )
        )
    if selector.get("pool"):
        errors.extend(pool_name_errors("deviceSelector.pool", selector["pool"]))
    if selector.get("device"):
        errors.extend(dns_label_errors("deviceSelector.device", selector["device"]))
    return errors
