"""Celery tasks: thin wrappers that hand a job name and an id to the engine."""

from celery import shared_task

from graphs.jobs import job_run


@shared_task(name="graphs.job", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def job_task(name: str, arg: str) -> None:
    job_run(name, arg)


@shared_task(name="graphs.reap", ignore_result=True)
def reap_task() -> None:
    job_run("reap", "")
