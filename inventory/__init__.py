"""What is in the cluster: the read side.

kube/        cluster access, the only package that imports `kubernetes` (raw JSON)
mirror/      list+watch into the database and the rows derived from it (reflector, writer, runner,
             sql, derive/ by subject)
selectors/   read queries by subject (devices, pools, classes, claims, rules, nodes, objects, overview)
tables.py    the Devices table, declared once (rows, exports, API fields, Tabulator columns)
filters.py   the FilterSets the pages and the API share
models.py    the mirrored objects and the derived rows
api/, views.py, consumers.py, urls.py, routing.py   thin: they call selectors
"""
