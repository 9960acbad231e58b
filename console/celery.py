"""The Celery application. Workers start with ``celery -A console worker``."""

import os

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")

app = Celery("console")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(related_name="jobs_celery")


@worker_process_init.connect
def _metrics_port_open(**_) -> None:
    """Each pool process serves its own counters when WORKGRAPH_WORKER_METRICS_PORT is set (graphs.metrics.worker)."""
    from graphs.metrics.worker import worker_metrics_serve  # Django is set up only once the worker starts

    worker_metrics_serve()
