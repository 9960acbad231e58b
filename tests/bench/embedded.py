"""The embedded-mode measurement, as a program: it needs a process of its own.

The embedded mode is defined by its environment — no ``DATABASE_URL`` (a SQLite file under
``WORKGRAPH_VAR_DIR``) and no ``REDIS_URL`` (the in-process ``ThreadExecutor`` with
``WORKGRAPH_EMBEDDED_WORKERS`` threads) — so it cannot run inside a test session on PostgreSQL::

    env -u DATABASE_URL -u REDIS_URL WORKGRAPH_VAR_DIR=$(mktemp -d) \\
        DJANGO_SETTINGS_MODULE=tests.bench.instant_settings python -m tests.bench.embedded

prints ``READY`` once migrated, then reads graph names on stdin, one a line, and answers each with a line
``BENCH {measurement}`` once that graph has run, so the benchmark can run it by turns with the other
systems (see ``tests.bench.by_turns``).
"""

import json
import sys
from dataclasses import asdict

import django

django.setup()

from django.core.management import call_command  # noqa: E402

from tests import factories  # noqa: E402
from tests.bench.overhead import graph_run  # noqa: E402


def main() -> None:
    call_command("migrate", verbosity=0)
    task = factories.TaskFactory()
    print("READY", flush=True)
    for line in sys.stdin:
        measurement = graph_run(task=task, graph=line.strip())
        print("BENCH " + json.dumps(asdict(measurement)), flush=True)


if __name__ == "__main__":
    main()
