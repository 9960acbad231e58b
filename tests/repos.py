"""Git repositories made by the tests, and agent replies that edit the folder they work in."""

from __future__ import annotations

import subprocess
from pathlib import Path

from graphs.agents import AgentCall, AgentError


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def repository_create(folder: Path) -> Path:
    """A repository with one commit on ``main``: a README of three lines and a source file."""
    folder.mkdir()
    return repository_init(folder)


def repository_init(folder: Path) -> Path:
    """``folder``, an existing folder, made a repository like ``repository_create``'s."""
    git(folder, "init", "--quiet", "--initial-branch=main")
    (folder / "README.md").write_text("one\ntwo\nthree\n")
    (folder / "src").mkdir()
    (folder / "src" / "app.py").write_text("print('hello')\n")
    git(folder, "add", "--all")
    git(folder, "-c", "user.name=Lead", "-c", "user.email=lead@example.com", "commit", "--quiet", "-m", "start")
    return folder


def writes(path: str, text: str):
    """An agent reply that writes ``text`` into ``path`` of the folder it works in."""

    def reply(call: AgentCall) -> str:
        target = call.cwd / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        return f"wrote {path}"

    return reply


def writes_then_gives_up(path: str, text: str):
    """An agent reply that writes ``text`` into ``path``, then fails: a change that must not land."""

    def reply(call: AgentCall) -> str:
        writes(path, text)(call)
        raise AgentError("the agent gave up", kind="is_error")

    return reply
