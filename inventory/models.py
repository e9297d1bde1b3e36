"""The mirror of the cluster.

`KubeObject` holds every watched object as the cluster has it (raw JSON, keyed by kind + uid).
`Device`, `Pool`, `Claim`, `Pod` and `ClassAvailability` are derived rows, recomputed by `inventory.mirror`
whenever the objects they come from change, so that pages and the API filter 10,000 devices with one
indexed query.
`WatchState` is the health of each kind's watch.
"""

from __future__ import annotations

from django.db import models

from dra.pods import WAITING_MESSAGE_MAX, WAITING_REASON_MAX

# Allocation states of a device (Device.allocation_state).
FREE = "free"
ALLOCATED = "allocated"
SHARED = "shared"
ALLOCATION_STATES = [(FREE, "free"), (ALLOCATED, "allocated"), (SHARED, "shared")]

# Claim states (Claim.state).
PENDING = "pending"
CLAIM_ALLOCATED = "allocated"
RESERVED = "reserved"
CLAIM_STATES = [(PENDING, "pending"), (CLAIM_ALLOCATED, "allocated"), (RESERVED, "reserved")]

# Taint effects ordered by severity; an unknown effect is shown as it is but treated as None.
TAINT_LEVELS = {"": 0, "None": 1, "NoSchedule": 2, "NoExecute": 3}

# Device health (from pods' status.containerStatuses[].allocatedResourcesStatus; "" = nobody reported) and
# how every page words it, in the Health filter's order: the Devices table (devices.js gets the words in the
# table's spec), a device's page (inventory.tables.health_label) and the filter (inventory.filters
# HEALTH_CHOICES, where "" is the value "unreported"). The data, the exports and the API keep the value.
HEALTH_STATES = [
    ("Healthy", "Healthy"),
    ("Unhealthy", "Unhealthy"),
    ("Unknown", "Unknown"),
    ("", "not reported"),
]

# Watch states (WatchState.state).
WATCH_STARTING = "starting"
WATCH_SYNCED = "synced"
WATCH_RELISTING = "relisting"
WATCH_ERROR = "error"
WATCH_STOPPED = "stopped"
WATCH_FORBIDDEN = "forbidden"  # the credentials may not list or watch this kind (403)
WATCH_UNREACHABLE = "unreachable"  # the API server does not answer
WATCH_STATES = [
    (WATCH_STARTING, "starting"),
    (WATCH_SYNCED, "synced"),
    (WATCH_RELISTING, "re-listing"),
    (WATCH_ERROR, "error"),
    (WATCH_STOPPED, "stopped"),
    (WATCH_FORBIDDEN, "forbidden"),
    (WATCH_UNREACHABLE, "unreachable"),
]
#: The error text of a kind the server does not serve (state stopped): it has no data to be stale.
NOT_SERVED = "not served by this server"


class KubeObject(models.Model):
    """One object of a watched kind, exactly as the API server returned it."""

    kind = models.CharField(max_length=64)  # the plural resource name, e.g. "resourceslices"
    uid = models.CharField(max_length=64)
    name = models.CharField(max_length=253)
    namespace = models.CharField(max_length=63, blank=True, default="")
    resource_version = models.CharField(max_length=64, blank=True, default="")
    generation = models.BigIntegerField(null=True, blank=True)
    creation_timestamp = models.CharField(max_length=40, blank=True, default="")
    # Kind-specific lookup key: "driver/pool" for ResourceSlices, spec.nodeName for Pods, else "".
    index_key = models.CharField(max_length=512, blank=True, default="", db_index=True)
    raw = models.JSONField()
    mirrored_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "uid"], name="kubeobject_kind_uid")]
        indexes = [
            models.Index(fields=["kind", "namespace", "name"], name="kubeobject_kind_ns_name"),
            # What changed since a time, per kind: the what-if snapshot reloads only those rows.
            models.Index(fields=["kind", "mirrored_at"], name="kubeobject_kind_mirrored"),
        ]
        ordering = ["kind", "namespace", "name"]

    def __str__(self) -> str:
        return f"{self.kind}/{self.namespace + '/' if self.namespace else ''}{self.name}"


class Pool(models.Model):
    """A (driver, pool) as published by ResourceSlices; only the highest generation counts."""

    driver = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    generation = models.BigIntegerField(default=0)
    slice_count = models.IntegerField(default=0)  # slices present at `generation`
    expected_slice_count = models.IntegerField(default=0)  # spec.pool.resourceSliceCount
    complete = models.BooleanField(default=False)
    node_name = models.CharField(max_length=253, blank=True, default="")
    device_count = models.IntegerField(default=0)
    # {counterSet: {counter: quantity-string}} from the pool's sharedCounters (partitionable devices).
    shared_counters = models.JSONField(default=dict, blank=True)
    # Validation problems (duplicate device names, unknown counter sets) — shown, never hidden.
    problems = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["driver", "name"], name="pool_driver_name")]
        ordering = ["driver", "name"]

    def __str__(self) -> str:
        return f"{self.driver}/{self.name}"


class Device(models.Model):
    """One device of a ResourceSlice at its pool's highest generation, with everything derived for it."""

    slice_uid = models.CharField(
        max_length=64
    )  # indexed in Meta: equality only (no LIKE index on PostgreSQL)
    slice_name = models.CharField(max_length=253)
    # The slice's metadata.creationTimestamp (RFC 3339 in UTC, so it sorts as text): the device's age.
    slice_created = models.CharField(max_length=40, blank=True, default="")
    driver = models.CharField(max_length=253)
    pool = models.CharField(max_length=253)
    # Indexed for the search box: an exact name, and a name prefix (PostgreSQL adds a LIKE index).
    name = models.CharField(max_length=63, db_index=True)
    node_name = models.CharField(max_length=253, blank=True, default="", db_index=True)
    # "node" | "allNodes" | "nodeSelector" | "perDevice…" — how the device is bound to nodes.
    node_selection = models.CharField(max_length=32, blank=True, default="")
    pool_generation = models.BigIntegerField(default=0)
    pool_complete = models.BooleanField(default=True)

    attributes = models.JSONField(default=dict, blank=True)  # as in the slice
    # {qualified-name: value-as-text} plus short names for the driver's own domain; used by filters.
    attributes_flat = models.JSONField(default=dict, blank=True)
    # The same as "\nkey=value\n" lines: a LIKE pre-filter that is ~10× cheaper than a JSON lookup per row.
    attribute_index = models.TextField(blank=True, default="")
    capacity = models.JSONField(default=dict, blank=True)
    consumes_counters = models.JSONField(default=list, blank=True)
    allow_multiple_allocations = models.BooleanField(default=False)
    partitionable = models.BooleanField(default=False)
    numa_node = models.IntegerField(null=True, blank=True)
    binding_conditions = models.JSONField(default=list, blank=True)

    # DeviceClasses whose selectors match: list for display, " a b " text for a cheap contains filter.
    classes = models.JSONField(default=list, blank=True)
    class_index = models.TextField(blank=True, default=" ")

    # Effective taints: [{key, value, effect, timeAdded, source: "slice"|"rule", rule: name}]
    slice_taints = models.JSONField(default=list, blank=True)
    taints = models.JSONField(default=list, blank=True)
    tainted = models.BooleanField(default=False)
    taint_none = models.BooleanField(default=False)  # has an effect None (or unknown) taint
    taint_no_schedule = models.BooleanField(default=False)
    taint_no_execute = models.BooleanField(default=False)
    max_taint_effect = models.CharField(
        max_length=16, blank=True, default=""
    )  # "", None, NoSchedule, NoExecute

    # Allocation: [{claimUid, namespace, claim, request, subrequest, adminAccess, shareID,
    #               consumedCapacity, pods: [{namespace, name, uid}], extendedResource}]
    allocations = models.JSONField(default=list, blank=True)
    allocation_state = models.CharField(max_length=16, choices=ALLOCATION_STATES, default=FREE)
    admin_access = models.BooleanField(default=False)
    claim_namespace = models.CharField(max_length=63, blank=True, default="")  # first (non-admin) allocation
    claim_name = models.CharField(max_length=253, blank=True, default="")
    # Per-device status from claim.status.devices[]: [{claim, shareID, conditions, networkData, data}]
    statuses = models.JSONField(default=list, blank=True)
    health = models.CharField(max_length=16, blank=True, default="")
    health_message = models.TextField(blank=True, default="")
    # Pods' reports about this device: {podUid: {"pod": "ns/name", "health": ..., "message": ...}}
    health_reports = models.JSONField(default=dict, blank=True)

    # Why a one-device claim of its class could not be given this device now (dra.availability): ""
    # when it could, else a reason of dra.availability.BLOCK_REASONS ("counters", "taint", …) and a sentence.
    blocked = models.CharField(max_length=16, blank=True, default="")
    blocked_reason = models.TextField(blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["driver", "pool", "name"], name="device_driver_pool_name_uniq")
        ]
        indexes = [
            models.Index(fields=["slice_uid"], name="device_slice_uid"),
            models.Index(fields=["allocation_state"], name="device_alloc_state"),
            models.Index(fields=["max_taint_effect"], name="device_max_taint"),
            models.Index(fields=["blocked"], name="device_blocked"),
        ]
        ordering = ["driver", "pool", "name"]

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.name}"

    @property
    def device_id(self) -> str:
        return f"{self.driver}/{self.pool}/{self.name}"


class ClassAvailability(models.Model):
    """What one-device claims of a DeviceClass could get from one pool now (`dra.availability`).

    Kept current by the mirror for the pools each batch touches; a class's numbers are the sums over
    its rows (one indexed aggregate), so pages never run the allocator.
    """

    driver = models.CharField(max_length=253)
    pool = models.CharField(max_length=253)
    device_class = models.CharField(max_length=253)
    free = models.IntegerField(default=0)  # devices a one-device claim could be given, each on its own
    headroom = models.IntegerField(default=0)  # one-device claims that fit together
    capped = models.BooleanField(default=False)  # headroom stopped at the per-node cap (shareable devices)
    error = models.TextField(blank=True, default="")  # what the allocator refused

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["driver", "pool", "device_class"], name="classavailability_uniq")
        ]
        indexes = [models.Index(fields=["device_class"], name="classavailability_class")]

    def __str__(self) -> str:
        return f"{self.device_class} @ {self.driver}/{self.pool}: {self.free} free, {self.headroom} fit"


class Allocation(models.Model):
    """One result of a claim's status.allocation: which claim request holds which device."""

    claim_uid = models.CharField(max_length=64, db_index=True)
    claim_namespace = models.CharField(max_length=63)
    claim_name = models.CharField(max_length=253)
    request = models.CharField(max_length=253)  # "<req>" or "<req>/<sub>" as in the result
    driver = models.CharField(max_length=253)
    pool = models.CharField(max_length=253)
    device = models.CharField(max_length=63)
    admin_access = models.BooleanField(default=False)
    share_id = models.CharField(max_length=64, blank=True, default="")
    consumed_capacity = models.JSONField(default=dict, blank=True)
    pods = models.JSONField(
        default=list, blank=True
    )  # claim.status.reservedFor pods: [{namespace, name, uid}]
    status = models.JSONField(null=True, blank=True)  # the matching claim.status.devices[] entry
    extended_resource = models.BooleanField(default=False)

    class Meta:
        indexes = [models.Index(fields=["driver", "pool", "device"], name="allocation_device")]


class Claim(models.Model):
    """Derived summary of one ResourceClaim, for the claims list and its filters."""

    uid = models.CharField(max_length=64, unique=True)
    namespace = models.CharField(max_length=63)
    name = models.CharField(max_length=253)
    state = models.CharField(max_length=16, choices=CLAIM_STATES, default=PENDING)
    request_count = models.IntegerField(default=0)
    device_count = models.IntegerField(default=0)
    reserved_for = models.JSONField(default=list, blank=True)  # [{resource, name, uid}]
    extended_resource = models.BooleanField(default=False)  # the scheduler's extended-resource claim
    owner_pod = models.CharField(max_length=253, blank=True, default="")
    device_classes = models.JSONField(default=list, blank=True)
    created = models.CharField(max_length=40, blank=True, default="")

    class Meta:
        indexes = [
            models.Index(fields=["namespace", "name"], name="claim_ns_name"),
            models.Index(fields=["state"], name="claim_state"),
        ]
        ordering = ["namespace", "name"]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class Pod(models.Model):
    """Derived summary of one Pod, for the Pods list and its filters (`inventory.mirror.derive.pods`):
    what kubectl would print for it (`dra.pods.pod_status`), why it waits, and the DRA it uses, without
    decoding pods."""

    uid = models.CharField(max_length=64, unique=True)
    namespace = models.CharField(max_length=63)
    name = models.CharField(max_length=253)
    node_name = models.CharField(max_length=253, blank=True, default="")  # spec.nodeName; "" = not bound
    phase = models.CharField(max_length=16, default="Unknown")  # status.phase
    status = models.CharField(max_length=128, blank=True, default="")  # kubectl's STATUS column
    ready = models.CharField(max_length=16, blank=True, default="")  # kubectl's READY column: "1/2"
    restarts = models.IntegerField(default=0)
    # The ResourceClaims it uses (`dra.pods.pod_claims`): [{podClaim, name, source, template}], name "" while
    # a template's claim is not made yet.
    claims = models.JSONField(default=list, blank=True)
    claim_count = models.IntegerField(default=0)
    # Extended resources DRA serves it (`dra.pods.dra_extended_resources`): [{name, count}] by name.
    extended_resources = models.JSONField(default=list, blank=True)
    created = models.CharField(max_length=40, blank=True, default="")  # RFC 3339 in UTC: sorts as text
    # Why it waits (`dra.pods.pod_waiting`): Unschedulable, SchedulingGated, WaitingForResourceClaim or a
    # waiting container's reason, and the cluster's message; "" when nothing holds it.
    waiting_reason = models.CharField(max_length=WAITING_REASON_MAX, blank=True, default="")
    waiting_message = models.CharField(max_length=WAITING_MESSAGE_MAX, blank=True, default="")

    class Meta:
        indexes = [
            models.Index(fields=["namespace", "name"], name="pod_ns_name"),
            models.Index(fields=["node_name"], name="pod_node"),
            models.Index(fields=["phase"], name="pod_phase"),
        ]
        ordering = ["namespace", "name"]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class WatchState(models.Model):
    """Health of one kind's list+watch (shown on the overview and in the API)."""

    kind = models.CharField(max_length=64, unique=True)
    state = models.CharField(max_length=16, choices=WATCH_STATES, default=WATCH_STARTING)
    resource_version = models.CharField(max_length=64, blank=True, default="")
    object_count = models.IntegerField(default=0)
    last_event_at = models.DateTimeField(null=True, blank=True)
    last_sync_at = models.DateTimeField(null=True, blank=True)
    lag_seconds = models.FloatField(null=True, blank=True)  # event applied - event received
    relist_count = models.IntegerField(default=0)
    error = models.TextField(blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)
    # When the kind last became synced or stopped being synced ("unreachable since 12:03").
    since = models.DateTimeField(null=True, blank=True)
    # When the data was last confirmed current (a list, an event or bookmark, a check): the data's age.
    confirmed_at = models.DateTimeField(null=True, blank=True)
    events_applied = models.BigIntegerField(default=0)
    last_relist_reason = models.CharField(max_length=64, blank=True, default="")
    # Objects a periodic resync or a reset re-list found wrong and repaired (missing + ghosts + stale).
    divergences = models.BigIntegerField(default=0)
    # The last such comparison: {"reason", "missing", "ghosts", "stale", "at"}.
    last_divergence = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["kind"]

    def __str__(self) -> str:
        return f"{self.kind}: {self.state}"


class ClusterInfo(models.Model):
    """What the mirrored cluster serves, read by the mirror at start: one row."""

    server = models.CharField(max_length=500, blank=True, default="")  # the API server URL
    version = models.JSONField(default=dict, blank=True)  # /version
    api_versions = models.JSONField(default=list, blank=True)  # as `kubectl api-versions`
    missing_kinds = models.JSONField(default=list, blank=True)  # mirrored kinds this server does not serve
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.server} {self.version.get('gitVersion', '')}"


class ExternalGroups(models.Model):
    """The groups an OIDC login said the user is in (its groups claim), kept for impersonation: they are
    the user's groups to Kubernetes. Not Django groups: a provider group called "admin" must not make
    anyone a dradash admin (roles come from DRADASH_OIDC_*_GROUPS only)."""

    user = models.OneToOneField("auth.User", on_delete=models.CASCADE, related_name="external_groups")
    groups = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user_id}: {', '.join(self.groups)}"


class DeviceCount(models.Model):
    """How many devices share one combination of the columns the Overview and the classes count by.

    Kept equal to the Device rows by database triggers (migration `read_counters`), in the statement that
    changes them, so every writer (the mirror, a test's factory, an admin) keeps it right and a page reads a
    few dozen rows instead of every device. SQLite: row triggers that fire only when a counted column
    changes; PostgreSQL: statement triggers over the transition tables (one aggregate per statement).
    """

    driver = models.CharField(max_length=253)
    class_index = models.TextField(default=" ")
    allocation_state = models.CharField(max_length=16, default=FREE)
    tainted = models.BooleanField(default=False)
    taint_none = models.BooleanField(default=False)
    taint_no_schedule = models.BooleanField(default=False)
    taint_no_execute = models.BooleanField(default=False)
    blocked = models.CharField(max_length=16, blank=True, default="")
    pool_complete = models.BooleanField(default=True)
    n = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.driver} {self.class_index.strip()} {self.allocation_state}: {self.n}"


class DeviceCountPause(models.Model):
    """A row only inside a mirror transaction that recounts the device counters itself for a page of
    devices (`inventory.mirror.derive.counts`): SQLite's counter triggers skip their work while it is
    there (migration `counters_pause`). Never committed, so no other connection sees it."""

    id = models.IntegerField(primary_key=True)

    def __str__(self) -> str:
        return "device counters paused"


class NodeDeviceCount(models.Model):
    """Devices per node and driver (total, not free, tainted), kept by the same triggers as DeviceCount:
    the Nodes list reads one row per node and driver instead of grouping every device."""

    node_name = models.CharField(max_length=253)
    driver = models.CharField(max_length=253)
    total = models.BigIntegerField(default=0)
    allocated = models.BigIntegerField(default=0)  # allocation_state is not free
    tainted = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["node_name", "driver"], name="nodedevicecount_node_driver")
        ]

    def __str__(self) -> str:
        return f"{self.node_name} {self.driver}: {self.total}"


class DeviceAttribute(models.Model):
    """One `domain/name=value` line of a device's `attribute_index`, indexed: the Devices attribute filter
    finds (and counts) its devices through an index instead of a LIKE over every device's text. Written
    by the mirror with the device's slice fields (`inventory.mirror.derive.attributes`). Only qualified
    names have lines; `own` marks the device driver's domain, which a short name (`model=H100`) means.

    Keyed by (device, line), which a device's lines never repeat: no id column, and that key's index also
    finds a device's lines (measured on PostgreSQL, 210,000 lines: 1.48 s to insert with an id, its index and
    a device index; 0.91 s so)."""

    pk = models.CompositePrimaryKey("device", "line")
    device = models.ForeignKey(
        Device,
        on_delete=models.CASCADE,
        db_constraint=False,
        db_index=False,  # the primary key leads with it
        related_name="attribute_lines",
    )
    line = models.TextField()
    own = models.BooleanField(default=False)

    class Meta:
        indexes = [models.Index(fields=["line", "own", "device"], name="deviceattribute_line_own")]

    def __str__(self) -> str:
        return f"{self.device_id}: {self.line}"
