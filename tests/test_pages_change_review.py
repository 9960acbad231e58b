"""The node page shows an attempt's review as the server renders it: that its change waits, the reviews
and their line comments with the lines around them, the comments an amending attempt carries (open or
resolved), the changes since the review; and it takes a reviewer's decision through a plain form, which
names every problem and keeps what was typed when it refuses, the refused page following the attempt from
the node page's own address."""

from __future__ import annotations

import re

import pytest

from graphs.models import ChangeReview
from tests import factories
from tests.change_reviews import build_then_check, review, review_required, waiting_build
from tests.clients import signed_in
from tests.repos import writes
from tests.run_builders import latest

pytestmark = pytest.mark.django_db


@pytest.fixture
def waiting(repo_task, project, scripted_runner, inline_executor):
    review_required(project)
    return waiting_build(build_then_check(repo_task, scripted_runner, inline_executor))


def page(user, execution) -> str:
    answer = signed_in(user).get(f"/executions/{execution.pk}/")
    assert answer.status_code == 200
    return answer.content.decode()


def section(html: str, element_id: str) -> str:
    found = re.search(rf'<section[^>]*id="{element_id}".*?</section>', html, re.S)
    assert found, element_id
    return found.group(0)


def test_a_waiting_change_shows_its_wait_and_the_form_to_reviewers_only(waiting, project, bob):
    viewer = factories.member(project, "victor", role="viewer")

    html = page(bob, waiting)
    assert "waits for a reviewer: it has not landed" in section(html, "review")
    assert "until a reviewer decides" in section(html, "changes")
    form = section(html, "review-form")
    assert f'action="/executions/{waiting.pk}/review"' in form
    assert [value for value in re.findall(r'name="decision" value="(\w+)"', form)] == [
        "approve", "request_changes", "comment"]
    assert '<option value="src/export.py">' in form
    assert 'id="review-form"' not in page(viewer, waiting)


def test_reviews_and_their_line_comments_are_rendered_with_the_lines_around_them(waiting, bob):
    review(waiting, bob, "comment", "A first look.",
           comments=[{"path": "src/export.py", "line": 3, "body": "Semicolons <please>."}])

    shown = section(page(bob, waiting), "review")
    assert 'data-decision="comment"' in shown and "A first look." in shown
    assert 'data-path="src/export.py" data-line="3" data-resolved="false"' in shown
    assert "Semicolons &lt;please&gt;." in shown
    assert '<span class="commented">    3 |     return &#x27;,&#x27;.join(rows)</span>' in shown
    assert "    1 | def export():" in shown


def test_the_form_requests_changes_and_the_next_attempt_shows_what_changed_and_what_is_open(
    waiting, bob, scripted_runner, inline_executor
):
    scripted_runner.replies[("node", "build", 2)] = writes("src/export.py", "def export():\n    return ';'\n")
    answer = signed_in(bob).post(f"/executions/{waiting.pk}/review", {
        "decision": "request_changes", "body": "Simpler, please.",
        "comment_path": ["src/export.py", ""], "comment_line": ["2", ""], "comment_body": ["Drop this.", ""]})
    inline_executor.drain()

    assert answer.status_code == 302 and answer["Location"] == f"/executions/{waiting.pk}/#review"
    second = latest(waiting.run)["build"]
    html = page(bob, second)
    assert "Simpler, please." in section(html, "review")
    carried = section(html, "review")
    assert 'data-resolved="false"' in carried and "(on attempt 1)" in carried and "Drop this." in carried
    changes = section(html, "changes")
    assert "Changes since the review" in changes and 'data-diff-source="since-review-diff"' in changes
    since = html.split('id="since-review-diff"')[1].split("</script>")[0]
    assert "+    return ';'" in since and "-    rows = load()" in since
    assert 'name="resolve"' in section(html, "review-form")

    comment_id = ChangeReview.objects.get(attempt=waiting).comments.get().pk
    resolved = signed_in(bob).post(f"/executions/{second.pk}/review", {"decision": "approve",
                                                                      "resolve": [str(comment_id)]})
    assert resolved.status_code == 302
    assert "resolved in attempt 2" in section(page(bob, second), "review")


def test_a_refused_review_names_every_problem_and_keeps_what_was_typed(waiting, bob):
    answer = signed_in(bob).post(f"/executions/{waiting.pk}/review", {
        "decision": "request_changes", "body": "Have a look.",
        "comment_path": ["README.md"], "comment_line": ["99"], "comment_body": ["Kept text."]})

    assert answer.status_code == 400
    problems = section(answer.content.decode(), "review-form")
    assert 'data-field="comments[0].path"' in problems and "is not a file this attempt changed" in problems
    assert ">Have a look.</textarea>" in problems and ">Kept text.</textarea>" in problems
    assert not ChangeReview.objects.exists()


def test_a_refused_review_page_follows_the_attempt_from_the_node_pages_address(waiting, bob):
    """The browser is left at the form's address, which takes POST only; the page names its own for the
    live refresh (execution-page.js) to fetch."""
    client = signed_in(bob)
    answer = client.post(f"/executions/{waiting.pk}/review", {"decision": "request_changes", "body": ""})

    assert answer.status_code == 400
    heading = re.search(r'<h1 id="exec-heading"[^>]*>', answer.content.decode()).group(0)
    address = re.search(r'data-live-url="([^"]+)"', heading).group(1)
    assert address == f"/executions/{waiting.pk}/"
    assert client.get(f"/executions/{waiting.pk}/review").status_code == 405
    assert client.get(address, headers={"X-Requested-With": "fetch"}).status_code == 200


def test_a_landed_change_of_a_finished_run_offers_a_follow_up_run(repo_task, bob, scripted_runner, inline_executor):
    landed = latest(build_then_check(repo_task, scripted_runner, inline_executor))["build"]

    form = section(page(bob, landed), "review-form")

    assert re.findall(r'name="decision" value="(\w+)"', form) == ["request_changes", "comment", "approve"]
    assert "requesting changes starts a follow-up run from this node" in form
