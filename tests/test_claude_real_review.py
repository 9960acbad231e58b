"""The real Claude Code CLI (the pinned npm package) in the console's sandbox, against the Messages API
stand-in, amends its change as a reviewer asks: with change review required, its first change waits; a
reviewer's comment on a line of it — its text, its path and its line, with the lines around it — reaches
the prompt the CLI sends the model on the review attempt, whose worktree holds the first change; once
approved, the amended change lands on the run's branch and the task page's ``git fetch`` brings it into
another checkout."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from graphs.engine import run_start
from graphs.models import RunWorkspace
from tests.change_reviews import review, review_required
from tests.claude_review_script import AMENDED, ASKED, COMMENT, FIRST, amending_script
from tests.repos import git
from tests.run_builders import latest, node, planned_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sandbox]

def test_a_line_comment_reaches_the_clis_prompt_and_the_amended_change_lands_after_approval(
    real_claude, repo_task, project, bob, inline_executor, repo, tmp_path
):
    review_required(project)
    real_claude.script = amending_script(read_first=True)
    # Planned by the coder, whose profile runs Bash.
    run = planned_run(repo_task, {"nodes": [node("impl", judgment={"kind": "none"})], "edges": []}, org_node="coder")

    run_start(run=run)
    inline_executor.drain()
    first = latest(run)["impl"]
    assert first.status == "awaiting_review"

    review(first, bob, "request_changes", "One line to fix.",
           comments=[{"path": "feature.txt", "line": 2, "body": COMMENT}])
    inline_executor.drain()

    second = latest(run)["impl"]
    assert (second.attempt, second.cause, second.status) == (2, "review", "awaiting_review")
    [opening] = [request for request in real_claude.requests
                 if ASKED in request.first_user_text and request.turn == 0]
    prompt = opening.first_user_text
    assert "#### `feature.txt`, line 2" in prompt and f"> {COMMENT}" in prompt and "> One line to fix." in prompt
    assert "> 2 | two" in prompt and "  1 | one" in prompt and "bob" in prompt
    [reading] = [request for request in real_claude.requests
                 if ASKED in request.first_user_text and request.turn == 1]
    assert FIRST.strip() in reading.last_user_text  # the review attempt's worktree holds the first change

    review(second, bob, "approve", "Thanks.")
    inline_executor.drain()

    run.refresh_from_db()
    assert run.status == "succeeded"
    workspace = RunWorkspace.objects.get(run=run)
    assert git(repo, "show", f"{workspace.branch}:feature.txt") == AMENDED
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "clone", "--quiet", str(repo), str(checkout)], check=True)
    git(checkout, "fetch", "--quiet", workspace.repository, workspace.branch)
    assert git(checkout, "show", "FETCH_HEAD:feature.txt") == AMENDED
    assert not (Path(workspace.repository) / "feature.txt").exists()  # the project's folder itself is untouched
