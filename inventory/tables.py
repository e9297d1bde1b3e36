"""The Devices table, declared once.

`DEVICE_COLUMNS` is the one list: each `Column` names the Device fields it reads and how it turns them
into the row's value. Everything else follows from it, so a new column is one entry here:

* the rows of the table's data endpoint and of the JSON export (`device_rows`),
* the CSV export (`csv_header`, `csv_row`),
* the REST API's device fields (`api_fields`: every column's Device fields, then the detail-only ones),
* the Tabulator columns the page hands to static/dradash/devices.js (`tabulator_columns`),
* the sorts the data endpoint accepts (`sorts`).

Values come from `QuerySet.values()`: building model instances and decoding every JSON column costs
more than the query itself at a page of a few hundred rows.

Server-rendered lists declare their columns here too (`POD_COLUMNS`): the headers, the sorts the page
accepts (`list_ordering`) and, at phone width, each cell's label follow from one tuple.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.db.models import Case, QuerySet, Value, When

from dra.availability import BLOCK_REASONS
from dra.objects import attribute_text, attribute_value
from dradash.templatetags.dradash_format import WORD_MAX
from inventory.models import HEALTH_STATES, Device

Row = Mapping[str, Any]


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class Column:
    #: the key in JSON rows and exports; the Tabulator field
    name: str
    #: the header people read
    label: str
    #: the Device fields the value is made of (the API serves them too)
    fields: tuple[str, ...]
    #: the row's value, from those fields (a `values()` dict)
    value: Callable[[Row], Any]
    #: how the CSV export spells the value
    text: Callable[[Any], str] = _text
    #: order_by() for the table's server-side sort ("-field": descending when the column sorts up);
    #: () = not sortable
    sort: tuple[str, ...] = ()
    #: the Devices filter (DeviceFilterSet parameter) a cell's value links to; "" = none
    filter: str = ""
    #: the cell renderer in devices.js; "" = plain text
    formatter: str = ""
    #: shown by default (hidden columns still reach the page, the exports and the API)
    visible: bool = True
    #: Tabulator sizing: width, minWidth, widthGrow, hozAlign, cssClass, headerSortStartingDir
    layout: Mapping[str, Any] = field(default_factory=dict)


def _attributes(d: Row) -> dict[str, Any]:
    """name → value, a list-typed attribute's value a list (DRAListTypeAttributes): never joined into one
    string, where ["a,b", "c"] and ["a", "b", "c"] would read the same."""
    values = {}
    for name, attr in sorted((d["attributes"] or {}).items()):
        value = attribute_value(attr) if isinstance(attr, Mapping) else None
        values[name] = (
            [attribute_text(v) for v in value] if isinstance(value, list) else attribute_text(value)
        )
    return values


def _attributes_text(values: Mapping[str, Any]) -> str:
    """The CSV's spelling: a JSON object ({"labels": ["a,b", "c"], "model": "H100"}), unambiguous."""
    return json.dumps(values, ensure_ascii=False) if values else ""


def _taints(d: Row) -> list[dict[str, str]]:
    keys = ("key", "value", "effect", "source", "rule")
    return [{k: str(t.get(k, "") or "") for k in keys} for t in d["taints"] or []]


def _claims(d: Row) -> list[str]:
    return [
        f"{a.get('namespace', '')}/{a.get('claim', '')}" for a in d["allocations"] or [] if a.get("claim")
    ]


def _pods(d: Row) -> list[str]:
    return [
        f"{p.get('namespace', '')}/{p.get('name', '')}"
        for a in d["allocations"] or []
        for p in a.get("pods") or []
    ]


#: The widths add up to 1,238 px for the default columns, so nothing is clipped from 1280 px up (a column
#: whose cells need more gets it in devices.js, and the table scrolls sideways when there is no room).
DEVICE_COLUMNS: tuple[Column, ...] = (
    Column("driver", "Driver", ("driver",), lambda d: d["driver"], filter="driver", visible=False),
    Column(
        "pool", "Pool", ("pool",), lambda d: d["pool"], sort=("pool",), filter="pool", formatter="pool",
        layout={"width": 90},
    ),
    Column(
        "device", "Device", ("name",), lambda d: d["name"], sort=("name",), formatter="deviceLink",
        layout={"minWidth": 120, "widthGrow": 0.8},
    ),
    Column(
        "node", "Node", ("node_name",), lambda d: d["node_name"], sort=("node_name",), filter="node",
        layout={"width": 88},
    ),
    Column(
        "numa", "NUMA", ("numa_node",), lambda d: d["numa_node"], sort=("numa_node",),
        layout={"width": 80, "hozAlign": "right"},
    ),
    Column(
        "classes", "Class", ("classes",), lambda d: list(d["classes"] or []), filter="device_class",
        formatter="badges", layout={"width": 142},
    ),
    Column(
        "taints", "Taints", ("taints",), _taints,
        text=lambda ts: ";".join(f"{t['key']}={t['value']}:{t['effect']}" for t in ts),
        sort=("taint_level",), formatter="taints",
        layout={"minWidth": 104, "widthGrow": 2.4, "cssClass": "wrap", "headerSortStartingDir": "desc"},
    ),
    Column(
        "state", "State", ("allocation_state",), lambda d: d["allocation_state"], sort=("allocation_state",),
        filter="state", formatter="state", layout={"width": 104},
    ),
    Column(
        "allocatable", "Allocatable", ("blocked",), lambda d: d["blocked"] or "yes", sort=("blocked",),
        filter="allocatable", formatter="allocatable", layout={"width": 132, "cssClass": "wrap"},
    ),
    Column("why", "Why not", ("blocked_reason",), lambda d: d["blocked_reason"], visible=False),
    Column(
        "claims", "Claim", ("allocations",), _claims, formatter="claims",
        layout={"minWidth": 100, "widthGrow": 1.5, "cssClass": "wrap"},
    ),
    Column(
        "pods", "Pods", ("allocations",), _pods, formatter="pods",
        layout={"minWidth": 100, "widthGrow": 1.5, "cssClass": "wrap"},
    ),
    Column(
        "health", "Health", ("health",), lambda d: d["health"], sort=("health",), filter="health",
        formatter="health", layout={"width": 100},
    ),
    # How long the device has been published: its ResourceSlice's creationTimestamp (a device has none
    # of its own; a driver that republishes its slices makes its devices young again, as kubectl shows).
    # Youngest first when sorted up, like the Claims page's Age.
    Column(
        "age", "Age", ("slice_created",), lambda d: d["slice_created"], sort=("-slice_created",),
        formatter="age", layout={"width": 78},
    ),
    Column("adminAccess", "Admin access", ("admin_access",), lambda d: d["admin_access"], visible=False),
    Column("poolComplete", "Pool complete", ("pool_complete",), lambda d: d["pool_complete"], visible=False),
    Column(
        "attributes", "Attributes", ("attributes",), _attributes, text=_attributes_text, formatter="attributes",
        visible=False, layout={"minWidth": 180, "widthGrow": 2, "cssClass": "wrap"},
    ),
)  # fmt: skip

#: Device fields the API serves besides the table's: what a device's detail needs.
API_DETAIL_FIELDS = (
    "node_selection",
    "slice_name",
    "slice_uid",
    "pool_generation",
    "attributes",
    "capacity",
    "consumes_counters",
    "allow_multiple_allocations",
    "partitionable",
    "binding_conditions",
    "tainted",
    "max_taint_effect",
    "claim_namespace",
    "claim_name",
    "statuses",
    "health_message",
)

#: Sort keys that are expressions, not fields: a Column's `sort` may name them.
SORT_EXPRESSIONS = {
    "taint_level": Case(
        When(max_taint_effect="NoExecute", then=Value(3)),
        When(max_taint_effect="NoSchedule", then=Value(2)),
        When(max_taint_effect="None", then=Value(1)),
        default=Value(0),
    ),
}


def columns() -> tuple[Column, ...]:
    return DEVICE_COLUMNS


def _unique(names: Any) -> list[str]:
    return list(dict.fromkeys(names))


def row_fields() -> list[str]:
    """The Device fields one row reads (plus the id the table keys rows by)."""
    return _unique(["id", *(f for c in columns() for f in c.fields)])


def api_fields() -> list[str]:
    """The REST API's fields of a device: id, device_id, the table's fields, the detail fields."""
    return _unique(["id", "device_id", *(f for c in columns() for f in c.fields), *API_DETAIL_FIELDS])


def device_rows(devices: QuerySet[Device]) -> Iterator[dict[str, Any]]:
    """One dict per device: `id` and every column's value (the table's data and the JSON export)."""
    cols = columns()
    for d in devices.values(*row_fields()).iterator(chunk_size=2000):
        row: dict[str, Any] = {"id": d["id"]}
        for c in cols:
            row[c.name] = c.value(d)
        yield row


def device_url(row: Row, base: str) -> str:
    """The device-detail URL of a row, without a reverse() per row (same shape as its urls.py pattern)."""
    return f"{base}{quote(row['driver'], safe='')}/{quote(row['pool'], safe='/')}/{quote(row['device'], safe='')}/"


def csv_header() -> list[str]:
    return [c.name for c in columns()]


def csv_row(row: Row) -> list[str]:
    return [c.text(row[c.name]) for c in columns()]


def sorts() -> dict[str, tuple[str, ...]]:
    """Sortable column → order_by fields (driver/pool/name always break ties)."""
    return {c.name: c.sort for c in columns() if c.sort}


def _directed(name: str, descending: bool) -> str:
    """An order_by() term: a "-name" in a column's sort turns the way the table sorts around."""
    down = name.startswith("-") != descending
    return ("-" if down else "") + name.removeprefix("-")


def sort_queryset(devices: QuerySet[Device], column: str, descending: bool) -> QuerySet[Device]:
    order = sorts().get(column, ())
    names = [name.removeprefix("-") for name in order]
    aliases = {name: SORT_EXPRESSIONS[name] for name in names if name in SORT_EXPRESSIONS}
    if aliases:
        devices = devices.alias(**aliases)
    return devices.order_by(*(_directed(name, descending) for name in order), "driver", "pool", "name")


def tabulator_columns() -> list[dict[str, Any]]:
    """The table's columns for devices.js: field, title, renderer, sort, visibility, filter, sizing."""
    return [
        {
            "field": c.name,
            "title": c.label,
            "formatter": c.formatter,
            "headerSort": bool(c.sort),
            "visible": c.visible,
            "filter": c.filter,
            **c.layout,
        }
        for c in columns()
    ]


#: The labels devices.js shows for Device.blocked reasons.
BLOCK_LABELS = dict(BLOCK_REASONS)

#: How pages word a device's health (models.HEALTH_STATES), by its value.
HEALTH_LABELS = dict(HEALTH_STATES)


def health_label(health: str) -> str:
    """How a page shows a device's health (models.HEALTH_STATES: "not reported" for none); a value the table
    does not know, as reported."""
    return HEALTH_LABELS.get(health, health)


def table_spec() -> dict[str, Any]:
    """What devices.js draws the table from: the columns, and the words of values it shows as labels."""
    return {
        "columns": tabulator_columns(),
        "blockLabels": BLOCK_LABELS,
        "healthUnreported": health_label(""),
        "wordMax": WORD_MAX,  # a name this long or shorter is kept whole (dradash_format)
        "stringMax": settings.DRADASH_MAX_STRING,  # a cluster string is cut to this, as |k8s cuts it
    }


# ---- server-rendered list tables (the Pods list) ----


@dataclass(frozen=True)
class ListColumn:
    """One column of a server-rendered list: its header, and how the server sorts every page by it."""

    #: the sort key (?sort=NAME, ?sort=-NAME) and the cell's data-col
    name: str
    #: the header people read (and, at phone width, each cell's label)
    label: str
    #: order_by() when sorted up ("-field": descending then); () = not sortable
    sort: tuple[str, ...] = ()
    #: the header's tooltip
    title: str = ""


#: The Pods list (`/pods/`, templates/inventory/partials/pods_table.html renders the cells in this order).
POD_COLUMNS: tuple[ListColumn, ...] = (
    ListColumn("namespace", "Namespace", ("namespace", "name")),
    ListColumn("name", "Pod", ("name", "namespace")),
    ListColumn(
        "status", "Status", ("status", "namespace", "name"),
        title="as kubectl get pods shows it (READY, STATUS, RESTARTS); the phase when it says more",
    ),
    ListColumn("node", "Node", ("node_name", "namespace", "name"), title="where the pod is bound"),
    ListColumn(
        "claims", "Claims", ("claim_count", "namespace", "name"),
        title="the ResourceClaims the pod uses (sorted: by how many)",
    ),
    ListColumn(
        "extended", "Extended resources",
        title="extended resources DRA serves the pod (the scheduler's extended-resource claim)",
    ),
    # Youngest first when sorted up, as on Claims and Devices.
    ListColumn("age", "Age", ("-created", "namespace", "name"), title="since the pod was created"),
)  # fmt: skip


def list_ordering(columns: tuple[ListColumn, ...], sort: str) -> tuple[str, ...]:
    """The ORDER BY of ?sort=KEY or ?sort=-KEY ("" = the first column); an unknown key is a ValueError
    naming the ones there are."""
    key, descending = sort.removeprefix("-"), sort.startswith("-")
    order = next((c.sort for c in columns if c.name == (key or columns[0].name) and c.sort), None)
    if order is None:
        keys = ", ".join(c.name for c in columns if c.sort)
        raise ValueError(f"must be one of {keys}, or one of them after - (descending); got {sort[:40]!r}")
    return tuple(_directed(name, descending) for name in order)


#: kubectl STATUS words that mean a pod is broken (a container crashing, an image that cannot be pulled, …)
BAD_POD_STATUSES = frozenset(
    {"Failed", "Error", "Unknown", "Evicted", "OOMKilled", "ErrImagePull", "InvalidImageName", "ContainerStatusUnknown",
     "CreateContainerError", "CreateContainerConfigError", "RunContainerError", "NodeLost"}
)  # fmt: skip


def pod_status_tone(status: str, phase: str) -> str:
    """The badge class of a pod's STATUS: ok (running, done), bad (failed or crashing), warn (on its way)."""
    word = status.removeprefix("Init:")
    if (
        phase == "Failed"
        or word in BAD_POD_STATUSES
        or word.endswith("BackOff")
        or word.startswith(("ExitCode:", "Signal:"))
    ):
        return "bad"
    if status in ("Running", "Completed", "Succeeded") and phase in ("Running", "Succeeded"):
        return "ok"
    return "warn"
