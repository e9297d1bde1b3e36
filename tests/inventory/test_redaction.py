"""Values that can hold credentials are shown to admins only: a viewer never sees an env value, a
last-applied annotation or a credential-named opaque parameter — through any API response, page or
export — while names stay visible (inventory.redaction)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from inventory.models import Claim, KubeObject
from inventory.redaction import REDACTED, redact_object
from tests.inventory import factories as f

pytestmark = pytest.mark.django_db

SECRET = "hunter2-s3cr3t"
TOKEN = "tok-0123456789"


def pod() -> dict[str, Any]:
    container = {
        "name": "app",
        "image": "app:1",
        "env": [
            {"name": "DB_PASSWORD", "value": SECRET},
            {"name": "FROM_SECRET", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
        ],
    }
    last_applied = json.dumps({"spec": {"containers": [container]}})
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": f.meta(
            "app-0",
            namespace="team-a",
            annotations={"kubectl.kubernetes.io/last-applied-configuration": last_applied},
        ),
        "spec": {
            "nodeName": "node-0",
            "containers": [container],
            "initContainers": [{"name": "init", "env": [{"name": "INIT_TOKEN", "value": SECRET}]}],
            "ephemeralContainers": [{"name": "debug", "env": [{"name": "X", "value": SECRET}]}],
        },
        "status": {"phase": "Running"},
    }


def claim_with_config() -> dict[str, Any]:
    claim = f.claim("c1", results=[f.result("gpu-0")])
    claim["spec"]["devices"]["config"] = [
        {
            "requests": ["gpu"],
            "opaque": {
                "driver": "gpu.example.com",
                "parameters": {"apiToken": TOKEN, "sharing": {"password": SECRET, "strategy": "TimeSlicing"}},
            },
        }
    ]
    return claim


@pytest.fixture
def mirror() -> None:
    f.write(
        ("resourceslices", f.resource_slice("s", devices=[f.gpu("gpu-0")])),
        ("pods", pod()),
        ("resourceclaims", claim_with_config()),
    )


def user_in(group: str | None, name: str, *, superuser: bool = False) -> Client:
    user = User.objects.create_user(name, is_superuser=superuser)
    if group:
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    client = Client()
    client.force_login(user)
    return client


def every_path(client: Client) -> dict[str, str]:
    """What each route shows of the mirror, as text."""
    pod_uid = KubeObject.objects.get(kind="pods").uid
    claim_obj = KubeObject.objects.get(kind="resourceclaims")
    claim_id = Claim.objects.get().pk
    paths = {
        "api objects list": "/api/objects/?kind=pods",
        "api objects all kinds": "/api/objects/?limit=1000",
        "api object": f"/api/objects/{pod_uid}/",
        "api claim object": f"/api/claims/{claim_id}/",
        "api claim config": f"/api/objects/{claim_obj.uid}/",
        "yaml page": f"/objects/pods/{pod_uid}/yaml/",
        "yaml json": f"/objects/pods/{pod_uid}/yaml/?format=json",
        "claim yaml page": f"/objects/resourceclaims/{claim_obj.uid}/yaml/",
        "claim page": f"/claims/{claim_obj.namespace}/{claim_obj.name}/",
        "devices csv": "/devices/export.csv",
        "devices json": "/devices/export.json",
    }
    shown = {}
    for label, path in paths.items():
        response = client.get(path)
        assert response.status_code == 200, (label, response.status_code)
        content = b"".join(response.streaming_content) if response.streaming else response.content
        shown[label] = content.decode()
    return shown


@pytest.mark.parametrize("role", ["viewer", "operator"])
def test_it_never_shows_a_credential_value_to_a_user_who_is_not_an_admin(mirror: None, role: str) -> None:
    for label, text in every_path(user_in(role, role)).items():
        assert SECRET not in text and TOKEN not in text, label
    api = user_in(None, "nobody")
    raw = api.get("/api/objects/?kind=pods").json()["results"][0]["raw"]
    env = raw["spec"]["containers"][0]["env"]
    assert env[0] == {"name": "DB_PASSWORD", "value": REDACTED}  # the name stays
    assert env[1]["valueFrom"]["secretKeyRef"]["name"] == "db"  # a reference is not a value
    assert raw["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] == REDACTED


@pytest.mark.parametrize(("group", "superuser"), [("admin", False), (None, True)])
def test_it_shows_everything_to_admins(mirror: None, group: str | None, superuser: bool) -> None:
    shown = every_path(user_in(group, "root", superuser=superuser))
    for label in ("api objects list", "api object", "yaml page", "yaml json"):
        assert SECRET in shown[label], label
    assert TOKEN in shown["api claim object"] and TOKEN in shown["claim yaml page"]
    assert REDACTED not in shown["api object"]


def test_it_redacts_pod_templates_secrets_and_credential_parameters_at_any_depth() -> None:
    deployment = {
        "kind": "Deployment",
        "metadata": {
            "name": "d",
            "annotations": {"example.com/api-token": TOKEN, "example.com/owner": "ops"},
        },
        "spec": {
            "template": {"spec": {"containers": [{"name": "c", "env": [{"name": "A", "value": SECRET}]}]}}
        },
    }
    secret = {
        "kind": "Secret",
        "metadata": {"name": "s"},
        "data": {"password": "aHVudGVyMg=="},
        "type": "Opaque",
    }
    template = {
        "kind": "ResourceClaimTemplate",
        "spec": {"spec": {"devices": {"config": [{"opaque": {"driver": "d", "parameters": {
            "list": [{"name": "PASSWORD", "value": SECRET}, {"name": "mode", "value": "fast"}],
            "nested": {"privateKey": SECRET, "size": 3},
        }}}]}}},
    }  # fmt: skip

    redacted = [redact_object(o) for o in (deployment, secret, template)]

    assert SECRET not in json.dumps(redacted) and TOKEN not in json.dumps(redacted)
    assert redacted[0]["metadata"]["annotations"]["example.com/owner"] == "ops"
    assert redacted[1]["data"] == {"password": REDACTED} and redacted[1]["type"] == "Opaque"
    parameters = redacted[2]["spec"]["spec"]["devices"]["config"][0]["opaque"]["parameters"]
    assert parameters["list"][1] == {"name": "mode", "value": "fast"}
    assert parameters["nested"] == {"privateKey": REDACTED, "size": 3}
    assert deployment["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"] == SECRET  # a copy


@pytest.mark.parametrize(
    "name",
    [
        "bearer",
        "accessKey",
        "access_key",
        "sshKey",
        "tls.key",
        "pwd",
        "creds",
        "connectionString",
        "dsn",
        "clientCertificateKey",
        "pat",
    ],
)
def test_it_redacts_opaque_parameters_with_other_common_credential_names(name: str) -> None:
    claim = {
        "kind": "ResourceClaim",
        "spec": {
            "devices": {"config": [{"opaque": {"driver": "d", "parameters": {name: "s3cr3t", "mode": "x"}}}]}
        },
    }
    parameters = redact_object(claim)["spec"]["devices"]["config"][0]["opaque"]["parameters"]
    assert parameters == {name: REDACTED, "mode": "x"}


def test_it_redacts_the_password_inside_a_url_but_keeps_the_rest() -> None:
    claim = {
        "kind": "ResourceClaim",
        "metadata": {"annotations": {"example.com/db": "postgres://user:PW0rd@db:5432/x"}},
        "spec": {
            "devices": {"config": [{"opaque": {"driver": "d", "parameters": {"db": "https://u:PW1@h/p"}}}]}
        },
    }
    redacted = redact_object(claim)
    shown = json.dumps(redacted)
    assert "PW0rd" not in shown and "PW1" not in shown
    assert redacted["metadata"]["annotations"]["example.com/db"] == f"postgres://user:{REDACTED}@db:5432/x"


@pytest.mark.parametrize("key", ["x.io/ssh-key", "x.io/pat", "example.com/bearer"])
def test_it_redacts_annotations_named_like_other_credentials(key: str) -> None:
    redacted = redact_object({"kind": "Pod", "metadata": {"annotations": {key: "s3cr3t", "x.io/path": "/a"}}})
    assert redacted["metadata"]["annotations"] == {key: REDACTED, "x.io/path": "/a"}


@pytest.mark.parametrize("name", ["mode", "path", "patchLevel", "keyboard", "taintKey", "sharing"])
def test_it_keeps_parameters_that_only_look_like_credential_names(name: str) -> None:
    claim = {
        "kind": "ResourceClaim",
        "spec": {"devices": {"config": [{"opaque": {"parameters": {name: "v"}}}]}},
    }
    assert redact_object(claim)["spec"]["devices"]["config"][0]["opaque"]["parameters"] == {name: "v"}
