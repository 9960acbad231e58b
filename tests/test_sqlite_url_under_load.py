"""Twenty pipelines started at once on a SQLite DATABASE_URL all finish, as on the built-in database.

The console runs in a process of its own, as `make run` would with that URL: the embedded mode's
thread pool, the offline agent, and the database the URL names.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PIPELINES = 20

SCRIPT = """
import json, threading
import django
django.setup()
from django.core.management import call_command
from django.db import connection
call_command("migrate", verbosity=0)
from graphs.engine import pipeline_start, task_wait_finished
from graphs.models import Project
from graphs.planning.intake import task_create

project = Project.objects.create(slug="load", name="Load", target_folder={folder!r})
tasks = [task_create(project=project, created_by=None, title=f"Export {{i}}", goal_text="Export the reports as CSV.")
         for i in range({pipelines})]
start = threading.Barrier(len(tasks))

def begin(task):
    start.wait()
    try:
        pipeline_start(task=task)
    finally:
        connection.close()

threads = [threading.Thread(target=begin, args=(task,)) for task in tasks]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps([task_wait_finished(task_id=task.pk, timeout=600).status for task in tasks]))
"""


def test_twenty_pipelines_started_at_once_on_a_sqlite_url_all_finish(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "DEBUG": "1",
        "WORKGRAPH_VAR_DIR": str(tmp_path / "var"),
        "DATABASE_URL": f"sqlite:///{tmp_path}/console.sqlite3",
        "WORKGRAPH_OFFLINE_LINE_DELAY": "0",
    }
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(folder=str(folder), pipelines=PIPELINES)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    statuses = json.loads(result.stdout.strip().splitlines()[-1])
    assert statuses == ["succeeded"] * PIPELINES, result.stderr[-4000:]
    assert "database is locked" not in result.stderr
