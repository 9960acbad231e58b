"""Each run works on a git branch of its own and each attempt in its own worktree, on repositories the
tests make: changes land on the run branch, conflicts fail with the files and a retry lands on the new
head, a failed attempt's change is kept and never merged, forks start from the right commit, write
sets hold, and a folder that is not a repository runs as before."""

from __future__ import annotations

import io
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from graphs.engine import run_fork, run_start, run_wait_finished
from graphs.executors import ThreadExecutor, executor_set
from graphs.models import AttemptChange, RunWorkspace, WorkGraphRun
from graphs.workspaces.pool import pool_folder
from graphs.workspaces.worktrees import run_head_checkout
from tests.repos import git, writes, writes_then_gives_up
from tests.run_builders import edges_for, latest, node, planned_run


def at_branch(run, path: str) -> str:
    workspace = RunWorkspace.objects.get(run=run)
    return git(Path(workspace.repository), "show", f"{workspace.branch}:{path}")


@pytest.mark.django_db
def test_each_attempt_works_in_its_own_worktree_and_its_change_lands_on_the_run_branch(
    repo, repo_task, scripted_runner, inline_executor, settings
):
    seen: dict[str, Path] = {}

    def build(call):
        seen["build"] = call.cwd
        return writes("src/feature.py", "FEATURE = True\n")(call)

    def check(call):
        seen["check"] = call.cwd
        return "feature is " + (call.cwd / "src" / "feature.py").read_text()

    scripted_runner.replies[("node", "build")] = build
    scripted_runner.replies[("node", "check")] = check
    nodes = [node("build"), node("check", "build")]
    run = planned_run(repo_task, {"nodes": nodes, "edges": edges_for(nodes)})

    run_start(run=run)
    inline_executor.drain()

    rows = latest(run)
    workspace = RunWorkspace.objects.get(run=run)
    assert rows["check"].status == "succeeded"
    # The dependant saw the change its upstream landed, in the worktree of the repository's pool the
    # upstream gave back and it took in turn.
    assert rows["check"].output_payload["text"] == "feature is FEATURE = True\n"
    assert seen["build"] == seen["check"]
    assert seen["build"].parent == pool_folder(Path(settings.WORKGRAPH_WORKSPACE_DIR), repo)
    assert workspace.branch == f"workgraph/run-{run.run_id.hex[:8]}"
    assert workspace.base_commit == git(repo, "rev-parse", "main").strip()
    assert at_branch(run, "src/feature.py") == "FEATURE = True\n"
    change = AttemptChange.objects.get(node_exec=rows["build"])
    assert change.files == [{"path": "src/feature.py", "added": 1, "removed": 0, "binary": False}]
    assert "+FEATURE = True" in change.diff and change.merge_commit
    commit = git(repo, "log", "-1", "--format=%s|%an", change.result_commit).strip()
    assert commit == "build attempt 1|Work Graph Console"
    assert not AttemptChange.objects.get(node_exec=rows["check"]).result_commit  # it changed nothing
    assert workspace.files == change.files and workspace.diff == change.diff
    # The folder itself is untouched: the work is on the branch.
    assert not (repo / "src" / "feature.py").exists() and git(repo, "status", "--porcelain") == ""


def _together(scripted_runner, replies: dict[str, object]) -> None:
    """Script the nodes so their agents all work at the same time, each in its worktree."""
    arrived = threading.Barrier(len(replies), timeout=20)
    for node_id, reply in replies.items():
        def together(call, reply=reply):
            if call.attempt == 1:
                arrived.wait()
            return reply(call)

        scripted_runner.replies[("node", node_id)] = together


@pytest.mark.django_db(transaction=True)
def test_two_writers_at_once_on_different_files_both_land(repo_task, scripted_runner):
    _together(scripted_runner, {"left": writes("left.txt", "L\n"), "right": writes("right.txt", "R\n")})
    run = planned_run(repo_task, {"nodes": [node("left"), node("right")], "edges": []})
    previous = executor_set(ThreadExecutor(workers=2))
    try:
        run_start(run=run)
        run = run_wait_finished(run_id=run.run_id, timeout=30)
    finally:
        executor_set(previous)

    assert run.status == "succeeded"
    assert (at_branch(run, "left.txt"), at_branch(run, "right.txt")) == ("L\n", "R\n")
    assert sorted(entry["path"] for entry in RunWorkspace.objects.get(run=run).files) == ["left.txt", "right.txt"]


@pytest.mark.django_db(transaction=True)
def test_two_writers_of_the_same_lines_give_one_conflict_and_a_retry_lands_on_the_new_head(repo_task, scripted_runner):
    _together(scripted_runner, {"left": writes("README.md", "one\nLEFT\nthree\n"),
                                "right": writes("README.md", "one\nRIGHT\nthree\n")})
    retry = {"action": "retry_self", "max_attempts": 2}
    run = planned_run(repo_task, {"nodes": [node("left", on_fail=retry), node("right", on_fail=retry)], "edges": []})
    previous = executor_set(ThreadExecutor(workers=2))
    try:
        run_start(run=run)
        run = run_wait_finished(run_id=run.run_id, timeout=30)
    finally:
        executor_set(previous)

    conflicted = [row for row in run.executions.all() if (row.judgment_result or {}).get("kind") == "merge_conflict"]
    assert run.status == "succeeded"
    assert len(conflicted) == 1 and conflicted[0].status == "failed"
    assert conflicted[0].judgment_result["files"] == ["README.md"]
    assert conflicted[0].judgment_result["issues"] == ["merge conflict in README.md"]
    loser = conflicted[0].node_id
    winner = "left" if loser == "right" else "right"
    retried = latest(run)[loser]
    assert (retried.attempt, retried.status) == (2, "succeeded")
    # The retry started from the head the winner's change made, and its own change is the last word.
    assert AttemptChange.objects.get(node_exec=retried).base_commit == AttemptChange.objects.get(
        node_exec=latest(run)[winner]).merge_commit
    assert at_branch(run, "README.md") == f"one\n{loser.upper()}\nthree\n"
    assert AttemptChange.objects.get(node_exec=conflicted[0]).ref  # the conflicting change is kept


@pytest.mark.django_db
def test_a_failed_attempts_change_is_kept_on_its_own_ref_and_never_merged(repo, repo_task, scripted_runner,
                                                                          inline_executor):
    scripted_runner.replies[("node", "build")] = writes_then_gives_up("half-done.txt", "half\n")
    run = planned_run(repo_task, {"nodes": [node("build")], "edges": []})

    run_start(run=run)
    inline_executor.drain()

    row = latest(run)["build"]
    change = AttemptChange.objects.get(node_exec=row)
    assert row.status == "failed"
    assert change.ref == f"refs/workgraph/attempts/{row.pk}" and not change.merge_commit
    assert git(repo, "show", f"{change.ref}:half-done.txt") == "half\n"
    assert "half-done.txt" not in git(repo, "ls-tree", "-r", "--name-only", RunWorkspace.objects.get(run=run).branch)


@pytest.mark.django_db
def test_a_fork_starts_from_the_commit_just_before_the_forked_nodes_change(repo, repo_task, scripted_runner,
                                                                          inline_executor):
    for node_id in ("a", "b", "c"):
        scripted_runner.replies[("node", node_id)] = writes(f"{node_id}.txt", f"{node_id}\n")
    nodes = [node("a"), node("b", "a"), node("c", "b")]
    run = planned_run(repo_task, {"nodes": nodes, "edges": edges_for(nodes)}, status="ready")
    run_start(run=run)
    inline_executor.drain()

    fork = run_fork(run=run, node_id="b")
    inline_executor.drain()

    after_a = AttemptChange.objects.get(node_exec=latest(run)["a"]).merge_commit
    fork_workspace = RunWorkspace.objects.get(run=fork)
    assert fork_workspace.base_commit == after_a
    assert fork_workspace.branch != RunWorkspace.objects.get(run=run).branch
    assert sorted(entry["path"] for entry in fork_workspace.files) == ["b.txt", "c.txt"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"write_set": ["src/**"]}, "changed outside its write_set (src/**): README.md, notes.txt"),
        ({"forbidden_paths": ["README.md", "*.lock"]}, "changed forbidden paths (README.md, *.lock): README.md"),
    ],
)
def test_a_change_outside_the_write_set_or_on_a_forbidden_path_fails_naming_the_paths(
    repo_task, scripted_runner, inline_executor, spec, problem
):
    def edits(call):
        writes("src/ok.py", "ok\n")(call)
        writes("notes.txt", "n\n")(call)
        return writes("README.md", "changed\n")(call)

    scripted_runner.replies[("node", "build")] = edits
    run = planned_run(repo_task, {"nodes": [node("build", **spec)], "edges": []})

    run_start(run=run)
    inline_executor.drain()

    row = latest(run)["build"]
    assert row.status == "failed"
    assert row.judgment_result["kind"] == "write_set"
    assert problem in row.judgment_result["issues"]
    assert not AttemptChange.objects.get(node_exec=row).merge_commit


@pytest.mark.django_db
def test_a_folder_that_is_not_a_repository_runs_in_the_folder_itself(task, scripted_runner, inline_executor):
    seen = []

    def build(call):
        seen.append(call.cwd)
        return writes("out.txt", "x\n")(call)

    scripted_runner.replies[("node", "build")] = build
    run = planned_run(task, {"nodes": [node("build")], "edges": []})

    run_start(run=run)
    inline_executor.drain()

    assert latest(run)["build"].status == "succeeded"
    assert seen == [Path(task.project.target_folder)]
    assert (Path(task.project.target_folder) / "out.txt").read_text() == "x\n"
    assert not RunWorkspace.objects.filter(run=run).exists() and not AttemptChange.objects.exists()


@pytest.mark.django_db
def test_pruning_removes_a_runs_branch_and_refs_and_keeps_its_recorded_change(repo, repo_task, scripted_runner,
                                                                             inline_executor):
    scripted_runner.replies[("node", "build")] = writes("x.txt", "x\n")
    run = planned_run(repo_task, {"nodes": [node("build")], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    branch = RunWorkspace.objects.get(run=run).branch

    young = io.StringIO()
    call_command("workspaces_prune", "--older-than", "1d", stdout=young)
    WorkGraphRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(days=2))
    old = io.StringIO()
    call_command("workspaces_prune", "--older-than", "1d", stdout=old)

    assert young.getvalue() == "pruned the branches of 0 run(s) older than 1d\n"
    assert old.getvalue() == "pruned the branches of 1 run(s) older than 1d\n"
    assert git(repo, "branch", "--list", branch) == ""
    assert RunWorkspace.objects.get(run=run).files[0]["path"] == "x.txt"


@pytest.mark.django_db
def test_a_planner_reads_the_run_branchs_head_in_a_checkout_of_its_own(repo, repo_task, scripted_runner,
                                                                        inline_executor):
    scripted_runner.replies[("node", "build")] = writes("landed.txt", "yes\n")
    run = planned_run(repo_task, {"nodes": [node("build")], "edges": []})
    run_start(run=run)
    inline_executor.drain()

    with run_head_checkout(run, name="planning-test") as head:
        assert head is not None and head != repo
        assert (head / "landed.txt").read_text() == "yes\n"
    assert not (repo / "landed.txt").exists()
