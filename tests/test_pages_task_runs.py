"""A task page with several runs: the latest open and the earlier ones folded under it, artifacts listed
per run once each, an Outcome that names its run and keeps the last verdict reached in view when a
later run was cancelled; "Run pipeline" disabled with its reason while a run is under way, a refusal in
words; and a query budget that holds at 10 and at 1,000 nodes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from graphs.models import Artifact, Task, WorkGraphRun, WorkNodeExecution
from graphs.runs.status import task_status_refresh
from tests import factories
from tests.run_builders import edges_for, node, planned_run

pytestmark = pytest.mark.django_db

# The task page's queries whatever the size of its graph and the number of its runs (one of them the
# navigation's inbox count, on every page; one the fingerprint of the person's runs its inbox socket
# checks; two the delivery of the runs that succeeded, with its setting).
TASK_PAGE_QUERY_BUDGET = 19


@pytest.fixture
def client(alice) -> Client:
    client = Client()
    client.force_login(alice)
    return client


def _manifest() -> dict:
    nodes = [node("a", promotes_to_artifact={"artifact_type": "notes"}),
             node("verdict", "a", node_type="final_verdict")]
    return {"nodes": nodes, "edges": edges_for(nodes)}


def _ended_run(task, *, status: str, verdict: str | None, created_at, attempts: int = 1) -> WorkGraphRun:
    """A run of ``task`` that ended ``status``; node ``a`` kept a notes artifact on each of its
    ``attempts``, and the verdict node answered ``verdict`` (None: it never ran)."""
    run = planned_run(task, _manifest(), status=status)
    WorkGraphRun.objects.filter(pk=run.pk).update(created_at=created_at, finished_at=created_at)
    for attempt in range(1, attempts + 1):
        row = factories.ExecutionFactory(run=run, node_id="a", attempt=attempt, status="succeeded")
        Artifact.objects.create(task=task, run=run, node_exec=row, artifact_type="notes",
                                content=f"notes of {run.run_id} #{attempt}")
    if verdict is not None:
        factories.ExecutionFactory(run=run, node_id="verdict", status="succeeded", finished_at=created_at,
                                   output_payload={"text": f"VERDICT: {verdict}\nAll checked."})
    return run


@pytest.fixture
def pass_then_cancelled(task):
    now = timezone.now()
    passed = _ended_run(task, status="succeeded", verdict="pass", created_at=now - timedelta(hours=1), attempts=2)
    cancelled = _ended_run(task, status="cancelled", verdict=None, created_at=now)
    task_status_refresh(task_id=task.pk)
    return passed, cancelled


def test_the_latest_run_is_open_and_earlier_ones_are_folded_under_it(client, task, pass_then_cancelled):
    passed, cancelled = pass_then_cancelled
    html = client.get(f"/tasks/{task.pk}/").content.decode()
    latest_at, earlier_at, older_at = (html.index(f'id="run-{cancelled.run_id}"'), html.index('id="earlier-runs"'),
                                       html.index(f'id="run-{passed.run_id}"'))
    assert latest_at < earlier_at < older_at
    latest_section = html[latest_at:earlier_at]
    older_section = html[older_at:]
    assert 'data-run-body open' in latest_section
    assert 'data-run-body>' in older_section and 'data-run-body open' not in older_section


def test_artifacts_are_listed_per_run_once_each(client, task, pass_then_cancelled):
    passed, cancelled = pass_then_cancelled
    html = client.get(f"/tasks/{task.pk}/").content.decode()
    older_section = html[html.index(f'id="run-{passed.run_id}"'):]
    latest_section = html[html.index(f'id="run-{cancelled.run_id}"'):html.index('id="earlier-runs"')]
    # Node a ran twice in the earlier run: its latest attempt's artifact is the one listed.
    assert older_section.count('data-artifact="a notes"') == 1
    assert f"notes of {passed.run_id} #2" in older_section and f"notes of {passed.run_id} #1" not in html
    assert latest_section.count('data-artifact="a notes"') == 1
    assert f"notes of {cancelled.run_id} #1" in latest_section


def test_a_cancelled_rerun_keeps_the_last_verdict_in_view_with_its_evidence(client, task, pass_then_cancelled):
    passed, cancelled = pass_then_cancelled
    html = client.get(f"/tasks/{task.pk}/").content.decode()
    outcome = html[html.index('id="task-outcome"'):html.index('class="card elements"')]
    assert f'data-outcome-run="{cancelled.run_id}"' in outcome
    assert 'data-status="cancelled"' in outcome
    assert 'data-last-verdict="PASS"' in outcome
    evidence = WorkNodeExecution.objects.get(run=passed, node_id="verdict")
    assert f'href="/executions/{evidence.pk}/" data-evidence' in outcome
    assert f'href="#run-{passed.run_id}"' in outcome


def test_the_outcome_names_the_run_its_verdict_comes_from(client, task):
    run = _ended_run(task, status="succeeded", verdict="pass", created_at=timezone.now())
    task_status_refresh(task_id=task.pk)
    html = client.get(f"/tasks/{task.pk}/").content.decode()
    outcome = html[html.index('id="task-outcome"'):html.index('class="card elements"')]
    assert f'data-outcome-run="{run.run_id}"' in outcome and "<strong data-verdict>PASS</strong>" in outcome
    assert "data-last-verdict" not in outcome


def test_run_pipeline_is_disabled_with_its_reason_while_a_run_is_under_way(client, task):
    planned_run(task, _manifest(), status="running")
    html = client.get(f"/tasks/{task.pk}/").content.decode()
    assert 'id="run-pipeline" disabled aria-describedby="run-refusal"' in html
    assert '<p class="muted small" id="run-refusal">A run is under way: cancel it or wait for it to end.</p>' in html


def test_a_refused_new_run_says_why_in_words_without_ids(client, task):
    running = planned_run(task, _manifest(), status="running")
    response = client.post(f"/tasks/{task.pk}/pipeline/", follow=True)
    text = [str(message) for message in response.context["messages"]]
    assert text == ["Refused: a run is under way: cancel it or wait for it to end."]
    assert str(running.run_id) not in text[0] and str(task.pk) not in text[0]


def _big_task(project, size: int) -> Task:
    """A task with an earlier failed run and a latest succeeded one of ``size`` nodes, every node with
    an attempt and an artifact, a fifth of them with a second attempt."""
    task = factories.TaskFactory(project=project)
    nodes = [node("n0")] + [node(f"n{i}", f"n{(i - 1) // 2}") for i in range(1, size - 1)]
    nodes.append(node("verdict", "n0", node_type="final_verdict"))
    for status in ("failed", "succeeded"):
        run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)}, status=status)
        rows = WorkNodeExecution.objects.bulk_create(
            [WorkNodeExecution(run=run, node_id=n["node_id"], subagent_type="planner", status=status,
                               output_payload={"text": "VERDICT: pass"}) for n in nodes]
            + [WorkNodeExecution(run=run, node_id=n["node_id"], attempt=2, cause="retry_self",
                                 subagent_type="planner", status="succeeded") for n in nodes[: size // 5]]
        )
        Artifact.objects.bulk_create([Artifact(task=task, run=run, node_exec=row, artifact_type="notes", content="x")
                                      for row in rows])
    task_status_refresh(task_id=task.pk)
    return task


@pytest.mark.parametrize("size", [10, 1000])
def test_the_task_page_stays_within_its_query_budget(client, project, size, django_assert_max_num_queries):
    task = _big_task(project, size)
    with django_assert_max_num_queries(TASK_PAGE_QUERY_BUDGET):
        response = client.get(f"/tasks/{task.pk}/")
    assert response.status_code == 200
    assert response.content.decode().count('class="artifact"') == 2 * size
