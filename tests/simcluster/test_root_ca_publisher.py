"""The root-ca-cert-publisher, as kube-controller-manager runs it: every namespace keeps ConfigMap
`kube-root-ca.crt` with the cluster CA. Deleted (alone or by a DeleteCollection) it is created again, edited data
is put back, and a namespace being terminated gets none back."""

from __future__ import annotations

import pytest
from kubernetes import client

from simcluster.testing import SimCluster
from tests.simcluster.conftest import Kubectl

ROOT_CA = "kube-root-ca.crt"
DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as "
    "the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of "
    "Kubernetes clusters."
)


def _ca(cluster: SimCluster) -> str:
    assert cluster.pki is not None
    return cluster.pki.ca_pem.decode()


def test_it_creates_the_config_map_again_when_it_is_deleted(
    api: client.ApiClient, cluster: SimCluster
) -> None:
    core = client.CoreV1Api(api)
    before = core.read_namespaced_config_map(ROOT_CA, "default")

    core.delete_namespaced_config_map(ROOT_CA, "default")

    again = core.read_namespaced_config_map(ROOT_CA, "default")
    assert again.metadata.uid != before.metadata.uid
    assert again.data == {"ca.crt": _ca(cluster)}
    assert again.metadata.annotations == {"kubernetes.io/description": DESCRIPTION}


def test_it_creates_it_again_after_a_delete_collection_of_config_maps(
    api: client.ApiClient, cluster: SimCluster
) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_config_map("default", {"metadata": {"name": "settings"}, "data": {"a": "1"}})
    before = core.read_namespaced_config_map(ROOT_CA, "default")

    core.delete_collection_namespaced_config_map("default")

    left = core.list_namespaced_config_map("default").items
    assert [c.metadata.name for c in left] == [ROOT_CA]
    assert left[0].metadata.uid != before.metadata.uid
    assert left[0].data == {"ca.crt": _ca(cluster)}


def test_it_puts_edited_data_back_and_keeps_other_edits(api: client.ApiClient, cluster: SimCluster) -> None:
    core = client.CoreV1Api(api)
    core.patch_namespaced_config_map(
        ROOT_CA,
        "default",
        {"metadata": {"labels": {"team": "a"}}, "data": {"ca.crt": "not a CA", "extra": "x"}},
    )

    current = core.read_namespaced_config_map(ROOT_CA, "default")
    assert current.data == {"ca.crt": _ca(cluster)}
    assert current.metadata.labels == {"team": "a"}
    assert current.metadata.annotations == {"kubernetes.io/description": DESCRIPTION}


def test_it_creates_none_in_a_terminating_namespace(api: client.ApiClient, cluster: SimCluster) -> None:
    core = client.CoreV1Api(api)
    core.create_namespace({"metadata": {"name": "team"}})
    core.delete_namespace("team")  # no namespace controller here: it stays Terminating

    core.delete_namespaced_config_map(ROOT_CA, "team")

    assert core.list_namespaced_config_map("team").items == []


@pytest.mark.kubectl
def test_kubectl_finds_it_again_right_after_deleting_it(kubectl: Kubectl, cluster: SimCluster) -> None:
    deleted = kubectl("delete", "configmap", ROOT_CA)
    assert (deleted.returncode, deleted.stdout) == (
        0,
        f'configmap "{ROOT_CA}" deleted from default namespace\n',
    )
    shown = kubectl("get", "configmap", ROOT_CA, "-o", "jsonpath={.data.ca\\.crt}")
    assert (shown.returncode, shown.stdout) == (0, _ca(cluster)), shown.stderr
