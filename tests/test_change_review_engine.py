"""A project that requires change review holds an attempt's judged-good change for a reviewer: it does
not land, its dependants wait and the run goes on running; an approval lands it and the run goes on; a
request for changes gives the node a new attempt that starts from the reviewed change with the review in
its prompt; without the setting nothing waits."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from graphs.engine import run_start
from graphs.models import AttemptChange, RunWorkspace, WorkGraphRun
from graphs.reads.run_notices import run_notices
from graphs.runs.facts import run_progress_counted
from tests.change_reviews import FEATURE, build_then_check, review, review_required, waiting_build
from tests.repos import git, writes
from tests.run_builders import command_node, edges_for, latest, planned_run


def at_branch(run, path: str) -> str:
    workspace = RunWorkspace.objects.get(run=run)
    return git(Path(workspace.repository), "show", f"{workspace.branch}:{path}")


def branch_files(run) -> str:
    workspace = RunWorkspace.objects.get(run=run)
    return git(Path(workspace.repository), "ls-tree", "-r", "--name-only", workspace.branch)


@pytest.mark.django_db
def test_without_the_setting_a_change_lands_at_once_and_nothing_waits(repo_task, scripted_runner, inline_executor):
    run = build_then_check(repo_task, scripted_runner, inline_executor)

    run.refresh_from_db()
    assert run.status == "succeeded"
    assert {row.status for row in latest(run).values()} == {"succeeded"}
    assert at_branch(run, "src/export.py") == FEATURE


@pytest.mark.django_db
def test_a_judged_good_change_waits_unlanded_and_its_dependants_wait_while_the_run_runs(
    repo_task, project, scripted_runner, inline_executor
):
    review_required(project)
    run = build_then_check(repo_task, scripted_runner, inline_executor)

    run.refresh_from_db()
    build = waiting_build(run)
    change = AttemptChange.objects.get(node_exec=build)
    assert run.status == "running" and run.finished_at is None
    assert latest(run)["check"].status == "pending"
    assert ("node", "check", 1) not in scripted_runner.calls
    assert change.ref == f"refs/workgraph/attempts/{build.pk}" and change.result_commit and not change.merge_commit
    assert "src/export.py" not in branch_files(run)
    assert build.judgment_result["ok"] is True and build.output_payload["text"] == "wrote src/export.py"
    progress = run_progress_counted(run_id=run.pk, total=2)
    assert (progress.awaiting_review, progress.active) == (1, 1)
    assert "1 awaiting review" in progress.summary()
    assert [wait.node_id for wait in run_notices(run).review_waits] == ["build"]


@pytest.mark.django_db
def test_an_approval_lands_the_change_and_the_run_goes_on_to_succeed(
    repo_task, project, alice, bob, scripted_runner, inline_executor
):
    review_required(project)
    run = build_then_check(repo_task, scripted_runner, inline_executor)
    build = waiting_build(run)

    review(build, bob, "approve", "Looks right.")
    inline_executor.drain()

    run.refresh_from_db()
    rows = latest(run)
    assert rows["build"].pk == build.pk and rows["build"].status == "succeeded"
    assert AttemptChange.objects.get(node_exec=build).merge_commit
    assert at_branch(run, "src/export.py") == FEATURE
    # check's change (none) had nothing to review: it landed as before.
    assert rows["check"].status == "succeeded" and run.status == "succeeded"
    assert run_notices(run).review_waits == []


@pytest.mark.django_db
def test_a_request_for_changes_starts_an_attempt_on_the_reviewed_change_with_the_review_in_its_prompt(
    repo_task, project, bob, scripted_runner, inline_executor
):
    review_required(project)
    seen = {}

    def amend(call):
        seen["before"] = (call.cwd / "src" / "export.py").read_text()
        seen["prompt"] = call.prompt
        return writes("src/export.py", FEATURE.replace("','", "';'"))(call)

    scripted_runner.replies[("node", "build", 2)] = amend
    run = build_then_check(repo_task, scripted_runner, inline_executor)
    first = waiting_build(run)

    asked = review(first, bob, "request_changes", "Use semicolons: the spreadsheet is French.",
                   comments=[{"path": "src/export.py", "line": 3, "body": "Join with ';' here."}])
    inline_executor.drain()

    first.refresh_from_db()
    second = latest(run)["build"]
    assert first.status == "changes_requested"
    assert (second.attempt, second.cause, second.status) == (2, "review", "awaiting_review")
    assert asked.next_attempt_id == second.pk
    # The worktree started from the reviewed change, which the agent amends.
    assert seen["before"] == FEATURE
    prompt = seen["prompt"]
    assert "## Changes requested in review" in prompt and "bob" in prompt
    assert "Use semicolons: the spreadsheet is French." in prompt
    assert "#### `src/export.py`, line 3" in prompt and "> Join with ';' here." in prompt
    assert "> 3 |     return ','.join(rows)" in prompt and "  1 | def export():" in prompt
    # The new attempt's change is the whole change from the run's branch, reviewable again.
    change = AttemptChange.objects.get(node_exec=second)
    assert change.base_commit == AttemptChange.objects.get(node_exec=first).base_commit
    assert [entry["path"] for entry in change.files] == ["src/export.py"]
    assert "+    return ';'.join(rows)" in change.diff
    assert latest(run)["check"].status == "pending"

    review(second, bob, "approve")
    inline_executor.drain()
    run.refresh_from_db()
    assert run.status == "succeeded" and at_branch(run, "src/export.py") == FEATURE.replace("','", "';'")


@pytest.mark.django_db
def test_a_command_node_that_changes_files_waits_for_review_too(repo_task, project, commands_allowed, bob,
                                                               inline_executor, scripted_runner):
    review_required(project)
    nodes = [command_node("generate", "open('generated.txt', 'w').write('made\\n')")]
    run = planned_run(repo_task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    inline_executor.drain()

    generate = latest(run)["generate"]
    assert generate.status == "awaiting_review"
    review(generate, bob, "approve")
    inline_executor.drain()
    run.refresh_from_db()
    assert run.status == "succeeded" and at_branch(run, "generated.txt") == "made\n"


@pytest.mark.django_db
def test_a_change_that_conflicts_with_what_landed_while_it_waited_fails_on_approval(
    repo_task, project, bob, scripted_runner, inline_executor
):
    review_required(project)
    run = build_then_check(repo_task, scripted_runner, inline_executor)
    build = waiting_build(run)
    workspace = RunWorkspace.objects.get(run=run)
    repository = Path(workspace.repository)
    # Someone lands another src/export.py on the run's branch meanwhile.
    other = git(repository, "commit-tree", _tree_with(repository, workspace.branch, "src/export.py", "other\n"),
                "-p", workspace.branch, "-m", "meanwhile").strip()
    git(repository, "update-ref", f"refs/heads/{workspace.branch}", other)

    review(build, bob, "approve")
    inline_executor.drain()

    rows = WorkGraphRun.objects.get(pk=run.pk).executions.filter(node_id="build").order_by("attempt")
    assert rows[0].status == "failed" and rows[0].judgment_result["kind"] == "merge_conflict"
    assert rows[0].judgment_result["files"] == ["src/export.py"]


def _tree_with(repository: Path, branch: str, path: str, text: str) -> str:
    """The tree of ``branch`` with ``path`` holding ``text``, written without touching any checkout."""
    env = {"GIT_INDEX_FILE": str(repository / ".git" / "review-test-index"), "PATH": os.environ["PATH"]}

    def run_git(*args: str, stdin: str | None = None) -> str:
        return subprocess.run(["git", "-C", str(repository), *args], input=stdin, env=env, text=True,
                              capture_output=True, check=True).stdout.strip()

    blob = run_git("hash-object", "-w", "--stdin", stdin=text)
    run_git("read-tree", branch)
    run_git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    return run_git("write-tree")
