"""Celery tasks: thin wrappers that hand a job name and an id to the engine.

Connections: the settings tell Celery's Django fixup to keep database connections across tasks
(``CELERY_DB_REUSE_MAX``), so each task here does what Django does around a request instead: it drops
a connection that broke or outlived ``CONN_MAX_AGE`` before and after the job. Opening a PostgreSQL
connection per job cost more than the engine's own work on a node.

A job that loses its database connection before it could record anything (the claim itself failed)
is retried with backoff: every job is idempotent, and the next attempt starts on a fresh connection.
"""

from celery import shared_task
from django.db import InterfaceError, OperationalError, close_old_connections

from graphs.executors import (
    DATABASE_BACKOFF_CAP,
    DATABASE_RETRIES,
    FORGE_POLL_JOB,
    JOB_TASK_NAME,
    REAP_JOB,
    job_run,
)


@shared_task(
    name=JOB_TASK_NAME, acks_late=True, reject_on_worker_lost=True, ignore_result=True,
    autoretry_for=(OperationalError, InterfaceError), max_retries=DATABASE_RETRIES,
    retry_backoff=1, retry_backoff_max=DATABASE_BACKOFF_CAP, retry_jitter=True,
)
def job_task(name: str, arg: str) -> None:
    _job_run_between_connection_checks(name, arg)


@shared_task(name="graphs.reap", ignore_result=True)
def reap_task() -> None:
    _job_run_between_connection_checks(REAP_JOB, "")


@shared_task(name="graphs.forge_poll", ignore_result=True)
def forge_poll_task() -> None:
    _job_run_between_connection_checks(FORGE_POLL_JOB, "")


def _job_run_between_connection_checks(name: str, arg: str) -> None:
    close_old_connections()
    try:
        job_run(name, arg)
    finally:
        close_old_connections()
