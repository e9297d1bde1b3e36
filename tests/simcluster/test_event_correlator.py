"""Events go through client-go's correlator, as every controller records them (tools/record/events_cache.go,
its defaults): the spam filter lets a component record 25 events about one object, then one every 5 minutes;
from the 10th different message of one reason within 10 minutes on, the messages are combined into one event;
the same event again is counted on the first one."""

from __future__ import annotations

from typing import Any

from simcluster.controllers.base import FakeClock
from simcluster.controllers.common import post_event
from simcluster.store import Store

RS = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "metadata": {"name": "web", "namespace": "default", "uid": "0f2b6a9e-0000-4000-8000-000000000001"},
}
OTHER = {**RS, "metadata": {**RS["metadata"], "name": "api", "uid": "0f2b6a9e-0000-4000-8000-000000000002"}}


def _events(store: Store, name: str = "web") -> list[dict[str, Any]]:
    return sorted(
        (e for e in store.list("events") if e["involvedObject"]["name"] == name),
        key=lambda e: e["metadata"]["creationTimestamp"] + e["metadata"]["name"],
    )


def _created(store: Store, clock: FakeClock, n: int, *, involved: dict[str, Any] = RS) -> None:
    for i in range(n):
        post_event(store, clock, involved, reason="SuccessfulCreate", message=f"Created pod: web-{i:04d}",
                   component="replicaset-controller")  # fmt: skip


def test_a_replicaset_creating_a_thousand_pods_records_25_events_not_a_thousand() -> None:
    store, clock = Store(), FakeClock()

    _created(store, clock, 1000)

    events = _events(store)
    assert sum(e["count"] for e in events) == 25
    plain = [e for e in events if not e["message"].startswith("(combined")]
    combined = [e for e in events if e["message"].startswith("(combined")]
    # nine different messages as they were, then one event combining the rest (counted on it)
    assert sorted(e["message"] for e in plain) == [f"Created pod: web-{i:04d}" for i in range(9)]
    assert [(e["message"], e["count"]) for e in combined] == [
        ("(combined from similar events): Created pod: web-0024", 16)
    ]


def test_another_object_and_another_component_have_their_own_allowance() -> None:
    store, clock = Store(), FakeClock()
    _created(store, clock, 30)

    _created(store, clock, 3, involved=OTHER)
    post_event(
        store, clock, RS, reason="ScalingReplicaSet", message="Scaled up", component="deployment-controller"
    )

    assert sum(e["count"] for e in _events(store, "api")) == 3
    assert [e["reason"] for e in _events(store) if e["source"]["component"] == "deployment-controller"] == [
        "ScalingReplicaSet"
    ]


def test_the_allowance_refills_one_event_every_five_minutes() -> None:
    store, clock = Store(), FakeClock()
    _created(store, clock, 25)
    post_event(store, clock, RS, reason="FailedCreate", message="quota", component="replicaset-controller")
    assert [e for e in _events(store) if e["reason"] == "FailedCreate"] == []

    clock.advance(299)
    post_event(store, clock, RS, reason="FailedCreate", message="quota", component="replicaset-controller")
    assert [e for e in _events(store) if e["reason"] == "FailedCreate"] == []

    clock.advance(1)
    post_event(store, clock, RS, reason="FailedCreate", message="quota", component="replicaset-controller")
    assert [(e["message"], e["count"]) for e in _events(store) if e["reason"] == "FailedCreate"] == [
        ("quota", 1)
    ]


def test_the_same_event_again_is_counted_on_the_first_and_a_few_different_ones_stay_apart() -> None:
    store, clock = Store(), FakeClock()
    for _ in range(3):
        post_event(
            store, clock, RS, reason="FailedCreate", message="quota", component="replicaset-controller"
        )
        clock.advance(1)
    _created(store, clock, 5)

    events = _events(store)
    assert [(e["reason"], e["count"]) for e in events if e["reason"] == "FailedCreate"] == [
        ("FailedCreate", 3)
    ]
    assert len([e for e in events if e["reason"] == "SuccessfulCreate"]) == 5


def test_messages_combine_again_only_within_ten_minutes_of_the_last() -> None:
    store, clock = Store(), FakeClock()
    _created(store, clock, 9)  # nine different messages: none combined yet
    clock.advance(601)  # the reason's record is too old: it starts again

    post_event(store, clock, RS, reason="SuccessfulCreate", message="Created pod: late",
               component="replicaset-controller")  # fmt: skip

    assert not [e for e in _events(store) if e["message"].startswith("(combined")]
    assert len(_events(store)) == 10


def test_it_names_each_event_after_its_object_and_the_time_in_hex_nanoseconds_as_client_go_does() -> None:
    store, clock = Store(), FakeClock()

    _created(store, clock, 3)

    events = _events(store)
    nanos = int(clock.now().timestamp()) * 10**9
    # makeEvent: fmt.Sprintf("%v.%x", ref.Name, t.UnixNano()), never a generateName
    assert [e["metadata"]["name"] for e in events] == [f"web.{nanos + i:x}" for i in range(3)]
    assert not any("generateName" in e["metadata"] for e in events)
