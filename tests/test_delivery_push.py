"""Pushing a run's branch for real: over HTTP to a bare repository served by git's own ``git http-backend``
behind basic auth (the token reaching git through its askpass program), and to a ``file://`` URL or a path;
never to the base branch or outside ``workgraph/*``, never forced over commits the console did not make, and
every refusal said in words that name the token's variable and never hold its value."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphs.delivery.credentials import Secret
from graphs.delivery.failures import DeliveryFailed
from graphs.delivery.push import base_branch_of, branch_push
from tests.deliveries import TOKEN, TOKEN_ENV, remote_head
from tests.git_http_server import GitHttpServer, bare_repository, http_backend_required
from tests.repos import git

BRANCH = "workgraph/run-0badc0de"


def committed(repo: Path, branch: str, name: str, *, start: str = "main") -> str:
    """A commit adding ``name`` on ``branch`` (made from ``start`` when new); its id."""
    git(repo, "checkout", "--quiet", "-B", branch, start if not _exists(repo, branch) else branch)
    (repo / name).write_text(f"{name}\n")
    git(repo, "add", name)
    git(repo, "-c", "user.name=Someone", "-c", "user.email=someone@example.com", "commit", "--quiet", "-m", name)
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "--quiet", "main")
    return head


def _exists(repo: Path, branch: str) -> bool:
    return bool(git(repo, "branch", "--list", branch).strip())


def push(repo: Path, url: str, commit: str, *, token: Secret | None = None, console_head: str | None = None,
         branch: str = BRANCH, base: str | None = "main"):
    return branch_push(repository=repo, remote_url=url, commit=commit, branch=branch, base_branch=base, token=token,
                       username="x-access-token", console_head=console_head, timeout=30)


@pytest.fixture
def served(tmp_path):
    """git http-backend serving ``tmp_path/served`` to whoever gives the test's token as password."""
    http_backend_required()
    root = tmp_path / "served"
    root.mkdir()
    bare_repository(root, "app.git")
    with GitHttpServer(root, password=TOKEN) as server:
        yield server


def test_a_run_branch_goes_over_http_with_the_token_given_to_git_by_its_askpass(repo, served):
    head = committed(repo, BRANCH, "export.py")

    pushed = push(repo, served.url_of("app.git"), head, token=Secret(TOKEN_ENV, TOKEN))

    assert (pushed.branch, pushed.commit, pushed.replaced) == (BRANCH, head, None)
    assert remote_head(served.root / "app.git", BRANCH) == head
    users = [user for _, _, user in served.requests]
    assert users[0] == "" and "x-access-token" in users, "git asked for credentials after a 401, and got them"
    assert TOKEN not in git(repo, "config", "--list"), "the token is written into no configuration"


def test_a_file_url_and_an_absolute_path_take_pushes_alike_and_a_second_push_is_up_to_date(repo, tmp_path):
    head = committed(repo, BRANCH, "export.py")
    by_url, by_path = bare_repository(tmp_path, "url.git"), bare_repository(tmp_path, "path.git")

    first = push(repo, f"file://{by_url}", head)
    again = push(repo, f"file://{by_url}", head)
    push(repo, str(by_path), head)

    assert (first.up_to_date, again.up_to_date) == (False, True)
    assert remote_head(by_url, BRANCH) == remote_head(by_path, BRANCH) == head


def test_a_remote_branch_holding_commits_the_console_did_not_make_is_never_forced(repo, tmp_path):
    remote = bare_repository(tmp_path, "remote.git")
    foreign = committed(repo, "someone-else", "theirs.txt")
    git(repo, "push", "--quiet", str(remote), f"{foreign}:refs/heads/{BRANCH}")
    ours = committed(repo, BRANCH, "export.py")

    with pytest.raises(DeliveryFailed, match="has commits the console did not make: nothing was forced") as refused:
        push(repo, str(remote), ours)

    assert remote_head(remote, BRANCH) == foreign
    assert not refused.value.transient


def test_the_consoles_own_earlier_push_is_replaced_under_a_lease_on_exactly_that_commit(repo, tmp_path):
    remote = bare_repository(tmp_path, "remote.git")
    earlier = committed(repo, BRANCH, "first.txt")
    push(repo, str(remote), earlier)
    again = committed(repo, "workgraph/run-follow", "second.txt")  # from main: not a descendant of ``earlier``

    replaced = push(repo, str(remote), again, console_head=earlier)

    assert (replaced.commit, replaced.replaced) == (again, earlier)
    assert remote_head(remote, BRANCH) == again


def test_a_lease_fails_once_someone_pushed_over_the_consoles_commit(repo, tmp_path):
    remote = bare_repository(tmp_path, "remote.git")
    earlier = committed(repo, BRANCH, "first.txt")
    push(repo, str(remote), earlier)
    theirs = committed(repo, BRANCH, "theirs.txt")
    git(repo, "push", "--quiet", str(remote), f"{theirs}:refs/heads/{BRANCH}")
    again = committed(repo, "workgraph/run-follow", "second.txt")

    with pytest.raises(DeliveryFailed, match="commits the console did not make"):
        push(repo, str(remote), again, console_head=earlier)

    assert remote_head(remote, BRANCH) == theirs


def test_the_base_branch_and_branches_outside_workgraph_are_never_pushed(repo, tmp_path):
    remote = bare_repository(tmp_path, "remote.git")
    head = committed(repo, BRANCH, "export.py")

    with pytest.raises(DeliveryFailed, match="base branch: the console never pushes to it"):
        push(repo, str(remote), head, base=BRANCH)
    with pytest.raises(DeliveryFailed, match=r"Only the console's own workgraph/\* branches are pushed, not 'main'"):
        push(repo, str(remote), head, branch="main")

    assert git(remote, "for-each-ref").strip() == ""


def test_a_protected_branch_the_remote_refuses_is_said_in_the_remotes_words(repo, served):
    hook = served.root / "app.git" / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'You are not allowed to push code to protected branches on this project.' >&2\n"
                    "exit 1\n")
    hook.chmod(0o755)
    head = committed(repo, BRANCH, "export.py")

    with pytest.raises(DeliveryFailed) as refused:
        push(repo, served.url_of("app.git"), head, token=Secret(TOKEN_ENV, TOKEN))

    said = str(refused.value)
    assert f"The remote refused the push to {BRANCH}: pre-receive hook declined." in said
    assert "You are not allowed to push code to protected branches on this project." in said
    assert not refused.value.transient and remote_head(served.root / "app.git", BRANCH) is None


def test_a_refused_token_fails_naming_its_variable_and_never_its_value(repo, served):
    head = committed(repo, BRANCH, "export.py")
    wrong = "tok_not-the-right-one-42"

    with pytest.raises(DeliveryFailed) as refused:
        push(repo, served.url_of("app.git"), head, token=Secret(TOKEN_ENV, wrong))

    said = str(refused.value)
    assert "refused the credentials: the push used the token in FORGE_TEST_TOKEN (forge_token_env)" in said
    assert wrong not in said and not refused.value.transient


def test_a_token_value_the_remote_echoes_in_its_refusal_is_redacted(repo, served):
    hook = served.root / "app.git" / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\necho 'token {TOKEN} may not push here' >&2\nexit 1\n")
    hook.chmod(0o755)
    head = committed(repo, BRANCH, "export.py")

    with pytest.raises(DeliveryFailed) as refused:
        push(repo, served.url_of("app.git"), head, token=Secret(TOKEN_ENV, TOKEN))

    assert TOKEN not in str(refused.value)
    assert f"token [{TOKEN_ENV}] may not push here" in str(refused.value)


def test_an_unreachable_remote_is_a_transient_failure(repo):
    head = committed(repo, BRANCH, "export.py")

    with pytest.raises(DeliveryFailed, match=r"Could not reach http://127\.0\.0\.1:9/app\.git") as failed:
        push(repo, "http://127.0.0.1:9/app.git", head, token=Secret(TOKEN_ENV, TOKEN))

    assert failed.value.transient


def test_the_base_branch_is_the_projects_base_ref_by_name_or_the_folders_current_branch(repo, tmp_path):
    commit = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "update-ref", "refs/remotes/origin/trunk", commit)

    assert [base_branch_of(repo, ref) for ref in ("", "main", "refs/heads/main", "origin/trunk", commit, "nope")] == [
        "main", "main", "main", "trunk", None, None]
