"""simcluster: a simulated Kubernetes v1.37 API server with DRA controllers, for the demo and the tests.

Entry points:

* ``python -m simcluster --topology demo --listen 127.0.0.1:PORT --kubeconfig PATH`` serves in the
  foreground (``--topology none`` for an empty cluster, ``--no-controllers`` for a static world).
* ``simcluster.testing.run_simcluster(topology, kubeconfig_path, **options)``: a context manager that
  runs the server on a free loopback port in a background thread; the handle has ``url``, ``port``,
  ``kubeconfig_path``, ``store``, ``faults`` and ``controllers``.
* ``simcluster.store.Store``: the in-process API controllers use (create/get/list/update/patch/delete,
  subscribe, resource_version), with kube-apiserver semantics.
* HTTP fault hooks under ``/_simcluster/`` (POST): ``compact``, ``drop-watches``, ``restart``,
  ``latency?ms=N``.
"""
