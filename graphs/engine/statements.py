"""The statements every node of a run sends, written once per process from the models' metadata.

A quick node costs what it sends (see the README's Performance section): its run's lock, the latest
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

from graphs.models import WorkGraphRun, WorkNodeExecution

M = TypeVar("M", bound=Model)


@dataclass(frozen=True)
class _Column:
    name: str  # as the caller names it: "pk" or a field's name
    field: Field
    sql: str
    converters: tuple[Callable[..., Any], ...]
    expression: Any

    def value(self, raw: Any) -> Any:
        for converter in self.converters:
            raw = converter(raw, self.expression, connection)
        return raw


def _field(model: type[Model], name: str) -> Field:
    return model._meta.pk if name == "pk" else model._meta.get_field(name)


@functools.cache
def _columns(model: type[Model], names: tuple[str, ...], alias: str) -> tuple[_Column, ...]:
    """The columns ``names`` of ``model`` as the compiler selects and converts them on ``alias``."""
    table = model._meta.db_table
    quote = connection.ops.quote_name
    columns = []
    for name in names:
        field = _field(model, name)
        expression = field.get_col(table)
        converters = connection.ops.get_db_converters(expression) + expression.get_db_converters(connection)
        columns.append(_Column(name=name, field=field, sql=f"{quote(table)}.{quote(field.column)}",
                               converters=tuple(converters), expression=expression))
    return tuple(columns)


@functools.cache
def _update_sql(model: type[Model], names: tuple[str, ...], where: tuple[str, ...], alias: str) -> str:
    quote = connection.ops.quote_name
    assignments = ", ".join(f"{quote(_field(model, name).column)} = %s" for name in names)
    conditions = " AND ".join(f"{quote(_field(model, name).column)} = %s" for name in where)
    return f"UPDATE {quote(model._meta.db_table)} SET {assignments} WHERE {conditions}"  # noqa: S608


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
    columns = _columns(model, names, alias)
    quote = connection.ops.quote_name
    lock = f" {connection.ops.for_update_sql()}" if connection.features.has_select_for_update else ""
    return (
        f"SELECT {', '.join(column.sql for column in columns)} FROM {quote(model._meta.db_table)}"  # noqa: S608
        f" WHERE {quote(model._meta.pk.column)} = %s{lock}"
    )


def row_locked_read(model: type[M], *, pk: Any, names: Sequence[str]) -> M:
    """``model.objects.select_for_update().only(*names).get(pk=pk)``: the row, locked until the caller's
    transaction ends, with the other fields deferred; ``model.DoesNotExist`` when there is none."""
    ordered = tuple(field.attname for field in model._meta.concrete_fields
                    if field.attname in names or field.name in names or field.primary_key)
    sql = _locked_read_sql(model, ordered, connection.alias)
    with connection.cursor() as cursor:
        cursor.execute(sql, [model._meta.pk.get_db_prep_value(pk, connection)])
        row = cursor.fetchone()
    if row is None:
        raise model.DoesNotExist(f"{model._meta.object_name} matching query does not exist.")
    columns = _columns(model, ordered, connection.alias)
    return model.from_db(connection.alias, ordered, [column.value(raw) for column, raw in zip(columns, row,
                                                                                                strict=True)])


def rows_read(
    model: type[Model], names: Sequence[str], *, where: Mapping[str, Any], within: tuple[str, Sequence[Any]]
) -> list[dict[str, Any]]:
    """``model.objects.filter(**where, <within[0]>__in=within[1]).values(*names)``, in no set order."""
    among, values = within
    if not values:
        return []
    columns = _columns(model, tuple(names), connection.alias)
    quote = connection.ops.quote_name
    conditions = [f"{quote(_field(model, name).column)} = %s" for name in where]
    conditions.append(f"{quote(_field(model, among).column)} IN ({', '.join(['%s'] * len(values))})")
    sql = (
        f"SELECT {', '.join(column.sql for column in columns)} FROM {quote(model._meta.db_table)}"  # noqa: S608
        f" WHERE {' AND '.join(conditions)}"
    )
    params = [_field(model, name).get_db_prep_value(value, connection) for name, value in where.items()]
    params += [_field(model, among).get_db_prep_value(value, connection) for value in values]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [{column.name: column.value(raw) for column, raw in zip(columns, row, strict=True)} for row in rows]


def _column_sql(model: type[Model], name: str) -> str:
    quote = connection.ops.quote_name
    return f"{quote(model._meta.db_table)}.{quote(_field(model, name).column)}"


@functools.cache
def _next_queued_sql(names: tuple[str, ...], run_names: tuple[str, ...], alias: str) -> str:
    attempt = functools.partial(_column_sql, WorkNodeExecution)
    columns = (*_columns(WorkNodeExecution, names, alias), *_columns(WorkGraphRun, run_names, alias))
    features = connection.features
    lock = ""
    if features.has_select_for_update:
        of = (connection.ops.quote_name(WorkNodeExecution._meta.db_table),) if features.has_select_for_update_of else ()
        lock = " " + connection.ops.for_update_sql(skip_locked=features.has_select_for_update_skip_locked, of=of)
    return (
        f"SELECT {', '.join(column.sql for column in columns)}"  # noqa: S608
        f" FROM {connection.ops.quote_name(WorkNodeExecution._meta.db_table)}"
        f" INNER JOIN {connection.ops.quote_name(WorkGraphRun._meta.db_table)}"
        f" ON ({attempt('run')} = {_column_sql(WorkGraphRun, 'pk')})"
        f" WHERE {attempt('run')} = %s AND {attempt('status')} = %s"
        f" AND ({attempt('not_before')} IS NULL OR {attempt('not_before')} <= %s)"
        f" ORDER BY {attempt('ready_at')} ASC, {attempt('created_at')} ASC LIMIT 1{lock}"
    )


def attempt_next_queued_lock(
    *, run_id: Any, now: datetime, names: Sequence[str], run_names: Sequence[str]
) -> WorkNodeExecution | None:
    """The run's longest-waiting queued attempt that may start at ``now``, locked and skipped by every
    other worker's look until the caller's transaction ends where the database can (PostgreSQL), with
    its run: ``WorkNodeExecution.objects.select_for_update(skip_locked=True, of=("self",))
    .select_related("run").only(*names, *run__names).filter(run_id=run_id, status=QUEUED)
    .filter(Q(not_before__isnull=True) | Q(not_before__lte=now)).order_by("ready_at", "created_at").first()``.
    """
    ordered = tuple(f.attname for f in WorkNodeExecution._meta.concrete_fields if f.name in names or f.primary_key)
    run_ordered = tuple(f.attname for f in WorkGraphRun._meta.concrete_fields if f.name in run_names or f.primary_key)
    sql = _next_queued_sql(ordered, run_ordered, connection.alias)
    datetimes = WorkNodeExecution._meta.get_field("not_before")
    params = [WorkNodeExecution._meta.get_field("run").get_db_prep_value(run_id, connection),
              WorkNodeExecution.Status.QUEUED.value, datetimes.get_db_prep_value(now, connection)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    columns = (*_columns(WorkNodeExecution, ordered, connection.alias), *_columns(WorkGraphRun, run_ordered,
                                                                                 connection.alias))
    values = [column.value(raw) for column, raw in zip(columns, row, strict=True)]
    execution = WorkNodeExecution.from_db(connection.alias, ordered, values[: len(ordered)])
    execution.run = WorkGraphRun.from_db(connection.alias, run_ordered, values[len(ordered):])
    return execution
