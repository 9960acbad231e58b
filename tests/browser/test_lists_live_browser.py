"""In a real browser against daphne: the task list, a project page's recent tasks and the runs list follow the
runs of a lead's projects without a reload, filtered or not, and show at every step what a fresh load of their
URL shows, region by region.

The task list and the project page follow a run started from the API in the test's own process and moved
there by its engine step by step: the console hears of no event of it, and finds each step by the fingerprint
of the lead's runs its inbox socket checks. The runs list follows a run the console plans and runs itself,
started from the API in the lead's browser: it hears of each step from the run's events.
"""

from __future__ import annotations

import json
import threading
from urllib.parse import quote

import pytest

from graphs.engine import run_wait_finished
from graphs.executors import ThreadExecutor, executor_set
from graphs.models import WorkGraphRun
from tests import factories
from tests.browser.conftest import PAGE_WAIT_MS, console_served, sign_in
from tests.browser.reloads import OpenPages
from tests.clients import signed_in
from tests.run_builders import edges_for, node

pytestmark = pytest.mark.django_db(transaction=True)

# For page.wait_for_function: the page's regions were fetched again more than `arg` times.
RENDERS_ABOVE = "(count) => Number(document.documentElement.dataset.liveRenders || 0) > count"
RENDERS = "() => Number(document.documentElement.dataset.liveRenders || 0)"
TYPED = "the half-typed filter"


@pytest.fixture
def browser(chromium):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(PAGE_WAIT_MS)
    yield context
    context.close()


@pytest.fixture
def paced_console(transactional_db):
    """The console served by daphne, each offline agent call lasting a fifth of a second: a run's steps last
    long enough to be seen."""
    with console_served(WORKGRAPH_OFFLINE_CALL_SECONDS="0.2") as url:
        yield url


def fenced(*nodes: dict) -> str:
    manifest = {"nodes": list(nodes), "edges": edges_for([{"depends_on": [], **n} for n in nodes])}
    return "The plan:\n```json\n" + json.dumps(manifest) + "\n```\n"


def followed(pages: OpenPages, step: str, act, *, shows: str) -> None:
    """Do ``act``; wait until each open page has fetched its regions again and shows ``shows`` (a selector),
    then hold each against a reload of its URL."""
    renders = [page.evaluate(RENDERS) for page in pages.pages]
    act()
    for page, before in zip(pages.pages, renders, strict=True):
        page.wait_for_function(RENDERS_ABOVE, arg=before)
        page.wait_for_selector(shows, state="attached")
    pages.equal_to_reloads(step)


class Held:
    """An agent call that waits until the test lets it go: the run holds still at a step meanwhile."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.called = threading.Event()
        self.let_go = threading.Event()

    def __call__(self, call) -> str:
        self.called.set()
        assert self.let_go.wait(timeout=300), "the test never let the call answer"
        return self.answer

    def reached(self) -> None:
        assert self.called.wait(timeout=PAGE_WAIT_MS / 1000), "the call was never made"


def test_the_task_list_and_the_project_page_follow_a_run_started_from_the_api_to_its_end(
    browser, console_server, alice, task, scripted_runner, inline_executor
):
    drafting, reviewing = Held("the draft"), Held("the review")
    scripted_runner.replies.update({
        ("plan", "planner"): fenced(node("draft"), node("review", "draft")),
        ("node", "draft"): drafting, ("node", "review"): reviewing,
    })
    factories.TaskFactory(project=task.project, title="Another task of the project")
    sign_in(browser.new_page(), f"{console_server}/", "alice")
    pages = OpenPages(browser)
    pages.open(f"{console_server}/tasks/")
    pages.open(f"{console_server}/tasks/?q={quote(task.title)}")
    typing = pages.open(f"{console_server}/tasks/?project={task.project.slug}")
    typing.fill("input[name=q]", TYPED)
    pages.open(f"{console_server}/projects/{task.project.slug}/")
    api = signed_in(alice)
    row = f":is(#task-rows, #project-tasks) tr:has(a[href='/tasks/{task.pk}/'])"

    def api_post(path: str) -> None:
        response = api.post(path, content_type="application/json", data="{}")
        assert response.status_code in (200, 202), response.content

    followed(pages, "planning", lambda: api_post(f"/api/tasks/{task.pk}/plan"),
             shows=f"{row} .status[data-status='planning']")
    run = WorkGraphRun.objects.get(task=task)
    followed(pages, "planned", inline_executor.drain, shows=f"{row} .status[data-status='ready']")

    previous = executor_set(ThreadExecutor(workers=2))
    try:
        followed(pages, "running", lambda: (api_post(f"/api/runs/{run.run_id}/start"), drafting.reached()),
                 shows=f"{row} .status[data-status='running']")
        followed(pages, "the first node done", lambda: (drafting.let_go.set(), reviewing.reached()),
                 shows=f"{row} progress[value='1']")
        followed(pages, "succeeded", lambda: (reviewing.let_go.set(), run_wait_finished(run_id=run.run_id, timeout=30)),
                 shows=f"{row} .status[data-status='succeeded']")
    finally:
        drafting.let_go.set()
        reviewing.let_go.set()
        executor_set(previous)
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"

    assert typing.input_value("input[name=q]") == TYPED, "the filter being typed was left alone"
    assert pages.pages[1].locator("#task-rows tbody tr").count() == 1, "the filtered page fetched its own URL"


def test_the_runs_list_shows_a_run_started_elsewhere_and_follows_it_to_its_end(browser, paced_console, alice,
                                                                                reviewed, task):
    page = browser.new_page()
    sign_in(page, f"{paced_console}/", "alice")
    pages = OpenPages(browser)
    everything = pages.open(f"{paced_console}/runs/")
    pages.open(f"{paced_console}/runs/?status=awaiting_approval")
    assert everything.locator("#run-rows tr[data-run-id]").count() == 0
    csrf = next(cookie["value"] for cookie in browser.cookies() if cookie["name"] == "csrftoken")

    def api_post(path: str) -> None:
        response = page.request.post(f"{paced_console}{path}", data="{}", max_redirects=0,
                                     headers={"X-CSRFToken": csrf, "Content-Type": "application/json"})
        assert response.ok, response.text()

    followed(pages, "a new run's plan waiting", lambda: api_post(f"/api/tasks/{task.pk}/plan"),
             shows="#run-rows tr[data-run-id] .status[data-status='awaiting_approval']")
    run = WorkGraphRun.objects.get(task=task)
    assert everything.locator("#run-count").inner_text() == "1 run"

    awaiting = pages.pages[1]
    followed(pages, "its plan approved", lambda: api_post(f"/api/runs/{run.run_id}/approve"),
             shows="#run-rows tr:only-child")
    awaiting.wait_for_selector("#run-rows tr[data-run-id]", state="detached")
    everything.wait_for_selector(f"#run-rows tr[data-run-id='{run.run_id}'] .status[data-status='ready']")

    api_post(f"/api/runs/{run.run_id}/start")
    everything.wait_for_selector(f"#run-rows tr[data-run-id='{run.run_id}'] .status[data-status='succeeded']",
                                 timeout=90_000)
    pages.equal_to_reloads("the run succeeded")
    assert WorkGraphRun.objects.get(pk=run.pk).status == "succeeded"
