"""The rules of Kubernetes Dynamic Resource Allocation (v1.37), each written once.

Pure Python: no Django, no ``kubernetes`` client, and no import of any other package of this
repository. Every room — inventory, maintenance, allocation and simcluster — asks these modules,
so the inventory's "free", the what-if's "fits", the maintenance preview's "evicted at" and the
simulated scheduler and eviction controller cannot disagree.

* `dra.kinds` — the one table of Kubernetes kinds (group, version, plural, scope, subresources).
* `dra.quantity` — one exact Kubernetes Quantity.
* `dra.taints` — taints and tolerations, effective taints with provenance, NoExecute eviction time.
* `dra.selection` — which devices a DeviceTaintRule selects; node selectors and label selectors.
* `dra.objects` — a ResourceSlice as device rows; pools (generation, completeness, validity).
* `dra.allocator` — the structured allocator (snapshot in, AllocationResult JSON out), CEL inside.
"""
