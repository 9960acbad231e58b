"""In a real browser against daphne: a lead presses Check the agent on the project page; the real Claude
CLI runs in the sandbox against the Messages API stand-in and the page says it works, then, with the key
refused, that the credentials are wrong."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import console_served, sign_in
from tests.claude_real import CLAUDE_BIN
from tests.standins.anthropic_api import error, text

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sandbox]


@pytest.fixture
def claude_console(anthropic_standin, project, alice, monkeypatch):
    """The console served with the project on the claude runner, the CLI pointed at the stand-in."""
    project.agent = "claude"
    project.save(update_fields=["agent"])
    monkeypatch.setenv("WORKGRAPH_CLAUDE_BIN", str(CLAUDE_BIN))
    with console_served() as url:
        yield url


def test_the_button_checks_the_agent_and_the_page_says_what_was_found(
    claude_console, anthropic_standin, project, chromium
):
    page = chromium.new_page()
    sign_in(page, f"{claude_console}/login/?next=/projects/{project.slug}/", "alice")

    anthropic_standin.script = lambda _request: text("ready")
    page.click("#agent-check-button")
    expect(page.locator(".message.success")).to_contain_text("works: it answered “ready”", timeout=60_000)
    expect(page.locator(".message.success")).to_contain_text("2.1.332")

    anthropic_standin.script = lambda _request: error(401, "authentication_error", "invalid x-api-key")
    page.click("#agent-check-button")
    expect(page.locator(".message.error")).to_contain_text("refused the agent's credentials", timeout=60_000)
    expect(page.locator("#agent-check")).to_be_visible()
