"""In a real browser against daphne, the reviewer's loop with the real Claude Code CLI (the pinned npm
package, in the console's sandbox, against the Messages API stand-in): its change waits; the reviewer,
from the inbox and with the keyboard alone, comments on a line of it and requests changes; the comment's
text, path and line reach the CLI's prompt on the attempt that amends it; that attempt shows the comment
open on the line as the review read it; resolved and approved, the amended change lands on the run's
branch."""

from __future__ import annotations

import pytest

from graphs.models import RunWorkspace, WorkNodeExecution
from tests.browser.change_review_steps import changes_requested, comment_typed, resolved_and_approved, tab_until
from tests.browser.conftest import ARTIFACTS, console_served, sign_in
from tests.change_reviews import review_required
from tests.claude_real import CLAUDE_BIN
from tests.claude_review_script import AMENDED, ASKED, COMMENT, amending_script
from tests.repos import git
from tests.run_builders import node, planned_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sandbox]


@pytest.fixture
def claude_console(anthropic_standin, transactional_db):
    """The console served with the pinned CLI as its agent, the stand-in answering it."""
    anthropic_standin.script = amending_script()
    with console_served(WORKGRAPH_AGENT="claude", WORKGRAPH_CLAUDE_BIN=str(CLAUDE_BIN),
                        WORKGRAPH_TRANSIENT_RETRIES="0") as url:
        yield url


def test_a_comment_made_on_the_diff_reaches_the_real_cli_and_its_amended_change_lands(
    claude_console, anthropic_standin, chromium, alice, bob, repo_task, project, repo
):
    review_required(project)
    # Planned by the coder, whose profile runs Bash.
    run = planned_run(repo_task, {"nodes": [node("impl", judgment={"kind": "none"})], "edges": []}, org_node="coder")
    lead = chromium.new_page()
    sign_in(lead, f"{claude_console}/tasks/{repo_task.pk}/", alice.username)
    lead.click(f"[data-run-controls='{run.pk}'] button[data-action='start']")

    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(120_000)
    sign_in(page, f"{claude_console}/inbox/", bob.username)
    page.locator("article.inbox-item[data-kind='change_review'] a[data-action='open']").click()
    page.wait_for_selector("#changes tr[data-review-line]", state="attached")
    tab_until(page, lambda seen: seen["line"] is not None)
    comment_typed(page, 2, COMMENT)
    changes_requested(page, "One line to fix.")

    page.locator("#review a:has-text('the attempt that amends it')").click()
    page.wait_for_selector("#exec-status .status[data-status='awaiting_review']")
    [opening] = [request for request in anthropic_standin.requests
                 if ASKED in request.first_user_text and request.turn == 0]
    prompt = opening.first_user_text
    assert "#### `feature.txt`, line 2" in prompt and f"> {COMMENT}" in prompt and "> One line to fix." in prompt
    assert "> 2 | two" in prompt
    carried = page.locator("[data-review-diff='since'] .review-inline[data-resolved='false']")
    carried.wait_for()
    assert COMMENT in carried.inner_text()
    page.screenshot(path=str(ARTIFACTS / "change-review-claude.png"), full_page=True)

    resolved_and_approved(page)
    page.wait_for_selector("#exec-status .status[data-status='succeeded']")
    second = WorkNodeExecution.objects.filter(run=run, node_id="impl").latest("attempt")
    assert (second.attempt, second.cause) == (2, "review")
    workspace = RunWorkspace.objects.get(run=run)
    assert git(repo, "show", f"{workspace.branch}:feature.txt") == AMENDED
