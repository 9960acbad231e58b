"""``/metrics``: Prometheus' scrape of the console, behind a bearer token (graphs.metrics.exposition)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from graphs.metrics.exposition import CONTENT_TYPE, Access, metrics_access, metrics_text


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    """The metrics for a scraper holding ``WORKGRAPH_METRICS_TOKEN``; 404 when no token is configured,
    401 without a token, 403 with a wrong one — the answer names neither the token nor what it guards."""
    access = metrics_access(authorization=request.headers.get("Authorization", ""))
    if access is Access.OFF:
        raise Http404("no such page")
    if access is Access.MISSING:
        response = HttpResponse("a bearer token is required\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    if access is Access.WRONG:
        return HttpResponse("forbidden\n", status=403, content_type="text/plain")
    response = HttpResponse(metrics_text(), content_type=CONTENT_TYPE)
    response["Cache-Control"] = "no-store"
    return response
