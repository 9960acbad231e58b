"""The embedded executor runs a job that lost its database again, with backoff, instead of dropping it."""

from __future__ import annotations

import threading

import pytest
from django.db import OperationalError

from graphs import executors as jobs
from graphs.engine import JOB_HANDLERS


@pytest.fixture
def flaky_job(monkeypatch):
    """A job that finds the database locked twice, then runs; the engine's handlers come back after."""
    calls: list[str] = []
    done = threading.Event()

    def job(arg: str) -> None:
        calls.append(arg)
        if len(calls) <= 2:
            raise OperationalError("database is locked")
        done.set()

    monkeypatch.setattr(jobs, "DATABASE_BACKOFF_CAP", 0.05)
    jobs.job_handlers_install({"flaky": job})
    yield calls, done
    jobs.job_handlers_install(JOB_HANDLERS)


def test_a_job_that_finds_the_database_locked_runs_again_until_it_gets_through(flaky_job):
    calls, done = flaky_job
    executor = jobs.ThreadExecutor(workers=1)

    executor._submit_now("flaky", "x", 0.0)

    assert done.wait(timeout=10), calls
    assert calls == ["x", "x", "x"]


def test_a_job_that_keeps_losing_the_database_stops_after_its_retries(flaky_job, monkeypatch):
    calls, done = flaky_job
    monkeypatch.setattr(jobs, "DATABASE_RETRIES", 1)
    executor = jobs.ThreadExecutor(workers=1)

    executor._submit_now("flaky", "x", 0.0)

    assert not done.wait(timeout=1)
    assert calls == ["x", "x"]
