"""The console's own error pages (400, 403, 404, 500), with no debug detail, and a way back.

Django answers a missing object with its technical 404 page when DEBUG is on (as ``make run`` serves);
``NotFoundPageMiddleware`` answers an Http404 raised by one of the console's views with the console's
page instead, DEBUG or not. Only a URL no route matches still gets Django's page in DEBUG, which lists
the routes — what a developer wants there. The API answers its own JSON errors (console.api.errors).
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseServerError
from django.shortcuts import render
from django.template import loader
from django.urls import reverse

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


class NotFoundPageMiddleware:
    """Answer an Http404 from a console view with the console's 404 page, in DEBUG too."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

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
    }
