"""The mirror: the cluster's objects, list+watched into the database, and the rows derived from them.

reflector.py  list+watch of one kind, client-go semantics; pure (no Django)
writer.py     `BatchWriter`: one transaction per batch of watch events, derived rows, broadcast
runner.py     `Mirror`: one reflector thread per kind and the writer thread; `wait_for_sync`
sql.py        bulk upserts without Django's per-value overhead
derive/       the derived rows, one module per subject (pools and devices, claims, taints, classes,
              health, availability)
"""
