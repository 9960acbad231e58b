"""The statements every node of a run sends, written once per process from the models' metadata.

A quick node costs what it sends (see docs/performance.md): its run's lock, the latest
rows of its dependants, its end, the next attempt's claim. Through a queryset each is built anew for
every node — the filter's tree, its compilation, the rows turned back into objects — which takes the
worker longer than the database takes to run it. Each function here sends the SQL the queryset named
in its docstring would, written once per model, columns and database: every value is a parameter
prepared by its field as ``QuerySet.update`` and ``filter`` prepare it, every value read is converted
by its field's converters as the compiler converts it, and only the models' own table and column
names are spliced in.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from django.db import connection
from django.db.models import Field, Model

from graphs.models import ExecutionLogFile, WorkGraphRun, WorkNodeExecution

M = TypeVar("M", bound=Model)


@dataclass(frozen=True)
class _Column:
    sql: str
    converters: tuple[Callable[..., Any], ...]
    expression: Any

    def value(self, raw: Any) -> Any:
        for converter in self.converters:
            raw = converter(raw, self.expression, connection)
        return raw


def _field(model: type[Model], name: str) -> Field:
    return model._meta.pk if name == "pk" else model._meta.get_field(name)


def _table_sql(model: type[Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _column_sql(model: type[Model], name: str) -> str:
    return f"{_table_sql(model)}.{connection.ops.quote_name(_field(model, name).column)}"


@functools.cache
def _attnames(model: type[Model], names: tuple[str, ...]) -> tuple[str, ...]:
    """The columns of ``names`` and the primary key, in the model's order, as ``Model.from_db`` takes them."""
    return tuple(field.attname for field in model._meta.concrete_fields
                 if field.primary_key or field.name in names or field.attname in names)


@functools.cache
def _columns(model: type[Model], names: tuple[str, ...], alias: str) -> tuple[_Column, ...]:
    """The columns ``names`` of ``model`` as the compiler selects and converts them on ``alias``."""
    columns = []
    for name in names:
        expression = _field(model, name).get_col(model._meta.db_table)
        converters = connection.ops.get_db_converters(expression) + expression.get_db_converters(connection)
        columns.append(_Column(sql=_column_sql(model, name), converters=tuple(converters), expression=expression))
    return tuple(columns)


def _values(columns: Sequence[_Column], row: Sequence[Any]) -> list[Any]:
    return [column.value(raw) for column, raw in zip(columns, row, strict=True)]


def _select_sql(columns: Sequence[_Column]) -> str:
    return "SELECT " + ", ".join(column.sql for column in columns)


@functools.cache
def _update_sql(model: type[Model], names: tuple[str, ...], where: tuple[str, ...], alias: str) -> str:
    # An UPDATE's SET names its columns unqualified.
    assignments = ", ".join(f"{connection.ops.quote_name(_field(model, name).column)} = %s" for name in names)
    conditions = " AND ".join(f"{_column_sql(model, name)} = %s" for name in where)
    return f"UPDATE {_table_sql(model)} SET {assignments} WHERE {conditions}"  # noqa: S608


def row_update(model: type[Model], *, pk: Any, where: Mapping[str, Any], values: Mapping[str, Any]) -> int:
    """``model.objects.filter(pk=pk, **where).update(**values)``, for plain values and equality
    conditions: the number of rows changed, 0 or 1 — the conditional update that claims or records."""
    conditions = {"pk": pk, **where}
    sql = _update_sql(model, tuple(values), tuple(conditions), connection.alias)
    params = [_field(model, name).get_db_prep_save(value, connection) for name, value in values.items()]
    params += [_field(model, name).get_db_prep_value(value, connection) for name, value in conditions.items()]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


@functools.cache
def _locked_read_sql(model: type[Model], names: tuple[str, ...], alias: str) -> str:
    lock = f" {connection.ops.for_update_sql(no_key=True)}" if connection.features.has_select_for_update else ""
    return (
        f"{_select_sql(_columns(model, names, alias))} FROM {_table_sql(model)}"
        f" WHERE {_column_sql(model, 'pk')} = %s{lock}"
    )


def row_locked_read(model: type[M], *, pk: Any, names: Sequence[str]) -> M:
    """``model.objects.select_for_update(no_key=True).only(*names).get(pk=pk)``: the row, locked until the
    caller's transaction ends, with the other fields deferred; ``model.DoesNotExist`` when there is none."""
    attnames = _attnames(model, tuple(names))
    with connection.cursor() as cursor:
        cursor.execute(_locked_read_sql(model, attnames, connection.alias),
                       [model._meta.pk.get_db_prep_value(pk, connection)])
        row = cursor.fetchone()
    if row is None:
        raise model.DoesNotExist(f"{model._meta.object_name} matching query does not exist.")
    return model.from_db(connection.alias, attnames, _values(_columns(model, attnames, connection.alias), row))


@functools.cache
def _rows_read_sql(
    model: type[Model], names: tuple[str, ...], where: tuple[str, ...], among: str, count: int, alias: str
) -> str:
    conditions = [f"{_column_sql(model, name)} = %s" for name in where]
    conditions.append(f"{_column_sql(model, among)} IN ({', '.join(['%s'] * count)})")
    return f"{_select_sql(_columns(model, names, alias))} FROM {_table_sql(model)} WHERE {' AND '.join(conditions)}"


def rows_read(
    model: type[Model], names: Sequence[str], *, where: Mapping[str, Any], within: tuple[str, Sequence[Any]]
) -> list[dict[str, Any]]:
    """``model.objects.filter(**where, <within[0]>__in=within[1]).values(*names)``, in no set order."""
    among, values = within
    if not values:
        return []
    names = tuple(names)
    sql = _rows_read_sql(model, names, tuple(where), among, len(values), connection.alias)
    params = [_field(model, name).get_db_prep_value(value, connection) for name, value in where.items()]
    params += [_field(model, among).get_db_prep_value(value, connection) for value in values]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    columns = _columns(model, names, connection.alias)
    return [dict(zip(names, _values(columns, row), strict=True)) for row in rows]


@functools.cache
def _next_queued_sql(names: tuple[str, ...], run_names: tuple[str, ...], alias: str) -> str:
    attempt = functools.partial(_column_sql, WorkNodeExecution)
    columns = (*_columns(WorkNodeExecution, names, alias), *_columns(WorkGraphRun, run_names, alias))
    features = connection.features
    lock = ""
    if features.has_select_for_update:
        of = (_table_sql(WorkNodeExecution),) if features.has_select_for_update_of else ()
        lock = " " + connection.ops.for_update_sql(skip_locked=features.has_select_for_update_skip_locked, of=of,
                                                   no_key=True)
    return (
        f"{_select_sql(columns)} FROM {_table_sql(WorkNodeExecution)}"
        f" INNER JOIN {_table_sql(WorkGraphRun)} ON ({attempt('run')} = {_column_sql(WorkGraphRun, 'pk')})"
        f" WHERE {attempt('run')} = %s AND {attempt('status')} = %s"
        f" AND ({attempt('not_before')} IS NULL OR {attempt('not_before')} <= %s)"
        f" ORDER BY {attempt('ready_at')} ASC, {attempt('created_at')} ASC LIMIT 1{lock}"
    )


def attempt_next_queued_lock(
    *, run_id: Any, now: datetime, names: Sequence[str], run_names: Sequence[str]
) -> WorkNodeExecution | None:
    """The run's longest-waiting queued attempt that may start at ``now``, locked and skipped by every
    other worker's look until the caller's transaction ends where the database can (PostgreSQL), with
    its run: ``WorkNodeExecution.objects.select_for_update(no_key=True, skip_locked=True, of=("self",))
    .select_related("run").only(*names, *run__names).filter(run_id=run_id, status=QUEUED)
    .filter(Q(not_before__isnull=True) | Q(not_before__lte=now)).order_by("ready_at", "created_at").first()``.
    """
    attnames, run_attnames = _attnames(WorkNodeExecution, tuple(names)), _attnames(WorkGraphRun, tuple(run_names))
    params = [_field(WorkNodeExecution, "run").get_db_prep_value(run_id, connection),
              WorkNodeExecution.Status.QUEUED.value,
              _field(WorkNodeExecution, "not_before").get_db_prep_value(now, connection)]
    with connection.cursor() as cursor:
        cursor.execute(_next_queued_sql(attnames, run_attnames, connection.alias), params)
        row = cursor.fetchone()
    if row is None:
        return None
    alias = connection.alias
    attempt_values = _values(_columns(WorkNodeExecution, attnames, alias), row[: len(attnames)])
    execution = WorkNodeExecution.from_db(alias, attnames, attempt_values)
    run_values = _values(_columns(WorkGraphRun, run_attnames, alias), row[len(attnames):])
    execution.run = WorkGraphRun.from_db(alias, run_attnames, run_values)
    return execution


def _name_sql(model: type[Model], name: str) -> str:
    return connection.ops.quote_name(_field(model, name).column)


@functools.cache
def _latest_claim_sql(names: tuple[str, ...], values: tuple[str, ...], alias: str) -> str:
    attempt = functools.partial(_name_sql, WorkNodeExecution)
    own = functools.partial(_column_sql, WorkNodeExecution)
    run = functools.partial(_column_sql, WorkGraphRun)
    table = _table_sql(WorkNodeExecution)
    assignments = ", ".join(f"{attempt(name)} = %s" for name in values)
    # The attempt's columns are qualified by its table in WHERE (the subqueries read the same table
    # under another name) and bare in RETURNING, the only way SQLite takes them there.
    node_rows = f"FROM {table} other WHERE other.{attempt('run')} = %s AND other.{attempt('node_id')} = %s"
    return (
        f"UPDATE {table} SET {assignments}"  # noqa: S608
        f" WHERE {own('pk')} = (SELECT other.{attempt('pk')} {node_rows}"
        f" ORDER BY other.{attempt('attempt')} DESC LIMIT 1)"
        f" AND {own('status')} = %s AND ({own('not_before')} IS NULL OR {own('not_before')} <= %s)"
        f" AND NOT EXISTS (SELECT 1 {node_rows} AND other.{attempt('attempt')} > %s)"
        f" AND EXISTS (SELECT 1 FROM {_table_sql(WorkGraphRun)} WHERE {run('pk')} = %s AND {run('status')} = %s"
        f" AND {run('cancel_requested_at')} IS NULL AND {run('manifest_version')} = %s)"
        f" RETURNING {', '.join(attempt(name) for name in names)}"
    )


# The log header's fields that name its attempt: in the claim's statement, the attempt it claimed.
_HEADER_OF_ATTEMPT = ("log_file_id", "node_exec")


def _header_fields() -> list[Field]:
    return [field for field in ExecutionLogFile._meta.concrete_fields if not getattr(field, "db_returning", False)]


@functools.cache
def _latest_claim_logged_sql(names: tuple[str, ...], values: tuple[str, ...], alias: str) -> str:
    """The claim of ``_latest_claim_sql`` and, of the attempt it claims, the log header, in one statement
    (PostgreSQL's data-modifying WITH): its last column says whether the header was made here."""
    attempt = functools.partial(_name_sql, WorkNodeExecution)
    pk = attempt("pk")
    # Every other value is a parameter; cast to its column's type, as a SELECT list infers none.
    header = [f"claimed.{pk}" if field.name in _HEADER_OF_ATTEMPT else f"CAST(%s AS {field.db_type(connection)})"
              for field in _header_fields()]
    columns = ", ".join(connection.ops.quote_name(field.column) for field in _header_fields())
    header_pk = _name_sql(ExecutionLogFile, "pk")
    return (
        f"WITH claimed AS ({_latest_claim_sql(names, values, alias)}),"  # noqa: S608
        f" header AS (INSERT INTO {_table_sql(ExecutionLogFile)} ({columns}) SELECT {', '.join(header)}"
        f" FROM claimed ON CONFLICT ({header_pk}) DO NOTHING RETURNING {header_pk})"
        f" SELECT {', '.join(f'claimed.{attempt(name)}' for name in names)}, EXISTS (SELECT 1 FROM header)"
        f" FROM claimed"
    )


@dataclass(frozen=True)
class Claim:
    """An attempt claimed by ``attempt_latest_claim``; ``log_created``: whether the claim's statement
    made its log header (True), found one (False), or was not to make one (None)."""

    execution: WorkNodeExecution
    log_created: bool | None


def attempt_latest_claim(
    *, run_id: Any, node_id: str, after: tuple[str, int], manifest_version: int, now: datetime,
    values: Mapping[str, Any], names: Sequence[str], log_project_id: Any = None,
) -> Claim | None:
    """Write ``values`` on ``node_id``'s latest attempt — if it is pending and may start at ``now``, the
    attempt ``after`` names (a node and attempt number) is still that node's latest, and the run is
    running, not asked to stop, at ``manifest_version`` — and return it with ``names`` as written;
    None when any of these does not hold. One statement: the conditional update that claims a chain's
    next node, with the reads that decide it (see graphs.engine.claims).

    With ``log_project_id``, on PostgreSQL the same statement creates the claimed attempt's log header
    in that project (``INSERT … ON CONFLICT DO NOTHING``, as ``log_file_create``): one round trip fewer
    for every node of a chain. Elsewhere the caller creates it."""
    attnames = _attnames(WorkNodeExecution, tuple(names))
    field = functools.partial(_field, WorkNodeExecution)
    run_pk = field("run").get_db_prep_value(run_id, connection)
    params = [field(name).get_db_prep_save(value, connection) for name, value in values.items()]
    params += [run_pk, node_id, WorkNodeExecution.Status.PENDING.value, field("not_before").get_db_prep_value(
        now, connection), run_pk, after[0], after[1], run_pk, WorkGraphRun.Status.RUNNING.value, manifest_version]
    logged = log_project_id is not None and connection.vendor == "postgresql"
    if logged:
        header = ExecutionLogFile(project_id=log_project_id)
        params += [field.get_db_prep_save(field.pre_save(header, add=True), connection)
                   for field in _header_fields() if field.name not in _HEADER_OF_ATTEMPT]
        sql = _latest_claim_logged_sql(attnames, tuple(values), connection.alias)
    else:
        sql = _latest_claim_sql(attnames, tuple(values), connection.alias)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    values_read = _values(_columns(WorkNodeExecution, attnames, connection.alias), row[: len(attnames)])
    execution = WorkNodeExecution.from_db(connection.alias, attnames, values_read)
    return Claim(execution=execution, log_created=bool(row[len(attnames)]) if logged else None)
