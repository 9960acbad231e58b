"""What the browser tests of change review share: a run whose one node saves a file and waits for a reviewer
(in a project that requires change review and lets the offline agent save its test script), and a
reviewer's keyboard on the node page's diff — Tab to its lines, the arrow keys between them, Enter for a
comment box — and on the review form.
"""

from __future__ import annotations

from graphs.models import WorkGraphRun
from tests.change_reviews import review_required
from tests.run_builders import edges_for, node, planned_run

SCRIPT = "check_export"
# What the offline agent saves as check_export.py on its first attempt, line by line (of 26 lines).
FIRST_LINE = "# [offline agent] test script: it runs the unit tests under tests/ in the working folder."
AMENDED_FIRST_LINE = ("# [offline agent] test script (attempt 2, revised after review): it runs the unit tests under"
                      " tests/ in the working folder.")
NODE_ID_LINE = 9

# For page.evaluate: the focused element, as the tests read it.
FOCUSED = """() => {
  const el = document.activeElement;
  return { tag: el.tagName.toLowerCase(), line: el.dataset.reviewLine ?? null,
           path: el.dataset.reviewPath ?? null, name: el.getAttribute('name'),
           act: el.dataset.reviewAct ?? el.dataset.action ?? null };
}"""


def saving_run(task) -> WorkGraphRun:
    """A ready run of ``task``: ``check_export`` (a test script node, which the offline agent saves as
    ``check_export.py``), then ``report`` after it; change review required, commands allowed."""
    project = task.project
    review_required(project)
    project.allow_commands = True
    project.save(update_fields=["allow_commands"])
    nodes = [
        node(SCRIPT, node_type="test_script", judgment={"kind": "none"}),
        node("report", SCRIPT, judgment={"kind": "none"}),
    ]
    return planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})


def focused(page) -> dict:
    return page.evaluate(FOCUSED)


def tab_until(page, wanted, *, limit: int = 80, back: bool = False) -> dict:
    """Press Tab (Shift+Tab with ``back``) until ``wanted(focused)`` holds; the focused element."""
    for _ in range(limit):
        page.keyboard.press("Shift+Tab" if back else "Tab")
        now = focused(page)
        if wanted(now):
            return now
    raise AssertionError(f"Tab never reached what was wanted; last focused: {focused(page)}")


def line_reach(page, line: int) -> None:
    """From a focused line of a diff, the arrow keys to line ``line`` of the file as the attempt left it."""
    for _ in range(200):
        now = focused(page)
        assert now["line"] is not None, f"the focus left the diff's lines: {now}"
        if int(now["line"]) == line:
            return
        page.keyboard.press("ArrowDown" if int(now["line"]) < line else "ArrowUp")
    raise AssertionError(f"line {line} was never reached")


def comment_typed(page, line: int, text: str) -> None:
    """On the focused diff: to ``line``, Enter for its comment box, ``text`` typed, Tab to Add to the
    review and Enter; the focus comes back to the line."""
    line_reach(page, line)
    page.keyboard.press("Enter")
    assert focused(page)["tag"] == "textarea", "Enter opens the comment box, its text box focused"
    page.keyboard.type(text)
    page.keyboard.press("Tab")
    assert focused(page)["act"] == "add", focused(page)
    page.keyboard.press("Enter")
    now = focused(page)
    assert (now["tag"], now["line"]) == ("tr", str(line)), now


def changes_requested(page, body: str) -> None:
    """From the diff, Tab to the review form's decisions, the arrow key to Request changes, Tab to the body,
    ``body`` typed, Tab to Submit review and Enter; waits for the page the form answers with."""
    tab_until(page, lambda seen: seen["name"] == "decision")
    page.keyboard.press("ArrowDown")
    assert page.locator("input[name=decision][value=request_changes]").is_checked()
    tab_until(page, lambda seen: seen["name"] == "body")
    page.keyboard.type(body)
    tab_until(page, lambda seen: seen["act"] == "review")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.locator(".messages >> text=Changes requested: the node's next attempt amends the change.").wait_for()


def resolved_and_approved(page) -> None:
    """Every open comment resolved on the review form, Approve, Submit review; waits for the answer."""
    for box in page.locator("#review-resolve input[name=resolve]").all():
        box.check()
    page.check("input[name=decision][value=approve]")
    with page.expect_navigation():
        page.click("#review-form button[data-action='review']")
    page.locator(".messages >> text=Approved.").wait_for()
