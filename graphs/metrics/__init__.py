"""Prometheus metrics: what the console and its workers count, and what a scrape reads from the database.

- ``counters``: the counters and histograms the engine, the log writer, the live publisher, the reaper and
  the webhook deliveries increment where they record those facts (one function each, never raising);
- ``collector``: the gauges read from the database at scrape time (runs by status, nodes queued and
  running, the oldest queued node's age);
- ``exposition``: the text a scrape of ``/metrics`` answers, and the bearer-token check in front of it;
- ``worker``: a Celery worker process's own metrics port (``WORKGRAPH_WORKER_METRICS_PORT``).
"""
