from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client


def user_in(group: str, name: str) -> User:
    user = User.objects.create_user(name, password="pw-" + name)
    user.groups.add(Group.objects.get_or_create(name=group)[0])
    return user


@pytest.fixture
def operator(db: Any) -> User:
    return user_in("operator", "olivia")


@pytest.fixture
def viewer(db: Any) -> User:
    return user_in("viewer", "victor")


@pytest.fixture
def operator_client(operator: User) -> Client:
    """A browser signed in as the operator."""
    client = Client()
    client.force_login(operator)
    return client


@pytest.fixture
def cluster_settings(simcluster: Any, settings: Any) -> Any:
    """Point dradash at the test's simcluster, as DRADASH_KUBECONFIG would."""
    settings.DRADASH_KUBECONFIG = str(simcluster.kubeconfig_path)
    settings.DRADASH_KUBE_CONTEXT = ""
    return simcluster


@pytest.fixture
def mirrored(cluster_settings: Any, db: Any) -> Any:
    """The simcluster, mirrored once into the database (devices, claims, pods, rules): call
    `mirrored.sync()` again after changing the cluster."""
    from inventory.kube import connect
    from inventory.mirror.runner import Mirror

    # The topology's pods are scheduled (their claims allocated) by simcluster's controllers after it
    # starts: mirror once they are done, so every test starts from the settled cluster it reads.
    assert cluster_settings.controllers is None or cluster_settings.controllers.wait_idle(30)
    mirror = Mirror(connect(str(cluster_settings.kubeconfig_path)))
    mirror.sync_once()
    cluster_settings.sync = mirror.sync_once
    return cluster_settings


@pytest.fixture
def cut(mirrored: Any, settings: Any, tmp_path: Path) -> Iterator[Any]:
    """dradash's writes go to the simcluster through a TcpCut (tests/faults.py; the mirror read it directly)."""
    from tests.faults import TcpCut

    proxy = TcpCut("127.0.0.1", mirrored.port)
    through = tmp_path / "through-cut-kubeconfig"
    text = Path(mirrored.kubeconfig_path).read_text()
    assert f":{mirrored.port}" in text
    through.write_text(text.replace(f":{mirrored.port}", f":{proxy.port}"))
    settings.DRADASH_KUBECONFIG = str(through)
    try:
        yield proxy
    finally:
        proxy.close()
