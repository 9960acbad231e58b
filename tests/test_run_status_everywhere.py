"""A task's and a run's status read the same on every surface, at every step of their life.

The surfaces: the dashboard and the task list (the task's row), the task page, the run page, the API
(task and run) and the run's live snapshot. The task's status follows its latest run by one rule.
"""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from graphs.agents import AgentCancelled
from graphs.engine import plan_fresh, run_cancel, run_fork, run_start
from graphs.engine.review import run_plan_approve
from graphs.logs import events
from graphs.models import PLANNING_NODE_ID, Task, WorkGraphRun
from graphs.reads.live import run_snapshot_read

pytestmark = pytest.mark.django_db

PLAN = json.dumps({
    "nodes": [
        {"node_id": "brief", "artifact_type": "brd", "depends_on": []},
        {"node_id": "spec", "artifact_type": "prd", "depends_on": ["brief"],
         "judgment": {"kind": "mechanical", "check_ref": "verdict_says_pass"}, "on_fail": {"action": "hard_fail"}},
        {"node_id": "design", "artifact_type": "sdd", "depends_on": ["spec"]},
    ],
    "edges": [{"from": "brief", "to": "spec", "edge_type": "needs_judgment"},
              {"from": "spec", "to": "design", "edge_type": "needs_judgment"}],
})


@pytest.fixture
def planner(scripted_runner):
    scripted_runner.replies[("plan", "planner")] = PLAN
    scripted_runner.replies[("node", "spec")] = "VERDICT: pass"
    return scripted_runner


@pytest.fixture
def surfaces(client, alice):
    client.force_login(alice)

    def read(task: Task) -> dict[str, str | None]:
        """Every surface's word for the task's status and for its latest run's."""
        run = WorkGraphRun.objects.filter(task=task).order_by("-created_at").first()
        seen = {
            "dashboard": _row_status(client.get(reverse("dashboard")).content.decode(), task),
            "task list": _row_status(client.get(reverse("task_list")).content.decode(), task),
            "task page": _heading_status(client.get(reverse("task_detail", args=[task.pk])).content.decode()),
            "task API": client.get(f"/api/tasks/{task.pk}").json()["status"],
        }
        if run is not None:
            run_page = client.get(reverse("run_graph", args=[run.pk])).content.decode()
            seen |= {
                "run page": re.search(r'id="run-status"><span[^>]*data-status="([^"]*)"', run_page).group(1),
                "run API": client.get(f"/api/runs/{run.pk}").json()["status"],
                "run snapshot": run_snapshot_read(run_id=run.pk)["status"],
            }
        return seen

    return read


def _row_status(html: str, task: Task) -> str:
    row = re.search(rf'<tr>\s*<td><a href="/tasks/{task.pk}/">.*?</tr>', html, re.S)
    assert row is not None, "the task has no row"
    return re.search(r'data-status="([^"]*)"', row.group(0)).group(1)


def _heading_status(html: str) -> str:
    return re.search(r"<h1>.*?data-status=\"([^\"]*)\"", html, re.S).group(1)


def assert_everywhere(seen: dict[str, str | None], *, task: str, run: str | None) -> None:
    expected = {name: (run if name.startswith("run") else task) for name in seen}
    assert seen == expected


def test_a_plan_reviewed_started_and_succeeding_reads_the_same_at_every_step(
    project, task, planner, inline_executor, surfaces, bob
):
    project.require_plan_approval = True
    project.save()
    assert_everywhere(surfaces(task), task="draft", run=None)

    run = plan_fresh(task=task)
    assert_everywhere(surfaces(task), task="planning", run="planning")

    inline_executor.drain()
    assert_everywhere(surfaces(task), task="awaiting_approval", run="awaiting_approval")

    run_plan_approve(run=run, reviewer=bob)
    assert_everywhere(surfaces(task), task="ready", run="ready")

    run_start(run=run)
    assert_everywhere(surfaces(task), task="running", run="running")

    inline_executor.drain()
    assert_everywhere(surfaces(task), task="succeeded", run="succeeded")


def test_a_failed_run_fails_its_task_everywhere(task, planner, inline_executor, surfaces):
    planner.replies[("node", "spec")] = "VERDICT: fail"
    run = plan_fresh(task=task)
    inline_executor.drain()
    run_start(run=WorkGraphRun.objects.get(pk=run.pk))
    inline_executor.drain()
    assert_everywhere(surfaces(task), task="failed", run="failed")


def test_a_plan_that_fails_fails_its_task_everywhere(task, planner, inline_executor, surfaces):
    planner.replies[("plan", "planner")] = "I would rather not plan."
    plan_fresh(task=task)
    inline_executor.drain()
    assert_everywhere(surfaces(task), task="failed", run="planning_failed")


def test_a_run_cancelled_before_its_planning_call_starts_is_cancelled_everywhere(
    task, planner, inline_executor, surfaces
):
    run = plan_fresh(task=task)
    run_cancel(run=run)
    inline_executor.drain()
    assert_everywhere(surfaces(task), task="cancelled", run="cancelled")
    assert planner.calls == [], "a cancelled plan is not asked for"


def test_a_run_cancelled_while_its_planning_call_runs_ends_cancelled_with_its_call(
    task, planner, inline_executor, surfaces
):
    def cancelled_meanwhile(call):
        run_cancel(run=WorkGraphRun.objects.get(task=task))
        raise AgentCancelled()  # what a runner raises once the heartbeat passes the cancel on

    planner.replies[("plan", "planner")] = cancelled_meanwhile
    run = plan_fresh(task=task)
    inline_executor.drain()

    assert_everywhere(surfaces(task), task="cancelled", run="cancelled")
    call = run.executions.get(node_id=PLANNING_NODE_ID)
    assert call.status == "cancelled"
    assert WorkGraphRun.objects.get(pk=run.pk).error == "cancelled"


@pytest.mark.parametrize("phase", ["awaiting_approval", "ready", "running"])
def test_a_run_cancelled_after_planning_is_cancelled_everywhere(
    project, task, planner, inline_executor, surfaces, phase
):
    project.require_plan_approval = phase == "awaiting_approval"
    project.save()
    run = plan_fresh(task=task)
    inline_executor.drain()
    run.refresh_from_db()
    if phase == "running":
        run_start(run=run)
    assert WorkGraphRun.objects.get(pk=run.pk).status == phase

    run_cancel(run=run)
    inline_executor.drain()
    assert_everywhere(surfaces(task), task="cancelled", run="cancelled")


def test_a_fork_that_succeeds_after_a_cancel_makes_the_task_succeeded(task, planner, inline_executor, surfaces):
    run = plan_fresh(task=task)
    inline_executor.drain()
    run.refresh_from_db()
    run_start(run=run)
    run_cancel(run=run)
    inline_executor.drain()
    assert_everywhere(surfaces(task), task="cancelled", run="cancelled")

    fork = run_fork(run=WorkGraphRun.objects.get(pk=run.pk), node_id="brief")
    assert_everywhere(surfaces(task), task="running", run="running")
    inline_executor.drain()
    assert WorkGraphRun.objects.get(pk=fork.pk).status == "succeeded"
    assert_everywhere(surfaces(task), task="succeeded", run="succeeded")


@pytest.mark.django_db(transaction=True)  # live events leave on commit
def test_a_failed_runs_progress_reads_the_same_live_and_on_reload(
    client, alice, task, planner, inline_executor, monkeypatch
):
    live: list[dict] = []
    monkeypatch.setattr(events, "_listeners", [lambda event: event["event"] == "progress" and live.append(event)])
    planner.replies[("node", "spec")] = "VERDICT: fail"
    run = plan_fresh(task=task)
    inline_executor.drain()
    run_start(run=WorkGraphRun.objects.get(pk=run.pk))
    inline_executor.drain()

    summary = "3/3 done · 1 succeeded · 1 failed · 1 blocked"
    assert live[-1]["summary"] == summary
    assert run_snapshot_read(run_id=run.pk)["progress"]["summary"] == summary
    client.force_login(alice)
    task_list = client.get(reverse("task_list")).content.decode()
    task_page = client.get(reverse("task_detail", args=[task.pk])).content.decode()
    assert summary in task_list
    assert re.search(r"data-progress>([^<]*)<", task_page).group(1) == summary
