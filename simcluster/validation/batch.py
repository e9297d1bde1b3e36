"""Rules of batch/v1 CronJob beyond the schema (upstream's ValidateCronJobCreate and ValidateCronJobSpec):
a name of at most 52 characters, a schedule that robfig/cron's standard parser accepts (its words in the
message), no TZ in it, a known concurrency policy, history limits not negative, and a job template whose
selector is generated (none given) and whose pod restarts OnFailure or Never.

Jobs themselves are not judged here: simcluster checks them against the schema alone.
"""

from __future__ import annotations

import re
import zoneinfo
from typing import Any, Final

from simcluster.schema import Causes
from simcluster.validation.apps import check_pod_template, go_label_selector
from simcluster.validation.shared import as_map

JSON = dict[str, Any]

NAME_MAX: Final = 52
_DESCRIPTORS: Final = frozenset(
    {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
)
_MONTHS: Final = {
    m: i + 1
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    )
}
_DAYS: Final = {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
#: (minimum, maximum, names) of the five fields: minute, hour, day of month, month, day of week.
_FIELDS: Final[tuple[tuple[int, int, dict[str, int] | None], ...]] = (
    (0, 59, None), (0, 23, None), (1, 31, None), (1, 12, _MONTHS), (0, 6, _DAYS),
)  # fmt: skip
_GO_DURATION: Final = re.compile(r"[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+|[-+]?0")


class CronError(ValueError):
    """A schedule robfig/cron refuses; the message is its parser's."""


def parse_schedule(spec: str) -> None:
    """Refuse what cron.ParseStandard refuses (five fields or a descriptor), in its words."""
    if not spec:
        raise CronError("empty spec string")
    if spec.startswith(("TZ=", "CRON_TZ=")):
        spec = spec[spec.find(" ") :].strip() if " " in spec else ""
    if spec.startswith("@"):
        if spec in _DESCRIPTORS:
            return
        if spec.startswith("@every "):
            duration = spec[len("@every ") :]
            if not _GO_DURATION.fullmatch(duration):
                raise CronError(f'failed to parse duration {spec}: time: invalid duration "{duration}"')
            return
        raise CronError(f"unrecognized descriptor: {spec}")
    fields = spec.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    for text, bounds in zip(fields, _FIELDS, strict=True):
        for expr in (part for part in text.split(",") if part):
            _check_range(expr, *bounds)


def _number(expr: str, names: dict[str, int] | None = None) -> int:
    if names is not None and expr.lower() in names:
        return names[expr.lower()]
    if not re.fullmatch(r"[-+]?\d+", expr):
        raise CronError(f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax')
    number = int(expr)
    if number < 0:
        raise CronError(f"negative number ({number}) not allowed: {expr}")
    return number


def _check_range(expr: str, low: int, high: int, names: dict[str, int] | None) -> None:
    """getRange: `*` or `?`, a value, or `a-b`, each with an optional `/step`."""
    range_and_step = expr.split("/")
    bounds = range_and_step[0].split("-")
    if bounds[0] in ("*", "?"):
        start, end = low, high
    else:
        start = _number(bounds[0], names)
        if len(bounds) == 1:
            end = start
        elif len(bounds) == 2:
            end = _number(bounds[1], names)
        else:
            raise CronError(f"too many hyphens: {expr}")
    step = 1
    if len(range_and_step) == 2:
        step = _number(range_and_step[1])
        if len(bounds) == 1:  # "N/step" means "N-max/step"
            end = high
    elif len(range_and_step) > 2:
        raise CronError(f"too many slashes: {expr}")
    if start < low:
        raise CronError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise CronError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")


def check_cron_job(causes: Causes, obj: JSON, old: JSON | None, subresource: str | None) -> list[str]:
    if subresource is not None:
        return []
    name = as_map(obj.get("metadata")).get("name")
    if isinstance(name, str) and len(name) > NAME_MAX:
        causes.invalid("metadata.name", name, f"must be no more than {NAME_MAX} characters")
    spec = as_map(obj.get("spec"))
    schedule = spec.get("schedule")
    if not schedule:
        causes.required("spec.schedule")
    elif isinstance(schedule, str):
        try:
            parse_schedule(schedule)
        except CronError as error:
            causes.invalid("spec.schedule", schedule, str(error))
        old_schedule = str(as_map((old or {}).get("spec")).get("schedule") or "")
        if "TZ" in schedule and "TZ" not in old_schedule:
            causes.invalid(
                "spec.schedule", schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
            )
    policy = spec.get("concurrencyPolicy")
    if not policy:
        causes.required("spec.concurrencyPolicy")
    elif policy not in ("Allow", "Forbid", "Replace"):
        causes.not_supported("spec.concurrencyPolicy", policy, ["Allow", "Forbid", "Replace"])
    job = as_map(as_map(spec.get("jobTemplate")).get("spec"))
    path = "spec.jobTemplate.spec"
    pod_spec = as_map(as_map(job.get("template")).get("spec"))
    restart = pod_spec.get("restartPolicy")
    if restart not in ("OnFailure", "Never"):
        causes.not_supported(f"{path}.template.spec.restartPolicy", restart or "", ["OnFailure", "Never"])
    check_pod_template(causes, as_map(job.get("template")), f"{path}.template")
    if job.get("selector") is not None:
        causes.add("FieldValueInvalid", f"{path}.selector",
                   f"Invalid value: {go_label_selector(job['selector'])}: `selector` will be auto-generated")  # fmt: skip
    if job.get("manualSelector") is True:
        causes.not_supported(f"{path}.manualSelector", True, ["nil", "false"])
    for limit in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        value = spec.get(limit)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0:
            causes.invalid(f"spec.{limit}", value, "must be greater than or equal to 0")
    zone = spec.get("timeZone")
    if isinstance(zone, str):
        _check_time_zone(causes, zone)
    return []


_ZONE_PART: Final = re.compile(r"^[A-Za-z\.\-_0-9+]{1,14}$")


def _check_time_zone(causes: Causes, zone: str) -> None:
    """validateTimeZone: an IANA name (time.LoadLocation's words when unknown), never Local."""
    if not zone:
        causes.invalid("spec.timeZone", zone, "timeZone must be nil or non-empty string")
        return
    for part in zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _ZONE_PART.match(part):
            causes.invalid("spec.timeZone", zone, f"unknown time zone {zone}")
            return
    if zone.lower() == "local":
        causes.invalid(
            "spec.timeZone",
            zone,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        )
        return
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        causes.invalid("spec.timeZone", zone, f"unknown time zone {zone}")
