"""Change review on real Celery workers: a worker holds a command node's change for a reviewer, and the
approval, given in the console's process, lands it and hands the node waiting behind it to a worker."""

from __future__ import annotations

import os

import pytest

from graphs.engine import run_start
from graphs.models import WorkGraphRun
from tests.celery_worker import wait_until
from tests.change_reviews import review, review_required
from tests.run_builders import command_node, edges_for, latest, planned_run

pytestmark = [pytest.mark.services, pytest.mark.sandbox, pytest.mark.django_db(transaction=True)]


def test_an_approval_in_the_console_lets_a_celery_worker_run_what_waited(
    repo_task, project, commands_allowed, bob, workers
):
    review_required(project)
    worker = workers("review", WORKGRAPH_AGENT="offline")
    nodes = [command_node("generate", "open('generated.txt', 'w').write('made\\n')"),
             command_node("after", "print(open('generated.txt').read(), end='')", "generate")]
    run = planned_run(repo_task, {"nodes": nodes, "edges": edges_for(nodes)})

    run_start(run=run)
    wait_until(lambda: latest(run)["generate"].status == "awaiting_review", timeout=60,
               message=lambda: f"generate is {latest(run)['generate'].status}:\n{worker.log_text()[-3000:]}")
    assert latest(run)["after"].status == "pending"
    assert WorkGraphRun.objects.get(pk=run.pk).status == "running"

    review(latest(run)["generate"], bob, "approve")
    wait_until(lambda: WorkGraphRun.objects.get(pk=run.pk).is_finished(), timeout=60,
               message=lambda: f"the run is still {WorkGraphRun.objects.get(pk=run.pk).status}:\n"
                               f"{worker.log_text()[-3000:]}")

    rows = latest(run)
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
    assert rows["after"].status == "succeeded" and rows["after"].output_payload["text"] == "made\n"
    assert rows["after"].worker.split(":")[1] != str(os.getpid())  # a worker ran it, not the console's process
