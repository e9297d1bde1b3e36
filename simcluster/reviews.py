"""The review APIs, answered and never stored: SelfSubjectAccessReview, SubjectAccessReview,
LocalSubjectAccessReview, SelfSubjectRulesReview (`kubectl auth can-i [--list]`), SelfSubjectReview
(`kubectl auth whoami`), TokenReview, and the ServiceAccount `token` subresource (TokenRequest,
`kubectl create token`)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from simcluster.auth import API_AUDIENCES, Authenticator, UserInfo, issue_token
from simcluster.errors import ApiError, bad_request, invalid, not_found
from simcluster.rbac import Attributes, Authorizer, FieldRequirement
from simcluster.resources import ResourceDef, resource_for
from simcluster.selectors import SelectorError, field_requirements
from simcluster.store import Store, format_time

Obj = dict[str, Any]

_MIN_EXPIRATION = 600
_MAX_EXPIRATION = 2**32
_DEFAULT_EXPIRATION = 3600


def _echo(resource: ResourceDef, body: Obj, namespace: str | None = None) -> Obj:
    meta = dict(body.get("metadata") or {}) if isinstance(body.get("metadata"), dict) else {}
    meta["creationTimestamp"] = None
    if namespace:
        meta["namespace"] = namespace
    return {"kind": resource.kind, "apiVersion": resource.api_version, "metadata": meta}


def _spec(resource: ResourceDef, body: Obj) -> Obj:
    spec = body.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        raise bad_request(f"{resource.kind} in version \"{resource.version}\" cannot be handled as a {resource.kind}: "
                          "spec must be an object")  # fmt: skip
    return spec


def _attributes(resource: ResourceDef, user: UserInfo, spec: Obj) -> Attributes:
    res = spec.get("resourceAttributes")
    non = spec.get("nonResourceAttributes")
    if (res is None) == (non is None) or not isinstance(res or non, dict):
        raise invalid(resource, "", [{
            "reason": "FieldValueInvalid", "field": "spec.resourceAttributes",
            "message": 'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
        }])  # fmt: skip
    if isinstance(res, dict):
        return Attributes(user, str(res.get("verb") or ""), True, api_group=str(res.get("group") or ""),
                          api_version=str(res.get("version") or ""), resource=str(res.get("resource") or ""),
                          subresource=str(res.get("subresource") or ""), name=str(res.get("name") or ""),
                          namespace=str(res.get("namespace") or ""),
                          field_selector=_field_selector(res.get("fieldSelector")))  # fmt: skip
    assert isinstance(non, dict)
    return Attributes(user, str(non.get("verb") or ""), False, path=str(non.get("path") or ""))


def _field_selector(selector: Any) -> tuple[FieldRequirement, ...]:
    """resourceAttributes.fieldSelector as the authorizers see it: a rawSelector parsed, or requirements
    (`In`/`NotIn` with one value, as `=`/`!=`; the others are dropped, as upstream's conversion errs on them)."""
    if not isinstance(selector, dict):
        return ()
    if selector.get("rawSelector"):
        try:
            return tuple(field_requirements(str(selector["rawSelector"])))
        except SelectorError:
            return ()
    out: list[FieldRequirement] = []
    for requirement in selector.get("requirements") or ():
        if not isinstance(requirement, dict):
            continue
        values = requirement.get("values") or []
        operator = {"In": "=", "NotIn": "!="}.get(str(requirement.get("operator")))
        if operator and isinstance(values, list) and len(values) == 1:
            out.append((str(requirement.get("key", "")), operator, str(values[0])))
    return tuple(out)


def _access_status(authorizer: Authorizer, attrs: Attributes) -> Obj:
    allowed, reason = authorizer.authorize(attrs)
    status: Obj = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return status


def self_subject_access_review(
    resource: ResourceDef, body: Obj, user: UserInfo, authorizer: Authorizer
) -> Obj:
    spec = _spec(resource, body)
    attrs = _attributes(resource, user, spec)
    return {**_echo(resource, body), "spec": spec, "status": _access_status(authorizer, attrs)}


def subject_access_review(
    resource: ResourceDef, body: Obj, authorizer: Authorizer, namespace: str | None = None
) -> Obj:
    spec = _spec(resource, body)
    if not spec.get("user") and not spec.get("groups"):
        raise invalid(resource, "", [{"reason": "FieldValueInvalid", "field": "spec.user",
                                      "message": 'Invalid value: "": at least one of user or group must be specified'}])  # fmt: skip
    if namespace is not None:  # LocalSubjectAccessReview: only in its own namespace
        attributes = spec.get("resourceAttributes")
        if not isinstance(attributes, dict) or spec.get("nonResourceAttributes") is not None:
            raise invalid(resource, "", [{"reason": "FieldValueInvalid", "field": "spec.nonResourceAttributes",
                                          "message": "Invalid value: \"object\": disallowed on this kind of request"}])  # fmt: skip
        if attributes.get("namespace") and attributes["namespace"] != namespace:
            raise invalid(resource, "", [{"reason": "FieldValueInvalid", "field": "spec.resourceAttributes.namespace",
                                          "message": f'Invalid value: "{attributes["namespace"]}": must match metadata.namespace'}])  # fmt: skip
        attributes["namespace"] = namespace
    extra = spec.get("extra") or {}
    user = UserInfo(
        str(spec.get("user") or ""),
        tuple(str(g) for g in spec.get("groups") or ()),
        str(spec.get("uid") or ""),
        {str(k): tuple(str(v) for v in values or ()) for k, values in extra.items()}
        if isinstance(extra, dict)
        else {},
    )
    attrs = _attributes(resource, user, spec)
    return {**_echo(resource, body, namespace), "spec": spec, "status": _access_status(authorizer, attrs)}


def self_subject_rules_review(
    resource: ResourceDef, body: Obj, user: UserInfo, authorizer: Authorizer
) -> Obj:
    spec = _spec(resource, body)
    namespace = str(spec.get("namespace") or "")
    resource_rules, non_resource_rules = authorizer.rules_for(user, namespace)
    error = authorizer.rules_error(user)
    status: Obj = {
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": bool(error),
    }
    if error:
        status["evaluationError"] = error
    return {**_echo(resource, body), "spec": spec, "status": status}


def self_subject_review(resource: ResourceDef, body: Obj, user: UserInfo) -> Obj:
    return {**_echo(resource, body), "status": {"userInfo": user.to_api()}}


def token_review(resource: ResourceDef, body: Obj, authenticator: Authenticator) -> Obj:
    spec = _spec(resource, body)
    token = str(spec.get("token") or "")
    audiences = tuple(str(a) for a in spec.get("audiences") or ()) or API_AUDIENCES
    user = authenticator.user_for_token(token, audiences) if token else None
    status: Obj
    if user is None:
        status = {"user": {}, "error": "[invalid bearer token, service account token has been invalidated]"}
    else:
        status = {"authenticated": True, "user": user.to_api(), "audiences": list(audiences)}
    return {**_echo(resource, body), "spec": spec, "status": status}


def token_request(store: Store, authenticator: Authenticator, namespace: str, name: str, body: Any) -> Obj:
    """Issue a token for ServiceAccount `namespace/name` (POST …/serviceaccounts/NAME/token)."""
    kind = resource_for("serviceaccounts")
    assert kind is not None
    if not isinstance(body, dict):
        raise bad_request("the body of the request was in an unknown format")
    if body.get("kind") not in (None, "TokenRequest") or body.get("apiVersion") not in (
        None,
        "authentication.k8s.io/v1",
    ):
        raise bad_request(
            f'{body.get("kind")} in version "{body.get("apiVersion")}" cannot be handled as a TokenRequest'
        )
    spec = body.get("spec") or {}
    if not isinstance(spec, dict):
        raise bad_request("TokenRequest: spec must be an object")
    try:
        account = store.get_entry("serviceaccounts", name, namespace=namespace).obj
    except ApiError:
        raise not_found(kind, name) from None
    seconds = spec.get("expirationSeconds")
    if seconds is None:
        seconds = _DEFAULT_EXPIRATION
    token_kind = _TOKEN_REQUEST
    if not isinstance(seconds, int) or isinstance(seconds, bool):
        raise invalid(token_kind, name, [{"reason": "FieldValueInvalid", "field": "spec.expirationSeconds",
                                          "message": f"Invalid value: {seconds!r}: must be an integer"}])  # fmt: skip
    if seconds < _MIN_EXPIRATION:
        raise invalid(token_kind, name, [{"reason": "FieldValueInvalid", "field": "spec.expirationSeconds",
                                          "message": f"Invalid value: {seconds}: may not specify a duration less than 10 minutes"}])  # fmt: skip
    if seconds > _MAX_EXPIRATION:
        raise invalid(token_kind, name, [{"reason": "FieldValueInvalid", "field": "spec.expirationSeconds",
                                          "message": f"Invalid value: {seconds}: may not specify a duration larger than 2^32 seconds"}])  # fmt: skip
    audiences = [str(a) for a in spec.get("audiences") or ()] or list(API_AUDIENCES)
    pod = _bound_pod(store, token_kind, name, namespace, spec.get("boundObjectRef"))
    now = store.clock_now()
    token, expires = issue_token(authenticator.pki, account, audiences=audiences, expiration_seconds=seconds,
                                 now=now, pod=pod)  # fmt: skip
    expiry = now.replace(microsecond=0) + timedelta(seconds=seconds)
    out_spec: Obj = {
        "audiences": audiences,
        "expirationSeconds": seconds,
        "boundObjectRef": spec.get("boundObjectRef"),
    }
    return {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": format_time(now)},
        "spec": out_spec,
        "status": {"token": token, "expirationTimestamp": format_time(expiry)},
    }


#: TokenRequest as 422 messages name it (`TokenRequest.authentication.k8s.io "x" is invalid`).
_TOKEN_REQUEST = ResourceDef("authentication.k8s.io", "v1", "tokenrequests", "TokenRequest", True)


def _bound_pod(store: Store, kind: ResourceDef, name: str, namespace: str, ref: Any) -> Obj | None:
    if ref is None:
        return None
    if not isinstance(ref, dict) or ref.get("kind") not in ("Pod", "Secret", "Node"):
        raise invalid(kind, name, [{"reason": "FieldValueNotSupported", "field": "spec.boundObjectRef.kind",
                                    "message": f'Unsupported value: "{(ref or {}).get("kind") if isinstance(ref, dict) else ref}": '
                                               'supported values: "Pod", "Secret", "Node"'}])  # fmt: skip
    plural = {"Pod": "pods", "Secret": "secrets", "Node": "nodes"}[str(ref["kind"])]
    try:
        bound = store.get(
            plural, str(ref.get("name") or ""), namespace=namespace if plural != "nodes" else None
        )
    except ApiError as error:
        raise error from None
    if ref.get("uid") and ref["uid"] != bound["metadata"].get("uid"):
        raise ApiError(409, "Conflict", f'the UID in the bound object reference ({ref["uid"]}) does not match the UID '
                                        f'in record. The object might have been deleted and then recreated')  # fmt: skip
    return bound if plural == "pods" else None
