"""A Celery worker's pool process serves its own counters on a port of its own.

The counters a pool process increments (its nodes, agent calls, log lines, reaper passes, webhook
deliveries) live in that process's memory, so each process answers for itself: the first on
``WORKGRAPH_WORKER_METRICS_PORT``, the next on the port after, and so on (a process that replaces one
that exited takes its index, so its port). The database's gauges are left to the console's
``/metrics``: served by every worker too, sums over all targets would count each run several times.

The same bearer token as ``/metrics`` guards these ports.
"""

from __future__ import annotations

import logging
import threading
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from celery.utils.log import current_process_index
from django.conf import settings
from prometheus_client import make_wsgi_app

from graphs.metrics.counters import REGISTRY
from graphs.metrics.exposition import Access, metrics_access

logger = logging.getLogger(__name__)

_REFUSED = {Access.MISSING: "401 Unauthorized", Access.WRONG: "403 Forbidden", Access.OFF: "404 Not Found"}


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args) -> None:
        """A scrape every few seconds is not news for the worker's log."""


def _guarded(app):
    def guarded_app(environ, start_response):
        access = metrics_access(authorization=environ.get("HTTP_AUTHORIZATION", ""))
        if access is Access.ALLOWED:
            return app(environ, start_response)
        headers = [("Content-Type", "text/plain")]
        if access is Access.MISSING:
            headers.append(("WWW-Authenticate", 'Bearer realm="metrics"'))
        start_response(_REFUSED[access], headers)
        return [b""]

    return guarded_app


def worker_metrics_serve() -> int | None:
    """Serve this pool process's counters on its port, in a daemon thread; return the port, or None when
    no port is configured, no token either, or the port is taken (logged: the worker goes on without)."""
    base = settings.WORKGRAPH_WORKER_METRICS_PORT
    if base is None:
        return None
    if not settings.WORKGRAPH_METRICS_TOKEN:
        logger.warning("WORKGRAPH_WORKER_METRICS_PORT is set but WORKGRAPH_METRICS_TOKEN is not: no metrics served")
        return None
    port = base + (current_process_index(base=0) or 0)
    try:
        server = make_server(settings.WORKGRAPH_WORKER_METRICS_ADDR, port, _guarded(make_wsgi_app(REGISTRY)),
                             server_class=_Server, handler_class=_QuietHandler)
    except OSError as error:
        logger.warning("worker metrics: cannot listen on port %d (%s); this process serves no metrics", port, error)
        return None
    threading.Thread(target=server.serve_forever, name="metrics-server", daemon=True).start()
    logger.info("worker metrics served on %s:%d", settings.WORKGRAPH_WORKER_METRICS_ADDR, port)
    return port
