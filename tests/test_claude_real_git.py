"""The real Claude Code CLI (the pinned npm package) in the console's sandbox, against the Messages API
stand-in, reads its attempt's git: on a node's second attempt, sent back by a failing check downstream,
its Bash tool's ``git status``, ``git log`` and ``git diff HEAD~1`` show the first attempt's change, and the
tool result the CLI sends the model holds it."""

from __future__ import annotations

import pytest

from graphs.engine import run_start
from graphs.models import RunWorkspace
from tests.repos import git
from tests.run_builders import edges_for, latest, node, planned_run
from tests.standins.anthropic_api import Reply, Request, text, tool

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sandbox]

SENT_BACK = "failed its judgment after using this work"
READ_GIT = "git status && git log --format=%s && git diff HEAD~1"


def _impl_turn(request: Request) -> Reply:
    """The first attempt writes feature.txt; the second reads its git, then adds a line."""
    if SENT_BACK not in request.first_user_text:
        if request.turn == 0:
            return tool("Bash", {"command": "echo first > feature.txt", "description": "Write the feature"})
        return text("the first version is written")
    if request.turn == 0:
        return tool("Bash", {"command": READ_GIT, "description": "See what I changed before"})
    if request.turn == 1:
        return tool("Bash", {"command": "echo second >> feature.txt", "description": "Add the second line"})
    return text("the second version is written")


def _script(request: Request) -> Reply | None:
    asked = request.first_user_text
    if "Do impl." in asked:
        return _impl_turn(request)
    if "Do check." in asked:
        verdict = "pass" if "the second version" in asked else "fail: feature.txt needs a second line"
        return text(f"VERDICT: {verdict}")
    return None


def test_the_clis_git_diff_on_a_second_attempt_shows_the_first_attempts_change(real_claude, repo_task,
                                                                               inline_executor, repo):
    real_claude.script = _script
    nodes = [node("impl", judgment={"kind": "none"}),
             node("check", "impl", judgment={"kind": "mechanical", "check_ref": "verdict_says_pass"},
                  on_fail={"action": "loop_back", "max_attempts": 2})]
    loop_back = {"from": "check", "to": "impl", "edge_type": "on_failure"}
    # Planned by the coder, whose profile runs Bash.
    run = planned_run(repo_task, {"nodes": nodes, "edges": [*edges_for(nodes), loop_back]}, org_node="coder")

    run_start(run=run)
    inline_executor.drain()

    rows = latest(run)
    assert (rows["impl"].attempt, rows["impl"].status, rows["check"].status) == (2, "succeeded", "succeeded")
    [read] = [request for request in real_claude.scripted(SENT_BACK) if "Do impl." in request.first_user_text
              and request.turn == 1]
    seen = read.last_user_text
    assert "not a git repository" not in seen
    assert "nothing to commit" in seen
    assert "impl attempt 1\nstart\n" in seen
    assert "+++ b/feature.txt" in seen and "+first" in seen
    workspace = RunWorkspace.objects.get(run=run)
    assert git(repo, "show", f"{workspace.branch}:feature.txt") == "first\nsecond\n"
