"""In a real browser against daphne, a reviewer's whole loop on a change: with change review required, the
offline agent's change waits; the reviewer opens it from the inbox on its diff, comments on two lines with
the keyboard alone and requests changes; the attempt that amends it shows the comments open on its diff;
the reviewer resolves them and approves, and the change lands on the run's branch. Every open page reads
as a fresh load of it at each step; a viewer sees the comments and no control. A refused review comes back
with its comments under their lines, side by side too, and a phone's width keeps the diff usable; without
scripts, the plain form takes a comment on a line."""

from __future__ import annotations

import pytest

from graphs.models import ChangeReview, RunWorkspace, WorkGraphRun, WorkNodeExecution
from tests import factories
from tests.browser.change_review_steps import (
    AMENDED_FIRST_LINE,
    FIRST_LINE,
    NODE_ID_LINE,
    SCRIPT,
    changes_requested,
    comment_typed,
    focused,
    resolved_and_approved,
    saving_run,
    tab_until,
)
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, no_sideways_scroll, sign_in
from tests.browser.reloads import OpenPages
from tests.change_reviews import build_then_check, review_required, waiting_build
from tests.repos import git

pytestmark = pytest.mark.django_db(transaction=True)

FIRST_COMMENT = "Say which attempt wrote this script."
SECOND_COMMENT = "Name the node as the graph does."


def signed_in_context(chromium, server: str, username: str):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(PAGE_WAIT_MS)
    sign_in(context.new_page(), f"{server}/", username)
    return context


def attempts(run) -> list[WorkNodeExecution]:
    return list(WorkNodeExecution.objects.filter(run=run, node_id=SCRIPT).order_by("attempt"))


def test_a_reviewer_comments_with_the_keyboard_requests_changes_resolves_and_approves(
    chromium, console_server, alice, bob, repo_task, repo
):
    run = saving_run(repo_task)
    viewer = factories.member(repo_task.project, "victor", role="viewer")
    lead = signed_in_context(chromium, console_server, alice.username)
    reviewer = signed_in_context(chromium, console_server, bob.username)
    pages = OpenPages(reviewer)
    inbox = pages.open(f"{console_server}/inbox/")
    pages.open(f"{console_server}/tasks/{repo_task.pk}/")

    starter = lead.new_page()
    starter.goto(f"{console_server}/tasks/{repo_task.pk}/")
    starter.click(f"[data-run-controls='{run.pk}'] button[data-action='start']")
    item = inbox.locator("article.inbox-item[data-kind='change_review']")
    item.wait_for()
    pages.equal_to_reloads("the change waits for a review")

    # The reviewer opens the item on the change's diff.
    page = reviewer.new_page()
    page.goto(f"{console_server}/inbox/")
    page.locator("article.inbox-item[data-kind='change_review'] a[data-action='open']").click()
    first = attempts(run)[0]
    page.wait_for_url(f"**/executions/{first.pk}/#changes")
    page.wait_for_selector("#changes tr[data-review-line]", state="attached")
    assert page.locator("#review-lines-hint").is_visible()

    # The keyboard alone: Tab into the diff's lines, a comment on line 1 and one further down.
    now = tab_until(page, lambda seen: seen["line"] is not None)
    assert now["path"] == f"{SCRIPT}.py" and now["line"] == "1", now
    comment_typed(page, 1, FIRST_COMMENT)
    comment_typed(page, NODE_ID_LINE, SECOND_COMMENT)
    # Escape closes a box and gives the focus back to its line.
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    assert page.locator("#changes .review-box").count() == 1
    page.keyboard.press("Escape")
    assert page.locator("#changes .review-box").count() == 0
    assert focused(page)["line"] == str(NODE_ID_LINE + 1)
    pending = page.locator("#changes .review-inline-row .review-pending")
    assert pending.count() == 2
    bodies = [text.strip() for text in pending.locator(".review-body").all_inner_texts()]
    assert bodies == [FIRST_COMMENT, SECOND_COMMENT]
    rows = page.locator("#review-comment-rows [data-review-row]")
    typed = [row.locator("[name='comment_line']").input_value() for row in rows.all()]
    assert typed[-2:] == ["1", str(NODE_ID_LINE)]
    page.screenshot(path=str(ARTIFACTS / "change-review-pending.png"), full_page=True)

    # On to the form: Request changes, a body, Submit review.
    changes_requested(page, "Two small things, then it can land.")
    assert WorkNodeExecution.objects.get(pk=first.pk).status == "changes_requested"
    own = page.locator("#changes .review-inline-row .review-inline[data-comment-id]")
    own.first.wait_for()
    assert own.count() == 2 and page.locator("#changes .review-pending").count() == 0

    # The attempt that amends it: the comments open on its diff, once it waits for a review again.
    page.locator("#review a:has-text('the attempt that amends it')").click()
    second = attempts(run)[1]
    page.wait_for_url(f"**/executions/{second.pk}/")
    page.wait_for_selector("#exec-status .status[data-status='awaiting_review']")
    pages.pages.append(page)
    pages.equal_to_reloads("changes requested, the amended change waiting")
    carried = page.locator("#changes .review-inline-row .review-inline[data-resolved='false']")
    carried.nth(1).wait_for()
    assert carried.count() == 2
    # Line 1 changed since the review: its comment sits on the changes since the review, the other on the change.
    since = page.locator("[data-review-diff='since'] .review-inline")
    assert since.count() == 1 and FIRST_COMMENT in since.inner_text()
    change = page.locator("[data-review-diff='change'] .review-inline")
    assert change.count() == 1 and SECOND_COMMENT in change.inner_text()
    assert AMENDED_FIRST_LINE in page.locator("[data-review-diff='since']").inner_text()
    page.screenshot(path=str(ARTIFACTS / "change-review-carried.png"), full_page=True)

    looking = chromium.new_context(viewport={"width": 1280, "height": 900})
    sign_in(looking.new_page(), f"{console_server}/", viewer.username)
    seen = looking.new_page()
    seen.goto(f"{console_server}/executions/{second.pk}/")
    seen.locator("#changes .review-inline-row .review-inline").nth(1).wait_for()
    assert seen.locator("#review-form").count() == 0 and seen.locator("tr[data-review-line]").count() == 0
    assert seen.locator("#review-lines-hint").count() == 0 and seen.locator("#changes [tabindex]").count() == 0
    looking.close()

    # Resolved, approved: the change lands and the run goes on.
    resolved_and_approved(page)
    resolved = page.locator("#changes .review-inline-row .review-inline[data-resolved='true']")
    resolved.nth(1).wait_for()
    assert "resolved in attempt 2" in resolved.first.inner_text()
    page.wait_for_selector("#exec-status .status[data-status='succeeded']")
    workspace = RunWorkspace.objects.get(run=run)
    landed = git(repo, "show", f"{workspace.branch}:{SCRIPT}.py")
    assert landed.splitlines()[0] == AMENDED_FIRST_LINE and FIRST_LINE not in landed
    inbox.locator("#inbox-empty").wait_for()
    pages.equal_to_reloads("approved and landed")
    assert WorkGraphRun.objects.get(pk=run.pk).executions.filter(node_id="report").exists()

    no_sideways_scroll(page)
    lead.close()
    reviewer.close()


@pytest.fixture
def waiting(repo_task, project, scripted_runner, inline_executor):
    """The build's change (src/export.py, six lines) waiting for a reviewer; the engine runs in this process."""
    review_required(project)
    return waiting_build(build_then_check(repo_task, scripted_runner, inline_executor))


def test_a_refused_review_comes_back_with_its_comments_under_their_lines_and_every_problem_named(
    chromium, console_server, bob, waiting
):
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/executions/{waiting.pk}/", bob.username)
    lines = page.locator("[data-review-diff='change'] tr[data-review-line]")
    lines.first.wait_for()

    for line, text in ((2, "Load them lazily."), (3, "   ")):
        page.click(f"[data-review-diff='change'] tr[data-review-line='{line}'] .d2h-code-line")
        page.fill("#changes .review-box textarea", text)
        page.click("#changes .review-box [data-review-act='add']")
    page.check("input[name=decision][value=request_changes]")
    page.fill("#review-body", "Have a look.")
    with page.expect_navigation():
        page.click("#review-form button[data-action='review']")

    problems = page.locator("#review-problems li")
    assert problems.all_inner_texts() == ["comments[1].body: a comment needs a body"]
    assert page.input_value("#review-body") == "Have a look."
    pending = page.locator("#changes .review-inline-row .review-pending")
    pending.nth(1).wait_for()
    assert "Load them lazily." in pending.first.inner_text()
    assert "a comment needs a body" in pending.nth(1).inner_text()
    assert not ChangeReview.objects.exists()

    # Side by side, the comments sit in the new side's table, the old side's lines kept level beside them.
    page.get_by_role("button", name="Side by side").click()
    page.locator(".d2h-file-side-diff .review-pending").nth(1).wait_for()
    level = page.evaluate("""() => {
      const [left, right] = document.querySelectorAll("[data-review-diff='change'] .d2h-file-side-diff tbody");
      const tops = (body) => [...body.children].map((row) => row.getBoundingClientRect().top);
      return { left: tops(left), right: tops(right) };
    }""")
    assert len(level["left"]) == len(level["right"]), level
    assert all(abs(left - right) < 1.5 for left, right in zip(level["left"], level["right"], strict=True)), level
    page.click("[data-review-diff='change'] tr[data-review-line='5'] .d2h-code-side-line")
    page.locator("#changes .review-box textarea").wait_for()
    page.locator("#changes").screenshot(path=str(ARTIFACTS / "change-review-split.png"))
    page.set_viewport_size({"width": 390, "height": 844})
    page.locator("#changes").screenshot(path=str(ARTIFACTS / "change-review-phone.png"))
    page.get_by_role("button", name="Unified").click()
    page.locator("#changes").screenshot(path=str(ARTIFACTS / "change-review-phone-unified.png"))
    no_sideways_scroll(page)

    pending.nth(1).locator("[data-review-act='remove']").click()
    page.locator("#changes .review-box [data-review-act='cancel']").click()
    assert pending.count() == 1
    with page.expect_navigation():
        page.click("#review-form button[data-action='review']")
    page.locator(".messages >> text=Changes requested").wait_for()
    recorded = ChangeReview.objects.get()
    assert (recorded.decision, recorded.body) == ("request_changes", "Have a look.")
    assert [(comment.line, comment.body) for comment in recorded.comments.all()] == [(2, "Load them lazily.")]


def test_without_scripts_the_plain_form_takes_a_comment_on_a_line(chromium, console_server, bob, waiting):
    context = chromium.new_context(java_script_enabled=False)
    page = context.new_page()
    sign_in(page, f"{console_server}/executions/{waiting.pk}/", bob.username)

    assert page.locator("#review-lines-hint").is_hidden()
    page.select_option("#review-comment-rows select[name=comment_path]", "src/export.py")
    page.fill("#review-comment-rows input[name=comment_line]", "3")
    page.fill("#review-comment-rows textarea[name=comment_body]", "Join with semicolons.")
    page.check("input[name=decision][value=comment]")
    page.click("#review-form button[data-action='review']")
    page.locator(".messages >> text=Your comments are recorded.").wait_for()
    context.close()

    recorded = ChangeReview.objects.get()
    assert [(comment.path, comment.line, comment.body) for comment in recorded.comments.all()] == [
        ("src/export.py", 3, "Join with semicolons.")]
