"""The console's own error pages (400, 403, 404, 500), with no debug detail, and a way back.

Django answers a missing object, and a URL no route matches, with its technical 404 page when DEBUG is
on (as ``make run`` serves), listing every route. ``NotFoundPageMiddleware`` answers both with the
console's page instead, DEBUG or not; DEBUG only adds a line of detail below it (which view refused,
or that no route matched). The API answers its own JSON errors (console.api.errors).
"""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseServerError
from django.shortcuts import render
from django.template import loader
from django.urls import Resolver404, resolve, reverse
from django.utils.deprecation import MiddlewareMixin

# The list a missing page most likely came from, by the start of its path.
_WAYS_BACK = (
    ("/tasks/", "task_list", "the tasks"),
    ("/runs/", "run_list", "the runs"),
    ("/executions/", "run_list", "the runs"),
    ("/skills/", "skill_list", "the skills"),
)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return render(request, "404.html", _context(request, exception), status=404)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return render(request, "403.html", _context(request, exception), status=403)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    # Static, like the 500 page: a bad request may fail before the session and the user are known,
    # and its reason (a disallowed host, a malformed header) is for the log, not the page.
    return HttpResponseBadRequest(loader.get_template("400.html").render())


def server_error(request: HttpRequest) -> HttpResponse:
    # Rendered without a request or a database: whatever failed may be exactly those.
    return HttpResponseServerError(loader.get_template("500.html").render())


class NotFoundPageMiddleware(MiddlewareMixin):
    """Answer an Http404 from a console view, and a URL no route matches, with the console's 404 page, in
    DEBUG too."""

    def process_request(self, request: HttpRequest) -> HttpResponse | None:
        # Django resolves the URL outside every middleware's reach and, in DEBUG, answers a miss with its
        # technical page; resolving first is the only way to answer it. Outside DEBUG handler404 does.
        if settings.DEBUG and not request.path.startswith("/api/"):
            try:
                resolve(request.path_info, getattr(request, "urlconf", None))
            except Resolver404 as exception:
                return page_not_found(request, exception)
        return None

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, Http404) and not request.path.startswith("/api/"):
            return page_not_found(request, exception)
        return None


def _context(request: HttpRequest, exception: Exception | None) -> dict[str, str]:
    url, label = reverse("dashboard"), "the dashboard"
    for prefix, name, words in _WAYS_BACK:
        if request.path.startswith(prefix):
            url, label = reverse(name), words
            break
    # Our views' reasons are sentences for the user; Django's resolver passes a dict of the routes it
    # tried, which is debug detail.
    reason = exception.args[0] if exception is not None and exception.args else ""
    return {
        "request_path": request.path,
        "reason": reason if isinstance(reason, str) and reason != "not found" else "",
        "way_back_url": url,
        "way_back_label": label,
        "debug_detail": _debug_detail(request, exception) if settings.DEBUG else "",
    }


def _debug_detail(request: HttpRequest, exception: Exception | None) -> str:
    """One line for a developer: that no route matched, or which view said the page is missing."""
    if isinstance(exception, Resolver404) or exception is None:
        return f"No route of {settings.ROOT_URLCONF} matches {request.path_info}; the routes are listed there."
    match = request.resolver_match
    view = match.view_name if match is not None else "a view"
    return f"{view} raised {type(exception).__name__}."
