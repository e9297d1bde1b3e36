"""Strict reading of what an API client sends: an unknown key, a wrong type or a `confirm` that is not
the JSON boolean true is refused, naming the field — never ignored, never coerced (`"driver": 1` is
not the driver "1", and `{"nod": "worker-03"}` is not "no filter")."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dra.jsontypes import a_type
from dradash.api import text_problem, unstorable_text
from inventory.filters import DeviceFilterSet
from maintenance.errors import MaintenanceError
from maintenance.planning import DeviceRef
from maintenance.taints import FieldError

# The inventory's device filters a selection may use (the same query parameters as the Devices page).
# Every one of them, so "Take these devices out of service" on the Devices page carries nothing a new
# maintenance would refuse.
DEVICE_FILTERS: tuple[str, ...] = tuple(DeviceFilterSet.base_filters)
EVERY_DEVICE_PHRASE = "every device in the cluster"

CREATE_FIELDS = ("title", "reason", "ticket", "key", "value", "effect", "devices", "filters", "every_device",
                 "expected_count")  # fmt: skip
APPLY_FIELDS = (
    "effect",
    "mode",
    "concurrency",
    "replacement_timeout",
    "confirm",
    "typed",
    "preview",
    "version",
)
DRAIN_ACTION_FIELDS = ("version",)
DRAIN_FORECAST_PARAMS = ("concurrency",)
UNDO_FIELDS = ("mode", "version")
REMOVE_LEFTOVERS_FIELDS = ("confirm", "version")
PREVIEW_FIELDS = ("version",)
DEVICE_FIELDS = ("driver", "pool", "device")

# A drain's numbers: pods evicted at once, and seconds to wait for a pod's replacement.
DEFAULT_CONCURRENCY = 1
MAX_CONCURRENCY = 50
DEFAULT_REPLACEMENT_TIMEOUT = 300
MAX_REPLACEMENT_TIMEOUT = 3600


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def unstorable_errors(value: Any, where: str = "") -> list[FieldError]:
    """Every key and string in `value` that cannot be stored (NUL, lone surrogates), by its field path
    (the one rule: dradash.api.text_problem)."""
    return [FieldError(path, why) for path, why in unstorable_text(value, where)]


def text_errors(name: str, value: str, max_length: int) -> list[FieldError]:
    """A free text stored whole or refused: never cut to the column's length."""
    if problem := text_problem(value):
        return [FieldError(name, problem)]
    if len(value) > max_length:
        return [FieldError(name, f"Too long: may not be more than {max_length} characters, got {len(value)}")]
    return []


def range_error(name: str, low: int, high: int, got: str) -> FieldError:
    return FieldError(name, f"must be a whole number from {low} to {high}, got {got}")


def form_whole_number(raw: str | None, name: str, low: int, high: int) -> int | None:
    """A whole number a form or query string sends (absent or empty: None), in decimal ASCII digits:
    "1.5", "-3", " 2" and "١" are refused naming the field and what was sent, not read or guessed."""
    if raw is None or raw == "":
        return None
    if raw.isascii() and raw.isdigit() and len(raw) <= 9 and low <= int(raw) <= high:
        return int(raw)
    raise MaintenanceError([range_error(name, low, high, repr(raw[:40]))])


class _Reader:
    """Collects every problem of one body, so the client learns all of them at once."""

    def __init__(self, body: Any, allowed: tuple[str, ...]) -> None:
        self.errors: list[FieldError] = []
        if not isinstance(body, Mapping):
            self.errors.append(FieldError("body", f"must be a JSON object, got {a_type(body)}"))
            body = {}
        self.body: Mapping[str, Any] = body
        for name in sorted(set(body) - set(allowed)):
            close = difflib.get_close_matches(str(name), allowed, n=1, cutoff=0.8)
            hint = f'did you mean "{close[0]}"? Supported' if close else "supported"
            self.errors.append(
                FieldError(str(name), f"Unknown field: {hint} fields are " + ", ".join(allowed))
            )
        self.errors.extend(unstorable_errors(body))

    def string(self, name: str, *, required: bool = False, default: str = "") -> str:
        if name not in self.body:
            if required:
                self.errors.append(FieldError(name, "Required value"))
            return default
        value = self.body[name]
        if not isinstance(value, str):
            self.errors.append(FieldError(name, f"must be a string, got {a_type(value)} {_shown(value)}"))
            return default
        if required and not value.strip():
            self.errors.append(FieldError(name, "Required value: must not be empty"))
        return value

    def integer(self, name: str) -> int | None:
        if name not in self.body or self.body[name] is None:
            return None
        value = self.body[name]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.errors.append(
                FieldError(name, f"must be a non-negative integer, got {a_type(value)} {_shown(value)}")
            )
            return None
        return value

    def whole_number(self, name: str, low: int, high: int) -> int | None:
        if name not in self.body or self.body[name] is None:
            return None
        value = self.body[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            got = str(value) if isinstance(value, int) and not isinstance(value, bool) else None
            self.errors.append(range_error(name, low, high, got or f"{a_type(value)} {_shown(value)}"))
            return None
        return value

    def done(self) -> None:
        if self.errors:
            raise MaintenanceError(self.errors)


@dataclass(frozen=True)
class CreateRequest:
    title: str
    reason: str
    ticket: str
    key: str
    value: str
    effect: str
    devices: list[DeviceRef]
    filters: dict[str, str]
    every_device: bool
    expected_count: int | None


def filters_errors(filters: Any, *, field: str = "filters") -> list[FieldError]:
    """A filter the inventory does not know would silently select more than meant: refuse it."""
    if not isinstance(filters, Mapping):
        return [FieldError(field, f"must be an object of device filters, got {a_type(filters)}")]
    errors: list[FieldError] = []
    for name, value in filters.items():
        if name not in DEVICE_FILTERS:
            errors.append(
                FieldError(
                    f"{field}.{name}", "Unknown filter: supported filters are " + ", ".join(DEVICE_FILTERS)
                )
            )
        elif not isinstance(value, str):
            errors.append(
                FieldError(f"{field}.{name}", f"must be a string, got {a_type(value)} {_shown(value)}")
            )
        elif not value.strip():
            errors.append(FieldError(f"{field}.{name}", "must not be empty (leave the filter out instead)"))
    return errors


def parse_create(body: Any) -> CreateRequest:
    reader = _Reader(body, CREATE_FIELDS)
    title = reader.string("title", required=True)
    reason = reader.string("reason", required=True)
    ticket = reader.string("ticket")
    key = reader.string("key", required=True)
    value = reader.string("value")
    effect = reader.string("effect", required=True)
    every = reader.string("every_device")
    expected = reader.integer("expected_count")
    given = [name for name in ("devices", "filters") if name in reader.body] + (
        ["every_device"] if every else []
    )

    devices: list[DeviceRef] = []
    if "devices" in reader.body:
        raw = reader.body["devices"]
        if not isinstance(raw, list):
            reader.errors.append(FieldError("devices", f"must be a list of devices, got {a_type(raw)}"))
        elif not raw:
            reader.errors.append(FieldError("devices", "Required value: select at least one device"))
        for index, item in enumerate(raw if isinstance(raw, list) else []):
            where = f"devices[{index}]"
            if not isinstance(item, Mapping):
                reader.errors.append(
                    FieldError(
                        where,
                        'not a device reference: must be an object {"driver", "pool", "device"}, got '
                        f"{a_type(item)} {_shown(item)}",
                    )
                )
                continue
            for name in sorted(set(item) - set(DEVICE_FIELDS)):
                reader.errors.append(
                    FieldError(f"{where}.{name}", 'Unknown field: only "driver", "pool", "device"')
                )
            parts = []
            for name in DEVICE_FIELDS:
                part = item.get(name)
                if not isinstance(part, str) or not part:
                    reader.errors.append(
                        FieldError(
                            f"{where}.{name}",
                            "Required value"
                            if part in (None, "")
                            else f"must be a string, got {a_type(part)} {_shown(part)}",
                        )
                    )
                parts.append(part if isinstance(part, str) else "")
            devices.append(DeviceRef(*parts))

    filters: dict[str, str] = {}
    if "filters" in reader.body:
        raw_filters = reader.body["filters"]
        problems = filters_errors(raw_filters)
        reader.errors.extend(problems)
        if not problems and isinstance(raw_filters, Mapping):
            filters = {str(k): str(v).strip() for k, v in raw_filters.items()}
            if not filters and "devices" not in reader.body:
                reader.errors.append(
                    FieldError(
                        "filters",
                        "Empty filters would select every device: name at least one filter, list the "
                        f'devices, or send "every_device": "{EVERY_DEVICE_PHRASE}"',
                    )
                )
    if every and every != EVERY_DEVICE_PHRASE:
        reader.errors.append(
            FieldError(
                "every_device",
                f'type exactly "{EVERY_DEVICE_PHRASE}" to select every device, or leave it out',
            )
        )
    if not given:
        reader.errors.append(
            FieldError(
                "devices",
                'Required value: nothing is selected; send "devices" (a list), "filters" (all devices '
                f'matching them), or "every_device": "{EVERY_DEVICE_PHRASE}"',
            )
        )
    elif len(given) > 1:
        reader.errors.append(
            FieldError(given[1], f"give one way of selecting devices, not {' and '.join(given)}")
        )
    reader.done()
    return CreateRequest(
        title=title, reason=reason, ticket=ticket, key=key.strip(), value=value.strip(), effect=effect,
        devices=devices, filters=filters, every_device=every == EVERY_DEVICE_PHRASE, expected_count=expected,
    )  # fmt: skip


@dataclass(frozen=True)
class ApplyRequest:
    effect: str
    confirmed: bool
    typed: str
    preview: str
    version: int | None
    mode: str = "taint"  # "drain": NoSchedule, then evict the affected pods respecting their budgets
    concurrency: int | None = None
    replacement_timeout: int | None = None


def parse_apply(body: Any) -> ApplyRequest:
    reader = _Reader(body, APPLY_FIELDS)
    mode = reader.string("mode", default="taint")
    if mode not in ("taint", "drain"):
        reader.errors.append(FieldError("mode", f'Unsupported value: "{mode[:40]}": use "taint" or "drain"'))
    drain = mode == "drain"
    effect = reader.string("effect", required=not drain, default="NoSchedule" if drain else "")
    if drain and effect != "NoSchedule":
        reader.errors.append(
            FieldError(
                "effect",
                f'a drain applies NoSchedule (then evicts): leave it out or say "NoSchedule", not "{effect[:40]}"',
            )
        )
    concurrency = reader.whole_number("concurrency", 1, MAX_CONCURRENCY)
    timeout = reader.whole_number("replacement_timeout", 1, MAX_REPLACEMENT_TIMEOUT)
    if not drain:
        for name, value in (("concurrency", concurrency), ("replacement_timeout", timeout)):
            if value is not None:
                reader.errors.append(FieldError(name, 'only a drain takes it: add "mode": "drain"'))
    confirm = reader.body.get("confirm", False)
    if not isinstance(confirm, bool):
        reader.errors.append(
            FieldError("confirm", f"must be the JSON boolean true, got {a_type(confirm)} {_shown(confirm)}")
        )
        confirm = False
    typed = reader.string("typed")
    preview = reader.string("preview")
    version = reader.integer("version")
    reader.done()
    return ApplyRequest(
        effect=effect, confirmed=confirm is True, typed=typed, preview=preview, version=version, mode=mode,
        concurrency=concurrency, replacement_timeout=timeout,
    )  # fmt: skip


def parse_drain_action(body: Any) -> int | None:
    reader = _Reader(body if body is not None else {}, DRAIN_ACTION_FIELDS)
    version = reader.integer("version")
    reader.done()
    return version


def parse_remove_leftovers(body: Any) -> tuple[bool, int | None]:
    """{"confirm": true, "version": n} of "remove the rules a failed enforce left"."""
    reader = _Reader(body if body is not None else {}, REMOVE_LEFTOVERS_FIELDS)
    confirm = reader.body.get("confirm", False)
    if not isinstance(confirm, bool):
        reader.errors.append(
            FieldError("confirm", f"must be the JSON boolean true, got {a_type(confirm)} {_shown(confirm)}")
        )
        confirm = False
    version = reader.integer("version")
    reader.done()
    return confirm is True, version


def parse_drain_forecast(params: Mapping[str, str]) -> int | None:
    """`?concurrency=N` of the drain forecast: a whole number from 1 to MAX_CONCURRENCY."""
    reader = _Reader(params, DRAIN_FORECAST_PARAMS)
    concurrency: int | None = None
    try:
        concurrency = form_whole_number(reader.body.get("concurrency"), "concurrency", 1, MAX_CONCURRENCY)
    except MaintenanceError as error:
        reader.errors.extend(error.errors)
    reader.done()
    return concurrency


def parse_undo(body: Any) -> tuple[str, int | None]:
    reader = _Reader(body, UNDO_FIELDS)
    mode = reader.string("mode", default="delete")
    version = reader.integer("version")
    reader.done()
    return mode, version


def parse_preview(body: Any) -> int | None:
    reader = _Reader(body if body is not None else {}, PREVIEW_FIELDS)
    version = reader.integer("version")
    reader.done()
    return version


def form_version(raw: str | None) -> int | None:
    """The version a page's form carries (absent on a hand-made request: then not checked)."""
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise MaintenanceError([FieldError("version", f"must be an integer, got {raw[:40]!r}")]) from None
