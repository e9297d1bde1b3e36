"""Simulated controllers that run beside the API server: the DRA driver, the scheduler, the device-taint
eviction controller, the ResourceClaim controller, ReplicaSet/Job owners, the DaemonSet and StatefulSet
controllers, pod lifecycle, the
ResourcePoolStatusRequest controller, the garbage collector, the namespace controller and the node lifecycle
controller (the unschedulable taint of a cordoned node).

`start_all(store, topology, options)` publishes the topology's slices and starts every controller in its
own thread. Controllers subscribe to the store (the callback only pokes their loop) and run level-triggered
passes; `Controllers.wait_idle(timeout)` lets tests wait until everything has settled instead of sleeping.

Options (all optional): `clock` (a `Clock`; `FakeClock` for tests), `rule_status_period` (seconds between
DeviceTaintRule status writes, default 10), `allocate` (replaces `dra.allocator.allocate`),
`features` (allocator feature names), `workload_pods` (add that many one-GPU pods, for benchmarks),
`disable` (names of controllers not to start: driver, scheduler, eviction, claims, owners, pods, poolstatus,
deployments, daemonsets, statefulsets, disruption, garbage, namespaces, nodelifecycle),
`batch_delay` (seconds a controller waits after a store event to batch a burst into one pass, default 0.02),
`pace` (every controller but the scheduler also waits that many times its last pass's duration, default 10),
`percentage_of_nodes_to_score` (the scheduler's percentageOfNodesToScore, default 0: adaptive).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dra.allocator import DEFAULT_FEATURES
from simcluster.controllers.base import (
    KUBE_SCHEDULER,
    KUBELET,
    Clock,
    FakeClock,
    Loop,
    SystemClock,
    stop_loops,
)
from simcluster.controllers.claims import WATCHES as CLAIM_WATCHES
from simcluster.controllers.claims import ClaimController
from simcluster.controllers.daemonsets import WATCHES as DAEMONSET_WATCHES
from simcluster.controllers.daemonsets import DaemonSetController
from simcluster.controllers.deployments import WATCHES as DEPLOYMENT_WATCHES
from simcluster.controllers.deployments import DeploymentController
from simcluster.controllers.disruption import WATCHES as DISRUPTION_WATCHES
from simcluster.controllers.disruption import DisruptionController
from simcluster.controllers.driver import Driver
from simcluster.controllers.eviction import WATCHES as EVICTION_WATCHES
from simcluster.controllers.eviction import EvictionController
from simcluster.controllers.garbage import GarbageCollector
from simcluster.controllers.namespaces import NamespaceController
from simcluster.controllers.nodes import NodeLifecycle
from simcluster.controllers.owners import WATCHES as OWNER_WATCHES
from simcluster.controllers.owners import OwnerController
from simcluster.controllers.pods import WATCHES as POD_WATCHES
from simcluster.controllers.pods import PodLifecycle
from simcluster.controllers.poolstatus import WATCHES as POOL_STATUS_WATCHES
from simcluster.controllers.poolstatus import PoolStatusController
from simcluster.controllers.scheduler import WATCHES as SCHEDULER_WATCHES
from simcluster.controllers.scheduler import Scheduler
from simcluster.controllers.statefulsets import WATCHES as STATEFULSET_WATCHES
from simcluster.controllers.statefulsets import StatefulSetController
from simcluster.controllers.storage import WATCHES as STORAGE_WATCHES
from simcluster.controllers.storage import StorageProtection
from simcluster.errors import ApiError
from simcluster.rbac import aggregate_cluster_roles
from simcluster.store import Store
from simcluster.topology import Topology, generated_workloads

__all__ = ["Clock", "Controllers", "FakeClock", "SystemClock", "start_all"]


@dataclass
class Controllers:
    store: Store
    clock: Clock
    driver: Driver
    scheduler: Scheduler
    eviction: EvictionController
    claims: ClaimController
    owners: OwnerController
    pods: PodLifecycle
    pool_status: PoolStatusController
    deployments: DeploymentController
    daemonsets: DaemonSetController
    statefulsets: StatefulSetController
    disruption: DisruptionController
    garbage: GarbageCollector
    namespaces: NamespaceController
    node_lifecycle: NodeLifecycle
    storage: StorageProtection
    loops: dict[str, Loop] = field(default_factory=dict)
    _unsubscribe: Callable[[], None] | None = None

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """True once every loop has drained its work and the store stopped changing; False on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            before = self.store.resource_version
            drained = all(
                loop.wait_idle(max(0.0, deadline - time.monotonic())) for loop in self.loops.values()
            )
            if (
                drained
                and self.store.resource_version == before
                and all(loop.idle() for loop in self.loops.values())
            ):
                return True
        return False

    def poke(self) -> None:
        for loop in self.loops.values():
            loop.poke()

    def errors(self) -> dict[str, BaseException]:
        return {name: loop.last_error for name, loop in self.loops.items() if loop.last_error is not None}

    def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        stop_loops(list(self.loops.values()))


def start_all(store: Store, topology: Topology | None, options: dict[str, Any] | None = None) -> Controllers:
    options = dict(options or {})
    clock: Clock = options.get("clock") or SystemClock()
    world = topology or Topology(name="none", namespaces=(), nodes=(), device_classes=(), pools=())
    if options.get("workload_pods"):
        for plural, obj in generated_workloads(int(options["workload_pods"])):
            try:
                store.create(plural, obj)
            except ApiError as error:
                if error.reason != "AlreadyExists":
                    raise
    driver = Driver(store, world, clock=clock)
    scheduler = Scheduler(
        store,
        clock=clock,
        allocate=options.get("allocate"),
        features=frozenset(options.get("features", DEFAULT_FEATURES)),
        percentage_of_nodes_to_score=int(options.get("percentage_of_nodes_to_score", 0)),
    )
    eviction = EvictionController(
        store, clock=clock, rule_status_period=float(options.get("rule_status_period", 10.0))
    )
    claims = ClaimController(store)
    owners = OwnerController(store, clock=clock)
    pods = PodLifecycle(store, clock=clock)
    pool_status = PoolStatusController(store, clock=clock)
    deployments = DeploymentController(store, clock=clock)
    daemonsets = DaemonSetController(store, clock=clock)
    statefulsets = StatefulSetController(store, clock=clock)
    disruption = DisruptionController(store, clock=clock)
    garbage = GarbageCollector(store)
    namespaces = NamespaceController(store, clock=clock)
    node_lifecycle = NodeLifecycle(store, clock=clock)
    storage = StorageProtection(store)
    controllers = Controllers(
        store=store,
        clock=clock,
        driver=driver,
        scheduler=scheduler,
        eviction=eviction,
        claims=claims,
        owners=owners,
        pods=pods,
        pool_status=pool_status,
        deployments=deployments,
        daemonsets=daemonsets,
        statefulsets=statefulsets,
        disruption=disruption,
        garbage=garbage,
        namespaces=namespaces,
        node_lifecycle=node_lifecycle,
        storage=storage,
    )
    disabled = set(options.get("disable") or ())
    batch = float(options.get("batch_delay", 0.02))
    pace = float(options.get("pace", 10.0))
    driver.loop.batch_delay = batch
    driver.loop.pace = pace
    wiring: list[tuple[str, Loop, frozenset[str]]] = [
        ("driver", driver.loop, Driver.WATCHES),
        # The scheduler is every burst's critical path: it alone runs unpaced.
        (
            "scheduler",
            Loop("scheduler", scheduler.reconcile, batch_delay=batch, manager=KUBE_SCHEDULER),
            SCHEDULER_WATCHES,
        ),
        ("eviction", Loop("eviction", eviction.reconcile, batch_delay=batch, pace=pace), EVICTION_WATCHES),
        ("claims", Loop("claims", claims.reconcile, batch_delay=batch, pace=pace), CLAIM_WATCHES),
        ("owners", Loop("owners", owners.reconcile, batch_delay=batch, pace=pace), OWNER_WATCHES),
        ("pods", Loop("pods", pods.reconcile, batch_delay=batch, pace=pace, manager=KUBELET), POD_WATCHES),
        (
            "poolstatus",
            Loop("poolstatus", pool_status.reconcile, batch_delay=batch, pace=pace),
            POOL_STATUS_WATCHES,
        ),
        (
            "deployments",
            Loop("deployments", deployments.reconcile, batch_delay=batch, pace=pace),
            DEPLOYMENT_WATCHES,
        ),
        (
            "daemonsets",
            Loop("daemonsets", daemonsets.reconcile, batch_delay=batch, pace=pace),
            DAEMONSET_WATCHES,
        ),
        (
            "statefulsets",
            Loop("statefulsets", statefulsets.reconcile, batch_delay=batch, pace=pace),
            STATEFULSET_WATCHES,
        ),
        (
            "disruption",
            Loop("disruption", disruption.reconcile, batch_delay=batch, pace=pace),
            DISRUPTION_WATCHES,
        ),
        ("garbage", Loop("garbage", garbage.reconcile, batch_delay=batch, pace=pace), frozenset()),
        ("namespaces", Loop("namespaces", namespaces.reconcile, batch_delay=batch, pace=pace), frozenset()),
        ("nodelifecycle", Loop("nodelifecycle", node_lifecycle.reconcile, batch_delay=batch), frozenset()),
        ("storage", Loop("storage", storage.reconcile, batch_delay=batch, pace=pace), STORAGE_WATCHES),
        (
            "clusterroleaggregation",
            Loop("clusterroleaggregation", lambda: _aggregate(store), batch_delay=batch),
            frozenset({"clusterroles"}),
        ),
    ]
    # Which of its kinds' changes wake a loop, where not all of them: what upstream's event handlers let
    # through to the work queue. A burst of one owner's pods then wakes none of the other controllers.
    interest: dict[str, Callable[[str, dict[str, Any]], bool]] = {
        "deployments": deployments.wants,
        "daemonsets": daemonsets.wants,
        "statefulsets": statefulsets.wants,
        "disruption": disruption.wants,
        "storage": storage.wants,
    }
    routes: dict[str, list[tuple[Loop, Callable[[str, dict[str, Any]], bool] | None]]] = {}
    for name, loop, watches in wiring:
        if name in disabled:
            continue
        controllers.loops[name] = loop
        for plural in watches:
            routes.setdefault(plural, []).append((loop, interest.get(name)))

    collector = controllers.loops.get("garbage")
    emptier = controllers.loops.get("namespaces")
    tainter = controllers.loops.get("nodelifecycle")

    def on_change(event_type: str, plural: str, obj: dict[str, Any]) -> None:
        for loop, wants in routes.get(plural, ()):
            if wants is None or wants(plural, obj):
                loop.poke()
        # every kind may own or be owned: the collector keeps its graph from every change
        if collector is not None and garbage.observe(event_type, plural, obj):
            collector.poke()
        # any change inside a namespace being deleted may let it go
        if emptier is not None and namespaces.observe(event_type, plural, obj):
            emptier.poke()
        # a node cordoned or uncordoned: its unschedulable taint follows
        if tainter is not None and node_lifecycle.observe(event_type, plural, obj):
            tainter.poke()

    if "driver" not in disabled:
        driver.publish_all()
    with store.lock:  # the collector's graph starts from what is stored, then follows every change
        if collector is not None:
            garbage.sync()
        if emptier is not None:
            namespaces.sync()
        if tainter is not None:
            node_lifecycle.sync()
        controllers._unsubscribe = store.subscribe(on_change)
    clock.on_change(controllers.poke)
    for loop in controllers.loops.values():
        loop.start()
    return controllers


def _aggregate(store: Store) -> None:
    """The clusterrole-aggregation controller: a ClusterRole labelled for admin, edit or view (or for any role
    with an aggregationRule) adds its rules to that role."""
    aggregate_cluster_roles(store)
