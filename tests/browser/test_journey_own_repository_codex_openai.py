"""In a real browser against daphne, the own-repository journey with OpenAI's agents: a lead creates a project
on a fresh git repository with the codex runner, checks the agent and runs a pipeline on the real Codex CLI
against the Responses API stand-in, reading its real command, its cost and the file it wrote on the pages;
then switches the same project to the openai runner on its settings page and runs the task again, each
call one chat completion from the Chat Completions stand-in.

Both runs play the pipeline of tests/browser/journeys.py. Screenshots land in test-artifacts/.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

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
from tests.repos import repository_create
from tests.standins import openai_chat
from tests.standins.openai_responses import ResponsesStandin, Turn, function_call, message, tool_outputs, user_text

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sandbox]

CODEX_BIN = Path(__file__).resolve().parents[2] / "node_modules" / ".bin" / "codex"
CODEX_MODEL = "gpt-5"
CHAT_MODEL = "gpt-4o-mini"
FILE = "greeting.txt"
CHAT_CODER_ANSWER = f"{FILE} would hold: hello from the chat model"


def _codex_script(body: dict, _index: int) -> Turn:
    """The pipeline's turns; the coder's runs one shell command that writes the file, then answers."""
    asked = user_text(body)
    answer = planned_answer(asked, file_name=FILE)
    if answer is not None or CODER_ASK not in asked:
        return message(answer or "ok")
    if not tool_outputs(body):
        return function_call("exec_command", {"cmd": f"printf 'hello from the real codex\\n' > {FILE}"})
    return message(f"{FILE} written.")


def _chat_script(body: dict) -> str:
    """The pipeline's answers; the coder's is text alone, all a chat completion can give."""
    asked = openai_chat.user_text(body)
    return planned_answer(asked, file_name=FILE) or CHAT_CODER_ANSWER


@pytest.fixture
def openai_console(transactional_db, monkeypatch):
    """The console served with the codex runner on the pinned CLI and the Responses stand-in, and the
    openai runner on the Chat Completions stand-in; both models priced."""
    if not CODEX_BIN.exists():
        pytest.fail(f"{CODEX_BIN} is missing: `make setup` installs the pinned Codex CLI")
    # The console calls the chat stand-in itself: a proxy from the developer's environment must not intercept it.
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    with (ResponsesStandin(script=_codex_script) as responses,
          openai_chat.ChatStandin(_chat_script) as chat,
          console_served(WORKGRAPH_CODEX_BIN=str(CODEX_BIN), WORKGRAPH_CODEX_BASE_URL=responses.base_url,
                         WORKGRAPH_CODEX_MODEL=CODEX_MODEL, WORKGRAPH_OPENAI_BASE_URL=chat.base_url,
                         WORKGRAPH_OPENAI_MODEL=CHAT_MODEL, WORKGRAPH_TRANSIENT_RETRIES="0",
                         WORKGRAPH_MODEL_PRICES=f"{CODEX_MODEL}=1.25/10,{CHAT_MODEL}=2.5/10") as url):
        yield url, chat


def _runner_switched(page: Page, runner: str) -> None:
    """From the project page: Settings, the runner changed, saved; ends on the project page."""
    page.click("#project-settings-link")
    page.select_option("select[name=agent]", runner)
    page.click("#project-form button[type=submit]")
    expect(page.locator(".messages")).to_contain_text("Project settings saved.")
    expect(page.locator("#project-agent-runner")).to_have_text(f"agent runner {runner}")


def test_a_lead_runs_the_pipeline_on_the_real_codex_cli_then_on_the_openai_runner(
    openai_console, chromium, tmp_path
):
    url, chat = openai_console
    factories.project_creator("erin")
    repo = repository_create(tmp_path / "shop")
    page = chromium.new_page(viewport={"width": 1440, "height": 1000})
    page.set_default_timeout(PAGE_WAIT_MS)

    sign_in(page, f"{url}/login/", "erin")
    project_create(page, url, slug="shop", folder=str(repo), runner="codex")
    agent_checked(page)
    expect(page.locator(".message.success")).to_contain_text("codex-cli")
    task_create(page, title="Greet the user")
    status = pipeline_run(page)

    task = Task.objects.get(title="Greet the user")
    assert status == "succeeded", task.outcome
    assert spend_shown(page.inner_text("#task-spend")), page.inner_text("#task-spend")
    run_graph_open(page)
    assert files_changed(page) == [[FILE, "+1 \u22120", "impl"]]
    node_page_open(page, "impl")
    calls = page.locator(".trace-call")
    expect(calls.locator(".trace-tool")).to_have_text(["command"])
    expect(calls.first.locator(".trace-summary")).to_contain_text(FILE)
    expect(calls.first).to_have_attribute("data-state", "ok")
    expect(page.locator("[data-field='model']")).to_have_text(CODEX_MODEL)
    assert spend_shown(page.inner_text("[data-field='cost']")), page.inner_text("[data-field='cost']")
    # A Codex thread is no session: nothing offers to resume it, least of all with Claude's command.
    expect(page.locator("#trace")).not_to_contain_text("--resume")
    page.screenshot(path=str(ARTIFACTS / "journey-codex-node.png"), full_page=True)

    page.goto(f"{url}/projects/shop/")
    _runner_switched(page, "openai")
    page.goto(f"{url}/tasks/{task.pk}/")
    status = pipeline_run(page)

    task.refresh_from_db()
    assert status == "succeeded", task.outcome
    assert task.runs.count() == 2
    assert any(CODER_ASK in openai_chat.user_text(body) for body in chat.requests)
    run_graph_open(page)
    assert spend_shown(page.inner_text("#run-spend")), page.inner_text("#run-spend")
    node_page_open(page, "impl")
    expect(page.locator("#trace")).to_contain_text(CHAT_CODER_ANSWER)
    expect(page.locator("[data-field='model']")).to_have_text(CHAT_MODEL)
    expect(page.locator("[data-field='turns']")).to_have_text("1")
    assert spend_shown(page.inner_text("[data-field='cost']")), page.inner_text("[data-field='cost']")
    page.screenshot(path=str(ARTIFACTS / "journey-openai-node.png"), full_page=True)
