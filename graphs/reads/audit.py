"""The audit log read: its filters checked, its entries newest first, each as the API, the export and the
pages show it.

A project's log holds the entries of that project (by its key: a project deleted and made again under
the same slug does not inherit the old one's); the whole log, an administrator's, may be narrowed to a
project by slug, which finds a deleted project's entries too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, time
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from graphs.errors import WorkGraphError
from graphs.models import AuditEntry, Project

Action = AuditEntry.Action
# Each action's family (``run`` for ``run.cancelled``…): a filter may name one to get all of its actions.
FAMILIES = tuple(dict.fromkeys(action.split(".", 1)[0] for action in Action.values))
# How long a value the page shows before and after is, at most; the record keeps all of it.
VALUE_SHOWN_CHARS = 300
EXPORT_CHUNK = 500


class AuditFilterInvalid(WorkGraphError):
    """A filter of the audit log that cannot be read: ``field`` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class AuditFilters:
    action: str = ""
    actor: str = ""
    since: datetime | None = None
    until: datetime | None = None
    project: str = ""


@dataclass(frozen=True)
class AuditChange:
    """One field an entry records the change of, its values as text."""

    field: str
    before: str
    after: str


def audit_filters(*, action: str = "", actor: str = "", since: str = "", until: str = "",
                  project: str = "") -> AuditFilters:
    """The filters as asked for (text, from a query string), checked; raises AuditFilterInvalid naming the
    first field that is wrong. ``since`` and ``until`` are ISO 8601 date-times (or dates: a day's start),
    read in the console's time zone when they name none."""
    action, actor, project = action.strip(), actor.strip(), project.strip()
    if action and action not in Action.values and action not in FAMILIES:
        raise AuditFilterInvalid("action", f"not an audit action; one of {', '.join(Action.values)}, or a family:"
                                           f" {', '.join(FAMILIES)}")
    start, end = _moment("since", since), _moment("until", until)
    if start is not None and end is not None and end < start:
        raise AuditFilterInvalid("until", "is before since")
    return AuditFilters(action=action, actor=actor, since=start, until=end, project=project)


def audit_entries(filters: AuditFilters, *, project: Project | None = None) -> QuerySet[AuditEntry]:
    """The entries ``filters`` keep, newest first: ``project``'s alone when given."""
    entries = AuditEntry.objects.all()
    if project is not None:
        entries = entries.filter(project=project)
    elif filters.project:
        entries = entries.filter(project_slug=filters.project)
    if filters.action in FAMILIES:
        entries = entries.filter(action__startswith=f"{filters.action}.")
    elif filters.action:
        entries = entries.filter(action=filters.action)
    if filters.actor:
        entries = entries.filter(actor_name=filters.actor)
    if filters.since is not None:
        entries = entries.filter(created_at__gte=filters.since)
    if filters.until is not None:
        entries = entries.filter(created_at__lte=filters.until)
    return entries.order_by("-created_at", "-id")


def audit_entry_data(entry: AuditEntry) -> dict[str, Any]:
    """An entry as the API and the export give it."""
    return {
        "id": entry.pk, "created_at": entry.created_at, "actor": entry.actor_name or None, "action": entry.action,
        "action_words": entry.get_action_display(), "project": entry.project_slug or None,
        "object_type": entry.object_type, "object_id": entry.object_id, "summary": entry.summary,
        "before": entry.before, "after": entry.after, "ip": entry.ip,
    }


def audit_export_lines(entries: QuerySet[AuditEntry]) -> Iterator[str]:
    """``entries`` as JSON lines, one an entry, read from the database a chunk at a time."""
    for entry in entries.iterator(chunk_size=EXPORT_CHUNK):
        yield json.dumps(audit_entry_data(entry), cls=DjangoJSONEncoder, ensure_ascii=False) + "\n"


def audit_entry_changes(entry: AuditEntry) -> list[AuditChange]:
    """The fields ``entry`` records before and after, in the order it names them, each value as text."""
    before, after = entry.before or {}, entry.after or {}
    return [AuditChange(field=name, before=_text(before.get(name)) if entry.before is not None else "",
                        after=_text(after.get(name)) if entry.after is not None else "")
            for name in dict.fromkeys([*before, *after])]


def _text(value: Any) -> str:
    if value is None or value == "":
        return "—"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= VALUE_SHOWN_CHARS else text[:VALUE_SHOWN_CHARS] + "…"


def _moment(field: str, value: str) -> datetime | None:
    value = value.strip()
    if not value:
        return None
    try:
        moment = parse_datetime(value)
        if moment is None and (day := parse_date(value)) is not None:
            moment = datetime.combine(day, time.min)
    except ValueError:
        moment = None
    if moment is None:
        raise AuditFilterInvalid(field, "not an ISO 8601 date-time, such as 2026-12-06T08:00:00Z or 2026-12-06")
    return timezone.make_aware(moment) if timezone.is_naive(moment) else moment
