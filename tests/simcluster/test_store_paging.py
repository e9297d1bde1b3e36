"""Store.page: a list's page as of a resourceVersion, read from the kind's key order (issue 12: paging a
large kind cost the whole kind per page, so listing it was quadratic).

The model is the obvious one: every committed state kept whole, filtered and sorted per question."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simcluster.errors import ApiError
from simcluster.store import Store
from tests.simcluster.samples import sample

NAMESPACES = ("a", "b", "c")
NAMES = tuple(f"t-{i:02d}" for i in range(12))

operation = st.tuples(
    st.sampled_from(("create", "label", "delete")), st.sampled_from(NAMESPACES), st.sampled_from(NAMES)
)


def _store() -> Store:
    store = Store()
    for namespace in NAMESPACES:
        store.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    return store


def _apply(store: Store, live: dict[tuple[str, str], str], op: tuple[str, str, str]) -> None:
    kind, namespace, name = op
    key = (namespace, name)
    if kind == "create" and key not in live:
        store.create(
            "resourceclaimtemplates", sample("resourceclaimtemplates", name=name, namespace=namespace)
        )
    elif kind == "label" and key in live:
        labels = {"tier": "gold" if live[key] != "gold" else "silver"}
        store.patch("resourceclaimtemplates", name, {"metadata": {"labels": labels}}, namespace=namespace)
    elif kind == "delete" and key in live:
        store.delete("resourceclaimtemplates", name, namespace=namespace)
    else:
        return
    live.clear()
    for obj in store.list("resourceclaimtemplates"):
        meta = obj["metadata"]
        live[(meta["namespace"], meta["name"])] = (meta.get("labels") or {}).get("tier", "")


def _gold(obj: dict[str, Any]) -> bool:
    return bool((obj["metadata"].get("labels") or {}).get("tier") == "gold")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    before=st.lists(operation, max_size=40),
    after=st.lists(operation, max_size=25),
    namespace=st.sampled_from((None, *NAMESPACES)),
    limit=st.integers(min_value=1, max_value=5),
    selective=st.booleans(),
)
def test_paging_at_an_older_resource_version_returns_exactly_that_state(
    before: list[tuple[str, str, str]],
    after: list[tuple[str, str, str]],
    namespace: str | None,
    limit: int,
    selective: bool,
) -> None:
    store = _store()
    live: dict[tuple[str, str], str] = {}
    for op in before:
        _apply(store, live, op)
    at_rv = store.resource_version
    expected = sorted(
        key
        for key, tier in live.items()
        if (namespace is None or key[0] == namespace) and (not selective or tier == "gold")
    )
    matcher = _gold if selective else None
    first = store.page("resourceclaimtemplates", namespace=namespace, limit=limit, matcher=matcher)
    for op in after:  # changes between the pages: the rest of the list must not see them
        _apply(store, live, op)
    got = [(e.obj["metadata"]["namespace"], e.obj["metadata"]["name"]) for e in first.entries]
    page = first
    while page.more:
        if not selective:
            assert page.remaining == len(expected) - len(got)
        else:
            assert page.remaining is None
        last = got[-1]
        page = store.page(
            "resourceclaimtemplates",
            namespace=namespace,
            at_rv=at_rv,
            after=last,
            limit=limit,
            matcher=matcher,
        )
        assert page.rv == at_rv
        got += [(e.obj["metadata"]["namespace"], e.obj["metadata"]["name"]) for e in page.entries]
    assert got == expected
    for entry in first.entries:  # and each object is as it was at at_rv, not as it is now
        assert int(entry.obj["metadata"]["resourceVersion"]) <= at_rv


def test_a_page_reads_the_page_not_the_kind() -> None:
    store = _store()
    for i in range(3000):
        store.create(
            "resourceclaimtemplates", sample("resourceclaimtemplates", name=f"t-{i:05d}", namespace="b")
        )
    looked_at: list[str] = []

    def matcher(obj: dict[str, Any]) -> bool:
        looked_at.append(obj["metadata"]["name"])
        return True

    page = store.page("resourceclaimtemplates", after=("b", "t-01999"), limit=50, matcher=matcher)
    assert [e.obj["metadata"]["name"] for e in page.entries][:2] == ["t-02000", "t-02001"]
    assert page.more
    assert looked_at == [f"t-{i:05d}" for i in range(2000, 2051)]  # the page and one more, nothing else


def test_a_namespaced_page_stays_in_its_namespace() -> None:
    store = _store()
    for namespace in NAMESPACES:
        for name in ("x", "y"):
            store.create(
                "resourceclaimtemplates", sample("resourceclaimtemplates", name=name, namespace=namespace)
            )
    page = store.page("resourceclaimtemplates", namespace="b", limit=1)
    assert [e.obj["metadata"]["name"] for e in page.entries] == ["x"]
    assert (page.more, page.remaining) == (True, 1)
    rest = store.page("resourceclaimtemplates", namespace="b", after=("b", "x"), limit=1)
    assert [(e.obj["metadata"]["namespace"], e.obj["metadata"]["name"]) for e in rest.entries] == [("b", "y")]
    assert (rest.more, rest.remaining) == (False, None)


def test_a_page_older_than_the_retained_history_is_gone() -> None:
    store = _store()
    store.create("resourceclaimtemplates", sample("resourceclaimtemplates", name="x", namespace="a"))
    old = store.resource_version
    store.create("resourceclaimtemplates", sample("resourceclaimtemplates", name="y", namespace="a"))
    store.compact()
    with pytest.raises(ApiError) as raised:
        store.page("resourceclaimtemplates", at_rv=old - 1, limit=1)
    assert raised.value.status == 410
