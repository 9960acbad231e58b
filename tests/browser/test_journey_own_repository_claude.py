"""In a real browser against daphne, a lead tried as a new user would: signs in, creates a project on a fresh
git repository (one commit, no ``.claude/``) from the dashboard with the claude runner, checks the agent,
creates a task and runs its pipeline on the real Claude Code CLI against the Messages API stand-in, then
reads on the pages the CLI's real tool calls, what the run cost and the file it wrote.

The agent definitions are the console's own profiles: the stock CLI finds none in the repository.
Screenshots land in test-artifacts/.
"""

from __future__ import annotations

import shlex

import pytest
from playwright.sync_api import expect

from graphs.models import Task
from tests import factories
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, console_served, sign_in
from tests.browser.journeys import (
    CODER_ASK,
    agent_checked,
    files_changed,
    node_page_open,
    pipeline_run,
    planned_answer,
    project_create,
    run_graph_open,
    spend_shown,
    task_create,
)
from tests.claude_real import CLAUDE_BIN
from tests.repos import git, repository_create
from tests.standins.anthropic_api import Reply, Request, text, tool

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sandbox]

FILE = "greeting.py"
GREETING = 'print("hello from the real CLI")\n'


def _script(request: Request) -> Reply:
    """The pipeline's turns; the coder's asks where the CLI works (Bash), writes the file there (Write), answers."""
    asked = request.first_user_text
    answer = planned_answer(asked, file_name=FILE)
    if answer is not None or CODER_ASK not in asked:
        return text(answer or "ok")
    if request.turn == 0:
        return tool("Bash", {"command": "pwd", "description": "Where am I"}, saying="Looking around.")
    if request.turn == 1:
        return tool("Write", {"file_path": f"{request.last_user_text.strip()}/{FILE}", "content": GREETING})
    return text(f"{FILE} written.")


@pytest.fixture
def claude_console(anthropic_standin, transactional_db):
    """The console served with the claude runner's program the pinned CLI, the stand-in answering it."""
    anthropic_standin.script = _script
    with console_served(WORKGRAPH_CLAUDE_BIN=str(CLAUDE_BIN), WORKGRAPH_TRANSIENT_RETRIES="0") as url:
        yield url


def test_a_lead_runs_a_pipeline_on_their_repository_with_the_real_claude_cli(claude_console, chromium, tmp_path):
    factories.project_creator("erin")
    repo = repository_create(tmp_path / "shop")
    assert not (repo / ".claude").exists()
    page = chromium.new_page(viewport={"width": 1440, "height": 1000})
    page.set_default_timeout(PAGE_WAIT_MS)

    sign_in(page, f"{claude_console}/login/", "erin")
    project_create(page, claude_console, slug="shop", folder=str(repo), runner="claude")
    agent_checked(page)
    page.screenshot(path=str(ARTIFACTS / "journey-claude-project.png"), full_page=True)
    task_create(page, title="Greet the user")
    status = pipeline_run(page)

    task = Task.objects.get(title="Greet the user")
    assert status == "succeeded", task.outcome
    expect(page.locator("#task-spend")).to_contain_text("$")
    assert spend_shown(page.inner_text("#task-spend")), page.inner_text("#task-spend")
    page.click("details.branch summary")
    fetch = page.locator("details.branch pre.commands").inner_text().splitlines()[0]
    page.screenshot(path=str(ARTIFACTS / "journey-claude-task.png"), full_page=True)
    # The command the page names brings the run's change into the lead's checkout.
    git(repo, *shlex.split(fetch)[1:])
    assert git(repo, "show", f"FETCH_HEAD:{FILE}") == GREETING

    run_graph_open(page)
    assert files_changed(page) == [[FILE, "+1 \u22120", "impl"]]
    assert spend_shown(page.inner_text("#run-spend")), page.inner_text("#run-spend")
    page.screenshot(path=str(ARTIFACTS / "journey-claude-run.png"), full_page=True)

    node_page_open(page, "impl")
    calls = page.locator(".trace-call")
    expect(calls.locator(".trace-tool")).to_have_text(["Bash", "Write"])
    expect(calls.nth(0)).to_have_attribute("data-state", "ok")
    expect(calls.nth(1).locator(".trace-summary")).to_contain_text(FILE)
    expect(page.locator("[data-field='cost']")).to_contain_text("$")
    assert spend_shown(page.inner_text("[data-field='cost']"))
    expect(page.locator("#judgment")).to_contain_text("judged by no one: the node asks for no judgment")
    page.screenshot(path=str(ARTIFACTS / "journey-claude-node.png"), full_page=True)
    # The lead's folder is untouched: the change is on the run's branch until they merge it.
    assert not (repo / FILE).exists()
