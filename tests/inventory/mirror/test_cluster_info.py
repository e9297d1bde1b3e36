"""The first page says what the cluster serves: its version, the DRA API versions, every node."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from inventory.kube import connect
from inventory.mirror.runner import Mirror
from tests.kubectl import run_kubectl

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_shows_the_served_api_versions_and_nodes_on_the_overview(simcluster: Any) -> None:
    Mirror(connect(str(simcluster.kubeconfig_path))).sync_once()
    client = Client()
    client.force_login(User.objects.create_user("ada", password="x"))
    page = client.get("/").content.decode()
    panel = page[page.index('id="cluster-info"') :]
    assert "v1.37.1" in panel
    assert "resource.k8s.io/v1, resource.k8s.io/v1alpha3" in panel
    for node in ("node-0", "node-1", "node-2"):
        assert f">{node}</bdi></a>" in panel  # isolated for bidi (the k8s filter)


def test_it_lists_the_api_versions_kubectl_lists(simcluster: Any) -> None:
    result = run_kubectl(simcluster.kubeconfig_path, "api-versions")
    assert result.returncode == 0, result.stderr
    assert connect(str(simcluster.kubeconfig_path)).api_versions() == sorted(result.stdout.split())
