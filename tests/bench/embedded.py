"""The embedded-mode measurement, as a program: it needs a process of its own.

The embedded mode is defined by its environment — no ``DATABASE_URL`` (a SQLite file under
``WORKGRAPH_VAR_DIR``) and no ``REDIS_URL`` (the in-process ``ThreadExecutor`` with
``WORKGRAPH_EMBEDDED_WORKERS`` threads) — so it cannot run inside a test session on PostgreSQL::

    env -u DATABASE_URL -u REDIS_URL WORKGRAPH_VAR_DIR=$(mktemp -d) \\
        DJANGO_SETTINGS_MODULE=tests.bench.instant_settings python -m tests.bench.embedded chain40 fanout500

prints one JSON object of measurements per graph on stdout.
"""

import json
import sys
from dataclasses import asdict

import django

django.setup()

from django.core.management import call_command  # noqa: E402

from tests import factories  # noqa: E402
from tests.bench.overhead import GRAPHS, graph_run  # noqa: E402


def main(graphs: list[str]) -> None:
    call_command("migrate", verbosity=0)
    task = factories.TaskFactory()
    for graph in graphs:
        print(json.dumps(asdict(graph_run(task=task, graph=graph))), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or list(GRAPHS))
