"""The audit log: a project's, for its leads; the whole of it and its export as JSON lines, for
administrators. Read-only: no operation changes or deletes an entry."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from django.utils import timezone
from django.utils.http import content_disposition_header
from ninja import Field, Query, Router, Schema

from console.api.errors import ApiError
from console.api.schemas import ERRORS, InSchema
from console.permissions import audit_reader, project_for_audit
from graphs.models import AuditEntry
from graphs.reads.audit import (
    FAMILIES,
    AuditFilterInvalid,
    AuditFilters,
    audit_entries,
    audit_entry_data,
    audit_export_lines,
    audit_filters,
)

router = Router(tags=["audit"])
MAX_PAGE_SIZE = 100
_WHEN = "An ISO 8601 date-time (2026-12-06T08:00:00Z; a date alone is its day's start), the console's time zone" \
        " when it names none."


class AuditFilterQuery(InSchema):
    # Text, checked by graphs.reads.audit: a bad value is a 400 naming its field, in the API's words.
    action: str = Field("", max_length=64, description=f"An action ({', '.join(AuditEntry.Action.values)}) or a"
                                                       f" family of them ({', '.join(FAMILIES)}).")
    actor: str = Field("", max_length=150, description="The username of who decided (a failed sign-in's: the name"
                                                       " tried).")
    since: str = Field("", max_length=64, description=f"Entries at or after this moment. {_WHEN}")
    until: str = Field("", max_length=64, description=f"Entries at or before this moment. {_WHEN}")


class AuditQuery(AuditFilterQuery):
    page: int = 1
    page_size: int = Field(25, json_schema_extra={"minimum": 1, "maximum": MAX_PAGE_SIZE})


class AllAuditQuery(AuditQuery):
    project: str = Field("", max_length=50, description="A project's slug (a deleted project's too).")


class ExportQuery(AuditFilterQuery):
    project: str = Field("", max_length=50, description="A project's slug (a deleted project's too).")


class AuditEntryOut(Schema):
    id: int
    created_at: datetime
    actor: str | None = Field(..., description="Who decided, by username; null: the console itself.")
    action: str
    action_words: str = Field(..., description="The action in the console's words.")
    project: str | None = Field(..., description="The project's slug; null for a decision outside any project.")
    object_type: str
    object_id: str
    summary: str
    before: dict[str, Any] | None = Field(..., description="The fields the decision changed, as they were.")
    after: dict[str, Any] | None = Field(..., description="The same fields, as the decision left them.")
    ip: str | None = Field(..., description="The address a failed sign-in came from.")


class AuditPage(Schema):
    items: list[AuditEntryOut]
    count: int
    page: int
    pages: int


@router.get("/projects/{slug}/audit", response={200: AuditPage, **ERRORS})
def project_audit(request, slug: str, query: Query[AuditQuery]):
    """The project's audit log, newest first: for its leads and the console's administrators."""
    project = project_for_audit(request.auth, slug)
    return _page(audit_entries(_filters(query), project=project), query)


@router.get("/audit", response={200: AuditPage, **ERRORS})
def all_audit(request, query: Query[AllAuditQuery]):
    """The whole audit log, newest first: for the console's administrators."""
    _administrator(request)
    return _page(audit_entries(_filters(query, project=query.project)), query)


@router.get("/audit/export", response={200: None, **ERRORS})
def audit_export(request, query: Query[ExportQuery]):
    """The audit log the filters keep, oldest first, as JSON lines (one entry a line, as the list gives
    each), streamed: for the console's administrators."""
    _administrator(request)
    entries = audit_entries(_filters(query, project=query.project)).order_by("created_at", "id")
    response = StreamingHttpResponse(audit_export_lines(entries), content_type="application/x-ndjson")
    response["Content-Disposition"] = content_disposition_header(
        as_attachment=True, filename=f"audit-{timezone.localdate():%Y-%m-%d}.jsonl")
    return response


def _administrator(request) -> None:
    if not audit_reader(request.auth):
        raise PermissionDenied("only the console's administrators read the whole audit log")


def _filters(query: AuditFilterQuery, *, project: str = "") -> AuditFilters:
    try:
        return audit_filters(action=query.action, actor=query.actor, since=query.since, until=query.until,
                             project=project)
    except AuditFilterInvalid as error:
        raise ApiError(400, "bad_filter", str(error), [{"field": error.field, "message": error.message}]) from error


def _page(entries: QuerySet[AuditEntry], query: AuditQuery) -> dict[str, Any]:
    if not 1 <= query.page_size <= MAX_PAGE_SIZE:
        raise ApiError(400, "bad_page_size", f"page_size must be between 1 and {MAX_PAGE_SIZE}")
    paginator = Paginator(entries, query.page_size)
    page = paginator.get_page(query.page)
    return {"items": [audit_entry_data(entry) for entry in page.object_list], "count": paginator.count,
            "page": page.number, "pages": paginator.num_pages}
