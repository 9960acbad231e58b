"""Another process that writes an attempt's log the way a worker does, for the tests that need one.

    python -m tests.log_writer_process <node_exec_id> [--lines N] [--every SECONDS] [--close]

It appends ``agent_output`` lines outside any transaction (so through its own log writer), printing
``appended <seq>`` for each as it is handed over; with ``--lines 0`` it goes on until it is killed.
Then it waits until everything is stored (and the log closed, with ``--close``) and prints ``stored``.
The environment names the database (``DATABASE_URL``) and the settings, as for a worker.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time

import django


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("node_exec_id")
    parser.add_argument("--lines", type=int, default=10)
    parser.add_argument("--every", type=float, default=0.0)
    parser.add_argument("--close", action="store_true")
    arguments = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    django.setup()

    from graphs.logs.store import log_append, log_file_close, log_writes_wait
    from graphs.models import WorkNodeExecution

    execution = WorkNodeExecution.objects.select_related("run__task").get(pk=arguments.node_exec_id)
    numbers = itertools.count(1) if arguments.lines == 0 else range(1, arguments.lines + 1)
    for number in numbers:
        line = log_append(execution=execution, event="agent_output", text=f"from another process {number}")
        print(f"appended {line['seq']}", flush=True)
        if arguments.every:
            time.sleep(arguments.every)
    if arguments.close:
        log_file_close(execution=execution)
    print("stored" if log_writes_wait(timeout=30) else "not stored", flush=True)


if __name__ == "__main__":
    sys.exit(main())
