"""Bulk writes for the mirror without Django's per-value compiler overhead.

Profiling the initial sync of 10,000 devices showed `bulk_create`/`bulk_update` spending most of their
time preparing values one by one (≈20 µs each) and `bulk_update` building CASE expressions. These helpers
serialise a column once per value (orjson for JSON columns, `dradash.fastjson`; one conversion per
distinct datetime object) and hand the rows to `executemany`, as
`INSERT … ON CONFLICT … DO UPDATE` (SQLite ≥ 3.24 and PostgreSQL) or `UPDATE … WHERE id = %s`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter
from typing import Any

from django.db import connection, models

from dradash import fastjson

CHUNK = 2000
COPY_MIN_ROWS = 200


def _converter(field: models.Field[Any, Any]) -> Callable[[Any], Any]:
    if isinstance(field, models.JSONField):
        dumps = fastjson.dumps

        def convert(value: Any) -> Any:
            if value is None and field.null:
                return None
            if not value and isinstance(value, list | dict):  # most derived columns are empty
                return "[]" if isinstance(value, list) else "{}"
            return dumps(value)

        return convert
    if isinstance(field, models.BooleanField | models.CharField | models.TextField | models.IntegerField):
        return _same
    last: list[Any] = [object(), None]  # (value, converted): a batch stamps every row with one `now`

    def prepare(value: Any) -> Any:
        if value is not last[0]:
            last[:] = [value, field.get_db_prep_save(value, connection)]
        return last[1]

    return prepare


def _same(value: Any) -> Any:
    return value


def _row_values(
    fields: Sequence[str], converters: Sequence[Callable[[Any], Any]]
) -> Callable[[Any], list[Any]]:
    """A row object → its column values: one `attrgetter` call, then only the columns that need a
    conversion (JSON, datetimes) converted."""
    get = attrgetter(*fields)
    convert = [(i, c) for i, c in enumerate(converters) if c is not _same]
    if len(fields) == 1:
        only = convert[0][1] if convert else _same
        return lambda row: [only(get(row))]

    def values(row: Any) -> list[Any]:
        out = list(get(row))
        for i, c in convert:
            out[i] = c(out[i])
        return out

    return values


def _columns(model: type[models.Model], names: Sequence[str]) -> list[tuple[str, Callable[[Any], Any]]]:
    meta = model._meta
    return [(meta.get_field(n).column, _converter(meta.get_field(n))) for n in names]  # type: ignore[arg-type]


def upsert(
    model: type[models.Model],
    rows: Iterable[Any],
    *,
    fields: Sequence[str],
    conflict: Sequence[str],
    update: Sequence[str] | None = None,
) -> int:
    """Insert `rows` (objects with the fields as attributes), updating `update` columns on conflict."""
    columns = _columns(model, fields)
    table = connection.ops.quote_name(model._meta.db_table)
    quoted = [connection.ops.quote_name(c) for c, _ in columns]
    conflict_cols = ", ".join(connection.ops.quote_name(model._meta.get_field(n).column) for n in conflict)  # type: ignore[union-attr]
    updates = update if update is not None else [f for f in fields if f not in conflict]
    set_clause = ", ".join(
        f"{connection.ops.quote_name(model._meta.get_field(n).column)} = excluded."  # type: ignore[union-attr]
        f"{connection.ops.quote_name(model._meta.get_field(n).column)}"  # type: ignore[union-attr]
        for n in updates
    )
    suffix = f" ON CONFLICT ({conflict_cols}) DO " + (f"UPDATE SET {set_clause}" if set_clause else "NOTHING")
    values = _row_values(fields, [convert for _col, convert in columns])
    return _insert_rows(table, quoted, suffix, (values(row) for row in rows))


def insert(model: type[models.Model], rows: Iterable[Any], *, fields: Sequence[str]) -> int:
    columns = _columns(model, fields)
    table = connection.ops.quote_name(model._meta.db_table)
    quoted = [connection.ops.quote_name(c) for c, _ in columns]
    values = _row_values(fields, [convert for _col, convert in columns])
    return _insert_rows(table, quoted, "", (values(row) for row in rows))


def update(model: type[models.Model], rows: Iterable[Any], *, fields: Sequence[str]) -> int:
    """`UPDATE … SET fields WHERE id = row.pk` for each row.

    PostgreSQL, from COPY_MIN_ROWS rows: COPY into a temporary table and one `UPDATE … FROM` — one round
    trip instead of one per row, and one statement for the device counters' statement triggers
    (migration `read_counters`) instead of one per row."""
    columns = _columns(model, fields)
    table = connection.ops.quote_name(model._meta.db_table)
    quote = connection.ops.quote_name
    values = _row_values([*fields, "pk"], [*(convert for _col, convert in columns), _same])
    params = [values(row) for row in rows]
    if connection.vendor == "postgresql" and len(params) >= COPY_MIN_ROWS:
        return _copy_update(table, [quote(c) for c, _ in columns], params)
    sets = ", ".join(f"{quote(c)} = %s" for c, _ in columns)
    sql = f"UPDATE {table} SET {sets} WHERE {quote('id')} = %s"
    return _executemany(sql, params)


def _copy_update(table: str, columns: list[str], params: list[list[Any]]) -> int:
    temporary = connection.ops.quote_name("_mirror_update")
    cols = ", ".join(columns)
    pk = connection.ops.quote_name("id")
    sets = ", ".join(f"{c} = s.{c}" for c in columns)
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TEMPORARY TABLE {temporary} AS SELECT {cols}, {pk} FROM {table} WITH NO DATA")
        try:
            with cursor.cursor.copy(f"COPY {temporary} ({cols}, {pk}) FROM STDIN") as copy:
                for values in params:
                    copy.write_row(values)
            cursor.execute(f"UPDATE {table} AS t SET {sets} FROM {temporary} AS s WHERE t.{pk} = s.{pk}")
        finally:
            cursor.execute(f"DROP TABLE IF EXISTS {temporary}")
    return len(params)


def _insert_rows(table: str, columns: list[str], suffix: str, params: Iterable[list[Any]]) -> int:
    """SQLite: one prepared statement through executemany. PostgreSQL: COPY into a temporary table,
    then one INSERT … SELECT (with the ON CONFLICT suffix).

    psycopg's executemany still runs one INSERT per row on the server (~0.2 ms each), and multi-row
    VALUES with thousands of parameters was slower still; COPY streams the rows in one round trip.
    """
    cols = ", ".join(columns)
    rows = list(params)
    row = "(" + ", ".join(["%s"] * len(columns)) + ")"
    if connection.vendor == "postgresql" and not suffix and 1 < len(rows) < COPY_MIN_ROWS:
        # A plain insert of a few rows (a chunk of pools' availability): one statement, one round trip.
        # (Not with ON CONFLICT: one statement may not update a row twice, one row after another may.)
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {table} ({cols}) VALUES {', '.join([row] * len(rows))}",
                [value for values in rows for value in values],
            )
        return len(rows)
    if connection.vendor != "postgresql" or len(rows) < COPY_MIN_ROWS:
        # Small batches (a watch event or two): a temporary table costs more round trips than it saves.
        return _executemany(f"INSERT INTO {table} ({cols}) VALUES {row}{suffix}", rows)
    temporary = connection.ops.quote_name("_mirror_load")
    count = 0
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TEMPORARY TABLE {temporary} AS SELECT {cols} FROM {table} WITH NO DATA")
        try:
            with cursor.cursor.copy(f"COPY {temporary} ({cols}) FROM STDIN") as copy:
                for values in rows:
                    copy.write_row(values)
                    count += 1
            cursor.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM {temporary}{suffix}")
        finally:
            cursor.execute(f"DROP TABLE IF EXISTS {temporary}")
    return count


def _executemany(sql: str, params: Iterable[list[Any]]) -> int:
    count = 0
    batch: list[list[Any]] = []
    with connection.cursor() as cursor:
        for row in params:
            batch.append(row)
            if len(batch) >= CHUNK:
                cursor.executemany(sql, batch)
                count += len(batch)
                batch = []
        if batch:
            cursor.executemany(sql, batch)
            count += len(batch)
    return count
