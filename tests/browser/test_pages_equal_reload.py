"""In a real browser against daphne: every page open on a run — the task page, the run graph with its
side panel open on a node and its changes panel, the "as it ran" timeline, a node page, the dashboard
and the inbox, each with the navigation's inbox count — shows, at every step of the run, what a fresh
load of its URL shows, region by region.

The run is moved by the engine in the test's own process, its agents scripted: each step is a real
state change, which the pages hear of through their run sockets' resync.
"""

from __future__ import annotations

import json
import threading

import pytest

from graphs.agents import AgentCancelled
from graphs.engine import pipeline_start, plan_fresh, run_cancel, run_start, run_wait_finished
from graphs.engine.review import run_plan_approve
from graphs.executors import ThreadExecutor, executor_set
from graphs.models import PLANNING_NODE_ID, WorkGraphRun
from tests.browser.conftest import PAGE_WAIT_MS, sign_in
from tests.browser.reloads import OpenPages
from tests.repos import writes
from tests.run_builders import edges_for, latest, node
from tests.scripted_agents import judge

pytestmark = pytest.mark.django_db(transaction=True)

PRD = {"node_id": "prd", "artifact_type": "prd", "depends_on": []}
IMPL = {"node_id": "impl", "task_prompt": "Write the export.", "depends_on": ["prd"]}
VERDICT = {"node_id": "verdict", "task_prompt": "Decide.", "depends_on": ["impl"], "node_type": "final_verdict",
           "judgment": {"kind": "mechanical", "check_ref": "verdict_says_pass"}}
REFUSAL = "I would rather not plan this today."


def fenced(*nodes: dict, loop_backs: tuple[dict, ...] = ()) -> str:
    manifest = {"nodes": list(nodes), "edges": [*edges_for([{"depends_on": [], **n} for n in nodes]), *loop_backs]}
    return "The plan:\n```json\n" + json.dumps(manifest) + "\n```\n"


def prd_done(run: WorkGraphRun, executor) -> None:
    """Approve the run's plan and run its jobs one by one until its prd node has succeeded: the coder's
    planning call is still to come."""
    run_plan_approve(run=run, reviewer=run.task.created_by)
    while not run.executions.filter(node_id="prd", status="succeeded").exists():
        assert executor.drain(max_jobs=1), "the jobs ran out before the prd succeeded"


@pytest.fixture
def browser(chromium):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(PAGE_WAIT_MS)
    yield context
    context.close()


def run_pages(browser, server: str, run: WorkGraphRun, *, node_id: str) -> OpenPages:
    """Alice signed in, with every page of ``run`` open: its task, its graph with ``node_id`` in the side
    panel, its timeline, the node page of ``node_id``'s latest attempt, the dashboard and her inbox."""
    sign_in(browser.new_page(), f"{server}/", "alice")
    pages = OpenPages(browser)
    for path in (f"/tasks/{run.task_id}/", f"/runs/{run.run_id}/?node={node_id}",
                 f"/runs/{run.run_id}/?view=timeline", f"/executions/{latest(run)[node_id].pk}/", "/", "/inbox/"):
        pages.open(f"{server}{path}")
    return pages


def test_a_pipeline_waiting_on_each_append_and_succeeding_reads_as_a_reload_at_every_step(
    browser, console_server, alice, reviewed, repo_task, scripted_runner, inline_executor
):
    scripted_runner.replies.update({
        ("plan", "planner"): fenced(PRD), ("plan", "coder"): fenced(IMPL), ("plan", "validator"): fenced(VERDICT),
        ("node", "impl"): writes("src/export.py", "def export():\n    return 'a,b'\n"),
        ("node", "verdict"): "VERDICT: pass",
    })
    run = pipeline_start(task=repo_task)
    inline_executor.drain()
    prd_done(WorkGraphRun.objects.get(pk=run.pk), inline_executor)
    pages = run_pages(browser, console_server, run, node_id="prd")
    graph = pages.pages[1]
    pages.equal_to_reloads("the prd node succeeding")

    inline_executor.drain()
    assert WorkGraphRun.objects.get(pk=run.pk).status == "awaiting_approval"
    pages.equal_to_reloads("the coder's append waits for approval")
    assert graph.locator("#run-progress").inner_text() == "1/2 done · 1 succeeded", "the appended node is counted"
    assert graph.locator("#run-waiting").inner_text().startswith("Waiting for approval: ")
    assert graph.locator("#run-header button[data-action='approve']").count() == 1
    assert graph.locator("#run-header button[data-action='reject']").count() == 1

    run_plan_approve(run=WorkGraphRun.objects.get(pk=run.pk), reviewer=alice)
    inline_executor.drain()
    assert WorkGraphRun.objects.get(pk=run.pk).stage == "validator"
    pages.equal_to_reloads("the coder's append approved, the validator's waiting")
    assert graph.locator("#run-header button[data-action='approve']").count() == 1

    run_plan_approve(run=WorkGraphRun.objects.get(pk=run.pk), reviewer=alice)
    inline_executor.drain()
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
    pages.equal_to_reloads("success")
    assert graph.locator("#run-waiting").count() == 0
    assert graph.locator("#run-header button[data-action]").count() == 0
    files = graph.locator("#changes table.files tbody tr").all_inner_texts()
    assert [row.split("\t")[0] for row in files] == ["src/export.py"]


def test_a_refused_append_planning_call_reads_as_a_reload(
    browser, console_server, alice, reviewed, task, scripted_runner, inline_executor
):
    scripted_runner.replies.update({("plan", "planner"): fenced(PRD), ("plan", "coder"): REFUSAL})
    run = pipeline_start(task=task)
    inline_executor.drain()
    prd_done(WorkGraphRun.objects.get(pk=run.pk), inline_executor)
    pages = run_pages(browser, console_server, run, node_id="prd")
    graph = pages.pages[1]

    inline_executor.drain()
    assert WorkGraphRun.objects.get(pk=run.pk).status == "failed"
    pages.equal_to_reloads("the coder's planning call refused")
    coder = f"{PLANNING_NODE_ID}:coder"
    assert graph.locator(f"#dag .dag-box[data-node-id='{coder}']").get_attribute("data-status") == "failed"
    refusal = graph.locator(f"#run-notices .planning-failure[data-node-id='{coder}']").inner_text()
    failed_call = run.executions.filter(node_id=coder).latest("attempt")
    assert refusal.startswith(f"The coder's planning call failed: {failed_call.error}")


def test_a_node_that_loops_back_and_a_cancel_read_as_a_reload(browser, console_server, alice, task, scripted_runner,
                                                              inline_executor, settings):
    settings.WORKGRAPH_HEARTBEAT_SECONDS = 0.05
    judging, judged, second_draft = threading.Event(), threading.Event(), threading.Event()

    def failing_once_let_go(call):
        judging.set()
        assert judged.wait(timeout=300), "the test never let the judge answer"
        return judge(False, "the draft forgets the totals row")

    def until_cancelled(call):
        second_draft.set()
        if call.cancel_event.wait(timeout=300):
            raise AgentCancelled()
        raise AssertionError("the run was never cancelled")

    review = node("review", "draft", judgment={"kind": "llm", "judge_prompt": "Check: {content}"},
                  on_fail={"action": "loop_back", "max_attempts": 3})
    scripted_runner.replies.update({
        ("plan", "planner"): fenced(node("draft"), review,
                                    loop_backs=({"from": "review", "to": "draft", "edge_type": "on_failure"},)),
        ("judge", "review", 1): failing_once_let_go,
        ("node", "draft", 2): until_cancelled,
    })
    run = plan_fresh(task=task)
    inline_executor.drain()
    previous = executor_set(ThreadExecutor(workers=2))
    try:
        run_start(run=WorkGraphRun.objects.get(pk=run.pk))
        assert judging.wait(30), "the review was never judged"
        pages = run_pages(browser, console_server, run, node_id="draft")
        graph = pages.pages[1]
        pages.open(f"{console_server}/runs/{run.run_id}/?node=review")

        judged.set()
        assert second_draft.wait(30), "the draft never looped back"
        pages.equal_to_reloads("the review failing and looping back to the draft")
        assert graph.locator("#dag .dag-box[data-node-id='draft']").get_attribute("data-status") == "running"
        assert graph.locator("#run-progress").inner_text() == "0/2 done"

        run_cancel(run=run)
        assert run_wait_finished(run_id=run.run_id, timeout=30).status == "cancelled"
    finally:
        judged.set()
        executor_set(previous)
    pages.equal_to_reloads("the cancel")
    assert graph.locator("#run-status .status").get_attribute("data-status") == "cancelled"
