"""The hostile agent's runs: the fixture that starts ``tests/hostile_claude.py`` through the real claude
runner in the real sandbox, and what the tests read of an attempt and of the repositories around it."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from graphs.engine import run_start
from graphs.models import RunWorkspace, WorkNodeExecution
from tests.repos import git
from tests.run_builders import latest, node, planned_run

HOSTILE_CLAUDE = Path(__file__).with_name("hostile_claude.py")
SECRETS = {
    "SECRET_KEY": "the-consoles-secret-key-5f2a",
    "DATABASE_URL": "postgres://console:db-password-5f2a@db/console",
    "REDIS_URL": "redis://:redis-password-5f2a@cache:6379/0",
    "WORKGRAPH_OPENAI_API_KEY": "sk-the-consoles-key-5f2a",
}


# Every escape is played against both ways the console stages, commits and lands a change: libgit2 in-process
# wherever it does what git does, and the git CLI alone.
@pytest.fixture(params=["auto", "cli"], ids=["libgit2 or cli", "cli only"])
def hostile(request, settings, monkeypatch, inline_executor, repo_task):
    """Run one node whose agent plays the named escapes against the given targets; return its attempt."""
    settings.WORKGRAPH_GIT_BACKEND = request.param
    settings.WORKGRAPH_AGENT = "claude"
    settings.WORKGRAPH_CLAUDE_BIN = str(HOSTILE_CLAUDE)
    settings.WORKGRAPH_TRANSIENT_RETRIES = 0
    settings.WORKGRAPH_SANDBOX = "bwrap"
    settings.WORKGRAPH_SANDBOX_WRITABLE = []
    settings.WORKGRAPH_AGENT_ENV = ["HOSTILE_ACTS", "HOSTILE_TARGETS"]
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)

    def attempt(*acts: str, **targets) -> WorkNodeExecution:
        monkeypatch.setenv("HOSTILE_ACTS", ",".join(acts))
        monkeypatch.setenv("HOSTILE_TARGETS", json.dumps(targets))
        run = planned_run(repo_task, {"nodes": [node("agent", judgment={"kind": "none"})], "edges": []})
        run_start(run=run)
        inline_executor.drain()
        return latest(run)["agent"]

    return attempt


def escapes_found(row: WorkNodeExecution) -> dict[str, str]:
    """What each escape of the attempt found, as the hostile agent answered."""
    return json.loads(row.output_payload["text"])


def digest(folder: Path, *, skip: tuple[str, ...] = ()) -> dict[str, str]:
    """Every file, folder and link below ``folder`` (its .git included), with its mode and content."""
    seen = {}
    for root, dirs, files in os.walk(folder):
        dirs[:] = [name for name in dirs if os.path.relpath(os.path.join(root, name), folder) not in skip]
        for name in [*dirs, *files]:
            path = os.path.join(root, name)
            stat = os.lstat(path)
            if os.path.islink(path):
                content = os.readlink(path).encode()
            elif os.path.isfile(path):
                content = Path(path).read_bytes()
            else:
                content = b""
            seen[os.path.relpath(path, folder)] = f"{stat.st_mode:o}:{hashlib.sha256(content).hexdigest()}"
    return seen


def project_files(repo: Path) -> tuple[dict[str, str], str]:
    """The project folder's own files and its main branch: what no attempt may change (the console's own
    run branches and worktree records live in its .git)."""
    return digest(repo, skip=(".git",)), git(repo, "rev-parse", "refs/heads/main")


def run_branch_unmoved(row: WorkNodeExecution) -> bool:
    workspace = RunWorkspace.objects.get(run_id=row.run_id)
    head = git(Path(workspace.repository), "rev-parse", f"refs/heads/{workspace.branch}").strip()
    return head == workspace.base_commit
