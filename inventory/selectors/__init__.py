"""Read queries over the mirror, by subject. Keyword-only, typed; views, the API and consumers call only these.

common.py    errors for bad filters, `clip` for untrusted strings, kind names
devices.py   the Devices list (filters), one device's detail, filter choices
pools.py     pools and what is left of their shared counters
classes.py   per DeviceClass: devices, allocated, tainted, free and headroom (the Overview and the API)
claims.py    ResourceClaims and one claim's results
rules.py     DeviceTaintRules and the devices they select
nodes.py     nodes: the list's counts per driver, one node's devices per NUMA node with partitions nested
pods.py      the Pods list (filters, counts), one pod: its claims, their devices and the taints it tolerates
search.py    the search box's providers for devices, pods, claims, nodes and DeviceTaintRules
objects.py   any mirrored object (YAML), watch health, the live version token
overview.py  the Overview's totals and what the cluster serves
"""
