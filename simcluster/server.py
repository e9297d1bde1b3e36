"""The HTTP face of simcluster: kube-apiserver REST paths, list/watch wire protocol, discovery and the
fault-injection control paths under `/_simcluster/` (a prefix no real server uses)."""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import yaml
from aiohttp import web

from simcluster import discovery, evictions, health, podlogs, protobuf, reviews, tables
from simcluster.auth import Authenticator, UserInfo, issuer_documents
from simcluster.errors import (
    ApiError,
    bad_request,
    expired,
    invalid,
    invalid_list_options,
    list_option_causes,
    method_not_allowed,
    resource_not_found,
)
from simcluster.escalation import REQUESTER, EscalationCheck
from simcluster.impersonation import impersonate, requested
from simcluster.jsondata import dumps
from simcluster.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from simcluster.metrics import RequestMetrics
from simcluster.nodeauthz import NodeAuthorizer
from simcluster.noderestriction import NodeRestriction
from simcluster.openapi import (
    OPENAPI_V2_PROTOBUF,
    OPENAPI_V2_PROTOBUF_ASKED,
    openapi_v2,
    openapi_v2_protobuf,
    openapi_v3_document,
    openapi_v3_index,
)
from simcluster.pki import Pki
from simcluster.rbac import Authorizer, forbidden
from simcluster.requestinfo import request_attributes
from simcluster.resources import ResourceDef, lookup
from simcluster.selectors import Matcher, SelectorError, combine, field_matcher, label_matcher
from simcluster.store import CREATE_ON_UPDATE, PROPAGATION_POLICIES, Store, entry_key
from simcluster.watch import WatchStream, parse_watch_params

log = logging.getLogger(__name__)

Obj = dict[str, Any]
JSON_TYPE = "application/json"
USER_KEY = web.RequestKey("user", UserInfo)
#: The deprecation warning of the resource a request names (`ResourceDef.deprecation_warning`), if any.
DEPRECATION_KEY = web.RequestKey("deprecation", str)
_TOO_OLD_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of "
    "the results. Continuing with the provided token results in an inconsistent list - objects that were "
    "created, modified, or deleted between the time the first chunk was returned and now may show up in the list."
)


@dataclass
class ServerOptions:
    bookmark_interval: float = 10.0
    #: Real servers close a watch after 30-60 min when the client gives no timeoutSeconds.
    default_watch_timeout: float = 1800.0
    restart_pause: float = 0.2


def _json_response(body: Any, status: int = 200, *, content_type: str = JSON_TYPE) -> web.Response:
    raw = body if isinstance(body, bytes) else dumps(body)
    return web.Response(body=raw, status=status, headers={"Content-Type": content_type})


def _propagation_policy(request: web.Request, body: Obj) -> str | None:
    """DeleteOptions' propagationPolicy (None: the kind's default); the deprecated orphanDependents says
    Orphan or Background. 422 for both at once or an unknown policy, as ValidateDeleteOptions words it."""
    policy = body.get("propagationPolicy", request.query.get("propagationPolicy"))
    orphan = body.get("orphanDependents", request.query.get("orphanDependents"))
    causes: list[Obj] = []
    if orphan is not None and policy is not None:
        causes.append({"reason": "FieldValueInvalid", "field": "propagationPolicy",
                       "message": f"Invalid value: {json.dumps(policy)}: orphanDependents and deletionPropagation "
                                  "cannot be both set"})  # fmt: skip
    if policy is not None and policy not in PROPAGATION_POLICIES:
        causes.append({"reason": "FieldValueNotSupported", "field": "propagationPolicy",
                       "message": f"Unsupported value: {json.dumps(policy)}: supported values: "
                                  + ", ".join(json.dumps(p) for p in (*PROPAGATION_POLICIES, "nil"))})  # fmt: skip
    if causes:
        parts = [f"{c['field']}: {c['message']}" for c in causes]
        summary = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
        raise ApiError(422, "Invalid", f'DeleteOptions.meta.k8s.io "" is invalid: {summary}',
                       {"group": "meta.k8s.io", "kind": "DeleteOptions", "causes": causes})  # fmt: skip
    if orphan is not None:
        return "Orphan" if orphan in (True, "true") else "Background"
    return str(policy) if policy is not None else None


def _deleted_status(resource: ResourceDef, obj: Obj) -> Obj:
    """What a registry without ReturnDeletedObject answers for an object it removed (finalizeDelete):
    a Status naming it, its kind field holding the resource; no code, and no group for the core group."""
    meta = obj.get("metadata") or {}
    details: Obj = {"name": meta.get("name", "")}
    if resource.group:
        details["group"] = resource.group
    details["kind"] = resource.plural
    if meta.get("uid"):
        details["uid"] = meta["uid"]
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


def _error_response(error: ApiError) -> web.Response:
    response = _json_response(error.to_status(), error.status)
    retry_after = (error.details or {}).get("retryAfterSeconds")
    if retry_after:
        response.headers["Retry-After"] = str(retry_after)
    return response


def _encode_continue(rv: int, key: tuple[str, str], namespace: str | None) -> str:
    # storage.EncodeContinue: Go's json.Marshal of the key past the list's own prefix, which ends in the namespace
    # of a namespaced request; so only a list across every namespace starts at "<namespace>/<name>"
    start = f"{key[0]}/{key[1]}" if key[0] and not namespace else key[1]
    token = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": f"{start}\u0000"}, separators=(",", ":"))
    return base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")


def _decode_continue(token: str, namespace: str | None) -> tuple[int, tuple[str, str]]:
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        start = str(data["start"]).rstrip("\u0000")
        found, _, name = start.rpartition("/")
        return int(data["rv"]), (namespace or found, name)
    except (ValueError, KeyError, TypeError, binascii.Error) as error:
        raise bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
        ) from error


def _flag(value: str | None) -> bool:
    return (value or "").lower() in ("true", "1")


def _wants_table(request: web.Request) -> bool:
    accept = request.headers.get("Accept", "")
    first = accept.split(",")[0]
    return "as=Table" in first


class SimServer:
    """The aiohttp application plus its listening socket; restartable on the same port."""

    def __init__(
        self,
        store: Store,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        options: ServerOptions | None = None,
        pki: Pki | None = None,
    ):
        self.store = store
        #: None: plain HTTP and no authentication or authorization at all (`--insecure-http`, for debugging)
        self.pki = pki
        self.authenticator = Authenticator(pki, store) if pki is not None else None
        # kube-apiserver --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction,…
        self.authorizer = Authorizer(store, modes=(NodeAuthorizer(store),))
        self.node_restriction = NodeRestriction(store)
        if pki is not None:  # a restarted server replaces its predecessor's checks
            store.admission[:] = [
                c for c in store.admission if not isinstance(c, (EscalationCheck, NodeRestriction))
            ]
            store.admission += [self.node_restriction, EscalationCheck(store, self.authorizer)]
            store.publish_root_ca(pki.ca_pem.decode())
        self.host = host
        self.port = port
        self.options = options or ServerOptions()
        self.latency_ms = 0
        self.restarts = 0
        self._background: set[asyncio.Future[None]] = set()
        self._runner: web.AppRunner | None = None
        self._watches: set[WatchStream] = set()
        self.metrics = RequestMetrics()
        self.loop: asyncio.AbstractEventLoop | None = None
        # The simulated DRA driver, when controllers run: `/_simcluster/device-unhealthy` drives it.
        self.driver: Any = None

    # ------------------------------------------------------------------ lifecycle

    def make_app(self) -> web.Application:
        app = web.Application(middlewares=[self._middleware], client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        app.on_response_prepare.append(self._deprecation_warning)
        app.on_response_prepare.append(self._filter_headers)
        return app

    @staticmethod
    async def _filter_headers(request: web.Request, response: web.StreamResponse) -> None:
        """What the apiserver's handler chain puts on every answer (WithAuditInit's Audit-Id, WithCacheControl's
        Cache-Control), and no Server header, which Go's net/http does not send."""
        response.headers.popall("Server", None)
        response.headers.setdefault("Audit-Id", str(uuid.uuid4()))
        response.headers.setdefault("Cache-Control", "no-cache, private")

    @staticmethod
    async def _deprecation_warning(request: web.Request, response: web.StreamResponse) -> None:
        """A deprecated resource's warning on every answer about it, errors and watch streams included
        (headers go out when a response is prepared: a stream's before its first event)."""
        warning = request.get(DEPRECATION_KEY)
        if warning:
            response.headers.add("Warning", f'299 - "{warning}"')

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        runner = web.AppRunner(
            self.make_app(),
            access_log=None,
            shutdown_timeout=0.5,
            handle_signals=False,
            handler_cancellation=True,
        )
        await runner.setup()
        ssl_context = self.pki.server_context() if self.pki is not None else None
        site = web.TCPSite(runner, self.host, self.port, reuse_address=True, ssl_context=ssl_context)
        await site.start()
        if self.port == 0:
            server = getattr(site, "_server", None)
            sockets = getattr(server, "sockets", None) or []
            self.port = int(sockets[0].getsockname()[1])
        self._runner = runner

    async def stop(self) -> None:
        self.drop_watches()
        await asyncio.sleep(0)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def restart(self) -> None:
        """Close every connection, stop listening for a moment, listen again on the same port."""
        await self.stop()
        await asyncio.sleep(self.options.restart_pause)
        await self.start()
        self.restarts += 1

    def _schedule_restart(self) -> None:
        self._background.add(task := asyncio.ensure_future(self.restart()))
        task.add_done_callback(self._background.discard)  # keep a reference until it is done

    def drop_watches(self) -> int:
        """End every open watch stream (clients see the stream close and reconnect)."""
        watches = list(self._watches)
        for watch in watches:
            watch.close()
        return len(watches)

    @property
    def open_watches(self) -> int:
        return len(self._watches)

    @property
    def url(self) -> str:
        scheme = "https" if self.pki is not None else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"

    # ------------------------------------------------------------------ middleware & dispatch

    @web.middleware
    async def _middleware(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if self.latency_ms and not request.path.startswith("/_simcluster/"):
            await asyncio.sleep(self.latency_ms / 1000)
        try:
            if self.authenticator is not None:
                request[USER_KEY] = self._admit(request, self.authenticator)
            response = await handler(request)
            self._count(request, response.status)
            return response
        except ApiError as error:
            self._count(request, error.status)
            return _error_response(error)
        except SelectorError as error:
            return _error_response(bad_request(str(error)))
        except web.HTTPException:
            raise
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        except Exception as error:  # never a bare 500 page: answer a Status like kube does
            log.exception("internal error serving %s %s", request.method, request.path)
            return _error_response(ApiError(500, "InternalError", f"Internal error occurred: {error}"))

    def _count(self, request: web.Request, code: int) -> None:
        """apiserver_request_total's count of a resource request the server answered (refusals included)."""
        if request.path.startswith("/api"):
            attrs = request_attributes(self._user(request), request.method, request.path, request.query)
            dry_run = request.query.getall("dryRun", [])
            self.metrics.observe(
                attrs, request.method, dry_run, request.headers.get("Content-Type", ""), code
            )

    def _admit(self, request: web.Request, authenticator: Authenticator) -> UserInfo:
        """Authenticate, apply impersonation headers and authorize the request; its (effective) user."""
        transport = request.transport
        peercert = transport.get_extra_info("peercert") if transport is not None else None
        user = authenticator.authenticate(request.headers.get("Authorization"), peercert, request.path)
        attrs = request_attributes(user, request.method, request.path, request.query)
        wanted = requested(request.headers)
        if wanted is not None:
            user = impersonate(self.authorizer.authorize, attrs, wanted)
            attrs = attrs.with_user(user)
        allowed, reason = self.authorizer.authorize(attrs)
        if not allowed:
            raise forbidden(attrs, reason)
        REQUESTER.set(user)  # this request's task only: the escalation check reads it
        return user

    def _user(self, request: web.Request) -> UserInfo:
        user: UserInfo | None = request.get(USER_KEY)
        if user is not None:
            return user
        # --insecure-http: like the old insecure port, every request acts with full rights
        return UserInfo("system:admin", ("system:masters", "system:authenticated"))

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        segs = [s for s in request.path.split("/") if s]
        if not segs:
            return _json_response({"paths": ["/api", "/api/v1", "/apis", "/healthz", "/livez", "/metrics",
                                             "/openapi/v2", "/openapi/v3", "/readyz", "/version"]})  # fmt: skip
        head = segs[0]
        if head == "version" and len(segs) == 1:
            return _json_response(discovery.VERSION_INFO)
        if segs == ["metrics"]:
            exposition = await asyncio.to_thread(self.metrics.render, self.store)
            return web.Response(body=exposition.encode(), headers={"Content-Type": METRICS_CONTENT_TYPE})
        if head in health.CHECKS:
            query = request.rel_url.query
            text = health.answer(
                head, "/".join(segs[1:]), verbose="verbose" in query, exclude=query.getall("exclude", [])
            )
            if text is None:
                raise resource_not_found()
            return web.Response(
                text=text, content_type="text/plain", headers={"X-Content-Type-Options": "nosniff"}
            )
        if head == "_simcluster":
            return await self._control(request, segs[1:])
        if self.pki is not None and segs in (
            [".well-known", "openid-configuration"],
            ["openid", "v1", "jwks"],
        ):
            configuration, jwks = issuer_documents(self.pki, self.url)
            if head == "openid":
                return _json_response(jwks, content_type="application/jwk-set+json")
            return _json_response(configuration)
        if head == "openapi":
            return self._openapi(request, segs[1:])
        if head == "api":
            if len(segs) == 1:
                return self._discovery(request, legacy=True)
            if segs[1] != "v1":
                raise resource_not_found()
            if len(segs) == 2:
                return _json_response(discovery.api_resource_list("", "v1"))
            return await self._resource_request(request, "", "v1", segs[2:])
        if head == "apis":
            if len(segs) == 1:
                return self._discovery(request, legacy=False)
            group = segs[1]
            if len(segs) == 2:
                doc = discovery.api_group(group)
                if doc is None:
                    raise resource_not_found()
                return _json_response(doc)
            if len(segs) == 3:
                doc = discovery.api_resource_list(group, segs[2])
                if doc is None:
                    raise resource_not_found()
                return _json_response(doc)
            return await self._resource_request(request, group, segs[2], segs[3:])
        raise resource_not_found()

    def _discovery(self, request: web.Request, *, legacy: bool) -> web.Response:
        version = discovery.wants_aggregated(request.headers.get("Accept", ""))
        if version:
            return _json_response(
                discovery.aggregated(legacy=legacy, version=version),
                content_type=discovery.AGGREGATED_CONTENT_TYPE.format(version=version),
            )
        if legacy:
            return _json_response(discovery.api_versions(f"{self.host}:{self.port}"))
        return _json_response(discovery.api_group_list())

    def _openapi(self, request: web.Request, segs: list[str]) -> web.Response:
        if segs == ["v2"]:
            if any(asked in request.headers.get("Accept", "") for asked in OPENAPI_V2_PROTOBUF_ASKED):
                return web.Response(body=openapi_v2_protobuf(), headers={"Content-Type": OPENAPI_V2_PROTOBUF})
            return _json_response(openapi_v2())
        if segs == ["v3"]:
            return _json_response(openapi_v3_index())
        if len(segs) >= 2 and segs[0] == "v3":
            doc = openapi_v3_document("/".join(segs[1:]))
            if doc is not None:
                return _json_response(doc)
        raise resource_not_found()

    # ------------------------------------------------------------------ fault control

    async def _control(self, request: web.Request, segs: list[str]) -> web.Response:
        if request.method != "POST" or len(segs) != 1:
            raise resource_not_found()
        action = segs[0]
        if action == "compact":
            return _json_response({"compactedResourceVersion": self.store.compact()})
        if action == "drop-watches":
            return _json_response({"dropped": self.drop_watches()})
        if action == "latency":
            try:
                self.latency_ms = max(0, int(request.query.get("ms", "0")))
            except ValueError as error:
                raise bad_request("latency: ms must be an integer number of milliseconds") from error
            return _json_response({"latencyMs": self.latency_ms})
        if action in ("device-unhealthy", "device-healthy"):
            return await self._device_health(request, unhealthy=action == "device-unhealthy")
        if action == "restart":
            loop = asyncio.get_running_loop()
            loop.call_later(0.05, self._schedule_restart)  # after this answer has been sent
            return _json_response({"restarting": True})
        raise resource_not_found()

    async def _device_health(self, request: web.Request, *, unhealthy: bool) -> web.Response:
        """Mark a device unhealthy (a driver taint, NoExecute unless `effect` says otherwise) or healthy."""
        if self.driver is None:
            raise bad_request("no simulated driver runs in this simcluster (started without controllers)")
        query = request.query
        missing = [name for name in ("driver", "node", "device") if not query.get(name)]
        if missing:
            raise bad_request(f"{', '.join(missing)}: required query parameter")
        args = (query["driver"], query["node"], query["device"])
        try:
            if unhealthy:
                taint = await asyncio.to_thread(
                    self.driver.mark_unhealthy,
                    *args,
                    effect=query.get("effect", "NoExecute"),
                    key=query.get("key"),
                )
                return _json_response({"taint": taint})
            await asyncio.to_thread(self.driver.mark_healthy, *args, key=query.get("key"))
        except (LookupError, ValueError) as error:  # the driver's "no such pool/device", a bad effect
            raise bad_request(f"device {'/'.join(args)}: {error}") from error
        return _json_response({"healthy": "/".join(args)})

    # ------------------------------------------------------------------ REST

    async def _resource_request(
        self, request: web.Request, group: str, version: str, rest: list[str]
    ) -> web.StreamResponse:
        namespace: str | None = None
        if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] not in ("status", "finalize"):
            namespace, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            raise resource_not_found()
        resource = lookup(group, version, rest[0])
        if resource is None:
            raise resource_not_found()
        if resource.deprecation_warning:
            request[DEPRECATION_KEY] = resource.deprecation_warning
        name = rest[1] if len(rest) >= 2 else None
        sub = rest[2] if len(rest) == 3 else None
        if namespace is not None and not resource.namespaced:
            raise resource_not_found()
        if sub is not None and sub not in resource.subresources:
            raise resource_not_found()
        method = request.method
        if resource.review:
            if name is not None:
                raise resource_not_found()
            if method != "POST":
                raise method_not_allowed()
            return await self._review(request, resource, namespace)
        if sub == "log" and resource.plural == "pods" and name is not None and namespace is not None:
            if method != "GET":
                raise method_not_allowed()
            return await self._pod_log(request, namespace, name)
        if sub in ("eviction", "binding", "token", "scale") and name is not None and namespace is not None:
            return await self._action(request, resource, namespace, name, sub)
        if name is None:
            if method == "GET":
                if _flag(request.query.get("watch")):
                    return await self._watch(request, resource, namespace)
                return self._list(request, resource, namespace)
            if resource.namespaced and namespace is None:
                raise method_not_allowed()
            if method == "POST":
                return await self._create(request, resource, namespace)
            if method == "DELETE" and "deletecollection" in resource.verbs:
                return await self._delete_collection(request, resource, namespace)
            raise method_not_allowed()
        if resource.namespaced and namespace is None:
            raise resource_not_found()
        if sub == "finalize" and method != "PUT":
            raise method_not_allowed()  # namespaces/finalize serves update alone
        if method == "GET":
            if sub is None and _flag(request.query.get("watch")):  # the deprecated single-object watch
                return await self._watch(request, resource, namespace, name=name)
            entry = self.store.get_entry(resource.plural, name, namespace=namespace)
            if _wants_table(request):
                return _json_response(tables.table(resource, [entry.obj], include_object=self._include(request), now=self.store.clock_now(),
                                                   resource_version=str(entry.rv)))  # fmt: skip
            return _json_response(entry.raw)
        if method == "PUT":
            return await self._update(request, resource, namespace, name, sub)
        if method == "PATCH":
            return await self._patch(request, resource, namespace, name, sub)
        if method == "DELETE" and sub is None:
            return await self._delete(request, resource, namespace, name)
        raise method_not_allowed()

    async def _review(
        self, request: web.Request, resource: ResourceDef, namespace: str | None
    ) -> web.Response:
        body = self._check_kind(resource, await self._read_body(request))
        user = self._user(request)
        plural = resource.plural
        if plural == "selfsubjectaccessreviews":
            answer = reviews.self_subject_access_review(resource, body, user, self.authorizer)
        elif plural == "subjectaccessreviews":
            answer = reviews.subject_access_review(resource, body, self.authorizer)
        elif plural == "localsubjectaccessreviews":
            answer = reviews.subject_access_review(resource, body, self.authorizer, namespace)
        elif plural == "selfsubjectrulesreviews":
            answer = reviews.self_subject_rules_review(resource, body, user, self.authorizer)
        elif plural == "selfsubjectreviews":
            answer = reviews.self_subject_review(resource, body, user)
        elif plural == "tokenreviews":
            if self.authenticator is None:
                raise ApiError(
                    503, "ServiceUnavailable", "token review is not available without authentication"
                )
            answer = reviews.token_review(resource, body, self.authenticator)
        else:
            raise resource_not_found()
        return _json_response(answer, 201)

    async def _pod_log(self, request: web.Request, namespace: str, name: str) -> web.StreamResponse:
        """`kubectl logs`: an empty log for a container that runs; `follow` holds it open while the pod lives."""
        pod = self.store.get("pods", name, namespace=namespace)
        query = request.rel_url.query
        container = podlogs.container_for_log(pod, query.get("container", ""))
        if (pod.get("spec") or {}).get("nodeName"):
            refusal = podlogs.kubelet_refusal(pod, container, previous=_flag(query.get("previous")))
            if refusal is not None:
                raise refusal
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        uid = (pod.get("metadata") or {}).get("uid")
        while _flag(query.get("follow")) and not _flag(query.get("previous")):
            await asyncio.sleep(0.5)
            try:
                current = self.store.get("pods", name, namespace=namespace)
            except ApiError:
                break
            if (current.get("metadata") or {}).get("uid") != uid or (current.get("status") or {}).get(
                "phase"
            ) in ("Succeeded", "Failed"):
                break
        await response.write_eof()
        return response

    async def _action(
        self, request: web.Request, resource: ResourceDef, namespace: str, name: str, sub: str
    ) -> web.Response:
        """The pod `eviction` and `binding`, ServiceAccount `token` and the `scale` subresource (Deployment,
        ReplicaSet, StatefulSet, ReplicationController)."""
        method = request.method
        if sub == "scale":
            return await self._scale(request, resource, namespace, name)
        if method != "POST":
            raise method_not_allowed()
        body = await self._read_body(request)
        if sub == "eviction":
            self.node_restriction.eviction(namespace, name)
            status, answer = await asyncio.to_thread(
                evictions.evict,
                self.store,
                namespace,
                name,
                body,
                query_dry_run=request.query.getall("dryRun", []),
            )
            return _json_response(answer, status)
        if sub == "token":
            if self.authenticator is None:
                raise ApiError(
                    503,
                    "ServiceUnavailable",
                    "tokens are not issued without authentication (--insecure-http)",
                )
            self.node_restriction.token_request(namespace, name, body)
            return _json_response(
                reviews.token_request(self.store, self.authenticator, namespace, name, body), 201
            )
        if not isinstance(body, dict) or not isinstance(body.get("target"), dict):
            raise bad_request("Binding: target is required")
        if ((body.get("metadata") or {}).get("name") or name) != name:
            raise bad_request("name in URL does not match name in Binding object")
        target = body["target"]
        if target.get("kind", "Node") != "Node" or not target.get("name"):
            raise invalid(resource, name, [{"reason": "FieldValueNotSupported", "field": "target.kind",
                                            "message": 'Unsupported value: "" : must be "Node" with a name'}])  # fmt: skip
        uid = ((body.get("metadata") or {}).get("uid")) or None
        self.store.bind_pod(name, namespace=namespace, node=str(target["name"]), uid=uid)
        return _json_response(
            {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}, 201
        )

    async def _scale(
        self, request: web.Request, resource: ResourceDef, namespace: str, name: str
    ) -> web.Response:
        """autoscaling/v1 Scale of a Deployment, ReplicaSet, StatefulSet or ReplicationController: read it, or set
        `spec.replicas` through it."""
        method = request.method
        if method in ("PUT", "PATCH"):
            body = await self._read_body(request) if method == "PUT" else None
            if method == "PATCH":
                if request.content_type not in (
                    "application/merge-patch+json",
                    "application/strategic-merge-patch+json",
                ):
                    raise ApiError(
                        415, "UnsupportedMediaType", "scale supports merge and strategic merge patches only"
                    )
                body = await self._read_body(request, patch=True)
            if not isinstance(body, dict) or not isinstance((body.get("spec") or {}).get("replicas", 0), int):
                raise bad_request("Scale: spec.replicas must be an integer")
            wanted = (body.get("spec") or {}).get("replicas")
            if wanted is not None:
                if wanted < 0:
                    raise invalid(resource, name, [{"reason": "FieldValueInvalid", "field": "spec.replicas",
                                                    "message": f"Invalid value: {wanted}: must be greater than or equal to 0"}])  # fmt: skip
                patch: Obj = {"spec": {"replicas": wanted}}
                rv = (body.get("metadata") or {}).get("resourceVersion")
                if rv:
                    patch["metadata"] = {"resourceVersion": rv}
                self.store.patch(resource.plural, name, patch, namespace=namespace, dry_run=self._dry_run(request),
                                 field_manager=self._field_manager(request))  # fmt: skip
        elif method != "GET":
            raise method_not_allowed()
        obj = self.store.get(resource.plural, name, namespace=namespace)
        meta = obj["metadata"]
        selector = (obj.get("spec") or {}).get("selector") or {}
        if resource.plural != "replicationcontrollers":  # a ReplicationController's selector is a plain map
            selector = selector.get("matchLabels") or {}
        scale = {
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta},
            "spec": {"replicas": int((obj.get("spec") or {}).get("replicas", 1))},
            "status": {"replicas": int((obj.get("status") or {}).get("replicas") or 0),
                       "selector": ",".join(f"{k}={v}" for k, v in sorted(selector.items()))},
        }  # fmt: skip
        return _json_response(scale)

    @staticmethod
    def _include(request: web.Request) -> str:
        return request.query.get("includeObject", "Metadata")

    @staticmethod
    def _field_manager(request: web.Request) -> str:
        """The fieldManager parameter, else the User-Agent's program name, as kube defaults it."""
        manager = request.query.get("fieldManager")
        if manager:
            return manager
        agent = request.headers.get("User-Agent", "").split("/", 1)[0].strip()
        return agent[:128] or "unknown"

    @staticmethod
    def _field_validation(request: web.Request) -> str:
        """Unknown-field handling: Strict, Warn (kube's default) or Ignore."""
        value = request.query.get("fieldValidation") or "Warn"
        if value not in ("Strict", "Warn", "Ignore"):
            raise bad_request(
                f'fieldValidation: Unsupported value: "{value}": supported values: "Ignore", "Strict", "Warn"'
            )
        return value

    @staticmethod
    def _dry_run(request: web.Request, body: Obj | None = None) -> bool:
        values = request.query.getall("dryRun", [])
        if body and isinstance(body.get("dryRun"), list):
            values = [*values, *body["dryRun"]]
        for value in values:
            if value != "All":
                raise bad_request(f'dryRun: Unsupported value: "{value}": supported values: "All"')
        return bool(values)

    @staticmethod
    async def _read_body(request: web.Request, *, patch: bool = False) -> Any:
        """The request's object, decoded as its Content-Type says (a patch's JSON when `patch`)."""
        raw = await request.read()
        if not raw:
            return None
        # NegotiateInputSerializer: no Content-Type is the first supported one, JSON; only those are decoded
        ctype = request.content_type if request.headers.get("Content-Type") else "application/json"
        if patch:
            ctype = "application/json"
        if ctype not in ("application/json", "application/yaml", protobuf.CONTENT_TYPE):
            raise ApiError(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: "
                f"application/json, application/yaml, {protobuf.CONTENT_TYPE}",
            )
        if ctype == protobuf.CONTENT_TYPE:
            try:
                return protobuf.decode(raw)
            except protobuf.ProtobufError as error:
                if "not supported" not in str(error):
                    raise bad_request(
                        f"the object provided is unrecognized (must be of type {ctype}): {error}"
                    ) from error
        if "protobuf" in ctype or "cbor" in ctype:
            raise ApiError(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml",
            )
        try:
            if ctype == "application/yaml":
                return yaml.safe_load(raw)
            return json.loads(raw)
        except (ValueError, yaml.YAMLError) as error:
            raise bad_request(
                f"the object provided is unrecognized (must be of type {ctype}): {error}"
            ) from error

    @staticmethod
    def _warned(response: web.Response, warnings: list[str]) -> web.Response:
        for warning in warnings:
            text = warning.replace('"', '\\"')
            response.headers.add("Warning", f'299 - "{text}"')
        return response

    def _check_kind(self, resource: ResourceDef, body: Any) -> Obj:
        if not isinstance(body, dict):
            raise bad_request("the body of the request was in an unknown format")
        kind = body.get("kind")
        api_version = body.get("apiVersion")
        if (kind and kind != resource.kind) or (api_version and api_version != resource.api_version):
            raise bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version "
                f"({resource.api_version})"
                if api_version != resource.api_version
                else f'{kind} in version "{resource.version}" cannot be handled as a {resource.kind}'
            )
        return body

    async def _create(
        self, request: web.Request, resource: ResourceDef, namespace: str | None
    ) -> web.Response:
        body = self._check_kind(resource, await self._read_body(request))
        obj, warnings = self.store.create_with_warnings(
            resource.plural,
            body,
            namespace=namespace,
            dry_run=self._dry_run(request),
            field_manager=self._field_manager(request),
            field_validation=self._field_validation(request),
        )
        return self._warned(_json_response(obj, 201), warnings)

    async def _update(
        self, request: web.Request, resource: ResourceDef, namespace: str | None, name: str, sub: str | None
    ) -> web.Response:
        body = self._check_kind(resource, await self._read_body(request))
        meta = body.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise bad_request("metadata must be an object")
        given = str(meta.get("name") or "")
        if given != name:  # checkName: an object without a name does not name the URL's either
            raise bad_request(f"the name of the object ({given}) does not match the name on the URL ({name})")
        if resource.namespaced and meta.get("namespace") and meta["namespace"] != namespace:
            raise bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        meta["name"] = name
        if namespace:
            meta["namespace"] = namespace
        created = False
        if sub is None and (resource.group, resource.plural) in CREATE_ON_UPDATE:
            try:
                self.store.get_entry(resource.plural, name, namespace=namespace)
            except ApiError:
                created = True  # the store creates it: 201, as the registry answers a PUT that created
        obj, warnings = self.store.update_with_warnings(
            resource.plural,
            body,
            subresource=sub,
            dry_run=self._dry_run(request),
            namespace=namespace,
            field_manager=self._field_manager(request),
            field_validation=self._field_validation(request),
        )
        return self._warned(_json_response(obj, 201 if created else 200), warnings)

    async def _patch(
        self, request: web.Request, resource: ResourceDef, namespace: str | None, name: str, sub: str | None
    ) -> web.Response:
        ctype = request.content_type
        if ctype not in (
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/strategic-merge-patch+json",
            "application/apply-patch+yaml",
        ):
            raise ApiError(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json",
            )
        existed = True
        if ctype == "application/apply-patch+yaml":
            try:
                self.store.get_entry(resource.plural, name, namespace=namespace)
            except ApiError:
                existed = False
        obj, warnings = self.store.patch_with_warnings(
            resource.plural,
            name,
            await request.read(),
            content_type=ctype,
            namespace=namespace,
            subresource=sub,
            field_manager=request.query.get("fieldManager")
            if ctype == "application/apply-patch+yaml"
            else self._field_manager(request),
            force=_flag(request.query.get("force")),
            dry_run=self._dry_run(request),
            field_validation=self._field_validation(request),
        )
        return self._warned(_json_response(obj, 200 if existed else 201), warnings)

    async def _delete(
        self, request: web.Request, resource: ResourceDef, namespace: str | None, name: str
    ) -> web.Response:
        body = await self._read_body(request) or {}
        if not isinstance(body, dict):
            raise bad_request("DeleteOptions must be an object")
        preconditions = body.get("preconditions") or {}
        grace = body.get("gracePeriodSeconds", request.query.get("gracePeriodSeconds"))
        try:
            grace_seconds = int(grace) if grace is not None else None
        except (TypeError, ValueError) as error:
            raise bad_request(f"gracePeriodSeconds: must be an integer, got {grace!r}") from error
        preconditions = preconditions if isinstance(preconditions, dict) else {}
        policy = _propagation_policy(request, body)
        orphan = body.get("orphanDependents", request.query.get("orphanDependents"))
        if resource.plural == "namespaces" and orphan in (False, "false"):
            policy = "Foreground"  # the namespace registry reads it as "delete the dependents first"
        deletion = self.store.deletion(
            resource.plural,
            name,
            namespace=namespace,
            uid=preconditions.get("uid"),
            resource_version=preconditions.get("resourceVersion"),
            dry_run=self._dry_run(request, body),
            grace_period_seconds=grace_seconds,
            propagation_policy=policy,
        )
        if not deletion.removed:
            # kept, marked (finalizers, a grace period): the object, 202 only when the deprecated
            # orphanDependents said false (the handler's one case for Accepted), else 200
            return _json_response(deletion.obj, 202 if orphan in (False, "false") else 200)
        if resource.returns_deleted_object:
            return _json_response(deletion.obj)
        return _json_response(_deleted_status(resource, deletion.obj))

    async def _delete_collection(
        self, request: web.Request, resource: ResourceDef, namespace: str | None
    ) -> web.Response:
        body = await self._read_body(request) or {}
        matcher = self._matcher(request, resource)
        rv, listed = self.store.delete_collection(
            resource.plural,
            namespace=namespace,
            match=matcher,
            dry_run=self._dry_run(request, body),
            propagation_policy=_propagation_policy(request, body),
        )
        return _json_response(
            {
                "kind": resource.list_kind,
                "apiVersion": resource.api_version,
                "metadata": {"resourceVersion": str(rv)},
                "items": listed,
            }  # fmt: skip
        )

    # ------------------------------------------------------------------ list

    @staticmethod
    def _matcher(request: web.Request, resource: ResourceDef) -> Matcher | None:
        return combine(
            label_matcher(request.query.get("labelSelector")),
            field_matcher(request.query.get("fieldSelector"), resource),
        )

    def _list(self, request: web.Request, resource: ResourceDef, namespace: str | None) -> web.Response:
        query = request.query
        matcher = self._matcher(request, resource)
        rv_param = query.get("resourceVersion", "")
        rv_match = query.get("resourceVersionMatch", "")
        causes = list_option_causes(query, watch=False)
        if causes:
            raise invalid_list_options(causes)
        try:
            limit = int(query.get("limit", "0") or 0)
        except ValueError as error:
            raise bad_request("limit must be an integer") from error
        token = query.get("continue", "")
        at_rv: int | None = None
        start_after: tuple[str, str] | None = None
        if token:
            token_rv, start_after = _decode_continue(token, namespace)
            if token_rv > 0:
                if token_rv < self.store.compacted_rv:
                    fresh = _encode_continue(-1, start_after, namespace)
                    status = expired(_TOO_OLD_CONTINUE).to_status()
                    status["metadata"] = {"continue": fresh}
                    return _json_response(status, 410)
                at_rv = token_rv
        elif rv_param and rv_param != "0":
            try:
                wanted = int(rv_param)
            except ValueError as error:
                raise bad_request(f'invalid resource version "{rv_param}"') from error
            current = self.store.resource_version
            if wanted > current:
                raise ApiError(504, "Timeout", f"Too large resource version: {wanted}, current: {current}",
                               {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                                "retryAfterSeconds": 1})  # fmt: skip
            if rv_match == "Exact":
                at_rv = wanted
        page = self.store.page(
            resource.plural,
            namespace=namespace,
            at_rv=at_rv,
            after=start_after,
            limit=max(limit, 0),
            matcher=matcher,
        )
        snapshot_rv, entries, remaining = page.rv, page.entries, page.remaining
        continue_token = _encode_continue(snapshot_rv, entry_key(entries[-1]), namespace) if page.more else ""
        if _wants_table(request):
            return _json_response(
                tables.table(
                    resource,
                    [e.obj for e in entries],
                    include_object=self._include(request),
                    resource_version=str(snapshot_rv),
                    continue_token=continue_token,
                    remaining=remaining,
                    now=self.store.clock_now(),
                )
            )
        meta: Obj = {"resourceVersion": str(snapshot_rv)}
        if continue_token:
            meta["continue"] = continue_token
            if remaining is not None:
                meta["remainingItemCount"] = remaining
        head = dumps({"kind": resource.list_kind, "apiVersion": resource.api_version, "metadata": meta})
        # Like kube, list items carry no kind/apiVersion (the list has them); slice them off the cached JSON.
        type_meta = (
            b'{"kind":"'
            + resource.kind.encode()
            + b'","apiVersion":"'
            + resource.api_version.encode()
            + b'",'
        )
        cut = len(type_meta)
        items = b",".join(b"{" + e.raw[cut:] if e.raw.startswith(type_meta) else e.raw for e in entries)
        body = head[:-1] + b',"items":[' + items + b"]}"
        return _json_response(body)

    # ------------------------------------------------------------------ watch

    async def _watch(
        self, request: web.Request, resource: ResourceDef, namespace: str | None, *, name: str | None = None
    ) -> web.StreamResponse:
        matcher = self._matcher(request, resource)
        if name is not None:
            matcher = combine(matcher, lambda obj: bool(obj.get("metadata", {}).get("name") == name))
        params = parse_watch_params(
            request.query,
            resource,
            current_rv=self.store.resource_version,
            default_timeout=self.options.default_watch_timeout,
            matcher=matcher,
            as_table=_wants_table(request),
        )
        stream = WatchStream(self.store, resource, namespace, params)
        self._watches.add(stream)
        try:
            return await stream.serve(request, bookmark_interval=self.options.bookmark_interval)
        finally:
            self._watches.discard(stream)
