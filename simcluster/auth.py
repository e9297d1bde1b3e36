"""Authentication: who a request comes from, as kube-apiserver decides it.

In kube's order: a client certificate verified against the cluster CA (CN is the user, each O a group),
then a bearer token — the admin's static token or a ServiceAccount token (an ES256 JWT signed with the
cluster's key, issued by the TokenRequest API; `aud`, `exp` and `nbf` are checked and the ServiceAccount,
and a bound pod, must still exist with the same UID). Every authenticated user also gets the group
`system:authenticated`. A request without credentials is `system:anonymous`, which this server (like an
`AuthenticationConfiguration` whose anonymous authenticator has path conditions) accepts only on the
health and version endpoints; a bad credential is always 401.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from simcluster.errors import ApiError
from simcluster.pki import ADMIN_GROUP, ADMIN_USER, Pki
from simcluster.store import Store

__all__ = [
    "ANONYMOUS",
    "AUTHENTICATED",
    "ISSUER",
    "Authenticator",
    "UserInfo",
    "issue_token",
    "service_account_groups",
    "unauthorized",
]

ISSUER = "https://kubernetes.default.svc.cluster.local"
#: The API server's own audience (`--api-audiences`, by default the issuer).
API_AUDIENCES = (ISSUER,)
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
SA_PREFIX = "system:serviceaccount:"
CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"
#: Paths an anonymous request may reach (the rest answer 401), as `anonymous.conditions` would list them.
ANONYMOUS_PATHS = frozenset({"/healthz", "/livez", "/readyz", "/version", "/version/"})


@dataclass(frozen=True)
class UserInfo:
    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def is_anonymous(self) -> bool:
        return self.name == "system:anonymous"

    def to_api(self) -> dict[str, Any]:
        """The `userInfo` of a SelfSubjectReview or TokenReview."""
        out: dict[str, Any] = {"username": self.name}
        if self.uid:
            out["uid"] = self.uid
        out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {key: list(values) for key, values in self.extra.items()}
        return out


ANONYMOUS = UserInfo("system:anonymous", (UNAUTHENTICATED,))


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def service_account_groups(namespace: str) -> tuple[str, ...]:
    return ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED)


def with_authenticated(groups: tuple[str, ...]) -> tuple[str, ...]:
    return groups if AUTHENTICATED in groups else (*groups, AUTHENTICATED)


# ---------------------------------------------------------------------------------------------- tokens


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _compact(part: Mapping[str, Any]) -> bytes:
    """A JWT part as go-jose writes it: JSON without spaces."""
    return json.dumps(part, separators=(",", ":")).encode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def issue_token(
    pki: Pki,
    service_account: Mapping[str, Any],
    *,
    audiences: list[str],
    expiration_seconds: int,
    now: datetime,
    pod: Mapping[str, Any] | None = None,
) -> tuple[str, int]:
    """A signed ServiceAccount token (claims as kube writes them) and its expiry in Unix seconds."""
    meta = service_account["metadata"]
    issued = int(now.timestamp())
    expires = issued + expiration_seconds
    scope: dict[str, Any] = {
        "namespace": meta["namespace"],
        "serviceaccount": {"name": meta["name"], "uid": meta["uid"]},
    }
    if pod is not None:
        scope["pod"] = {"name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            scope["node"] = {"name": node}
    claims = {
        "aud": audiences,
        "exp": expires,
        "iat": issued,
        "iss": ISSUER,
        "jti": str(uuid.uuid4()),
        "kubernetes.io": scope,
        "nbf": issued,
        "sub": f"{SA_PREFIX}{meta['namespace']}:{meta['name']}",
    }
    header = {"alg": "ES256", "kid": pki.signing_key_id}
    signing_input = f"{_b64(_compact(header))}.{_b64(_compact(claims))}"
    der = pki.signing_key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256()))
    r, s = decode_dss_signature(der)
    signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    return f"{signing_input}.{_b64(signature)}", expires


def issuer_documents(pki: Pki, server_url: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ServiceAccount issuer's OpenID discovery document and its JWKS (KEP-1393)."""
    numbers = pki.signing_key.public_key().public_numbers()
    jwk = {"use": "sig", "kty": "EC", "kid": pki.signing_key_id, "crv": "P-256", "alg": "ES256",
           "x": _b64(numbers.x.to_bytes(32, "big")), "y": _b64(numbers.y.to_bytes(32, "big"))}  # fmt: skip
    configuration = {
        "issuer": ISSUER,
        "jwks_uri": f"{server_url}/openid/v1/jwks",
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["ES256"],
    }
    return configuration, {"keys": [jwk]}


def verify_token(pki: Pki, token: str) -> dict[str, Any] | None:
    """The claims of a token this cluster signed (signature and issuer only), or None."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        header = json.loads(_unb64(parts[0]))
        claims = json.loads(_unb64(parts[1]))
        signature = _unb64(parts[2])
    except (ValueError, binascii.Error):
        return None
    if not isinstance(header, dict) or header.get("alg") != "ES256" or len(signature) != 64:
        return None
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    try:
        pki.signing_key.public_key().verify(der, f"{parts[0]}.{parts[1]}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return None
    if not isinstance(claims, dict) or claims.get("iss") != ISSUER:
        return None
    return claims


# ---------------------------------------------------------------------------------------------- authenticator


class Authenticator:
    def __init__(self, pki: Pki, store: Store) -> None:
        self.pki = pki
        self.store = store

    def authenticate(
        self, authorization: str | None, peercert: Mapping[str, Any] | None, path: str
    ) -> UserInfo:
        """The request's user; ApiError 401 for a bad credential or an anonymous request off the open paths."""
        if peercert:
            user = _from_certificate(peercert)
            if user is not None:
                return user
        if authorization:
            scheme, _, token = authorization.strip().partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise unauthorized()
            user = self.user_for_token(token.strip())
            if user is None:
                raise unauthorized()
            return user
        if path in ANONYMOUS_PATHS:
            return ANONYMOUS
        raise unauthorized()

    def user_for_token(self, token: str, audiences: tuple[str, ...] = API_AUDIENCES) -> UserInfo | None:
        if token == self.pki.admin_token:
            return UserInfo(ADMIN_USER, (ADMIN_GROUP, AUTHENTICATED))
        claims = verify_token(self.pki, token)
        if claims is None:
            return None
        return self._service_account_user(claims, audiences)

    def _service_account_user(self, claims: dict[str, Any], audiences: tuple[str, ...]) -> UserInfo | None:
        now = self.store.clock_now().timestamp()
        try:
            if float(claims["exp"]) <= now or float(claims.get("nbf", 0)) > now + 60:
                return None
        except (KeyError, TypeError, ValueError):
            return None
        token_audiences = claims.get("aud")
        if isinstance(token_audiences, str):
            token_audiences = [token_audiences]
        if not isinstance(token_audiences, list) or not set(token_audiences) & set(audiences):
            return None
        scope = claims.get("kubernetes.io")
        if not isinstance(scope, dict) or not isinstance(scope.get("serviceaccount"), dict):
            return None
        namespace = str(scope.get("namespace", ""))
        name = str(scope["serviceaccount"].get("name", ""))
        uid = str(scope["serviceaccount"].get("uid", ""))
        if not _still_there(self.store, "serviceaccounts", namespace, name, uid):
            return None
        extra: dict[str, tuple[str, ...]] = {}
        pod = scope.get("pod")
        if isinstance(pod, dict):
            if not _still_there(self.store, "pods", namespace, str(pod.get("name")), str(pod.get("uid"))):
                return None
            extra["authentication.kubernetes.io/pod-name"] = (str(pod.get("name")),)
            extra["authentication.kubernetes.io/pod-uid"] = (str(pod.get("uid")),)
        node = scope.get("node")
        if isinstance(node, dict) and node.get("name"):
            extra["authentication.kubernetes.io/node-name"] = (str(node["name"]),)
        if claims.get("jti"):
            extra[CREDENTIAL_ID] = (f"JTI={claims['jti']}",)
        return UserInfo(f"{SA_PREFIX}{namespace}:{name}", service_account_groups(namespace), uid, extra)


def _still_there(store: Store, plural: str, namespace: str, name: str, uid: str) -> bool:
    try:
        entry = store.get_entry(plural, name, namespace=namespace)
    except ApiError:
        return False
    meta = entry.obj["metadata"]
    return bool(meta.get("uid") == uid and not meta.get("deletionTimestamp"))


def _from_certificate(peercert: Mapping[str, Any]) -> UserInfo | None:
    """CN and O of a verified client certificate (ssl's getpeercert() form)."""
    name = ""
    groups: list[str] = []
    for rdn in peercert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                name = str(value)
            elif key == "organizationName":
                groups.append(str(value))
    if not name:
        return None
    return UserInfo(name, with_authenticated(tuple(groups)))


def parse_service_account(username: str) -> tuple[str, str] | None:
    """(namespace, name) of `system:serviceaccount:NS:NAME`, else None."""
    if not username.startswith(SA_PREFIX):
        return None
    namespace, _, name = username[len(SA_PREFIX) :].partition(":")
    if not namespace or not name or ":" in name:
        return None
    return namespace, name
