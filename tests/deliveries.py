"""What the delivery tests share: the forge token in a variable the console may read, a bare repository the
project's runs are delivered to (its ``main`` pushed there, as a team's remote would hold it), a project that
delivers, and a run of it that succeeded with a change on its branch."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from graphs.engine import run_start
from graphs.models import ProjectDelivery, RunDelivery, WorkGraphRun
from tests.git_http_server import GitHttpServer, bare_repository, http_backend_required
from tests.repos import git, writes
from tests.run_builders import edges_for, node, planned_run
from tests.standins.github_api import GitHubStandin

TOKEN_ENV = "FORGE_TEST_TOKEN"
SECRET_ENV = "FORGE_TEST_HOOK_SECRET"
TOKEN = "tok_9f8e7d6c5b4a-delivery-test-value"
HOOK_SECRET = "whsec_0a1b2c3d4e5f-delivery-test"


@pytest.fixture
def forge_token(monkeypatch, settings) -> str:
    """The forge's token in ``FORGE_TEST_TOKEN`` (and a webhook secret in ``FORGE_TEST_HOOK_SECRET``), both
    variables the console lets projects name."""
    settings.WORKGRAPH_FORGE_SECRET_ENV = [TOKEN_ENV, SECRET_ENV]
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    monkeypatch.setenv(SECRET_ENV, HOOK_SECRET)
    return TOKEN


@pytest.fixture
def bare_remote(tmp_path, repo) -> Path:
    """A bare repository holding the project's ``main``: where its runs are delivered."""
    bare = bare_repository(tmp_path, "remote.git")
    git(repo, "push", "--quiet", str(bare), "main")
    return bare


@dataclass(frozen=True)
class ServedRemote:
    """A bare repository holding the project's ``main``, served over HTTP, and GitHub's stand-in for it."""
    remote: Path
    url: str
    github: GitHubStandin


@contextmanager
def served_remote(project, repo: Path, root: Path) -> Iterator[ServedRemote]:
    """The project works in ``repo`` with commands allowed, and its ``main`` is pushed to the bare repository
    ``app.git`` made in ``root``, served there by git http-backend behind basic auth with ``TOKEN``, GitHub's
    stand-in answering for it: the remote the project delivers to. Skips (fails under CI) where git
    http-backend is missing."""
    http_backend_required()
    project.target_folder, project.allow_commands = str(repo), True
    project.save(update_fields=["target_folder", "allow_commands"])
    root.mkdir()
    remote = bare_repository(root, "app.git")
    git(repo, "push", "--quiet", str(remote), "main")
    with GitHttpServer(root, password=TOKEN) as served, GitHubStandin(token=TOKEN, remote=remote) as github:
        yield ServedRemote(remote=remote, url=served.url_of("app.git"), github=github)


def remote_head(remote: Path, branch: str) -> str | None:
    """The commit ``branch`` points at in the bare repository ``remote``, or None."""
    found = git(remote, "for-each-ref", "--format=%(objectname)", f"refs/heads/{branch}").strip()
    return found or None


def delivering(project, **fields) -> ProjectDelivery:
    """The project delivers as ``fields`` say (saved as they are: the settings' checks have tests of their own)."""
    values = {"deliver": "push", "forge": "", "forge_api_url": "", "forge_repo": "", "forge_token_env": "",
              "forge_webhook_secret_env": "", **fields}
    return ProjectDelivery.objects.update_or_create(project=project, defaults=values)[0]


def succeeded_run(task, runner, executor, on_commit, *, path: str = "src/export.py",
                  text: str = "print('csv')\n") -> WorkGraphRun:
    """A run of ``task`` whose one node writes ``path``: it succeeds with that change on its branch. Its
    notifications are heard (``on_commit`` is pytest-django's ``django_capture_on_commit_callbacks``) and the
    executor drained again after, so a project that delivers has tried its delivery too."""
    runner.replies[("node", "export")] = writes(path, text)
    nodes = [node("export")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    with on_commit(execute=True):
        run_start(run=run)
        executor.drain()
    executor.drain()
    run.refresh_from_db()
    assert run.status == WorkGraphRun.Status.SUCCEEDED, run.error
    return run


def delivery_of(run: WorkGraphRun) -> RunDelivery:
    return RunDelivery.objects.get(run=run)
