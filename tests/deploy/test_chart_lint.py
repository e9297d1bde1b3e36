"""The chart passes `helm lint --strict`, renders what the issue lists, and refuses values that would deploy
something broken, with a message naming the value."""

from __future__ import annotations

import pytest

from tests.deploy.chart import rendered
from tests.deploy.values import EXTERNAL_SERVICES, OIDC, VALUE_SETS
from tests.helm import CHART, NAMESPACE, RELEASE, find, render_error, run_helm

pytestmark = pytest.mark.helm


@pytest.mark.parametrize("value_set", ["default", "impersonation", "ingress"])
def test_it_passes_helm_lint_strict(value_set: str) -> None:
    result = run_helm("lint", "--strict", "--namespace", NAMESPACE, str(CHART), values=VALUE_SETS[value_set])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 chart(s) failed" in result.stdout


def test_it_renders_every_part_of_the_deployment_with_the_defaults() -> None:
    manifests = rendered("default")
    kinds = {(m["kind"], m["metadata"]["name"]) for m in manifests}
    assert kinds == {
        ("ServiceAccount", "dradash"),
        ("Secret", "dradash"),
        ("ClusterRole", "dradash"),
        ("ClusterRoleBinding", "dradash"),
        ("Role", "dradash-mirror-lease"),
        ("RoleBinding", "dradash-mirror-lease"),
        ("Deployment", "dradash-web"),
        ("Service", "dradash-web"),
        ("PodDisruptionBudget", "dradash-web"),
        ("PodDisruptionBudget", "dradash-mirror"),
        ("Deployment", "dradash-mirror"),
        ("Deployment", "dradash-worker"),
        ("Job", "dradash-migrate-1"),
    }
    replicas = {m["metadata"]["name"]: m["spec"]["replicas"] for m in manifests if m["kind"] == "Deployment"}
    assert replicas == {"dradash-web": 2, "dradash-mirror": 2, "dradash-worker": 2}


def test_it_prints_notes_that_name_what_is_missing() -> None:
    bare = run_helm("install", RELEASE, str(CHART), "--namespace", NAMESPACE, "--dry-run=client")
    assert bare.returncode == 0, bare.stderr
    assert "WARNING: no database" in bare.stdout and "WARNING: no Redis" in bare.stdout
    ready = run_helm(
        "install",
        RELEASE,
        str(CHART),
        "--namespace",
        NAMESPACE,
        "--dry-run=client",
        values=VALUE_SETS["ingress"],
    )
    assert ready.returncode == 0, ready.stderr
    assert "WARNING" not in ready.stdout
    assert "https://dradash.example.com/" in ready.stdout and "http://dradash.internal/" in ready.stdout


def test_it_keeps_given_urls_in_its_secret_and_leaves_existing_secrets_alone() -> None:
    secret = find(rendered("external-db-redis"), "Secret")
    assert set(secret["data"]) == {"secret-key", "database-url", "redis-url"}
    assert not any(m["kind"] == "Secret" for m in rendered("existing-secrets")), "nothing of its own to keep"
    with_oidc = find(rendered("ingress"), "Secret")
    assert "oidc-client-secret" in with_oidc["data"]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"impersonaton": {"enabled": True}}, "additional properties 'impersonaton' not allowed"),
        ({"database": {"url": "sqlite:///var/db.sqlite3"}}, "/database/url"),
        ({"impersonation": {"enabled": True, "mode": "sometimes"}}, "/impersonation/mode"),
        ({"web": {"replicas": "two"}}, "/web/replicas"),
        (
            {"mirror": {"leaderElection": {"enabled": False}}},
            "two active mirrors would both write the database",
        ),
        (
            {"oidc": {**OIDC, "clientSecret": ""}},
            "oidc.enabled needs oidc.clientSecret or oidc.existingSecret",
        ),
        ({"oidc": {**OIDC, "tokenEndpoint": ""}}, "oidc.tokenEndpoint is required"),
        ({"ingress": {"enabled": True}}, "ingress.enabled needs at least one host"),
        ({"serviceAccount": {"create": False}}, "serviceAccount.name is required"),
    ],
)
def test_it_refuses_values_that_would_deploy_something_broken(
    values: dict[str, object], message: str
) -> None:
    assert message in render_error({**EXTERNAL_SERVICES, **values})
