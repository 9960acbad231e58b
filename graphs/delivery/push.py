"""A run's branch pushed to the project's remote by the console — never by an agent — through the console's
own git (graphs.workspaces.git: pinned to the repository, no configured program runs), with the forge's
token supplied to that one command and no other.

The token reaches git through ``GIT_ASKPASS``: a script, written for the push into a private folder, that
prints the variable the project names; that variable is in the push's environment alone, never in a
configuration file, a URL or an argument. The transports the console's git otherwise refuses are allowed
for the push only: https and ssh (and plain http, which the settings allow to this machine alone).

What is pushed is fenced: only ``workgraph/*`` branches, never the project's base branch, and never forced
over a commit the console did not make. A push is a fast-forward; when the remote branch's head is the
commit the console itself pushed there last (a follow-up run that started again from an earlier point),
it is replaced under a lease on exactly that commit, which git refuses should anyone have pushed since.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from graphs.delivery.credentials import Secret, redacted
from graphs.delivery.failures import DeliveryFailed
from graphs.models.delivery import DELIVERY_BRANCH_PREFIX
from graphs.workspaces.git import git_env, repository_git_dir, repository_git_run, safe_config_argv
from graphs.workspaces.processes import group_kill

# Prints the user name git asks for, and the token from the variable the push names, for the password.
ASKPASS_SCRIPT = """#!/bin/sh
case "$1" in
  Username*) printf '%s\\n' "$WORKGRAPH_ASKPASS_USERNAME" ;;
  *) printenv "$WORKGRAPH_ASKPASS_VARIABLE" ;;
esac
"""
# What the remote may say, kept in a failure's words; the rest is cut.
REMOTE_SAID_MAX_CHARS = 600
_PORCELAIN_LINE = re.compile(r"^(?P<flag>[ +\-*!=])\t(?P<refs>[^\t]*)\t(?P<summary>.*)$")
_UNREACHABLE = ("could not resolve host", "failed to connect", "connection refused", "connection timed out",
                "operation timed out", "couldn't connect to server", "rpc failed", "early eof",
                "unexpected disconnect", "remote end hung up", "ssh: connect to host", "connection reset",
                "network is unreachable", "temporary failure in name resolution")
_REFUSED_CREDENTIALS = ("authentication failed", "could not read username", "could not read password",
                        "returned error: 401", "invalid username or password", "permission denied (publickey")
_NOT_FOUND = ("repository not found", "does not appear to be a git repository", "returned error: 404",
              "not found")


@dataclass(frozen=True)
class PushResult:
    """A push done: the commit now at the head of ``branch`` on the remote, and — when it replaced a commit
    the console had pushed there before — that commit."""

    branch: str
    commit: str
    replaced: str | None = None
    up_to_date: bool = False


def base_branch_of(repository: Path, base_ref: str) -> str | None:
    """The branch the project's runs start from, by name — its ``base_ref`` when that names a branch (local or
    remote-tracking), the folder's current branch when it is empty — or None when it names a commit or tag."""
    ref = base_ref.strip()
    if not ref:
        done = repository_git_run(repository, "symbolic-ref", "--quiet", "--short", "HEAD")
        name = done.stdout.strip() if done.returncode == 0 else ""
        return name or None
    ref = ref.removeprefix("refs/heads/")
    if _ref_exists(repository, f"refs/heads/{ref}"):
        return ref
    tracking = ref.removeprefix("refs/remotes/")
    if "/" in tracking and _ref_exists(repository, f"refs/remotes/{tracking}"):
        return tracking.split("/", 1)[1]
    return None


def branch_push(*, repository: Path, remote_url: str, commit: str, branch: str, base_branch: str | None,
                token: Secret | None, username: str, console_head: str | None, timeout: float) -> PushResult:
    """Push ``commit`` to ``branch`` of the remote at ``remote_url`` from the project's ``repository``.

    ``console_head`` is the commit the console last pushed to that branch, if any: a remote head that is
    exactly it may be replaced. Raises ``DeliveryFailed`` in words (the token's variable named, its value
    never) for a branch the console may not push, a refusal, or a remote it could not reach (transient).
    """
    if not branch.startswith(DELIVERY_BRANCH_PREFIX) or branch == DELIVERY_BRANCH_PREFIX:
        raise DeliveryFailed(f"Only the console's own {DELIVERY_BRANCH_PREFIX}* branches are pushed, not {branch!r}.")
    if base_branch is not None and branch == base_branch:
        raise DeliveryFailed(f"{branch} is the project's base branch: the console never pushes to it.")
    if not re.fullmatch(r"[0-9a-f]{40}", commit) or not _commit_exists(repository, commit):
        raise DeliveryFailed(f"The run's head commit {commit[:12] or '(none)'} is not in the project's repository.")
    done = _push(repository, remote_url, f"{commit}:refs/heads/{branch}", token=token, username=username,
                 timeout=timeout)
    outcome = _outcome(done, remote_url=remote_url, branch=branch, token=token)
    if outcome == "pushed":
        return PushResult(branch=branch, commit=commit)
    if outcome == "up_to_date":
        return PushResult(branch=branch, commit=commit, up_to_date=True)
    if console_head and console_head != commit:
        lease = f"--force-with-lease=refs/heads/{branch}:{console_head}"
        again = _push(repository, remote_url, f"{commit}:refs/heads/{branch}", lease, token=token,
                      username=username, timeout=timeout)
        if _outcome(again, remote_url=remote_url, branch=branch, token=token) in ("pushed", "up_to_date"):
            return PushResult(branch=branch, commit=commit, replaced=console_head)
    raise DeliveryFailed(
        f"The remote branch {branch} has commits the console did not make: nothing was forced over them. Merge"
        " or remove them there, or delete the remote branch, then deliver again.")


def _push(repository: Path, remote_url: str, refspec: str, *options: str, token: Secret | None, username: str,
          timeout: float) -> subprocess.CompletedProcess[str]:
    git_dir = repository_git_dir(repository)
    scheme = "file" if remote_url.startswith("/") else urlsplit(remote_url).scheme
    # Transports for this push alone: the console's git otherwise reaches local files only.
    allowed = [arg for name in ("https", "ssh", "http") for arg in ("-c", f"protocol.{name}.allow=always")]
    transport = [*allowed, "-c", "http.followRedirects=false",
                 "-c", f"core.sshCommand=ssh -o BatchMode=yes -o ConnectTimeout={max(int(timeout), 1)}"]
    argv = ["git", *safe_config_argv(git_dir), *transport, "push", "--porcelain", *options, remote_url, refspec]
    env = {**git_env(git_dir=git_dir), "LC_ALL": "C"}
    with tempfile.TemporaryDirectory(prefix="workgraph-push-") as private:
        if token is not None and scheme in ("https", "http"):
            askpass = Path(private) / "askpass"
            askpass.write_text(ASKPASS_SCRIPT)
            askpass.chmod(0o700)
            env.update({"GIT_ASKPASS": str(askpass), "WORKGRAPH_ASKPASS_VARIABLE": token.name,
                        "WORKGRAPH_ASKPASS_USERNAME": username, token.name: token.value})
        process = subprocess.Popen(argv, cwd=repository, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            group_kill(process)
            raise DeliveryFailed(f"The push to {_shown(remote_url)} took longer than {timeout:g} s"
                                 " (WORKGRAPH_DELIVERY_TIMEOUT_SECONDS).", transient=True) from None
    return subprocess.CompletedProcess(argv, process.returncode, out.decode("utf-8", "replace"),
                                       err.decode("utf-8", "replace"))


def _outcome(done: subprocess.CompletedProcess[str], *, remote_url: str, branch: str, token: Secret | None) -> str:
    """``pushed``, ``up_to_date`` or ``rejected`` (not a fast-forward, or a lease that no longer holds); any
    other refusal raises ``DeliveryFailed``."""
    secrets = [token] if token is not None else []
    remote_said = redacted(_remote_lines(done.stderr), secrets)
    for line in done.stdout.splitlines():
        found = _PORCELAIN_LINE.match(line)
        if found is None:
            continue
        summary = found["summary"]
        if found["flag"] == "=":
            return "up_to_date"
        if found["flag"] != "!":
            return "pushed"
        if summary.startswith("[rejected]") and any(why in summary for why in ("non-fast-forward", "fetch first",
                                                                                "stale info")):
            return "rejected"
        reason = summary.removeprefix("[remote rejected]").removeprefix("[rejected]").strip(" ()")
        raise DeliveryFailed(f"The remote refused the push to {branch}: {redacted(reason, secrets)}."
                             + (f" It said: {remote_said}" if remote_said else ""))
    said = redacted(done.stderr.strip(), secrets)[-REMOTE_SAID_MAX_CHARS:]
    lowered = said.lower()
    where = _shown(remote_url)
    if any(sign in lowered for sign in _REFUSED_CREDENTIALS):
        whose = f"the token in {token.name} (forge_token_env)" if token is not None else "no token"
        raise DeliveryFailed(f"{where} refused the credentials: the push used {whose}. Check it may push to the"
                             f" repository. Git said: {said}")
    if "returned error: 403" in lowered:
        raise DeliveryFailed(f"{where} refused the push (403): the token"
                             f"{f' in {token.name}' if token is not None else ''} may not write there."
                             f" Git said: {said}")
    if any(sign in lowered for sign in _UNREACHABLE) or re.search(r"returned error: 5\d\d", lowered):
        raise DeliveryFailed(f"Could not reach {where}. Git said: {said}", transient=True)
    if any(sign in lowered for sign in _NOT_FOUND):
        raise DeliveryFailed(f"No repository at {where}: check remote_url. Git said: {said}")
    raise DeliveryFailed(f"The push to {where} failed. Git said: {said or f'nothing (exit code {done.returncode})'}")


def _remote_lines(stderr: str) -> str:
    said = " ".join(line.removeprefix("remote:").strip() for line in stderr.splitlines()
                    if line.startswith("remote:") and line.removeprefix("remote:").strip())
    return said[:REMOTE_SAID_MAX_CHARS]


def _shown(remote_url: str) -> str:
    return redacted(remote_url, [])


def _ref_exists(repository: Path, ref: str) -> bool:
    return repository_git_run(repository, "rev-parse", "--verify", "--quiet", ref).returncode == 0


def _commit_exists(repository: Path, commit: str) -> bool:
    return repository_git_run(repository, "cat-file", "-e", f"{commit}^{{commit}}").returncode == 0
