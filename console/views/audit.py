"""The audit log's pages: a project's, for its leads (and administrators), and the whole log, for
administrators. They only read: nothing in the console changes or deletes an entry."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse

from console.forms.audit import AuditFilterForm
from console.permissions import audit_reader, project_for_audit
from graphs.models import AuditEntry, Project
from graphs.reads.audit import AuditFilters, audit_entries, audit_entry_changes

ENTRIES_PER_PAGE = 50
# The page an entry's object opens, by its object_type: the route and what fills it.
_OBJECT_PAGES = {
    "run": lambda entry: reverse("run_graph", args=[entry.object_id]),
    "attempt": lambda entry: reverse("execution_detail", args=[entry.object_id]),
    "project": lambda entry: reverse("project_detail", args=[entry.object_id]),
    "member": lambda entry: reverse("project_members", args=[entry.project_slug]),
    "dataset": lambda entry: reverse("project_datasets", args=[entry.project_slug]),
    "webhook": lambda entry: reverse("webhook_deliveries", args=[entry.project_slug, entry.object_id]),
    "skill": lambda entry: reverse("skill_detail", args=[entry.object_id]),
    "agent_profile": lambda entry: reverse("agent_profile_detail_project", args=[entry.object_id, entry.project_slug])
    if entry.project_slug else reverse("agent_profile_detail", args=[entry.object_id]),
}


@login_required
def project_audit(request: HttpRequest, slug: str) -> HttpResponse:
    """A project's audit log, newest first, filtered by the query string."""
    project = project_for_audit(request.user, slug)
    return _audit_page(request, project=project)


@login_required
def audit_log(request: HttpRequest) -> HttpResponse:
    """The whole audit log, for administrators, with its export."""
    if not audit_reader(request.user):
        raise PermissionDenied("only the console's administrators read the whole audit log")
    return _audit_page(request, project=None)


def _audit_page(request: HttpRequest, *, project: Project | None) -> HttpResponse:
    form = AuditFilterForm(request.GET or None, projects=project is None)
    filters = form.audit_filters() if form.is_bound else None
    if form.is_bound and filters is None:
        entries = AuditEntry.objects.none()
    else:
        entries = audit_entries(filters or AuditFilters(), project=project)
    page = Paginator(entries, ENTRIES_PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "console/audit.html", {
        "project": project, "form": form, "page": page, "query": query.urlencode(),
        "rows": [(entry, _object_url(entry), audit_entry_changes(entry)) for entry in page.object_list],
    }, status=400 if form.errors else 200)


def _object_url(entry: AuditEntry) -> str:
    """The page of the entry's object, or "" when it has none (a token, a user) or is gone (a deleted project's
    object still names its slug, and the link then finds nothing: the entry says what it was)."""
    page = _OBJECT_PAGES.get(entry.object_type)
    if page is None or entry.action == AuditEntry.Action.WEBHOOK_DELETED:
        return ""
    try:
        return page(entry)
    except NoReverseMatch:
        return ""
