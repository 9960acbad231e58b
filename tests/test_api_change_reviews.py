"""GET and POST /api/executions/<id>/reviews: reviewers and leads review an attempt's change, viewers may
only read; bad input changes nothing and names what is wrong (invalid_review with comments[i].path or
comments[i].line, a body or a comment list too long); a decision on an attempt that takes none is
not_reviewable; of two decisions racing on PostgreSQL one wins and the change lands once."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client

from graphs.models import AttemptChange, ChangeReview, ReviewComment, RunWorkspace
from tests import factories
from tests.change_reviews import build_then_check, review, review_required, waiting_build
from tests.clients import signed_in
from tests.repos import git
from tests.run_builders import latest


def post(client: Client, execution, body: dict):
    return client.post(f"/api/executions/{execution.pk}/reviews", data=json.dumps(body),
                       content_type="application/json")


@pytest.fixture
def waiting(repo_task, project, scripted_runner, inline_executor):
    review_required(project)
    run = build_then_check(repo_task, scripted_runner, inline_executor)
    return waiting_build(run)


def unchanged(execution) -> None:
    execution.refresh_from_db()
    assert execution.status == "awaiting_review"
    assert not ChangeReview.objects.filter(attempt=execution).exists() and not ReviewComment.objects.exists()


@pytest.mark.django_db
def test_a_reviewer_comments_on_lines_and_reads_the_review_back(waiting, bob, alice):
    answer = post(signed_in(bob), waiting, {"decision": "comment", "body": "Two things.", "comments": [
        {"path": "src/export.py", "line": 3, "body": "Semicolons?"},
        {"path": "src/export.py", "line": 6, "body": "Needed?"}]})

    assert answer.status_code == 201, answer.content
    created = answer.json()
    assert (created["decision"], created["body"], created["author"]) == ("comment", "Two things.", "bob")
    assert [(c["path"], c["line"], c["body"], c["author"], c["resolved"]) for c in created["comments"]] == [
        ("src/export.py", 3, "Semicolons?", "bob", False), ("src/export.py", 6, "Needed?", "bob", False)]
    listed = signed_in(alice).get(f"/api/executions/{waiting.pk}/reviews").json()
    assert [review["id"] for review in listed] == [created["id"]]
    assert set(listed[0]) >= {"id", "decision", "body", "author", "created_at", "comments"}
    assert set(listed[0]["comments"][0]) >= {"id", "path", "line", "body", "author", "resolved"}
    waiting.refresh_from_db()
    assert waiting.status == "awaiting_review"


@pytest.mark.django_db
def test_a_viewer_may_read_the_reviews_but_not_review_and_a_stranger_sees_nothing(waiting, project, charlie):
    viewer = factories.member(project, "victor", role="viewer")

    assert signed_in(viewer).get(f"/api/executions/{waiting.pk}/reviews").status_code == 200
    refused = post(signed_in(viewer), waiting, {"decision": "approve"})
    assert (refused.status_code, refused.json()["code"]) == (403, "forbidden")
    assert post(signed_in(charlie), waiting, {"decision": "approve"}).status_code == 404
    assert Client().get(f"/api/executions/{waiting.pk}/reviews").status_code == 401
    unchanged(waiting)


@pytest.mark.django_db
@pytest.mark.parametrize(("comment", "field", "words"), [
    ({"path": "README.md", "line": 1, "body": "x"}, "comments[0].path", "is not a file this attempt changed"),
    ({"path": "src/export.py", "line": 7, "body": "x"}, "comments[0].line", "it has 6 lines"),
    ({"path": "src/export.py", "line": 0, "body": "x"}, "comments[0].line", "must be a line number"),
    ({"path": "src/export.py", "line": 2, "body": " "}, "comments[0].body", "needs a body"),
])
def test_a_comment_off_the_change_is_refused_naming_its_field(waiting, bob, comment, field, words):
    answer = post(signed_in(bob), waiting, {"decision": "request_changes", "body": "See below.", "comments": [comment]})

    assert answer.status_code == 400 and answer.json()["code"] == "invalid_review"
    assert [(f["field"], words in f["message"]) for f in answer.json()["fields"]] == [(field, True)]
    unchanged(waiting)


@pytest.mark.django_db
def test_every_problem_of_a_review_is_named_at_once(waiting, bob):
    comments = [{"path": "src/export.py", "line": 1, "body": "x"}] * 201
    answer = post(signed_in(bob), waiting, {"decision": "merge", "body": "x" * 20_001, "comments": comments})

    assert answer.status_code == 400 and answer.json()["code"] == "invalid_review"
    assert [f["field"] for f in answer.json()["fields"]] == ["decision", "body", "comments"]
    unchanged(waiting)


@pytest.mark.django_db
def test_a_decision_on_an_attempt_that_takes_none_is_not_reviewable(waiting, bob):
    check = latest(waiting.run)["check"]  # pending behind the change

    answer = post(signed_in(bob), check, {"decision": "approve"})

    assert (answer.status_code, answer.json()["code"]) == (409, "not_reviewable")
    assert "pending" in answer.json()["message"]


@pytest.mark.django_db
def test_a_request_for_changes_answers_with_the_attempt_that_amends_it_and_its_comments_can_be_resolved(
    waiting, bob, scripted_runner, inline_executor
):
    answer = post(signed_in(bob), waiting, {"decision": "request_changes", "body": "Fix line 3.",
                                            "comments": [{"path": "src/export.py", "line": 3, "body": "Here."}]})
    inline_executor.drain()

    assert answer.status_code == 201
    second = latest(waiting.run)["build"]
    assert answer.json()["next_attempt"] == str(second.pk) and second.status == "awaiting_review"
    comment_id = answer.json()["comments"][0]["id"]
    wrong = post(signed_in(bob), second, {"decision": "approve", "resolve": [comment_id + 1000]})
    assert [f["field"] for f in wrong.json()["fields"]] == ["resolve[0]"]

    resolved = post(signed_in(bob), second, {"decision": "approve", "resolve": [comment_id]})

    assert resolved.status_code == 201
    comment = ReviewComment.objects.get(pk=comment_id)
    assert comment.resolved and comment.resolved_in_attempt_id == second.pk and comment.resolved_by.username == "bob"
    second.refresh_from_db()
    assert second.status == "succeeded" and AttemptChange.objects.get(node_exec=second).merge_commit


@pytest.mark.django_db(transaction=True)
@pytest.mark.services
def test_two_approvals_racing_land_the_change_once(repo_task, project, bob, alice, scripted_runner, inline_executor):
    review_required(project)
    run = build_then_check(repo_task, scripted_runner, inline_executor)
    build = waiting_build(run)
    start = threading.Barrier(2, timeout=20)
    answers: list[int] = []

    def approve(user):
        try:
            client = signed_in(user)
            start.wait()
            answers.append(post(client, build, {"decision": "approve"}).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=approve, args=(user,)) for user in (alice, bob)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    inline_executor.drain()

    assert sorted(answers) == [201, 409]
    assert ChangeReview.objects.filter(attempt=build, decision="approve").count() == 1
    workspace = RunWorkspace.objects.get(run=run)
    merges = git(Path(workspace.repository), "rev-list", "--count", workspace.branch, f"^{workspace.base_commit}")
    assert int(merges) == 1  # the change's one commit, fast-forwarded once
    assert AttemptChange.objects.get(node_exec=build).merge_commit
    run.refresh_from_db()
    assert run.status == "succeeded"


@pytest.mark.django_db
def test_an_approval_through_the_helper_and_the_api_read_the_same(waiting, bob):
    made = review(waiting, bob, "approve", "Fine.")

    listed = signed_in(bob).get(f"/api/executions/{waiting.pk}/reviews").json()
    assert [(entry["id"], entry["decision"], entry["body"]) for entry in listed] == [(made.pk, "approve", "Fine.")]
