"""Assemble a running simcluster: store, topology seed, controllers and the HTTP server on its own loop."""

from __future__ import annotations

import asyncio
import gc
import importlib
import importlib.util
import logging
import shutil
import ssl
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from simcluster.errors import ApiError
from simcluster.faults import Faults
from simcluster.kubeconfig import write_kubeconfig
from simcluster.pki import Pki, load_or_create
from simcluster.rbac import seed_bootstrap_policy
from simcluster.server import ServerOptions, SimServer
from simcluster.store import Store

log = logging.getLogger(__name__)


def seed_topology(store: Store, topology: Any) -> None:
    """Create the topology's namespaces, nodes, classes and workloads (existing ones are kept).

    Each node is registered as its kubelet would: condition times set, and its Lease in kube-node-lease
    (`kubectl describe node` reads both)."""
    for plural, obj in topology.seed_objects():
        if plural == "nodes":
            now = store.now()
            for condition in obj["status"].get("conditions") or []:
                condition.setdefault("lastHeartbeatTime", now)
                condition.setdefault("lastTransitionTime", now)
        try:
            created = store.create(plural, obj)
        except ApiError as error:
            if error.reason != "AlreadyExists":
                raise
            continue
        if plural == "nodes":
            _create_node_lease(store, created)


def _create_node_lease(store: Store, node: dict[str, Any]) -> None:
    name, uid = node["metadata"]["name"], node["metadata"]["uid"]
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": name,
            "namespace": "kube-node-lease",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": uid}],
        },
        "spec": {"holderIdentity": name, "leaseDurationSeconds": 40, "renewTime": store.now()},
    }
    try:
        store.create("leases", lease)
    except ApiError as error:
        if error.reason != "AlreadyExists":
            raise


def load_world(store: Store, topology_name: str | None, *, controllers: bool, options: dict[str, Any]) -> Any:
    """Load and seed a topology, then start the controllers when that package provides them.

    Returns whatever `simcluster.controllers.start_all` returned, or None.
    """
    if not topology_name or topology_name == "none":
        topology = None
    else:
        topology_module = _import_or_log("simcluster.topology")
        if topology_module is None:
            log.warning("simcluster.topology is not available; starting with an empty cluster")
            return None
        topology = topology_module.load_topology(topology_name)
        seed_topology(store, topology)
    # The controllers package imports the driver; importing it first keeps that import order.
    controllers_module = _import_or_log("simcluster.controllers")
    start_all = getattr(controllers_module, "start_all", None)
    if controllers and start_all is not None:
        # A simulated kubelet runs among the controllers: deleting a running pod becomes graceful.
        store.graceful_pod_deletion = True
        return start_all(store, topology, options)
    if topology is not None:
        driver_module = _import_or_log("simcluster.controllers.driver")
        if driver_module is not None:
            driver_module.Driver(store, topology).publish_all()  # a static world: slices, nothing moves
    return None


def load_optional(name: str) -> ModuleType | None:
    """Import a sibling module another room owns, or None when it does not exist."""
    try:
        if importlib.util.find_spec(name) is None:
            return None
    except ModuleNotFoundError:
        return None
    return importlib.import_module(name)


def _import_or_log(name: str) -> Any:
    """Another room's module, or None (logged) while it is missing or does not import."""
    try:
        return load_optional(name)
    except ImportError:
        log.exception("cannot import %s; continuing without it", name)
        return None


def stop_controllers(controllers: Any) -> None:
    for method in ("stop", "close", "stop_all"):
        stop = getattr(controllers, method, None)
        if callable(stop):
            stop()
            return


@dataclass
class SimCluster:
    """A running simcluster: its URL, store, fault hooks and controllers."""

    store: Store
    server: SimServer
    loop: asyncio.AbstractEventLoop
    thread: threading.Thread
    kubeconfig_path: Path | None
    faults: Faults
    controllers: Any = None
    #: the CA, serving certificate and signing keys (None with `insecure_http`)
    pki: Pki | None = None
    _own_pki_dir: Path | None = field(default=None, repr=False)
    _frozen: bool = field(default=False, repr=False)
    _stopped: bool = field(default=False, repr=False)

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def admin_token(self) -> str:
        """The admin's bearer token (user kubernetes-admin in system:masters)."""
        if self.pki is None:
            raise RuntimeError("simcluster runs with --insecure-http: there are no credentials")
        return self.pki.admin_token

    def user_kubeconfig(
        self,
        path: Path,
        *,
        user: str | None = None,
        groups: tuple[str, ...] = (),
        token: str | None = None,
        namespace: str = "default",
    ) -> Path:
        """Write a kubeconfig for someone other than the admin: a client certificate for `user` (CN) in
        `groups` (O) signed by the cluster CA, or a bearer `token` (e.g. from `kubectl create token`)."""
        if self.pki is None:
            raise RuntimeError("simcluster runs with --insecure-http: there are no credentials")
        if (user is None) == (token is None):
            raise ValueError("give exactly one of user or token")
        cert = self.pki.issue_client_cert(user, groups) if user is not None else None
        return write_kubeconfig(path, self.url, pki=self.pki, namespace=namespace, token=token,
                                user=user or "token-user", client_cert=cert)  # fmt: skip

    def ssl_context(self, *, admin: bool = True) -> ssl.SSLContext | None:
        """A client TLS context trusting the cluster CA, presenting the admin certificate unless admin=False."""
        return self.pki.client_context(admin=admin) if self.pki is not None else None

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        # Stop listening first: clients see the server go at once, even while a controller finishes a pass.
        if self.loop.is_running():
            asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(30)
        if self.controllers is not None:
            stop_controllers(self.controllers)
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)
        if self._own_pki_dir is not None:
            shutil.rmtree(self._own_pki_dir, ignore_errors=True)
        if self._frozen:
            gc.unfreeze()  # what the stopped world leaves in cycles can be collected again


def start_server_thread(
    store: Store,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    options: ServerOptions | None = None,
    pki: Pki | None = None,
) -> tuple[SimServer, asyncio.AbstractEventLoop, threading.Thread]:
    """Run the HTTP server on a fresh event loop in a daemon thread; return once it listens."""
    server = SimServer(store, host=host, port=port, options=options, pki=pki)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(server.start())
        except BaseException as error:  # report bind errors to the caller
            failure.append(error)
            ready.set()
            return
        ready.set()
        loop.run_forever()
        loop.close()

    thread = threading.Thread(target=run, name=f"simcluster-http-{port}", daemon=True)
    thread.start()
    if not ready.wait(60):
        raise TimeoutError("simcluster: the HTTP server did not start within 60 s")
    if failure:
        raise failure[0]
    return server, loop, thread


def start_simcluster(
    *,
    topology: str | None,
    kubeconfig_path: Path | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    controllers: bool = True,
    history_size: int = 10_000,
    bookmark_interval: float = 10.0,
    default_watch_timeout: float = 1800.0,
    pki_dir: Path | None = None,
    insecure_http: bool = False,
    freeze_world: bool = False,
    **controller_options: Any,
) -> SimCluster:
    """Start a simcluster. It serves HTTPS with a CA of its own, authenticates and authorizes every request;
    the CA, serving certificate and signing keys live in `pki_dir` (reused when it holds them; default a
    temporary directory removed on stop). `insecure_http` serves plain HTTP without any auth (debugging).

    `freeze_world` (a process that runs one simcluster, as `python -m simcluster`): once the world is
    loaded, move everything alive out of the cyclic garbage collector's reach (`gc.freeze`). A large
    world is hundreds of thousands of long-lived dicts, and every full collection walked them again:
    at `scale:3000` each took 0.5 s, a fifth of the scheduler's time in a burst. `stop()` unfreezes (every
    frozen object of the process, not only the world's), so what the stopped world leaves in cycles is
    collected."""
    own_pki: Path | None = None
    pki: Pki | None = None
    if not insecure_http:
        if pki_dir is None:
            pki_dir = own_pki = Path(tempfile.mkdtemp(prefix="simcluster-pki-"))
        pki = load_or_create(pki_dir, (host,))
    clock = controller_options.get("clock")  # a controllers Clock (e.g. FakeClock): the store shares it
    store = Store(history_size=history_size, clock=clock.now if clock is not None else None)
    if "features" in controller_options:
        store.features = frozenset(controller_options["features"])
    seed_bootstrap_policy(store)
    started = load_world(store, topology, controllers=controllers, options=controller_options)
    if freeze_world:
        gc.collect()
        gc.freeze()
    options = ServerOptions(bookmark_interval=bookmark_interval, default_watch_timeout=default_watch_timeout)
    try:
        server, loop, thread = start_server_thread(store, host=host, port=port, options=options, pki=pki)
    except BaseException:
        if started is not None:
            stop_controllers(started)
        if own_pki is not None:
            shutil.rmtree(own_pki, ignore_errors=True)
        raise
    server.driver = getattr(started, "driver", None)
    if kubeconfig_path is not None:
        write_kubeconfig(kubeconfig_path, server.url, pki=pki)
    return SimCluster(
        store=store,
        server=server,
        loop=loop,
        thread=thread,
        kubeconfig_path=kubeconfig_path,
        faults=Faults(server, loop),
        controllers=started,
        pki=pki,
        _own_pki_dir=own_pki,
        _frozen=freeze_world,
    )
