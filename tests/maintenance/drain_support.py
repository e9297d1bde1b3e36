"""Shared steps of the drain tests: the demo cluster, a selection of whole nodes' GPUs, the typed phrase,
stepping the drain with the mirror in between, and a watcher of ml/trainer through the API."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from inventory.kube import connect
from inventory.models import Device
from maintenance.drain import drain_confirmation, drain_step
from maintenance.models import Drain, DrainPod, Maintenance
from maintenance.planning import DeviceRef
from maintenance.services import maintenance_preview_observe
from tests.maintenance.support import GPU, create, preview_now


def trainer_nodes(cluster: Any) -> list[str]:
    """Nodes running ml/trainer pods, the one with the most first."""
    counts = Counter(
        p["spec"].get("nodeName")
        for p in cluster.store.list("pods", namespace="ml")
        if (p["metadata"].get("labels") or {}).get("app") == "trainer" and p["spec"].get("nodeName")
    )
    return [node for node, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def gpus_of(nodes: list[str]) -> list[DeviceRef]:
    return [
        DeviceRef(GPU, pool, name)
        for pool, name in Device.objects.filter(driver=GPU, node_name__in=nodes)
        .order_by("pool", "name")
        .values_list("pool", "name")
    ]


def drain_ready(user: Any, nodes: list[str]) -> tuple[Maintenance, str, str]:
    """A maintenance of the nodes' GPUs, previewed: (maintenance, preview run id, the phrase to type)."""
    m = create(user, devices=gpus_of(nodes), filters={"node": ",".join(nodes)}, effect="NoSchedule",
               title="Drain GPUs", reason="firmware")  # fmt: skip
    run = preview_now(m, user)
    _, wanted = drain_confirmation(maintenance=m, status=maintenance_preview_observe(maintenance=m))
    return m, str(run.pk), wanted.phrase


def step_until(
    m: Maintenance, sync: Callable[[], Any], *, driver: str = "test-driver", until: Callable[[], bool],
    timeout: float = 30.0, each: Callable[[], None] | None = None,
) -> None:  # fmt: skip
    deadline = time.monotonic() + timeout
    while not until():
        assert time.monotonic() < deadline, (
            f"the drain did not get there: {Drain.objects.get(maintenance=m).state} "
            f"{list(DrainPod.objects.filter(drain__maintenance=m).values_list('name', 'state', 'reason'))}"
        )
        sync()
        drain_step(m.id, driver=driver)
        if each is not None:
            each()
        time.sleep(0.2)


def healthy_trainers(client: Any) -> int:
    pods, _, _ = client.list_objects("pods", namespace="ml", label_selector="app=trainer")
    return sum(
        1
        for p in pods
        if not p["metadata"].get("deletionTimestamp")
        and any(
            c.get("type") == "Ready" and c.get("status") == "True"
            for c in p["status"].get("conditions") or []
        )
    )


class TrainerWatch:
    """Counts healthy ml/trainer pods through the API every second (and on demand) while a drain runs."""

    def __init__(self, kubeconfig: str, every: float = 1.0) -> None:
        self.client = connect(kubeconfig)
        self.every = every
        self.seen: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TrainerWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def look(self) -> None:
        self.seen.append(healthy_trainers(self.client))

    def _run(self) -> None:
        while not self._stop.is_set():
            self.look()
            self._stop.wait(self.every)
