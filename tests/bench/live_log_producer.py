"""One console tree's side of the live log benchmark (``bench_live_logs.py``), as a program.

    python tests/bench/live_log_producer.py TREE setup EXECUTIONS
    python tests/bench/live_log_producer.py TREE produce EXECUTION_ID RATE COUNT

The benchmark compares two versions of the console, each in a source tree of its own, so whatever
touches a store goes through the APIs of the tree named first: it becomes ``sys.path[0]`` before
Django starts, so ``graphs.logs.store`` and the factories are that tree's. The environment names the
settings, the database (``DATABASE_URL``), Redis (``REDIS_URL``) and, for a tree whose logs are
files, ``WORKGRAPH_LOG_DIR`` — the same as the daphnes serving that tree get.

- ``setup`` migrates the database, creates a project led by one user with a task and EXECUTIONS running
  attempts, and prints one JSON line: the user's session cookie, the task's and the attempts' ids, and
  the file ``graphs.logs.store`` was loaded from (so the benchmark can check it measures the tree it means to).
- ``produce`` opens the attempt's log and appends line 1 before anyone listens, prints ``ready``,
  waits for a line on stdin, appends COUNT ``agent_output`` lines at RATE a second (each stamped
  ``t=time.time()``, from which the listeners take their latency), closes the log, and prints
  ``produced <lines a second achieved>``. It then stays until stdin closes: the live publisher's
  thread sends what it still holds, as in a worker that goes on to its next node.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time

import django


def main(arguments: list[str]) -> None:
    tree, command, *rest = arguments
    sys.path[0] = tree
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    django.setup()
    if command == "setup":
        setup(executions=int(rest[0]))
    elif command == "produce":
        execution_id, rate, count = rest
        produce(execution_id=execution_id, rate=int(rate), count=int(count))
    else:
        raise SystemExit(f"unknown command {command!r}")


def _log_store():
    """The tree's log store: ``graphs.logs.store``, or ``graphs.logs`` in a tree from before the logs
    package (the file store the benchmark compares with)."""
    try:
        return importlib.import_module("graphs.logs.store")
    except ModuleNotFoundError:
        return importlib.import_module("graphs.logs")


def setup(*, executions: int) -> None:
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client

    from tests import factories

    call_command("migrate", verbosity=0)
    project = factories.ProjectFactory()
    alice = factories.member(project, "alice", role="lead")
    task = factories.TaskFactory(project=project, created_by=alice)
    client = Client()
    client.force_login(alice)
    ids = [
        str(factories.ExecutionFactory(run=factories.RunFactory(task=task), status="running").pk)
        for _ in range(executions)
    ]
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    print(json.dumps({"cookie": cookie, "task": str(task.pk), "executions": ids,
                      "logs_module": _log_store().__file__}), flush=True)


def produce(*, execution_id: str, rate: int, count: int) -> None:
    from graphs.models import WorkNodeExecution

    store = _log_store()
    log_append, log_file_close, log_file_open = store.log_append, store.log_file_close, store.log_file_open

    execution = WorkNodeExecution.objects.select_related("run__task").get(pk=execution_id)
    log_file_open(execution=execution)
    # A client that received line 1 has joined the group: the benchmark starts once all have it.
    log_append(execution=execution, event="bench_ready", t=time.time())
    print("ready", flush=True)
    if not sys.stdin.readline():
        return  # the benchmark gave up on this case before it started
    start = time.monotonic()
    for index in range(count):
        delay = start + index / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        log_append(execution=execution, event="agent_output", text=f"bench line {index}", t=time.time())
    produced = count / (time.monotonic() - start)
    log_file_close(execution=execution)
    print(f"produced {produced:.1f}", flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main(sys.argv[1:])
