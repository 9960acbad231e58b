"""Settings for what the console sends out (docs/observability.md, docs/notifications.md, docs/delivery.md):
OpenTelemetry traces, Prometheus metrics, webhooks, email and runs delivered to forges. console.settings
takes them all."""

import os

from console.env import env_bool, env_float, env_int, env_list, env_str, env_url

# OpenTelemetry traces (graphs.telemetry): exported when OTEL_EXPORTER_OTLP_ENDPOINT (or
# OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, unless OTEL_SDK_DISABLED; the SDK reads the other OTEL_*.
# Prompts, outputs and tool inputs/results go into spans only when asked, each cut to the max.
WORKGRAPH_OTEL_CAPTURE_CONTENT = env_bool("WORKGRAPH_OTEL_CAPTURE_CONTENT")
WORKGRAPH_OTEL_CONTENT_MAX_CHARS = env_int("WORKGRAPH_OTEL_CONTENT_MAX_CHARS", 2000, minimum=1)
# Attempts waiting to become spans in one process; past it an attempt's spans are dropped and counted.
WORKGRAPH_OTEL_QUEUE_SIZE = env_int("WORKGRAPH_OTEL_QUEUE_SIZE", 2048, minimum=1)
# The run page links to its trace in the team's tool: a URL with {trace_id} in it. Empty: no link.
WORKGRAPH_TRACE_URL_TEMPLATE = env_str("WORKGRAPH_TRACE_URL_TEMPLATE")

# Prometheus metrics (graphs.metrics): /metrics answers a scraper holding this bearer token, and does not
# exist without one. A Celery worker's pool processes serve their own counters from this port on (the
# first process on it, the next on the port after, …); unset, workers serve none.
WORKGRAPH_METRICS_TOKEN = env_str("WORKGRAPH_METRICS_TOKEN")
WORKGRAPH_WORKER_METRICS_PORT = env_int("WORKGRAPH_WORKER_METRICS_PORT", 0, minimum=0, maximum=65535) or None
# The address those ports listen on: this machine alone unless a scraper elsewhere is to reach them.
WORKGRAPH_WORKER_METRICS_ADDR = env_str("WORKGRAPH_WORKER_METRICS_ADDR", "127.0.0.1")

# Notifications (docs/notifications.md). Webhook URLs are outbound requests made on a lead's say-so: an
# address on loopback, link-local or a private network is refused unless this deployment allows it.
WORKGRAPH_WEBHOOK_ALLOW_PRIVATE = env_bool("WORKGRAPH_WEBHOOK_ALLOW_PRIVATE", False)
WORKGRAPH_WEBHOOK_TIMEOUT_SECONDS = env_float("WORKGRAPH_WEBHOOK_TIMEOUT_SECONDS", 5.0, minimum=0.1)
WORKGRAPH_WEBHOOK_BACKOFF_SECONDS = env_float("WORKGRAPH_WEBHOOK_BACKOFF_SECONDS", 10.0, minimum=0.01)
WORKGRAPH_WEBHOOK_RETRY_SECONDS = env_int("WORKGRAPH_WEBHOOK_RETRY_SECONDS", 24 * 3600, minimum=0)
WORKGRAPH_EMAIL_BATCH_SECONDS = env_float("WORKGRAPH_EMAIL_BATCH_SECONDS", 60.0, minimum=0.1)
# Where the console is reached, for the links notifications carry; unset, they carry none.
WORKGRAPH_PUBLIC_URL = env_url("WORKGRAPH_PUBLIC_URL", schemes=("http", "https"))
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1, maximum=65535)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10, minimum=1)

# Delivery to forges (docs/delivery.md). A project names the environment variable holding its forge token and
# webhook secret; only the names listed here may be named, so a project's lead cannot have the console send
# another of its secrets to a remote of their choosing. The values go to the project's remote and forge only.
WORKGRAPH_FORGE_SECRET_ENV = env_list("WORKGRAPH_FORGE_SECRET_ENV")
# A push or a request to a forge taking longer than this fails, and is tried again like any transient failure.
WORKGRAPH_DELIVERY_TIMEOUT_SECONDS = env_float("WORKGRAPH_DELIVERY_TIMEOUT_SECONDS", 60.0, minimum=1.0)
# A delivery failing for a transient reason (unreachable, timed out, 5xx) is tried this many times in all, the
# second try after the backoff and each next one after twice the wait before it.
WORKGRAPH_DELIVERY_ATTEMPTS = env_int("WORKGRAPH_DELIVERY_ATTEMPTS", 4, minimum=1, maximum=20)
WORKGRAPH_DELIVERY_BACKOFF_SECONDS = env_float("WORKGRAPH_DELIVERY_BACKOFF_SECONDS", 30.0, minimum=0.0)
# Open pull requests are read from their forge this often (checks, reviews, merged or closed) where the forge's
# webhooks cannot reach the console; 0, or the variable set empty, polls never (webhooks alone then).
WORKGRAPH_FORGE_POLL_SECONDS = (0.0 if os.environ.get("WORKGRAPH_FORGE_POLL_SECONDS", "x").strip() == ""
                                else env_float("WORKGRAPH_FORGE_POLL_SECONDS", 60.0, minimum=0.0))
# Follow-up runs started for failing checks of one pull request, at most; past it a person is needed.
WORKGRAPH_FORGE_FIX_ATTEMPTS = env_int("WORKGRAPH_FORGE_FIX_ATTEMPTS", 3, minimum=0, maximum=50)
# How much of a failing check's summary and log a follow-up run's prompt carries (its end, where logs fail).
WORKGRAPH_FORGE_CHECK_LOG_CHARS = env_int("WORKGRAPH_FORGE_CHECK_LOG_CHARS", 6000, minimum=200, maximum=100_000)
