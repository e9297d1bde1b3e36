"""What the chart runs: valid Kubernetes 1.37 objects, restricted pods, probes the web process answers,
secrets as files, and only environment variables dradash reads (or the one table says are coming)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest

from tests.deploy.chart import (
    containers,
    deployment_pod,
    env_value,
    main_container,
    pod_templates,
    rendered,
)
from tests.deploy.values import VALUE_SETS
from tests.helm import CHART, find

pytestmark = pytest.mark.helm

ROOT = Path(__file__).resolve().parents[2]
KUBERNETES_VERSION = "1.37.0"


_validated: set[str] = set()  # most objects are the same in every value set: validate each text once


@pytest.mark.parametrize("value_set", VALUE_SETS)
def test_it_renders_only_objects_the_1_37_schema_accepts(value_set: str) -> None:
    for manifest in rendered(value_set):
        text = json.dumps(manifest, sort_keys=True)
        if text in _validated:
            continue
        name = f"{manifest['kind']}/{manifest['metadata']['name']}"
        try:
            # strict: an unknown field (a typo helm would pass through) is an error too
            kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            raise AssertionError(f"{value_set}: {name}: {error.message} at {list(error.path)}") from None
        _validated.add(text)


@pytest.mark.parametrize("value_set", ["default", "ingress"])
def test_it_runs_every_container_as_the_restricted_pod_security_standard_asks(value_set: str) -> None:
    for workload, pod in pod_templates(rendered(value_set)):
        security = pod["securityContext"]
        assert security["runAsNonRoot"] is True and security["runAsUser"] != 0, workload
        assert security["seccompProfile"] == {"type": "RuntimeDefault"}, workload
        volumes = {v["name"]: v for v in pod["volumes"]}
        for container in containers(pod):
            where = f"{workload}/{container['name']}"
            context = container["securityContext"]
            assert context["readOnlyRootFilesystem"] is True, where
            assert context["allowPrivilegeEscalation"] is False, where
            assert context["capabilities"] == {"drop": ["ALL"]}, where
            assert "privileged" not in context and "runAsUser" not in context, where
            assert container["resources"]["requests"]["memory"], where
            mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
            assert "emptyDir" in volumes[mounts["/tmp"]], f"{where}: /tmp is the one writable place"
            writable = [p for p, n in mounts.items() if "emptyDir" in volumes[n]]
            assert writable == ["/tmp"], f"{where}: writable mounts {writable}"


def test_it_probes_the_web_pods_where_the_web_process_answers() -> None:
    manifests = rendered("ingress")
    web = main_container(manifests, "web")
    ports = {p["name"]: p["containerPort"] for p in web["ports"]}
    allowed_hosts = env_value(web, "DRADASH_ALLOWED_HOSTS").split(",")
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        http = web[probe]["httpGet"]
        assert http["path"] == path and http["port"] in ports
        (host,) = [h["value"] for h in http["httpHeaders"] if h["name"] == "Host"]
        assert host in allowed_hosts, f"Django would answer the {probe} with 400 DisallowedHost"
    service = find(manifests, "Service", "dradash-web")
    assert [p["targetPort"] for p in service["spec"]["ports"]] == ["http"] and "http" in ports
    ingress = find(manifests, "Ingress")
    backends = {
        path["backend"]["service"]["name"] for r in ingress["spec"]["rules"] for path in r["http"]["paths"]
    }
    assert backends == {service["metadata"]["name"]}
    worker = main_container(manifests, "worker")
    assert "celery -A dradash inspect ping" in " ".join(worker["livenessProbe"]["exec"]["command"])


def test_it_mounts_the_secret_key_as_a_file_in_every_pod() -> None:
    for value_set, secret_name, key in (
        ("default", "dradash", "secret-key"),
        ("existing-secrets", "django-key", "key"),
    ):
        for workload, pod in pod_templates(rendered(value_set)):
            volumes = {v["name"]: v for v in pod["volumes"]}
            for container in containers(pod):
                path = env_value(container, "DRADASH_SECRET_KEY_FILE")
                assert not any(e["name"] == "DRADASH_SECRET_KEY" for e in container["env"])
                (mount,) = [m for m in container["volumeMounts"] if path.startswith(m["mountPath"] + "/")]
                secret = volumes[mount["name"]]["secret"]
                assert secret["secretName"] == secret_name, workload
                assert secret["defaultMode"] == 0o440, f"{workload}: the key is readable by other users"
                assert secret["items"] == [{"key": key, "path": path.rsplit("/", 1)[1]}], workload


def test_it_gives_an_api_token_only_to_the_pods_that_talk_to_the_cluster() -> None:
    manifests = rendered("default")
    assert find(manifests, "ServiceAccount")["automountServiceAccountToken"] is False
    mounted = {workload: pod["automountServiceAccountToken"] for workload, pod in pod_templates(manifests)}
    assert mounted == {
        "dradash-web": True,
        "dradash-mirror": True,
        "dradash-worker": False,
        "dradash-migrate-1": False,
    }


def test_it_migrates_in_a_job_before_any_process_starts() -> None:
    manifests = rendered("default")
    job = find(manifests, "Job")["spec"]["template"]["spec"]
    steps = [c["command"] for c in containers(job)]
    assert steps == [["python", "manage.py", "migrate", "--noinput"], ["python", "manage.py", "create_roles"]]
    for component in ("web", "mirror", "worker"):
        (wait,) = deployment_pod(manifests, component)["initContainers"]
        assert "python manage.py migrate --check" in wait["command"][-1], component


def test_it_gives_the_mirror_replicas_a_lease_and_an_identity_each() -> None:
    mirror = main_container(rendered("default"), "mirror")
    env = {e["name"]: e for e in mirror["env"]}
    assert env["DRADASH_MIRROR_LEADER_ELECTION"]["value"] == "true"
    assert env["DRADASH_MIRROR_LEASE_NAME"]["value"] == "dradash-mirror"
    assert env["DRADASH_POD_NAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    assert env["DRADASH_MIRROR_LEASE_NAMESPACE"]["valueFrom"] == {
        "fieldRef": {"fieldPath": "metadata.namespace"}
    }
    single = main_container(rendered("single-mirror"), "mirror")
    assert env_value(single, "DRADASH_MIRROR_LEADER_ELECTION") == "false"


def env_table(text: str) -> dict[str, str]:
    """The one table of environment variables (values.yaml's header, the README's section): name -> read."""
    rows = re.findall(r"^\W*\|\s*`?([A-Z][A-Z0-9_]+)`?\s*\|.*\|\s*(today|pending)\s*\|\s*$", text, re.M)
    return dict(rows)


def settings_reads(name: str, source: str) -> bool:
    # env_secret("X") also reads X_FILE
    return f'"{name}"' in source or (
        name.endswith("_FILE") and f'env_secret("{name[: -len("_FILE")]}"' in source
    )


def test_it_sets_only_variables_dradash_reads_or_the_table_lists_as_pending() -> None:
    table = env_table((CHART / "values.yaml").read_text())
    assert len(table) > 20, "the table at the top of values.yaml was not found"
    settings = (ROOT / "dradash" / "settings.py").read_text()
    for name, read in table.items():
        if read == "today":
            assert settings_reads(name, settings), (
                f"{name} is marked 'today' but dradash/settings.py does not read it"
            )
    extra = {e["name"] for e in VALUE_SETS["default"].get("extraEnv", [])}
    used: set[str] = set()
    for value_set in VALUE_SETS:
        for workload, pod in pod_templates(rendered(value_set)):
            for container in containers(pod):
                for entry in container["env"]:
                    used.add(entry["name"])
                    assert entry["name"] in table or entry["name"] in extra, (
                        f"{workload}/{container['name']} sets {entry['name']}, which is not in values.yaml's table"
                    )
    assert used == set(table), f"in the table but never set: {sorted(set(table) - used)}"
    readme = env_table((ROOT / "README.md").read_text())
    assert readme == table, "README.md's table of the chart's environment differs from values.yaml's"


def literal_env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container["env"] if "value" in e}


def test_it_starts_django_with_the_environment_the_web_pods_get(tmp_path: Path) -> None:
    """The rendered environment, parsed by dradash's strict settings in a fresh process; the probes' and the
    ingress's Host headers are accepted and a form posted from the ingress's HTTPS origin passes CSRF."""
    web = main_container(rendered("ingress"), "web")
    key_file = tmp_path / "secret-key"
    key_file.write_text("k" * 64)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        **literal_env(web),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "REDIS_URL": "redis://127.0.0.1:6379/15",  # parsed, never connected to in this check
        "DRADASH_SECRET_KEY_FILE": str(key_file),
        "DJANGO_SETTINGS_MODULE": "dradash.settings",
    }
    if "DRADASH_OIDC_CLIENT_SECRET_FILE" in env:  # mounted from the chart's Secret in the pod
        client_secret = tmp_path / "oidc-client-secret"
        client_secret.write_text("oidc-secret")
        env["DRADASH_OIDC_CLIENT_SECRET_FILE"] = str(client_secret)
    probe_host = web["readinessProbe"]["httpGet"]["httpHeaders"][0]["value"]
    script = f"""
import json, django
django.setup()
from django.conf import settings
from django.test import Client
client = Client()
answers = {{h: client.get("/no-such-page/", headers={{"host": h}}).status_code
           for h in ({probe_host!r}, "dradash.example.com", "evil.example.com")}}
def post_login(origin):
    browser = Client(enforce_csrf_checks=True, headers={{"host": "dradash.example.com"}})
    browser.get("/accounts/login/")
    token = browser.cookies[settings.CSRF_COOKIE_NAME].value
    return browser.post("/accounts/login/", {{"csrfmiddlewaretoken": token}},
                        headers={{"origin": origin}}).status_code
posted = {{o: post_login(o) for o in ("https://dradash.example.com", "https://evil.example.com")}}
print(json.dumps({{"answers": answers, "posted": posted, "embedded": settings.DRADASH_EMBEDDED_WORKER,
                  "debug": settings.DEBUG, "origins": settings.CSRF_TRUSTED_ORIGINS,
                  "kubeconfig": settings.DRADASH_KUBECONFIG, "key": settings.SECRET_KEY == "k" * 64}}))
"""
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["answers"][probe_host] != 400 and seen["answers"]["dradash.example.com"] != 400
    assert seen["answers"]["evil.example.com"] == 400, "a Host outside the chart's list is still refused"
    assert seen["posted"]["https://dradash.example.com"] == 200, "the ingress's https origin fails CSRF"
    assert seen["posted"]["https://evil.example.com"] == 403, (
        "any origin passes CSRF: the check proves nothing"
    )
    assert seen["origins"] == ["https://dradash.example.com", "http://dradash.internal"]
    assert (seen["embedded"], seen["debug"], seen["kubeconfig"], seen["key"]) == (False, False, "", True)


def test_it_probes_the_mirror_on_the_port_the_mirror_process_listens_on() -> None:
    mirror = main_container(rendered("default"), "mirror")
    port = mirror["ports"][0]
    assert env_value(mirror, "DRADASH_MIRROR_PROBE_PORT") == str(port["containerPort"])
    assert mirror["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": port["name"]}
    assert mirror["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": port["name"]}
