"""The node page writes what its script places on the diffs: each review comment, with the places it may
go under a line (its own attempt's on the line it names; a carried one on the line still its own in the
amended change, or on the line as the review read it when the amendment rewrote it), the templates of the
comment box and of a comment waiting for the review, for reviewers only, and each refused comment's
problems beside its row."""

from __future__ import annotations

import re

import pytest

from tests import factories
from tests.change_reviews import build_then_check, review, review_required, waiting_build
from tests.clients import signed_in
from tests.repos import writes
from tests.run_builders import latest

pytestmark = pytest.mark.django_db

# The amended export: an import above it moves every line down one, and line 2 (3 now) is rewritten.
AMENDED = "import csv\ndef export():\n    rows = load_all()\n    return ','.join(rows)\n\n\nEXPORTED = True\n"


@pytest.fixture
def waiting(repo_task, project, scripted_runner, inline_executor):
    review_required(project)
    return waiting_build(build_then_check(repo_task, scripted_runner, inline_executor))


def page(user, execution) -> str:
    answer = signed_in(user).get(f"/executions/{execution.pk}/")
    assert answer.status_code == 200
    return answer.content.decode()


def inline(html: str) -> dict[str, str]:
    """The comments the page writes for its diffs: each body, with its anchors."""
    found = re.search(r'<div id="review-inline" hidden>(.*?)</div>\s*(?:{%|<p|</section>)', html, re.S)
    assert found, "no inline comments written"
    return {re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", body)).strip(): anchors for anchors, body in re.findall(
        r'data-anchors="([^"]*)">.*?<div class="review-body">(.*?)</div>', found.group(1), re.S)}


def test_an_attempts_own_comments_go_under_the_lines_they_name(waiting, bob):
    review(waiting, bob, "comment", "A look.", comments=[{"path": "src/export.py", "line": 3, "body": "Quote it."}])

    html = page(bob, waiting)

    assert inline(html) == {"Quote it.": "change:new:3 since:new:3"}
    assert 'data-path="src/export.py"' in html
    assert 'data-review-diff="change"' in html


def test_carried_comments_follow_their_line_or_stay_on_the_line_the_review_read(
    waiting, bob, scripted_runner, inline_executor
):
    scripted_runner.replies[("node", "build", 2)] = writes("src/export.py", AMENDED)
    review(waiting, bob, "request_changes", "Two things.", comments=[
        {"path": "src/export.py", "line": 2, "body": "Load them all."},
        {"path": "src/export.py", "line": 6, "body": "Keep this flag."},
    ])
    inline_executor.drain()
    second = latest(waiting.run)["build"]
    assert second.status == "awaiting_review"

    assert inline(page(bob, second)) == {
        "Load them all.": "since:old:2",
        "Keep this flag.": "change:new:7 since:new:7 since:old:6",
    }


def test_reviewers_get_the_comment_box_and_viewers_only_the_comments(waiting, project, bob):
    review(waiting, bob, "comment", "", comments=[{"path": "src/export.py", "line": 1, "body": "Fine."}])
    viewer = factories.member(project, "victor", role="viewer")

    for_reviewer, for_viewer = page(bob, waiting), page(viewer, waiting)

    for template in ("review-box-template", "review-pending-template", "review-row-template"):
        assert f'id="{template}"' in for_reviewer and f'id="{template}"' not in for_viewer
    assert 'id="review-lines-hint"' in for_reviewer and 'id="review-lines-hint"' not in for_viewer
    assert inline(for_viewer) == {"Fine.": "change:new:1 since:new:1"}
    assert '<div data-live-part="review-form" hidden></div>' in for_viewer


def test_a_refused_comment_has_its_problems_beside_its_row(waiting, bob):
    answer = signed_in(bob).post(f"/executions/{waiting.pk}/review", {
        "decision": "request_changes", "body": "",
        "comment_path": ["src/export.py", "src/export.py"], "comment_line": ["2", "99"],
        "comment_body": ["Fine as a comment.", "Past the end."]})

    assert answer.status_code == 400
    rows = re.findall(r'<div class="row review-comment-row" data-review-row>(.*?)\n</div>', answer.content.decode(),
                      re.S)
    typed = [row for row in rows if "Fine as a comment." in row or "Past the end." in row]
    assert len(typed) == 2
    assert "review-row-problems" not in typed[0] and ">Fine as a comment.</textarea>" in typed[0]
    assert "line 99 is not in src/export.py as the attempt left it: it has 6 lines" in typed[1]
    assert ">Past the end.</textarea>" in typed[1]
