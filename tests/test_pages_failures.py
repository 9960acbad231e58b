"""The task page and the API list a run's failures by category, with their evidence and confidence."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from graphs.agents import AgentError
from graphs.engine import run_start
from graphs.models import WorkNodeExecution
from tests import factories
from tests.clients import signed_in
from tests.run_builders import edges_for, node, planned_run
from tests.scripted_agents import judge

pytestmark = pytest.mark.django_db

COMPILES = {"kind": "mechanical", "check_ref": "check_script_compiles"}


@pytest.fixture
def failed_run(task, scripted_runner, inline_executor):
    """``build`` fails to compile (a TestBug, the root cause) and blocks ``ship``; ``fetch`` fails on an
    unreachable agent (an EnvFailure); ``review``'s judge quotes a failed assertion with markup in it (a
    ProductBug); ``docs`` succeeds."""
    scripted_runner.replies[("node", "build")] = "```python\ndef broken(:\n```"
    scripted_runner.replies[("node", "fetch")] = AgentError("could not reach the endpoint <b>down</b>",
                                                            kind="network", transient=False)
    scripted_runner.replies[("judge", "review")] = judge(False, "AssertionError: <img src=x onerror=alert(1)>")
    nodes = [node("build", judgment=COMPILES), node("ship", "build"), node("fetch"), node("docs"),
             node("review", judgment={"kind": "llm", "judge_prompt": "{content}"})]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    inline_executor.drain()
    run.refresh_from_db()
    return run


def test_the_task_page_lists_failures_by_category_with_node_attempt_evidence_and_confidence(alice, failed_run):
    html = signed_in(alice).get(f"/tasks/{failed_run.task_id}/").content.decode()
    section = html[html.index("Failures by category"):]
    # Categories in their documented order: ProductBug, TestBug, EnvFailure, ContractMismatch, …
    assert section.index('data-category="TestBug"') < section.index('data-category="EnvFailure"')
    build = WorkNodeExecution.objects.get(run=failed_run, node_id="build")
    row = section[section.index('<tr data-node-id="build"'):]
    row = row[: row.index("</tr>")]
    assert f'href="/executions/{build.pk}/">#1</a>' in row
    assert "the script does not compile" in row
    assert '<td data-confidence>0.60</td>' in row
    assert "root cause" in row
    assert '<tr data-node-id="ship"' not in section, "a blocked node is not a failed attempt"


def test_the_to_do_tree_names_what_blocked_a_node(alice, failed_run):
    html = signed_in(alice).get(f"/tasks/{failed_run.task_id}/").content.decode()
    assert '<span class="failure-role failure-role--blocked">blocked by build</span>' in html


def test_evidence_from_agent_output_is_escaped(alice, failed_run):
    html = signed_in(alice).get(f"/tasks/{failed_run.task_id}/").content.decode()
    row = html[html.index('<tr data-node-id="review"'):]
    assert "matched: AssertionError: &lt;img src=x onerror=alert(1)&gt;" in row[: row.index("</tr>")]
    assert "<img src=x" not in html and "<b>down</b>" not in html


def test_a_succeeded_run_shows_no_failures_section(alice, task, scripted_runner, inline_executor):
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    assert "Failures by category" not in signed_in(alice).get(f"/tasks/{task.pk}/").content.decode()


def test_the_api_carries_each_attempts_classification_and_the_runs_failures(alice, failed_run):
    api = signed_in(alice)
    build = WorkNodeExecution.objects.get(run=failed_run, node_id="build")

    execution = api.get(f"/api/executions/{build.pk}").json()
    assert execution["failure"]["category"] == "TestBug"
    assert execution["failure"]["confidence"] == 0.6

    run = api.get(f"/api/runs/{failed_run.run_id}").json()
    groups = {group["category"]: group["attempts"] for group in run["failures"]}
    assert list(groups) == ["ProductBug", "TestBug", "EnvFailure"]
    assert groups["TestBug"][0] | {"evidence": None} == {
        "category": "TestBug", "confidence": 0.6, "rule": "script_does_not_compile", "note": "", "evidence": None,
        "node_exec_id": str(build.pk), "node_id": "build", "attempt": 1, "role": "root_cause", "because_of": [],
    }
    assert groups["EnvFailure"][0]["evidence"] == ["agent error kind: network"]
    succeeded = next(item for item in run["executions"] if item["node_id"] == "docs")
    assert succeeded["failure"] is None


def _failing_run(task, size: int):
    nodes = [node(f"n{i}") for i in range(size)]
    run = planned_run(task, {"nodes": nodes, "edges": []}, status="failed")
    failure = {"category": "EnvFailure", "confidence": 0.6, "evidence": ["agent error kind: timeout"],
               "rule": "agent_unreachable", "note": ""}
    WorkNodeExecution.objects.bulk_create(
        WorkNodeExecution(run=run, node_id=f"n{i}", subagent_type="planner", status="failed", failure=failure)
        for i in range(size)
    )
    return run


# The API lists each failure twice: on its execution, and in the run's failures by category.
@pytest.mark.parametrize(("url", "mentions"), [("/tasks/{task}/", 1), ("/api/runs/{run}", 2)])
def test_failure_listings_take_the_same_queries_for_ten_failures_and_three_hundred(alice, project, url, mentions):
    client = signed_in(alice)
    counts = []
    for size in (10, 300):
        task = factories.TaskFactory(project=project)
        run = _failing_run(task, size)
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url.format(task=task.pk, run=run.run_id))
        assert response.status_code == 200
        assert response.content.decode().count("agent error kind: timeout") == size * mentions
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_the_attempt_page_shows_its_classification_escaped(alice, failed_run):
    fetch = WorkNodeExecution.objects.get(run=failed_run, node_id="fetch")
    html = signed_in(alice).get(f"/executions/{fetch.pk}/").content.decode()
    block = html[html.index('<div class="failure" data-category="EnvFailure">'):]
    assert "The environment failed, not the work" in block[:400]
    assert "EnvFailure · likely (confidence 0.60)" in block[:400]
    technical = html[html.index('id="technical"'):]
    assert "rule agent_unreachable" in technical[:800]
    assert "<b>down</b>" not in html
