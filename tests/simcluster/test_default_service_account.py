"""The serviceaccounts controller, as kube-controller-manager runs it: every active namespace keeps its
ServiceAccount `default`. Deleted, it is created again (a new object); a namespace being terminated gets none
back. Other accounts stay deleted."""

from __future__ import annotations

import pytest
from kubernetes import client

from tests.simcluster.conftest import Kubectl


def test_a_deleted_default_service_account_is_created_again(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    before = core.read_namespaced_service_account("default", "default")

    core.delete_namespaced_service_account("default", "default")

    again = core.read_namespaced_service_account("default", "default")
    assert again.metadata.uid != before.metadata.uid
    # and a pod that runs as it is admitted at once (the ServiceAccount admission check)
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    assert core.create_namespaced_pod("default", pod).spec.service_account_name == "default"


def test_another_deleted_service_account_stays_deleted(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_service_account("default", {"metadata": {"name": "builder"}})

    core.delete_namespaced_service_account("builder", "default")

    names = [a.metadata.name for a in core.list_namespaced_service_account("default").items]
    assert names == ["default"]


def test_a_terminating_namespace_gets_no_default_account_back(api: client.ApiClient) -> None:
    core = client.CoreV1Api(api)
    core.create_namespace({"metadata": {"name": "team"}})
    core.delete_namespace("team")  # no namespace controller here: it stays Terminating

    core.delete_namespaced_service_account("default", "team")

    assert core.list_namespaced_service_account("team").items == []


@pytest.mark.kubectl
def test_kubectl_finds_the_default_account_again_right_after_deleting_it(kubectl: Kubectl) -> None:
    deleted = kubectl("delete", "serviceaccount", "default")
    assert (deleted.returncode, deleted.stdout) == (
        0,
        'serviceaccount "default" deleted from default namespace\n',
    )
    shown = kubectl("get", "serviceaccount", "default", "-o", "name")
    assert (shown.returncode, shown.stdout) == (0, "serviceaccount/default\n"), shown.stderr
