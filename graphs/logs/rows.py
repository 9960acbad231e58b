"""How numbered lines reach the table: by COPY on PostgreSQL, else by one INSERT that skips a clash.

A line's row is what numbering made of it — its JSON text, encoded once, and its seq, ts and event —
so storing a line adds no encoding of its own. Two processes writing one log at the same moment meet
on the unique (log, seq): the INSERT skips the lines that lost and says which, for the writer to
renumber; COPY, which cannot skip a row, is undone and the INSERT does it.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any

import psycopg
from django.db import IntegrityError, connection, transaction

from graphs.logs.numbering import _Line
from graphs.models import ExecutionLogLine

# On PostgreSQL this many lines or more go by COPY; fewer (a line or two in a caller's transaction) by one INSERT.
COPY_MIN_LINES = 8


def _lines_insert(lines: list[_Line]) -> list[_Line]:
    """Store the lines at once; return those whose seq another process had taken meanwhile (not stored).

    On PostgreSQL a drain of ``COPY_MIN_LINES`` or more goes by COPY, the rows written as they were
    encoded when numbered: a fraction of the client's work of an INSERT with six parameters a line.
    COPY has no ON CONFLICT, so it runs in a savepoint; on a clash of seqs (another process wrote
    the same log at the same moment) it is undone and the INSERT below finds which lines lost theirs.
    """
    if connection.vendor == "postgresql" and len(lines) >= COPY_MIN_LINES:
        try:
            with transaction.atomic():
                _lines_copy(lines)
            return []
        except IntegrityError as error:
            if not isinstance(error.__cause__, psycopg.errors.UniqueViolation):
                raise
    return _lines_insert_returning(lines)


def _lines_copy(lines: list[_Line]) -> None:
    """``COPY … FROM STDIN`` the lines, in order, on the connection's current transaction."""
    table, columns = _line_table()
    sql = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
    keys: dict[Any, str] = {}
    with connection.cursor() as cursor, connection.wrap_database_errors:
        # Counted with the statements Django logs (a test counting the writer's statements sees it).
        logged = cursor.debug_sql(sql) if hasattr(cursor, "debug_sql") else contextlib.nullcontext()
        with logged, cursor.cursor.copy(sql) as copy:
            for item in lines:
                key = keys.get(item.log_id) or keys.setdefault(item.log_id, str(item.log_id))
                line = item.line
                copy.write_row((key, line["seq"], line["ts"], line["event"][:64], item.text, item.cut))


def _lines_insert_returning(lines: list[_Line]) -> list[_Line]:
    """One ``INSERT … ON CONFLICT DO NOTHING RETURNING``; return the lines it did not store."""
    log_field, ts_field = ExecutionLogLine._meta.get_field("log_file"), ExecutionLogLine._meta.get_field("ts")
    keys: dict[Any, Any] = {}
    rows = []
    for item in lines:
        key = keys.get(item.log_id)
        if key is None:
            key = keys[item.log_id] = log_field.get_db_prep_save(item.log_id, connection)
        line = item.line
        rows.append((key, line["seq"], ts_field.get_db_prep_save(datetime.fromisoformat(line["ts"]), connection),
                     line["event"][:64], item.text, item.cut))
    table, columns = _line_table()
    inserted = _rows_insert_ignoring_conflicts(table, columns, rows, conflict=columns[:2], returning=columns[:2])
    if len(inserted) == len(lines):
        return []
    # Compared as the database holds them (SQLite returns a UUID as its hex, PostgreSQL as a UUID).
    written = {(str(key), seq) for key, seq in inserted}
    return [item for item in lines if (str(keys[item.log_id]), item.line["seq"]) not in written]


def _line_table() -> tuple[str, list[str]]:
    """The quoted table and columns a line is stored in: its log, seq, ts, event, text and cut."""
    quote, meta = connection.ops.quote_name, ExecutionLogLine._meta
    names = ("log_file", "seq", "ts", "event", "text", "cut")
    return quote(meta.db_table), [quote(meta.get_field(name).column) for name in names]



def _insert_ignoring_conflicts(model, objects: list, *, conflict: list[str], returning: list[str] | None = None):
    """``INSERT … ON CONFLICT (conflict) DO NOTHING RETURNING …`` of model instances, on PostgreSQL and
    SQLite alike.

    Returns the rows inserted (their ``returning`` columns, else their first), so the caller knows
    which went in without a second query. Django's ``bulk_create(ignore_conflicts=True)`` cannot tell.
    """
    fields = [f for f in model._meta.concrete_fields if not getattr(f, "db_returning", False)]
    quote = connection.ops.quote_name
    rows = [[f.get_db_prep_save(f.pre_save(obj, add=True), connection) for f in fields] for obj in objects]
    return _rows_insert_ignoring_conflicts(
        quote(model._meta.db_table), [quote(f.column) for f in fields], rows,
        conflict=[quote(name) for name in conflict],
        returning=[quote(name) for name in returning or [fields[0].column]],
    )


def _rows_insert_ignoring_conflicts(table: str, columns: list[str], rows: list, *, conflict: list[str],
                                    returning: list[str]) -> list[tuple]:
    """The INSERT of ``_insert_ignoring_conflicts``, of rows of values for quoted columns."""
    row = "(" + ", ".join(["%s"] * len(columns)) + ")"
    # Only the model's own table and column names are spliced in; every value is a parameter.
    sql = (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES {', '.join([row] * len(rows))} "  # noqa: S608
        f"ON CONFLICT ({', '.join(conflict)}) DO NOTHING RETURNING {', '.join(returning)}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [value for values in rows for value in values])
        return cursor.fetchall()
