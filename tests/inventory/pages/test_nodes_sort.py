"""The Nodes page sorts on the server (every page, not just the one shown) by any of its columns, as Claims
does: ?sort=KEY or ?sort=-KEY, the header marked for the table script."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from tests.inventory import factories as f
from tests.inventory.pages_support import make_user

pytestmark = pytest.mark.django_db


def node(name: str, *, created: str, ready: str) -> Any:
    obj = f.node(name)
    obj["metadata"]["creationTimestamp"] = created
    obj["status"] = {"conditions": [{"type": "Ready", "status": ready}]}
    return obj


def pod(name: str, node_name: str) -> Any:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": f.meta(name, namespace="default"),
            "spec": {"nodeName": node_name, "containers": [{"name": "c"}]}, "status": {"phase": "Running"}}  # fmt: skip


@pytest.fixture
def nodes() -> None:
    # alpha: oldest, ready, 2 pods, 1 GPU of 1 allocated; beta: newest, not ready, no pod, 3 GPUs none
    # allocated; gamma: ready, 1 pod, no GPU at all (last for the GPU column either way).
    f.write(
        ("nodes", node("alpha", created="2026-11-01T10:00:00Z", ready="True")),
        ("nodes", node("beta", created="2026-11-03T10:00:00Z", ready="False")),
        ("nodes", node("gamma", created="2026-11-02T10:00:00Z", ready="True")),
        (
            "resourceslices",
            f.resource_slice("alpha-gpu", pool="alpha", node="alpha", devices=[f.gpu("gpu-0")]),
        ),
        (
            "resourceslices",
            f.resource_slice(
                "beta-gpu", pool="beta", node="beta", devices=[f.gpu("gpu-0"), f.gpu("gpu-1"), f.gpu("gpu-2")]
            ),
        ),  # fmt: skip
        ("resourceclaims", f.claim("c", results=[f.result("gpu-0", pool="alpha")])),
        ("pods", pod("a-0", "alpha")),
        ("pods", pod("a-1", "alpha")),
        ("pods", pod("g-0", "gamma")),
    )


def names(client: Client, sort: str, **extra: str) -> list[str]:
    html = client.get("/nodes/", {"sort": sort, **extra} if sort else extra).content.decode()
    return re.findall(r'<tr data-node="([^"]+)"', html)


def test_it_sorts_nodes_by_the_column_asked_for(client: Client, nodes: None) -> None:
    client.force_login(make_user())
    assert names(client, "") == ["alpha", "beta", "gamma"]
    assert names(client, "-name") == ["gamma", "beta", "alpha"]
    assert names(client, "ready") == ["beta", "alpha", "gamma"]  # not ready first
    assert names(client, "-ready") == ["alpha", "gamma", "beta"]
    assert names(client, "pods") == ["beta", "gamma", "alpha"]
    assert names(client, "-pods") == ["alpha", "gamma", "beta"]
    assert names(client, "age") == ["beta", "gamma", "alpha"]  # youngest first, as on Claims
    assert names(client, "-age") == ["alpha", "gamma", "beta"]
    assert names(client, "driver:gpu.example.com") == ["beta", "alpha", "gamma"]  # by allocated; no GPU last
    assert names(client, "-driver:gpu.example.com") == ["alpha", "beta", "gamma"]
    assert names(client, "nonsense") == ["alpha", "beta", "gamma"]
    assert names(client, "-pods", q="a") == ["alpha", "gamma", "beta"]
    html = client.get("/nodes/").content.decode()
    assert 'data-sort-current="name"' in html  # the default order shows its arrow


def test_it_marks_the_sorted_column_and_keeps_the_sort_in_the_filter_form(
    client: Client, nodes: None
) -> None:
    client.force_login(make_user())
    html = client.get("/nodes/", {"sort": "-pods"}).content.decode()
    assert 'data-table="nodes" data-sort-param="sort" data-sort-current="-pods"' in html
    assert '<th data-sort-key="pods">Pods</th>' in html
    assert 'data-sort-key="driver:gpu.example.com"' in html
    assert '<input type="hidden" name="sort" value="-pods">' in html


def test_it_keeps_the_sort_on_the_next_page(client: Client, nodes: None, monkeypatch: Any) -> None:
    from inventory import views

    monkeypatch.setattr(views, "NODES_PER_PAGE", 2)
    client.force_login(make_user())
    html = client.get("/nodes/", {"sort": "-pods"}).content.decode()
    assert re.findall(r'<tr data-node="([^"]+)"', html) == ["alpha", "gamma"]
    assert 'href="?sort=-pods&amp;page=2"' in html or 'href="?sort=-pods&page=2"' in html
    assert names(client, "-pods", page="2") == ["beta"]
