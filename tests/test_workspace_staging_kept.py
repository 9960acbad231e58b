"""Through libgit2 an attempt's change is staged once: the write-set check's changed paths and the landing's
commit are one staging of the worktree. What the attempt's judge writes there after the check — an agent's
call, a command — is staged afresh and lands with the change. A pooled worktree's index, written by its
landing, is not read from disk again by the next attempt that holds it in the same process, unless a git
process rewrote it meanwhile."""

from __future__ import annotations

import pygit2
import pytest

from graphs.engine import run_start
from graphs.workspaces import libgit
from tests.repos import git, writes
from tests.run_builders import edges_for, latest, node, planned_run, python

pytestmark = pytest.mark.django_db

WRITES_NOTES = "import pathlib; pathlib.Path('judge-notes.md').write_text('checked\\n')"


@pytest.fixture
def stagings(monkeypatch, settings) -> list[int]:
    """One item for each time libgit2 staged a worktree: walking it whole, or the paths its watch saw touched."""
    settings.WORKGRAPH_GIT_BACKEND = "auto"
    seen: list[int] = []
    real_walk, real_touched = pygit2.Index.add_all, libgit.touched_staged

    def walked(index, *args, **kwargs):
        seen.append(1)
        return real_walk(index, *args, **kwargs)

    def touched(*args, **kwargs):
        done = real_touched(*args, **kwargs)
        seen.extend([1] if done else [])
        return done

    monkeypatch.setattr(pygit2.Index, "add_all", walked)
    monkeypatch.setattr(libgit, "touched_staged", touched)
    return seen


def _landed(repo_task, inline_executor, spec: dict) -> tuple[str, list[str]]:
    """Run the one node ``spec``; its status, and the files its landing changed on the run's branch."""
    run = planned_run(repo_task, {"nodes": [spec], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    row = latest(run)[spec["node_id"]]
    branch = run.workspace.branch
    folder = repo_task.project.target_folder
    changed = git(folder, "diff", "--name-only", f"{run.workspace.base_commit}..{branch}").split()
    return row.status, changed


def test_an_attempt_whose_judge_runs_nothing_stagings_its_worktree_once(repo_task, inline_executor, scripted_runner,
                                                                    stagings):
    scripted_runner.replies[("node", "build")] = writes("docs/guide.md", "# Guide\n")

    status, changed = _landed(repo_task, inline_executor, node("build", write_set=["docs/**"]))

    assert status == "succeeded" and changed == ["docs/guide.md"]
    assert len(stagings) == 1


def test_what_a_judge_agent_writes_after_the_write_set_check_lands_with_the_change(repo_task, inline_executor,
                                                                                  scripted_runner, stagings):
    scripted_runner.replies[("node", "build")] = writes("docs/guide.md", "# Guide\n")

    def judge_writes(call) -> str:
        writes("judge-notes.md", "checked\n")(call)
        return '{"ok": true, "issues": []}'

    scripted_runner.replies[("judge", "build")] = judge_writes

    status, changed = _landed(repo_task, inline_executor, node("build", judgment={"kind": "llm"}))

    assert status == "succeeded" and changed == ["docs/guide.md", "judge-notes.md"]
    assert len(stagings) == 2


def test_what_a_command_judgment_writes_after_the_write_set_check_lands_with_the_change(
    repo_task, commands_allowed, inline_executor, scripted_runner, stagings
):
    scripted_runner.replies[("node", "build")] = writes("docs/guide.md", "# Guide\n")
    spec = node("build", judgment={"kind": "command", "command": python(WRITES_NOTES), "timeout_seconds": 60})

    status, changed = _landed(repo_task, inline_executor, spec)

    assert status == "succeeded" and changed == ["docs/guide.md", "judge-notes.md"]
    assert len(stagings) == 2


@pytest.fixture
def worktree_opens(monkeypatch) -> list[str]:
    """The git directory of each worktree libgit2 opened afresh, reading its index from disk."""
    opened: list[str] = []
    real = pygit2.Repository

    def counted(path, *args, **kwargs):
        if "/worktrees/" in str(path):
            opened.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(libgit.pygit2, "Repository", counted)
    return opened


def test_a_chains_next_node_stages_on_the_index_the_node_before_wrote(repo_task, inline_executor, scripted_runner,
                                                                      stagings, worktree_opens):
    scripted_runner.replies[("node", "first")] = writes("docs/first.md", "# First\n")
    scripted_runner.replies[("node", "second")] = writes("docs/second.md", "# Second\n")
    nodes = [node("first"), node("second", "first")]
    run = planned_run(repo_task, {"nodes": nodes, "edges": edges_for(nodes)})

    run_start(run=run)
    inline_executor.drain()

    rows = latest(run)
    assert rows["first"].status == rows["second"].status == "succeeded"
    folder = repo_task.project.target_folder
    assert git(folder, "diff", "--name-only", f"{run.workspace.base_commit}..{run.workspace.branch}").split() == [
        "docs/first.md", "docs/second.md"]
    assert git(folder, "show", "--name-only", "--format=", run.workspace.branch).split() == ["docs/second.md"]
    assert len(stagings) == 2 and len(worktree_opens) == 1


def test_an_index_a_git_checkout_rewrote_is_read_again(repo_task, inline_executor, scripted_runner, stagings):
    scripted_runner.replies[("node", "first")] = writes("docs/first.md", "# First\n")
    scripted_runner.replies[("node", "second")] = writes("docs/second.md", "# Second\n")
    _landed(repo_task, inline_executor, node("first"))

    # Another run starts from the project's base: the pooled worktree is checked out there by git, and the
    # index the first landing wrote, which holds docs/first.md, is read again rather than reused.
    status, changed = _landed(repo_task, inline_executor, node("second"))

    assert status == "succeeded" and changed == ["docs/second.md"]
