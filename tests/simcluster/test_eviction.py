"""The device-taint eviction controller evicts at the right time and reports progress on the rule."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from dra.taints import eviction_time
from simcluster.controllers.base import format_time
from simcluster.controllers.eviction import no_effect_message, pending_message
from tests.simcluster.sim_helpers import (
    claim_template,
    claims_of,
    condition,
    devices_of,
    pods,
    running,
    settle,
    template_pod,
)


def test_it_words_condition_messages_as_upstream_does() -> None:
    assert (
        pending_message(1, 1, 0)
        == "1 pod needs to be evicted in 1 namespace. 0 pods evicted since starting the controller."
    )
    assert pending_message(3, 2, 1) == (
        "3 pods need to be evicted in 2 different namespaces. 1 pod evicted since starting the controller."
    )
    assert no_effect_message(4, 1, 1, 1).startswith(
        "4 published devices selected. 1 allocated device selected. 1 pod would be evicted in 1 namespace if the effect was NoExecute."
    )


def _rule(name: str, selector: dict[str, str], effect: str, added: datetime) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {
            "deviceSelector": selector,
            "taint": {
                "key": "example.com/maintenance",
                "value": "drain",
                "effect": effect,
                "timeAdded": format_time(added),
            },
        },
    }


def _record_pod_updates(cluster: Any) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    cluster.store.subscribe(lambda kind, plural, obj: seen.append(obj) if plural == "pods" else None)
    return seen


def test_it_evicts_pods_on_a_no_execute_rule_at_once_and_replacements_land_elsewhere() -> None:
    with running() as (cluster, controllers, clock):
        victim = pods(cluster, app="trainer")[0]
        driver, pool, device = devices_of(claims_of(cluster, victim)[0])[0]
        updates = _record_pod_updates(cluster)

        selector = {"driver": driver, "pool": pool, "device": device}
        cluster.store.create("devicetaintrules", _rule("drain-gpu", selector, "NoExecute", clock.now()))
        settle(cluster)

        names = {p["metadata"]["name"] for p in pods(cluster)}
        assert victim["metadata"]["name"] not in names
        marked = [
            u
            for u in updates
            if u["metadata"]["uid"] == victim["metadata"]["uid"] and condition(u, "DisruptionTarget")
        ]
        assert marked and condition(marked[0], "DisruptionTarget")["reason"] == "DeletionByDeviceTaintManager"  # type: ignore[index]
        events = [
            e
            for e in cluster.store.list("events", namespace="ml")
            if e["involvedObject"]["uid"] == victim["metadata"]["uid"]
        ]
        assert "DeviceTaintManagerEviction" in {e["reason"] for e in events}

        trainers = pods(cluster, app="trainer")
        assert len(trainers) == 2 and all(p["status"]["phase"] == "Running" for p in trainers)
        in_use = {devices_of(claims_of(cluster, p)[0])[0] for p in trainers}
        assert (driver, pool, device) not in in_use
        rule = cluster.store.get("devicetaintrules", "drain-gpu")
        progress = condition(rule, "EvictionInProgress")
        assert progress is not None
        assert (progress["status"], progress["reason"]) == ("False", "Completed")
        assert progress["message"] == "1 pod evicted since starting the controller."
        assert progress["observedGeneration"] == 1


def test_it_deallocates_the_claim_of_an_evicted_pod() -> None:
    with running() as (cluster, _, clock):
        (pod,) = pods(cluster, app="legacy-gpu")
        (claim,) = claims_of(cluster, pod)
        (driver, pool, device) = devices_of(claim)[0]

        cluster.store.create(
            "devicetaintrules",
            _rule("one-gpu", {"driver": driver, "pool": pool, "device": device}, "NoExecute", clock.now()),
        )
        settle(cluster)

        assert pods(cluster, app="legacy-gpu") == []
        assert claim["metadata"]["name"] not in {
            c["metadata"]["name"] for c in cluster.store.list("resourceclaims")
        }


def test_it_waits_for_toleration_seconds_and_reports_pending_pods_meanwhile() -> None:
    with running() as (cluster, _, clock):
        cluster.store.create(
            "resourceclaimtemplates",
            claim_template(
                "patient",
                [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu.example.com",
                            "tolerations": [
                                {
                                    "key": "example.com/maintenance",
                                    "operator": "Exists",
                                    "effect": "NoExecute",
                                    "tolerationSeconds": 60,
                                }
                            ],
                        },
                    }
                ],
            ),
        )
        cluster.store.create("pods", template_pod("patient", "patient"))
        settle(cluster)
        node = cluster.store.get("pods", "patient", namespace="ml")["spec"]["nodeName"]

        cluster.store.create(
            "devicetaintrules",
            _rule("drain", {"driver": "gpu.example.com", "pool": node}, "NoExecute", clock.now()),
        )
        settle(cluster)
        clock.advance(59)
        settle(cluster)

        assert cluster.store.get("pods", "patient", namespace="ml")["status"]["phase"] == "Running"
        progress = condition(cluster.store.get("devicetaintrules", "drain"), "EvictionInProgress")
        assert progress is not None and (progress["status"], progress["reason"]) == (
            "True",
            "PodsPendingEviction",
        )
        assert progress["message"].startswith("1 pod needs to be evicted in 1 namespace.")

        clock.advance(2)
        settle(cluster)

        assert "patient" not in {p["metadata"]["name"] for p in pods(cluster)}
        progress = condition(cluster.store.get("devicetaintrules", "drain"), "EvictionInProgress")
        assert progress is not None and progress["reason"] == "Completed"


def test_it_cancels_a_pending_eviction_when_the_rule_goes_away() -> None:
    with running() as (cluster, _, clock):
        (pod,) = pods(cluster, app="legacy-gpu")
        node = pod["spec"]["nodeName"]
        # The rule was added 0 s ago but says it applies from the future: eviction is due in 30 s.
        cluster.store.create(
            "devicetaintrules",
            _rule(
                "soon",
                {"driver": "gpu.example.com", "pool": node},
                "NoExecute",
                clock.now() + timedelta(seconds=30),
            ),
        )
        settle(cluster)
        cluster.store.delete("devicetaintrules", "soon")
        settle(cluster)
        clock.advance(60)
        settle(cluster)

        assert [p["metadata"]["uid"] for p in pods(cluster, app="legacy-gpu")] == [pod["metadata"]["uid"]]
        messages = {
            e["message"]
            for e in cluster.store.list("events", namespace="default")
            if e["reason"] == "DeviceTaintManagerEviction"
        }
        assert messages == {"Cancelling deletion"}


def test_it_evicts_pods_using_a_device_the_driver_marks_unhealthy_with_no_execute() -> None:
    with running() as (cluster, controllers, _):
        (pod,) = pods(cluster, app="mig-inference")
        (claim,) = claims_of(cluster, pod)
        (driver, pool, device) = devices_of(claim)[0]

        controllers.driver.mark_unhealthy(driver, pool, device, effect="NoExecute")
        settle(cluster)

        (replacement,) = pods(cluster, app="mig-inference")
        assert replacement["metadata"]["uid"] != pod["metadata"]["uid"]
        assert replacement["status"]["phase"] == "Running"
        assert devices_of(claims_of(cluster, replacement)[0])[0] != (driver, pool, device)


def test_it_previews_a_none_rule_once_and_reports_other_effects_as_not_evicting() -> None:
    with running() as (cluster, _, clock):
        trainer = pods(cluster, app="trainer")[0]
        driver, pool, device = devices_of(claims_of(cluster, trainer)[0])[0]
        selector = {"driver": driver, "pool": pool, "device": device}
        cluster.store.create("devicetaintrules", _rule("look", selector, "None", clock.now()))
        cluster.store.create("devicetaintrules", _rule("hold", selector, "NoSchedule", clock.now()))
        nic = {"driver": "nic.example.com", "pool": pool}
        cluster.store.create("devicetaintrules", _rule("idle", nic, "NoExecute", clock.now()))
        settle(cluster)

        look = condition(cluster.store.get("devicetaintrules", "look"), "EvictionInProgress")
        assert look is not None and (look["status"], look["reason"]) == ("False", "NoEffect")
        assert look["message"].startswith(
            "1 published device selected. 1 allocated device selected. 1 pod would be evicted in 1 namespace"
        )
        hold = condition(cluster.store.get("devicetaintrules", "hold"), "EvictionInProgress")
        assert hold is not None and (hold["reason"], hold["message"]) == (
            "OtherEffect",
            "Eviction only happens for the NoExecute effect.",
        )
        idle = condition(cluster.store.get("devicetaintrules", "idle"), "EvictionInProgress")
        assert idle is not None and (idle["status"], idle["reason"]) == ("False", "NotStarted")
        assert trainer["metadata"]["name"] in {p["metadata"]["name"] for p in pods(cluster)}


def test_it_writes_rule_status_at_most_once_per_period() -> None:
    with running(rule_status_period=30) as (cluster, _, clock):
        cluster.store.create(
            "resourceclaimtemplates",
            claim_template(
                "slow",
                [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu.example.com",
                            "tolerations": [
                                {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10}
                            ],
                        },
                    }
                ],
            ),
        )
        cluster.store.create("pods", template_pod("slow", "slow", claim="gpu"))
        settle(cluster)
        node = cluster.store.get("pods", "slow", namespace="ml")["spec"]["nodeName"]
        cluster.store.create(
            "devicetaintrules",
            _rule("drain", {"driver": "gpu.example.com", "pool": node}, "NoExecute", clock.now()),
        )
        settle(cluster)
        first = condition(cluster.store.get("devicetaintrules", "drain"), "EvictionInProgress")
        assert first is not None and first["reason"] == "PodsPendingEviction"

        clock.advance(11)  # the pod goes, but the status may not change again before 30 s have passed
        settle(cluster)
        assert "slow" not in {p["metadata"]["name"] for p in pods(cluster)}
        assert condition(cluster.store.get("devicetaintrules", "drain"), "EvictionInProgress") == first

        clock.advance(20)
        settle(cluster)
        later = condition(cluster.store.get("devicetaintrules", "drain"), "EvictionInProgress")
        assert later is not None and later["reason"] == "Completed"


def test_it_starts_evicting_when_a_previewed_rule_is_switched_from_none_to_no_execute() -> None:
    with running() as (cluster, _, clock):
        trainer = pods(cluster, app="trainer")[0]
        driver, pool, device = devices_of(claims_of(cluster, trainer)[0])[0]
        selector = {"driver": driver, "pool": pool, "device": device}
        cluster.store.create("devicetaintrules", _rule("drain", selector, "None", clock.now()))
        settle(cluster)
        assert trainer["metadata"]["name"] in {p["metadata"]["name"] for p in pods(cluster)}

        # The server stamps a new timeAdded from its own (real) clock unless one is given: use the test's.
        switch = {
            "spec": {
                "taint": {"effect": "NoExecute", "timeAdded": format_time(clock.now() + timedelta(seconds=1))}
            }
        }
        cluster.store.patch("devicetaintrules", "drain", switch)
        clock.advance(1)
        settle(cluster)

        assert trainer["metadata"]["name"] not in {p["metadata"]["name"] for p in pods(cluster)}
        progress = condition(cluster.store.get("devicetaintrules", "drain"), "EvictionInProgress")
        assert progress is not None
        assert (progress["reason"], progress["observedGeneration"]) == ("Completed", 2)


def test_it_gives_a_new_pod_a_fresh_device_instead_of_joining_a_shared_claim_being_evicted() -> None:
    with running() as (cluster, _, clock):
        cluster.store.create(
            "resourceclaims",
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": "shared", "namespace": "ml"},
                "spec": {
                    "devices": {
                        "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]
                    }
                },
            },
        )

        def reader(name: str) -> dict[str, Any]:
            pod = template_pod(name, "unused")
            pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "shared"}]
            return pod

        cluster.store.create("pods", reader("reader-a"))
        settle(cluster)
        (tainted,) = devices_of(cluster.store.get("resourceclaims", "shared", namespace="ml"))

        driver, pool, device = tainted
        selector = {"driver": driver, "pool": pool, "device": device}
        cluster.store.create("devicetaintrules", _rule("bad-gpu", selector, "NoExecute", clock.now()))
        cluster.store.create("pods", reader("reader-b"))
        settle(cluster)

        assert "reader-a" not in {p["metadata"]["name"] for p in pods(cluster)}
        reader_b = cluster.store.get("pods", "reader-b", namespace="ml")
        assert reader_b["status"]["phase"] == "Running"
        shared = cluster.store.get("resourceclaims", "shared", namespace="ml")
        assert devices_of(shared) != [tainted]
        assert [r["name"] for r in shared["status"]["reservedFor"]] == ["reader-b"]


MAINTENANCE = {"key": "example.com/maintenance", "operator": "Exists", "effect": "NoExecute"}
TOLERATION_TABLE: list[tuple[str, list[dict[str, Any]]]] = [
    ("none", []),
    ("thirty", [{**MAINTENANCE, "tolerationSeconds": 30}]),
    ("smallest", [{**MAINTENANCE, "tolerationSeconds": 300}, {**MAINTENANCE, "tolerationSeconds": 10}]),
    ("forever", [MAINTENANCE]),
    # an empty effect lets the scheduler allocate a NoExecute device but does not delay eviction
    ("empty-effect", [{"key": "example.com/maintenance", "operator": "Exists"}]),
    ("negative", [{**MAINTENANCE, "tolerationSeconds": -5}]),
    ("other-key", [{**MAINTENANCE, "key": "example.com/other"}]),
]


def test_it_evicts_each_pod_when_dra_taints_eviction_time_says() -> None:
    with running() as (cluster, _, clock):
        for name, tolerations in TOLERATION_TABLE:
            request = {
                "name": "gpu",
                "exactly": {"deviceClassName": "gpu.example.com", "tolerations": tolerations},
            }
            cluster.store.create("resourceclaimtemplates", claim_template(f"tol-{name}", [request]))
            cluster.store.create("pods", template_pod(f"tol-{name}", f"tol-{name}"))
        settle(cluster)
        assert all(
            cluster.store.get("pods", f"tol-{n}", namespace="ml")["spec"]["nodeName"]
            for n, _ in TOLERATION_TABLE
        )

        start = clock.now()
        rule = _rule("drain-all-gpus", {"driver": "gpu.example.com"}, "NoExecute", start)
        cluster.store.create("devicetaintrules", rule)
        expected = {
            f"tol-{name}": eviction_time(rule["spec"]["taint"], tolerations, now=start)
            for name, tolerations in TOLERATION_TABLE
        }
        checkpoints = sorted({start, *(at for at in expected.values() if at is not None)})
        checkpoints += [at - timedelta(seconds=1) for at in checkpoints if at > start]
        checkpoints += [start + timedelta(hours=1)]
        gone_at: dict[str, datetime | None] = dict.fromkeys(expected)
        for checkpoint in sorted(set(checkpoints)):
            clock.advance((checkpoint - clock.now()).total_seconds())
            settle(cluster)
            live = {
                p["metadata"]["name"]
                for p in pods(cluster, namespace="ml")
                if not p["metadata"].get("deletionTimestamp")
            }
            for name in gone_at:
                if gone_at[name] is None and name not in live:
                    gone_at[name] = checkpoint

        assert gone_at == expected
