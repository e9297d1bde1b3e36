"""simcluster: a simulated Kubernetes v1.37 API server with DRA controllers, for the demo and the tests.

Entry points:

* ``python -m simcluster --topology demo --listen 127.0.0.1:PORT --kubeconfig PATH [--pki-dir DIR]``
  serves in the foreground (``--topology none`` for an empty cluster, ``--no-controllers`` for a static
  world, where a deleted namespace stays Terminating: no namespace controller empties it). It serves HTTPS
  with a CA it makes (or reuses from ``--pki-dir``), authenticates (client certificates, the admin token,
  ServiceAccount tokens) and authorizes with RBAC like a real cluster;
  ``--insecure-http`` turns all of that off for debugging.
* ``simcluster.testing.run_simcluster(topology, kubeconfig_path, **options)``: a context manager that
  runs the server on a free loopback port in a background thread; the handle has ``url``, ``port``,
  ``kubeconfig_path``, ``store``, ``faults``, ``controllers``, ``pki``, ``admin_token`` and
  ``ssl_context()`` (a client context with the CA and the admin certificate).
* ``simcluster.store.Store``: the in-process API controllers use (create/get/list/update/patch/delete,
  subscribe, resource_version), with kube-apiserver semantics; it bypasses authorization.
* HTTP fault hooks under ``/_simcluster/`` (POST, admin only): ``compact``, ``drop-watches``, ``restart``,
  ``latency?ms=N``, ``device-unhealthy``/``device-healthy``; ``python -m simcluster ctl`` calls them with a
  kubeconfig's credentials.
"""
