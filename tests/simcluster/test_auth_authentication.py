"""Authentication: TLS with the cluster's own CA, client certificates, bearer tokens, ServiceAccount tokens
from the TokenRequest API, the anonymous paths, and a restart that keeps the cluster's identity."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config

from simcluster.controllers import FakeClock
from simcluster.testing import SimCluster, run_simcluster
from tests.simcluster.conftest import Http

UNAUTHORIZED = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "Unauthorized",
    "reason": "Unauthorized",
    "code": 401,
}


def _anonymous(cluster: SimCluster) -> Http:
    return Http(cluster.url, cluster.ssl_context(admin=False))


def _bearer(cluster: SimCluster, token: str, path: str) -> tuple[int, Any]:
    http = _anonymous(cluster)
    status, _, body = http.get(path, headers={"Authorization": f"Bearer {token}"})
    return status, body


def _token(api: client.ApiClient, name: str = "default", namespace: str = "default", **spec: Any) -> str:
    request = client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(**{"audiences": [], **spec}))
    answer = client.CoreV1Api(api).create_namespaced_service_account_token(name, namespace, request)
    return str(answer.status.token)


def test_it_answers_an_unauthenticated_request_with_the_unauthorized_status(cluster: SimCluster) -> None:
    http = _anonymous(cluster)
    for path in ("/api/v1/namespaces", "/apis", "/openapi/v3", "/_simcluster/compact"):
        status, _, body = http.get(path)
        assert (status, body) == (401, UNAUTHORIZED), path


def test_it_leaves_health_and_version_open_to_anonymous_requests(cluster: SimCluster) -> None:
    http = _anonymous(cluster)
    for path in ("/healthz", "/livez", "/readyz"):
        assert http.get(path)[0] == 200, path
    status, _, version = http.get("/version")
    assert status == 200 and version["gitVersion"] == "v1.37.1"


def test_it_serves_https_only_with_a_certificate_from_its_own_ca(cluster: SimCluster) -> None:
    assert cluster.url.startswith("https://127.0.0.1:")
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        urllib.request.urlopen(cluster.url + "/healthz", timeout=10, context=ssl.create_default_context())
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        urllib.request.urlopen(cluster.url.replace("https://", "http://") + "/healthz", timeout=10)


def test_it_authenticates_the_kubeconfig_admin_by_client_certificate(cluster: SimCluster) -> None:
    assert cluster.kubeconfig_path is not None
    api = config.new_client_from_config(str(cluster.kubeconfig_path))
    try:
        review = client.AuthenticationV1Api(api).create_self_subject_review(client.V1SelfSubjectReview())
    finally:
        api.close()
    assert review.status.user_info.username == "kubernetes-admin"
    assert review.status.user_info.groups == ["system:masters", "system:authenticated"]


def test_it_refuses_a_client_certificate_signed_by_another_ca(cluster: SimCluster, tmp_path: Path) -> None:
    with run_simcluster(topology=None, controllers=False) as other:
        assert other.pki is not None
        cert, key = other.pki.issue_client_cert("kubernetes-admin", ("system:masters",))
    (tmp_path / "c.pem").write_bytes(cert)
    (tmp_path / "k.pem").write_bytes(key)
    context = cluster.ssl_context(admin=False)
    assert context is not None
    context.load_cert_chain(tmp_path / "c.pem", tmp_path / "k.pem")
    with pytest.raises((urllib.error.URLError, ConnectionError, ssl.SSLError)):
        urllib.request.urlopen(cluster.url + "/api/v1/pods", timeout=10, context=context)


def test_it_accepts_the_admin_token_and_refuses_a_made_up_one(cluster: SimCluster) -> None:
    assert _bearer(cluster, cluster.admin_token, "/api/v1/namespaces")[0] == 200
    assert _bearer(cluster, "not-a-token", "/api/v1/namespaces") == (401, UNAUTHORIZED)
    # a bad credential is refused even where anonymous requests are allowed, as kube does
    assert _bearer(cluster, "not-a-token", "/healthz") == (401, UNAUTHORIZED)


def test_it_authenticates_a_service_account_token_from_the_token_request_api(
    cluster: SimCluster, api: client.ApiClient
) -> None:
    token = _token(api)
    status, review = _self_review(cluster, token)
    assert status == 201
    info = review["status"]["userInfo"]
    assert info["username"] == "system:serviceaccount:default:default"
    assert info["groups"] == [
        "system:serviceaccounts",
        "system:serviceaccounts:default",
        "system:authenticated",
    ]
    assert (
        info["uid"] == cluster.store.get("serviceaccounts", "default", namespace="default")["metadata"]["uid"]
    )
    assert info["extra"]["authentication.kubernetes.io/credential-id"][0].startswith("JTI=")


def _self_review(cluster: SimCluster, token: str) -> tuple[int, Any]:
    http = _anonymous(cluster)
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    status, _, answer = http.request(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        body,
        headers={"Authorization": f"Bearer {token}"},
    )
    return status, answer


def test_it_refuses_a_token_for_another_audience(cluster: SimCluster, api: client.ApiClient) -> None:
    token = _token(api, audiences=["vault"])
    assert _self_review(cluster, token)[0] == 401
    review = client.AuthenticationV1Api(api).create_token_review(
        client.V1TokenReview(spec=client.V1TokenReviewSpec(token=token, audiences=["vault"]))
    )
    assert review.status.authenticated is True
    assert review.status.user.username == "system:serviceaccount:default:default"


def test_it_refuses_a_token_once_its_service_account_is_deleted(
    cluster: SimCluster, api: client.ApiClient
) -> None:
    core = client.CoreV1Api(api)
    core.create_namespaced_service_account(
        "default", client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="bot"))
    )
    token = _token(api, "bot")
    assert _self_review(cluster, token)[0] == 201
    core.delete_namespaced_service_account("bot", "default")
    core.create_namespaced_service_account(
        "default", client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="bot"))
    )
    assert _self_review(cluster, token)[0] == 401, "a new account of the same name has another UID"


def test_it_refuses_a_token_after_it_expires(tmp_path: Path) -> None:
    clock = FakeClock()
    with run_simcluster(
        topology=None, controllers=False, clock=clock, kubeconfig_path=tmp_path / "kc"
    ) as cluster:
        api = config.new_client_from_config(str(tmp_path / "kc"))
        try:
            token = _token(api, expiration_seconds=600)
        finally:
            api.close()
        assert _self_review(cluster, token)[0] == 201
        clock.advance(601)
        assert _self_review(cluster, token)[0] == 401


def test_it_refuses_token_durations_shorter_than_ten_minutes(
    cluster: SimCluster, api: client.ApiClient
) -> None:
    with pytest.raises(client.ApiException) as caught:
        _token(api, expiration_seconds=60)
    assert caught.value.status == 422
    assert json.loads(caught.value.body)["message"] == (
        'TokenRequest.authentication.k8s.io "default" is invalid: spec.expirationSeconds: Invalid value: 60: '
        "may not specify a duration less than 10 minutes"
    )


def test_it_answers_404_for_a_token_of_a_missing_service_account(
    cluster: SimCluster, api: client.ApiClient
) -> None:
    with pytest.raises(client.ApiException) as caught:
        _token(api, "ghost")
    assert caught.value.status == 404
    assert json.loads(caught.value.body)["message"] == 'serviceaccounts "ghost" not found'


def test_it_gives_every_namespace_a_default_service_account(
    cluster: SimCluster, api: client.ApiClient
) -> None:
    core = client.CoreV1Api(api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="team")))
    assert core.read_namespaced_service_account("default", "team").metadata.name == "default"


def test_it_keeps_its_identity_across_a_restart_with_the_same_pki_dir(tmp_path: Path) -> None:
    pki = tmp_path / "pki"
    kubeconfig = tmp_path / "kubeconfig"
    with run_simcluster(topology=None, controllers=False, pki_dir=pki, kubeconfig_path=kubeconfig) as first:
        first.store.create(
            "namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "old"}}
        )
        ca, token, port = first.pki.ca_pem if first.pki else b"", first.admin_token, first.port
    with run_simcluster(topology=None, controllers=False, pki_dir=pki, port=port) as second:
        assert second.pki is not None and second.pki.ca_pem == ca and second.admin_token == token
        api = config.new_client_from_config(str(kubeconfig))  # the kubeconfig written for the first run
        try:
            names = {n.metadata.name for n in client.CoreV1Api(api).list_namespace().items}
        finally:
            api.close()
        assert "old" not in names and "default" in names, "other state, same identity"


def test_it_publishes_the_service_account_issuer_keys_that_verify_its_tokens(
    cluster: SimCluster, api: client.ApiClient
) -> None:
    import base64

    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    token = _token(api)
    http = Http(cluster.url, cluster.ssl_context(admin=False))
    headers = {"Authorization": f"Bearer {token}"}
    status, _, discovery = http.get("/.well-known/openid-configuration", headers=headers)
    assert status == 200 and discovery["issuer"] == "https://kubernetes.default.svc.cluster.local"
    status, response_headers, jwks = http.get("/openid/v1/jwks", headers=headers)
    assert status == 200 and response_headers["Content-Type"] == "application/jwk-set+json"
    assert http.get("/openid/v1/jwks")[0] == 401

    def unb64(text: str) -> bytes:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

    key = jwks["keys"][0]
    public = ec.EllipticCurvePublicNumbers(
        int.from_bytes(unb64(key["x"]), "big"), int.from_bytes(unb64(key["y"]), "big"), ec.SECP256R1()
    ).public_key()
    head, body, signature = token.split(".")
    raw = unb64(signature)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public.verify(der, f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))  # raises if it does not verify
    assert json.loads(unb64(head))["kid"] == key["kid"]


def test_it_serves_plain_http_without_auth_only_when_asked(tmp_path: Path) -> None:
    with run_simcluster(
        topology=None, controllers=False, insecure_http=True, kubeconfig_path=tmp_path / "kc"
    ) as cluster:
        assert cluster.url.startswith("http://") and cluster.pki is None
        with urllib.request.urlopen(cluster.url + "/api/v1/namespaces", timeout=10) as response:
            assert response.status == 200
        import yaml

        document = yaml.safe_load((tmp_path / "kc").read_text())
        assert (
            document["users"][0]["user"] == {}
            and "certificate-authority-data" not in document["clusters"][0]["cluster"]
        )
