"""kubectl 1.37.1 deleting a namespace against simcluster with its controllers running: `kubectl delete ns`
waits (its default --wait=true) while the namespace controller empties it, `kubectl get ns` shows it
Terminating meanwhile, and nothing new may be created in it."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from simcluster.testing import SimCluster, run_simcluster
from tests.simcluster.conftest import kubectl_path
from tests.simcluster.sim_helpers import settle

pytestmark = pytest.mark.kubectl

HELD = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: held, namespace: team, finalizers: ["example.com/hold"]}
data: {a: "1"}
"""


@pytest.fixture
def live(tmp_path: Path) -> Iterator[SimCluster]:
    with run_simcluster(topology="tiny", kubeconfig_path=tmp_path / "kubeconfig") as cluster:
        yield cluster


def _command(tmp_path: Path, *args: str) -> list[str]:
    return [str(kubectl_path()), "--kubeconfig", str(tmp_path / "kubeconfig"), "--cache-dir",
            str(tmp_path / "cache"), *args]  # fmt: skip


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(tmp_path), "KUBECTL_INTERACTIVE_DELETE": "false"}


def _kubectl(tmp_path: Path, *args: str, input_text: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_command(tmp_path, *args), input=input_text, capture_output=True, text=True,
                          timeout=60, env=_env(tmp_path))  # fmt: skip


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def _when_marked(cluster: SimCluster, name: str) -> threading.Event:
    """Set once the store commits namespace `name` with a deletionTimestamp."""
    marked = threading.Event()

    def on_change(event_type: str, plural: str, obj: dict[str, Any]) -> None:
        if (
            plural == "namespaces"
            and obj["metadata"]["name"] == name
            and obj["metadata"].get("deletionTimestamp")
        ):
            marked.set()

    cluster.store.subscribe(on_change)
    return marked


def test_kubectl_delete_namespace_waits_while_it_is_terminating_and_returns_once_it_is_gone(
    live: SimCluster, tmp_path: Path
) -> None:
    _ok(_kubectl(tmp_path, "create", "namespace", "team"))
    _ok(_kubectl(tmp_path, "apply", "-f", "-", input_text=HELD))
    marked = _when_marked(live, "team")

    deleting = subprocess.Popen(_command(tmp_path, "delete", "namespace", "team"), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=_env(tmp_path))  # fmt: skip
    try:
        assert marked.wait(30), "the namespace was never marked for deletion"
        settle(live)
        header, row = _ok(_kubectl(tmp_path, "get", "namespace", "team")).splitlines()
        assert header.split() == ["NAME", "STATUS", "AGE"]
        assert row.split()[:2] == ["team", "Terminating"]
        remaining = _ok(_kubectl(
            tmp_path, "get", "namespace", "team",
            "-o", "jsonpath={.status.conditions[?(@.type=='NamespaceFinalizersRemaining')].message}",
        ))  # fmt: skip
        assert remaining == (
            "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances"
        )
        assert deleting.poll() is None  # kubectl still waits

        _ok(_kubectl(tmp_path, "patch", "configmap", "held", "-n", "team", "--type=json",
                     "-p", '[{"op":"remove","path":"/metadata/finalizers"}]'))  # fmt: skip
        out, err = deleting.communicate(timeout=60)
    finally:
        if deleting.poll() is None:
            deleting.kill()
            deleting.communicate()
    assert (deleting.returncode, out) == (0, 'namespace "team" deleted\n'), err
    gone = _kubectl(tmp_path, "get", "namespace", "team")
    assert (gone.returncode, gone.stderr) == (
        1,
        'Error from server (NotFound): namespaces "team" not found\n',
    )


def test_kubectl_cannot_create_in_a_terminating_namespace_and_may_delete_it_again(
    live: SimCluster, tmp_path: Path
) -> None:
    _ok(_kubectl(tmp_path, "create", "namespace", "team"))
    _ok(_kubectl(tmp_path, "apply", "-f", "-", input_text=HELD))
    assert (
        _ok(_kubectl(tmp_path, "delete", "namespace", "team", "--wait=false")) == 'namespace "team" deleted\n'
    )

    refused = _kubectl(tmp_path, "create", "configmap", "late", "-n", "team", "--from-literal=a=1")
    assert (refused.returncode, refused.stderr) == (
        1,
        'error: failed to create configmap: configmaps "late" is forbidden: unable to create new content in '
        "namespace team because it is being terminated\n",
    )
    again = _kubectl(tmp_path, "delete", "namespace", "team", "--wait=false")
    assert (again.returncode, again.stdout) == (0, 'namespace "team" deleted\n'), again.stderr
    settle(live)
    assert live.store.get("namespaces", "team")["status"]["phase"] == "Terminating"
