"""A small typed client over the Kubernetes REST API that speaks raw JSON."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import urllib3
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config
from urllib3 import HTTPHeaderDict
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError, ProtocolError, ReadTimeoutError
from urllib3.exceptions import HTTPError as Urllib3HTTPError

from dra.kinds import BY_PLURAL, Kind
from dradash import fastjson

log = logging.getLogger(__name__)

JSON = dict[str, Any]
WatchEvent = tuple[str, JSON]

DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_REQUEST_TIMEOUT = 60.0
#: The field manager of every write dradash makes, so managedFields (and the maintenance audit, which reads
#: them) attribute its changes to "dradash", not to the HTTP library's User-Agent ("python-urllib3").
FIELD_MANAGER = "dradash"


#: A kind's place in the API (group, version, plural, scope); the table is `dra.kinds`.
Resource = Kind

#: The kinds the mirror lists and watches, in the order pages list them.
MIRRORED_KINDS: tuple[str, ...] = (
    "deviceclasses",
    "resourceslices",
    "resourceclaims",
    "resourceclaimtemplates",
    "devicetaintrules",
    "pods",
    "nodes",
    "poddisruptionbudgets",
    "resourcepoolstatusrequests",
)
KIND: dict[str, Resource] = {plural: BY_PLURAL[plural] for plural in MIRRORED_KINDS}


@dataclass(frozen=True)
class Identity:
    """Whom a request impersonates: sent as `Impersonate-User` and one `Impersonate-Group` per group, so the
    API server authorizes (and audits) the request as that user (the caller needs `impersonate` rights)."""

    user: str
    groups: tuple[str, ...] = ()

    def headers(self) -> list[tuple[str, str]]:
        return [("Impersonate-User", self.user), *(("Impersonate-Group", g) for g in self.groups)]


class KubeError(Exception):
    """An API error (the server's Status), or a transport failure (status 0)."""

    def __init__(self, status: int, reason: str, message: str, causes: list[JSON] | None = None) -> None:
        self.status = status
        self.reason = reason
        self.message = message
        self.causes = causes or []
        super().__init__(f"{status} {reason}: {message}" if status else f"{reason}: {message}")

    @classmethod
    def from_status(cls, status: int, body: bytes | JSON) -> KubeError:
        data: Any = body
        if isinstance(body, bytes | bytearray):
            try:
                data = json.loads(body)
            except ValueError:
                text = body.decode("utf-8", "replace")[:500]
                return cls(status, _default_reason(status), text)
        if not isinstance(data, dict):
            return cls(status, _default_reason(status), str(data)[:500])
        details = data.get("details") or {}
        return cls(
            int(data.get("code") or status),
            str(data.get("reason") or _default_reason(status)),
            str(data.get("message") or ""),
            list(details.get("causes") or []),
        )

    @property
    def is_gone(self) -> bool:
        """410: the resourceVersion (or continue token) is older than the server's history."""
        return self.status == 410

    @property
    def is_too_large_resource_version(self) -> bool:
        """The server has not reached the resourceVersion asked for (its Status names the cause
        ResourceVersionTooLarge, with code 504, or 410 from older servers): its history is behind ours."""
        if any(str(c.get("reason") or "") == "ResourceVersionTooLarge" for c in self.causes):
            return True
        return self.status in (410, 504) and "too large resource version" in self.message.lower()

    @property
    def is_forbidden(self) -> bool:
        return self.status == 403

    @property
    def is_unreachable(self) -> bool:
        """No HTTP answer at all: connection refused or reset, TLS failure, no bytes in time."""
        return self.status == 0 and self.reason in ("ConnectionError", "Timeout")


class KubeTimeout(KubeError):
    """No bytes arrived within the read timeout (the watch is considered dead)."""

    def __init__(self, message: str) -> None:
        super().__init__(0, "Timeout", message)


def _default_reason(status: int) -> str:
    return {
        400: "BadRequest",
        401: "Unauthorized",
        403: "Forbidden",
        404: "NotFound",
        405: "MethodNotAllowed",
        409: "Conflict",
        410: "Expired",
        415: "UnsupportedMediaType",
        422: "Invalid",
        429: "TooManyRequests",
        500: "InternalError",
        503: "ServiceUnavailable",
        504: "Timeout",
    }.get(status, "Unknown")


def _resource(kind: str) -> Resource:
    try:
        return BY_PLURAL[kind]
    except KeyError:
        raise ValueError(f"kind {kind!r} is not one of {', '.join(sorted(BY_PLURAL))}") from None


class KubeClient:
    """Typed list/watch/get/create/patch/delete over raw JSON. Thread-safe (one urllib3 pool).

    Writes carry `fieldManager=dradash`; any request may carry `as_user=Identity(...)` to impersonate."""

    def __init__(self, api_client: Any, *, field_manager: str = FIELD_MANAGER) -> None:
        self._api = api_client
        self._pool: urllib3.PoolManager = api_client.rest_client.pool_manager
        self.host: str = str(api_client.configuration.host)
        self.field_manager = field_manager
        # open watch streams → why they were interrupted (None: they were not); see interrupt_watches
        self._watches: dict[Any, str | None] = {}
        self._watches_lock = threading.Lock()

    # ------------------------------------------------------------------ plumbing

    def _prepare(
        self,
        method: str,
        path: str,
        query: dict[str, Any] | None,
        headers: dict[str, str] | None,
        as_user: Identity | None = None,
    ) -> tuple[str, HTTPHeaderDict]:
        header_params: dict[str, str] = {"Accept": "application/json", **(headers or {})}
        # param_serialize applies auth (bearer token refresh, exec plugins) and default headers.
        _method, url, header_params, _body, _post = self._api.param_serialize(
            method, path, header_params=header_params, auth_settings=["BearerToken"]
        )
        params = {k: v for k, v in (query or {}).items() if v is not None and v != ""}
        if params:
            url += "?" + urlencode({k: _query_value(v) for k, v in params.items()})
        prepared = HTTPHeaderDict(dict(header_params))
        if as_user is not None:
            # One header line per group: the API server reads repeated lines, not a comma-joined one.
            for name, value in as_user.headers():
                prepared.add(name, value)
        return str(url), prepared

    def _request(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: float = DEFAULT_REQUEST_TIMEOUT,
        as_user: Identity | None = None,
    ) -> JSON:
        headers = {"Content-Type": content_type} if body is not None else {}
        url, header_params = self._prepare(method, path, query, headers, as_user)
        payload = json.dumps(body).encode() if body is not None else None
        try:
            response = self._pool.request(
                method,
                url,
                body=payload,
                headers=header_params,
                # a TLS handshake counts as connecting: a server that hangs holds it as long
                timeout=urllib3.Timeout(connect=min(DEFAULT_CONNECT_TIMEOUT, timeout), read=timeout),
                retries=False,
                preload_content=True,
            )
        except NewConnectionError as exc:  # refused, no route (urllib3 makes it a ConnectTimeoutError too)
            raise KubeError(0, "ConnectionError", f"{method} {path}: {exc}") from exc
        except (ReadTimeoutError, ConnectTimeoutError) as exc:
            raise KubeTimeout(f"{method} {path}: no answer within {timeout:g}s") from exc
        except (Urllib3HTTPError, OSError) as exc:
            raise KubeError(0, "ConnectionError", f"{method} {path}: {exc}") from exc
        data = response.data
        if response.status >= 400:
            raise KubeError.from_status(response.status, data)
        try:
            parsed = fastjson.loads(data) if data else {}
        except ValueError as exc:
            raise KubeError(response.status, "InvalidResponse", f"{method} {path}: body is not JSON") from exc
        if not isinstance(parsed, dict):
            raise KubeError(response.status, "InvalidResponse", f"{method} {path}: body is not an object")
        return parsed

    # ------------------------------------------------------------------ reads

    def list_objects(
        self,
        kind: str,
        *,
        limit: int | None = None,
        continue_: str | None = None,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout: float = DEFAULT_REQUEST_TIMEOUT,
    ) -> tuple[list[JSON], str, str]:
        """One page: (items, list resourceVersion, continue token or "")."""
        resource = _resource(kind)
        body = self._request(
            "GET",
            resource.path(namespace=namespace),
            query={
                "limit": limit,
                "continue": continue_,
                "labelSelector": label_selector,
                "fieldSelector": field_selector,
                # A continue token carries its own resourceVersion; the server refuses both at once.
                "resourceVersion": None if continue_ else resource_version,
                "resourceVersionMatch": None if continue_ else resource_version_match,
            },
            timeout=timeout,
        )
        metadata = body.get("metadata") or {}
        items = body.get("items") or []
        # List items omit apiVersion/kind; put them back so stored objects look like `kubectl get -o json`.
        for item in items:
            item.setdefault("apiVersion", resource.api_version)
            item.setdefault("kind", resource.kind)
        return items, str(metadata.get("resourceVersion") or ""), str(metadata.get("continue") or "")

    def list_all(
        self, kind: str, *, page_size: int = 500, resource_version: str = "", exact: bool = False
    ) -> tuple[list[JSON], str]:
        """Every object of `kind`, paginated; the RV of the consistent snapshot all pages share.

        Without `resource_version` the newest state (a consistent read); with it and `exact`, the state at
        exactly that resourceVersion (410 once the server's history no longer reaches back that far)."""
        items: list[JSON] = []
        list_rv = ""
        for page, rv in self.list_pages(
            kind, page_size=page_size, resource_version=resource_version, exact=exact
        ):
            items.extend(page)
            list_rv = list_rv or rv
        return items, list_rv

    def list_pages(
        self, kind: str, *, page_size: int = 500, resource_version: str = "", exact: bool = False
    ) -> Iterator[tuple[list[JSON], str]]:
        """`list_all` one page at a time, as each arrives: (items, the RV all pages share). Only the page
        being consumed is held, so a caller that writes each page keeps memory bounded by the page size."""
        continue_ = ""
        list_rv = ""
        while True:
            page, rv, continue_ = self.list_objects(
                kind,
                limit=page_size,
                continue_=continue_ or None,
                resource_version=resource_version or None,
                resource_version_match="Exact" if exact and resource_version else None,
            )
            list_rv = list_rv or rv
            yield page, list_rv
            if not continue_:
                return

    def get_object(
        self, kind: str, name: str, *, namespace: str | None = None, as_user: Identity | None = None
    ) -> JSON:
        return self._request("GET", _resource(kind).path(namespace=namespace, name=name), as_user=as_user)

    def watch_objects(
        self,
        kind: str,
        *,
        resource_version: str,
        timeout_seconds: int | None = None,
        allow_bookmarks: bool = True,
        read_timeout: float | None = None,
    ) -> Iterator[WatchEvent]:
        """Stream (type, object) events after `resource_version` until the server closes the stream.

        An ERROR event is raised as KubeError (410 Expired → `.is_gone`). `read_timeout` bounds the
        silence between bytes; exceeding it raises KubeTimeout.
        """
        resource = _resource(kind)
        url, headers = self._prepare(
            "GET",
            resource.path(),
            query={
                "watch": "true",
                "resourceVersion": resource_version,
                "allowWatchBookmarks": "true" if allow_bookmarks else None,
                "timeoutSeconds": timeout_seconds,
            },
            headers=None,
        )
        try:
            response = self._pool.request(
                "GET",
                url,
                headers=headers,
                timeout=urllib3.Timeout(connect=DEFAULT_CONNECT_TIMEOUT, read=read_timeout),
                retries=False,
                preload_content=False,
            )
        except (Urllib3HTTPError, OSError) as exc:
            raise KubeError(0, "ConnectionError", f"watch {kind}: {exc}") from exc
        with self._watches_lock:
            self._watches[response] = None
        try:
            if response.status >= 400:
                raise KubeError.from_status(response.status, response.read())
            try:
                yield from _split_events(response, kind)
            except KubeError as exc:
                raise self._interrupted(response, kind) or exc from exc
            # a stream cut by interrupt_watches may end as if the server closed it
            interrupted = self._interrupted(response, kind)
            if interrupted is not None:
                raise interrupted
        finally:
            with self._watches_lock:
                reason = self._watches.pop(response, None)
            if reason is not None:
                response.close()  # its connection is half shut: not one to reuse
            response.release_conn()

    def _interrupted(self, response: Any, kind: str) -> KubeError | None:
        with self._watches_lock:
            reason = self._watches.get(response)
        return None if reason is None else KubeError(0, "ConnectionError", f"watch {kind}: {reason}")

    def interrupt_watches(self, reason: str) -> int:
        """End every open watch stream now, each with KubeError(0, "ConnectionError", reason): the API
        server stopped answering (the mirror's heartbeat), and a watch waiting out its inactivity timeout
        (two minutes: real servers send a bookmark about every minute) would keep its kind "synced" for as
        long. Returns how many streams it ended."""
        with self._watches_lock:
            ended = [response for response, why in self._watches.items() if why is None]
            for response in ended:
                self._watches[response] = reason
        for response in ended:
            try:
                response.shutdown()  # wakes the thread blocked reading it
            except Exception:  # an already closed stream: its reader ends anyway
                log.debug("interrupting a watch stream failed", exc_info=True)
        return len(ended)

    # ------------------------------------------------------------------ writes

    def _write_query(self, dry_run: bool) -> dict[str, Any]:
        return {"dryRun": "All" if dry_run else None, "fieldManager": self.field_manager}

    def create_object(
        self,
        kind: str,
        obj: JSON,
        *,
        dry_run: bool = False,
        namespace: str | None = None,
        as_user: Identity | None = None,
        subresource: str = "",
        name: str | None = None,
    ) -> JSON:
        """POST `obj`; `subresource` (with `name`) for e.g. pods/eviction or serviceaccounts/token."""
        resource = _resource(kind)
        if resource.review:
            query: dict[str, Any] = {}  # reviews take no fieldManager (nothing is stored)
        else:
            query = self._write_query(dry_run)
        return self._request(
            "POST",
            resource.path(
                namespace=namespace or (obj.get("metadata") or {}).get("namespace"),
                name=name,
                subresource=subresource,
            ),
            query=query,
            body=obj,
            as_user=as_user,
        )

    def evict_pod(
        self,
        namespace: str,
        name: str,
        *,
        uid: str | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
        as_user: Identity | None = None,
    ) -> JSON:
        """POST a policy/v1 Eviction to `pods/NAME/eviction` — the request `CoreV1Api.
        create_namespaced_pod_eviction` makes (same path, body and auth), sent through this client's pool so
        impersonation carries one `Impersonate-Group` line per group. The API server answers 201, or 429 while
        a PodDisruptionBudget allows no disruption (KubeError with the API's message and causes); `uid` is a
        precondition, so a pod recreated under the same name is never evicted by mistake."""
        options: JSON = {}
        if uid:
            options["preconditions"] = {"uid": uid}
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        body: JSON = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        }
        if options:
            body["deleteOptions"] = options
        return self.create_object(
            "pods",
            body,
            namespace=namespace,
            name=name,
            subresource="eviction",
            dry_run=dry_run,
            as_user=as_user,
        )

    def replace_object(
        self,
        kind: str,
        name: str,
        obj: JSON,
        *,
        namespace: str | None = None,
        as_user: Identity | None = None,
    ) -> JSON:
        """PUT: an update guarded by the object's metadata.resourceVersion (409 Conflict when it moved)."""
        return self._request(
            "PUT",
            _resource(kind).path(namespace=namespace, name=name),
            query=self._write_query(False),
            body=obj,
            as_user=as_user,
        )

    def patch_object(
        self,
        kind: str,
        name: str,
        patch: JSON | list[JSON],
        *,
        content_type: str = "application/merge-patch+json",
        dry_run: bool = False,
        namespace: str | None = None,
        subresource: str = "",
        as_user: Identity | None = None,
    ) -> JSON:
        return self._request(
            "PATCH",
            _resource(kind).path(namespace=namespace, name=name, subresource=subresource),
            query=self._write_query(dry_run),
            body=patch,
            content_type=content_type,
            as_user=as_user,
        )

    def delete_object(
        self,
        kind: str,
        name: str,
        *,
        dry_run: bool = False,
        uid: str | None = None,
        namespace: str | None = None,
        as_user: Identity | None = None,
    ) -> JSON:
        body: JSON = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if uid:
            body["preconditions"] = {"uid": uid}
        if dry_run:
            body["dryRun"] = ["All"]
        return self._request(
            "DELETE",
            _resource(kind).path(namespace=namespace, name=name),
            query={"dryRun": "All" if dry_run else None},
            body=body,
            as_user=as_user,
        )

    def can_i(
        self,
        *,
        verb: str,
        resource: str,
        group: str = "",
        namespace: str = "",
        subresource: str = "",
        as_user: Identity | None = None,
    ) -> bool:
        """A SelfSubjectAccessReview (as `as_user` when given): may this identity do `verb` on `resource`?"""
        attributes = {"verb": verb, "resource": resource, "group": group}
        if namespace:
            attributes["namespace"] = namespace
        if subresource:
            attributes["subresource"] = subresource
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attributes},
        }
        answer = self.create_object("selfsubjectaccessreviews", review, as_user=as_user)
        return bool((answer.get("status") or {}).get("allowed"))

    # ------------------------------------------------------------------ discovery

    def server_version(self, *, timeout: float = DEFAULT_REQUEST_TIMEOUT) -> JSON:
        return self._request("GET", "/version", timeout=timeout)

    def api_versions(self) -> list[str]:
        """Every group/version the server serves, as `kubectl api-versions` prints them (sorted)."""
        versions = {f"{v}" for v in self._request("GET", "/api").get("versions") or []}
        for group in self._request("GET", "/apis").get("groups") or []:
            versions.update(
                str(v.get("groupVersion")) for v in group.get("versions") or [] if v.get("groupVersion")
            )
        return sorted(versions)

    def served_resources(self, group_version: str) -> set[str]:
        """Plural names served under `group_version` ("resource.k8s.io/v1alpha3"); empty if not served."""
        path = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
        try:
            body = self._request("GET", path)
        except KubeError as exc:
            if exc.status == 404:
                return set()
            raise
        return {str(r.get("name")) for r in body.get("resources") or [] if "/" not in str(r.get("name"))}

    def is_served(self, kind: str) -> bool:
        resource = _resource(kind)
        return resource.plural in self.served_resources(resource.group_version)

    def close(self) -> None:
        self._pool.clear()


def _split_events(response: Any, kind: str) -> Iterator[WatchEvent]:
    buffer = b""
    try:
        for chunk in response.stream(64 * 1024, decode_content=True):
            buffer += chunk
            while True:
                newline = buffer.find(b"\n")
                if newline < 0:
                    break
                line, buffer = buffer[:newline], buffer[newline + 1 :]
                if line.strip():
                    yield _event(line, kind)
    except ReadTimeoutError as exc:
        raise KubeTimeout(f"watch {kind}: no data within the read timeout") from exc
    except TimeoutError as exc:
        raise KubeTimeout(f"watch {kind}: no data within the read timeout") from exc
    except (ProtocolError, Urllib3HTTPError, OSError) as exc:
        raise KubeError(0, "ConnectionError", f"watch {kind}: stream broken: {exc}") from exc
    if buffer.strip():
        yield _event(buffer, kind)


def _event(line: bytes, kind: str) -> WatchEvent:
    try:
        data = fastjson.loads(line)
    except ValueError as exc:
        raise KubeError(0, "InvalidResponse", f"watch {kind}: a line is not JSON") from exc
    obj = (data.get("object") or {}) if isinstance(data, dict) else None
    if not isinstance(obj, dict):
        # JSON, but not a watch event (`0`, `null`, an object that is a list): as broken as a cut line.
        raise KubeError(0, "InvalidResponse", f"watch {kind}: a line is not a watch event")
    event_type = str(data.get("type", ""))
    if event_type == "ERROR":
        raise KubeError.from_status(int(obj.get("code") or 500), obj)
    resource = KIND.get(kind)
    if resource is not None and isinstance(obj, dict):
        obj.setdefault("apiVersion", resource.api_version)
        obj.setdefault("kind", resource.kind)
    return event_type, obj


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def connect(kubeconfig: str | None = None, context: str | None = None) -> KubeClient:
    """A client from a kubeconfig file (and context), or the in-cluster service account when none is given."""
    configuration = k8s_client.Configuration()
    if kubeconfig:
        try:
            k8s_config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=kubeconfig,
                context=context or None,
                client_configuration=configuration,
                persist_config=False,
            )
        except (k8s_config.ConfigException, OSError, ValueError, TypeError) as exc:
            raise KubeError(0, "ConfigError", f"kubeconfig {kubeconfig}: {exc}") from exc
    else:
        try:
            k8s_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        except k8s_config.ConfigException as exc:
            raise KubeError(
                0, "ConfigError", f"no kubeconfig given and not running in a cluster: {exc}"
            ) from exc
    configuration.connection_pool_maxsize = 32  # one watch per kind plus lists and writes
    return KubeClient(k8s_client.ApiClient(configuration))
