#!/usr/bin/env python3
"""A hostile stand-in for the Claude Code CLI: it tries to escape before it answers.

It takes the runner's argv as ``tests/fake_claude.py`` does, reads the prompt from stdin, then plays the
escapes named (comma-separated) by HOSTILE_ACTS against the paths named by HOSTILE_TARGETS (a JSON
object), and answers with the documented stream-json events: a ``system/init``, then a ``result`` whose
``result`` is a JSON object of what each escape found (``{"act": "what happened"}``), so the test can
read in the attempt's output what the agent could reach.
"""

import glob
import json
import mmap
import os
import subprocess
import sys
import textwrap


def _try(action):
    try:
        return action()
    except OSError as error:
        return f"refused: {error.strerror}"


def read_secrets(targets):
    """Everything that looks like the console's secrets: its own environment and every process's."""
    found = {name: value for name, value in os.environ.items()}
    for path in glob.glob("/proc/[0-9]*/environ"):
        text = _try(lambda path=path: open(path, "rb").read().decode(errors="replace"))
        found[path] = text
    return json.dumps(found)


def read_file(targets):
    return _try(lambda: open(targets["read"], encoding="utf-8", errors="replace").read())


def list_folder(targets):
    return _try(lambda: ", ".join(sorted(os.listdir(targets["list"]))))


def write_outside(targets):
    results = []
    for folder in targets["write"]:
        path = os.path.join(folder, "planted-by-agent")
        results.append(_try(lambda path=path: open(path, "w").write("planted") and f"wrote {path}"))
    return "; ".join(str(result) for result in results)


def redirect_git(targets):
    with open(".git", "w") as dot_git:
        dot_git.write(f"gitdir: {targets['other_git_dir']}\n")
    open("stolen.txt", "w").write("committed into another repository?")
    return "rewrote .git"


def delete_git(targets):
    os.remove(".git")
    open("orphan.txt", "w").write("committed into an enclosing repository?")
    return "deleted .git"


def plant_repository(targets):
    """Replace .git with a repository of the agent's own whose configuration runs a program."""
    os.remove(".git")
    subprocess.run(["git", "init", "-q", "."], check=True)
    script = os.path.abspath("payload.sh")
    with open(script, "w") as payload:
        payload.write(textwrap.dedent(f"""\
            #!/bin/sh
            env > {targets['marker']}
            cat
            """))
    os.chmod(script, 0o755)
    for key, value in (("core.fsmonitor", script), ("core.hooksPath", os.path.abspath(".")),
                       ("filter.evil.clean", script), ("filter.evil.smudge", script)):
        subprocess.run(["git", "config", key, value], check=True)
    for hook in ("pre-commit", "post-commit"):
        os.symlink(script, hook)
    open(".gitattributes", "w").write("* filter=evil\n")
    return "planted a repository"


def plant_nested_repository(targets):
    """Leave a repository of the agent's own in a subfolder, with a commit, whose configuration runs a
    program: the console's git must treat it as content, never as configuration."""
    os.mkdir("nested")
    subprocess.run(["git", "init", "-q", "nested"], check=True)
    script = os.path.abspath("nested/payload.sh")
    with open(script, "w") as payload:
        payload.write(f"#!/bin/sh\nenv > {targets['marker']}\ncat\n")
    os.chmod(script, 0o755)
    for key, value in (("core.fsmonitor", script), ("core.hooksPath", os.path.abspath("nested")),
                       ("filter.evil.clean", script)):
        subprocess.run(["git", "-C", "nested", "config", key, value], check=True)
    open("nested/.gitattributes", "w").write("* filter=evil\n")
    subprocess.run(["git", "-C", "nested", "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q",
                    "--allow-empty", "-m", "mine"], check=True)
    open("ordinary.txt", "w").write("an ordinary change")
    return "planted a nested repository"


def escaping_symlinks(targets):
    os.symlink("/etc/passwd", "passwd-link")
    os.symlink("../../../..", "up")
    os.symlink("sub/../inside.txt", "fine-link")
    open("inside.txt", "w").write("a file")
    return "linked"


def _git_dirs():
    """The repository's git directory and the worktree's own, as the worktree's .git file names them."""
    own = open(".git").read().removeprefix("gitdir:").strip()
    return os.path.dirname(os.path.dirname(own)), own


def _git_refused(argv):
    """What became of a git command: "refused: " and the last line git said, or "ran" when it succeeded."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except OSError as error:
        return f"refused: {error.strerror}"
    said = (done.stderr or done.stdout).strip().splitlines()
    return f"refused: {said[-1] if said else f'exit code {done.returncode}'}" if done.returncode else "ran"


def plant_git(targets):
    """Plant, through the read-only view of the repository's git, what the console's git would obey or
    read: configuration naming a program, hooks, refs, alternates, attributes, the worktree's HEAD and
    index (a skip-worktree bit would hide a change from the console). Then change a tracked file."""
    common, own = _git_dirs()
    payload = os.path.abspath("payload.sh")
    with open(payload, "w") as script:
        script.write(f"#!/bin/sh\nenv > {targets['marker']}\ncat\n")
    os.chmod(payload, 0o755)
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    writes = {
        "config": (f"{common}/config", f"[core]\n\tfsmonitor = {payload}\n\thooksPath = {os.getcwd()}\n"),
        "hook": (f"{common}/hooks/pre-commit", f"#!/bin/sh\n{payload}\n"),
        "info/attributes": (f"{common}/info/attributes", "* filter=evil diff=evil\n"),
        "packed-refs": (f"{common}/packed-refs", f"{head} refs/heads/planted\n"),
        "ref": (f"{common}/refs/heads/planted", f"{head}\n"),
        "alternates": (f"{common}/objects/info/alternates", "/tmp/objects\n"),
        "worktree HEAD": (f"{own}/HEAD", f"{head}\n"),
        "index": (f"{own}/index", "planted"),
        "commondir": (f"{own}/commondir", "/tmp\n"),
    }
    found = {name: _try(lambda path=path, text=text: open(path, "a").write(text) and "wrote")
             for name, (path, text) in writes.items()}
    found["hooks folder"] = _try(lambda: os.mkdir(f"{common}/hooks") or "made")
    found["hard link to the index"] = _try(lambda: os.link(f"{own}/index", "index-link") or "linked")
    identity = ["-c", "user.name=Agent", "-c", "user.email=agent@example.com"]
    commands = {
        "git config core.fsmonitor": ["git", "config", "core.fsmonitor", payload],
        "git config core.hooksPath": ["git", "config", "core.hooksPath", os.getcwd()],
        "git config diff.external": ["git", "config", "diff.external", payload],
        "git config filter.evil.clean": ["git", "config", "filter.evil.clean", payload],
        "git update-ref": ["git", "update-ref", "refs/heads/planted", "HEAD"],
        "git update-index --skip-worktree": ["git", "update-index", "--skip-worktree", "README.md"],
        "git add": ["git", "add", "--all"],
        "git commit": ["git", *identity, "commit", "--all", "-m", "planted"],
        "git stash": ["git", *identity, "stash"],
        "remount writable": ["unshare", "-Urm", "mount", "-o", "remount,bind,rw", own],
    }
    open("README.md", "a").write("a line the agent added\n")
    found["git log"] = _git_refused(["git", "log", "--oneline"])
    found.update({name: _git_refused(argv) for name, argv in commands.items()})
    open(".gitattributes", "w").write("* filter=evil diff=evil\n")
    return json.dumps(found)


def retarget_git(targets):
    """Point .git at the repository's own git directory, then commit there, onto the project's branch."""
    common, _own = _git_dirs()
    with open(".git", "w") as dot_git:
        dot_git.write(f"gitdir: {common}\n")
    open("retargeted.txt", "w").write("committed onto the project's branch?")
    identity = ["-c", "user.name=Agent", "-c", "user.email=agent@example.com"]
    return json.dumps({"git add": _git_refused(["git", "add", "--all"]),
                       "git commit": _git_refused(["git", *identity, "commit", "-m", "retargeted"])})


_MAPPED = []


def link_and_map(targets):
    """Change a tracked file through a hard link it then removes, another through a shared mapping written
    after its file is closed (kept until the process ends), and try to link a file of its home in."""
    os.link("src/app.py", "other-name")
    with open("other-name", "a") as other:
        other.write("# through another name\n")
    os.remove("other-name")
    with open("README.md", "r+b") as readme:
        mapped = mmap.mmap(readme.fileno(), 0)
    mapped[0:3] = b"ONE"
    _MAPPED.append(mapped)
    home_file = os.path.join(os.environ.get("HOME", "/nonexistent"), "from-home")
    with open(home_file, "w") as planted:
        planted.write("linked in from the home folder\n")
    return json.dumps({"hard link from home": _try(lambda: os.link(home_file, "from-home") or "linked")})


ACTS = {name: act for name, act in globals().items() if callable(act) and name in {
    "read_secrets", "read_file", "list_folder", "write_outside", "redirect_git", "delete_git", "plant_repository",
    "plant_nested_repository", "escaping_symlinks", "plant_git", "retarget_git", "link_and_map"}}


def main():
    args = sys.argv[1:]
    if args[:1] != ["--agent"] or "-p" not in args:
        sys.stderr.write(f"hostile claude: unexpected argv {args!r}\n")
        return 2
    sys.stdin.read()
    targets = json.loads(os.environ.get("HOSTILE_TARGETS", "{}"))
    found = {act: str(ACTS[act](targets)) for act in os.environ.get("HOSTILE_ACTS", "").split(",") if act}
    session = "00000000-0000-4000-8000-00000000h0s7"
    print(json.dumps({"type": "system", "subtype": "init", "session_id": session, "cwd": os.getcwd(),
                      "tools": ["Bash", "Read", "Write"], "model": "claude-sonnet-4-5-20250929",
                      "permissionMode": "auto", "mcp_servers": []}), flush=True)
    print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "duration_ms": 10,
                      "duration_api_ms": 5, "num_turns": 1, "result": json.dumps(found), "session_id": session,
                      "total_cost_usd": 0.001, "usage": {"input_tokens": 1, "output_tokens": 1,
                                                         "cache_creation_input_tokens": 0,
                                                         "cache_read_input_tokens": 0}}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
