"""The sandbox every agent CLI process, command node and command judgment runs in.

An agent is a program that executes whatever a model decides, so it is the one untrusted party of the
console. With ``WORKGRAPH_SANDBOX=bwrap`` (the default wherever bubblewrap works) each such process is
started inside ``bwrap``:

- the system folders are read-only and the attempt's folder is the only project folder, read-write;
  the console's checkout, its ``var/`` (database, logs, other attempts' worktrees) and other projects'
  folders are not there at all;
- in an attempt's worktree, its git is there read-only (``graphs.workspaces.git_view``): the agent's git
  reads the change and the history, and writes nothing;
- ``HOME`` is a private folder of the call's own (a copy of ``WORKGRAPH_AGENT_HOME`` where one is set,
  for an agent CLI's prepared configuration) and ``/tmp`` a private tmpfs;
- PID, IPC, UTS, user and cgroup namespaces of its own: ``/proc`` shows only the sandbox's processes,
  and when the sandbox's first process exits, or ``bwrap`` is killed (``--die-with-parent``), every
  process in it ends, detached ``setsid`` children included;
- the network is shared only where the call needs it (an agent reaching its model's API; a command
  in a project that allows command network);
- the environment is built from nothing: ``bwrap`` itself is started with the allowlisted environment,
  so no process inside carries the console's.

``WORKGRAPH_SANDBOX=none`` (or ``auto`` on a machine where ``bwrap`` cannot run) starts the process as it
is; every project and run page then says that agents run unconfined, and ``check --deploy`` warns. An
explicit ``bwrap`` on a machine where it cannot run fails every call with the reason, never silently
unconfined.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.core import checks

from graphs.errors import WorkGraphError
from graphs.workspaces.git_view import git_view_mounts

# What a process gets of the console's environment, whatever else a setting adds.
BASE_ENV_NAMES = ("PATH", "LANG", "LC_ALL")
# Where the private home and temporary folder are inside the sandbox.
SANDBOX_HOME = "/home/agent"
SANDBOX_TMP = "/tmp"  # noqa: S108  (a tmpfs of the sandbox's own, not the machine's /tmp)
# The system folders a program needs to start, read-only. A folder that is a symlink on the machine
# (a merged /usr's /bin) stays the same symlink inside.
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt")
# Of /etc, only what programs read to run, resolve names and verify TLS: not the machine's keys,
# database or service configuration.
ETC_ENTRIES = (
    "alternatives", "ca-certificates", "ca-certificates.conf", "ssl", "pki", "resolv.conf", "hosts",
    "host.conf", "nsswitch.conf", "gai.conf", "passwd", "group", "localtime", "timezone", "ld.so.cache",
    "ld.so.conf", "ld.so.conf.d", "mime.types", "os-release", "protocols", "services", "debian_version",
    "python3", "python3.11", "fonts", "locale.alias", "gitconfig",
)
_PROBE_TIMEOUT_SECONDS = 10


class SandboxError(WorkGraphError):
    """The sandbox was asked for and cannot run on this machine; the message says why."""


@dataclass(frozen=True)
class SandboxState:
    """How this process confines agents: ``mode`` is ``bwrap`` or ``none``; ``problem`` says why ``bwrap``
    cannot run here (with mode ``bwrap``, every call then fails with it)."""

    mode: str
    problem: str = ""

    @property
    def confined(self) -> bool:
        return self.mode == "bwrap" and not self.problem

    def unconfined_reason(self) -> str:
        """Why agents run unconfined, in a sentence for the pages; "" when they are confined."""
        if self.confined:
            return ""
        if self.mode == "none" and not self.problem:
            return "WORKGRAPH_SANDBOX is none"
        return self.problem


@dataclass(frozen=True)
class Confinement:
    """What one sandboxed process may reach: ``workdir`` read-write, the network or not, and the
    environment it runs with (already allowlisted)."""

    workdir: Path
    network: bool
    env: Mapping[str, str]
    home_template: Path | None = None
    # An agent CLI installed outside the system folders (an npm prefix, a checkout's node_modules): its
    # program's own folder is bound read-only and the program started by its real path.
    bind_program: bool = False


def sandbox_state() -> SandboxState:
    """The sandbox mode in force for this process, probed once."""
    return _sandbox_state(settings.WORKGRAPH_SANDBOX, settings.WORKGRAPH_BWRAP_BIN)


@lru_cache(maxsize=8)
def _sandbox_state(mode: str, binary: str) -> SandboxState:
    if mode == "none":
        return SandboxState(mode="none")
    problem = bwrap_problem(binary)
    if mode == "auto" and problem:
        return SandboxState(mode="none", problem=problem)
    return SandboxState(mode="bwrap", problem=problem)


def sandbox_deploy_check(**_: object) -> list[checks.CheckMessage]:
    """``check --deploy``'s word on the sandbox: a warning when agents and commands run unconfined."""
    reason = sandbox_state().unconfined_reason()
    if not reason:
        return []
    return [checks.Warning(
        f"Agents and commands run unconfined: {reason}.",
        hint="Install bubblewrap (Debian's bubblewrap package) on every worker machine and leave WORKGRAPH_SANDBOX "
             "at auto or bwrap; see docs/sandbox.md.",
        id="workgraph.W001",
    )]


def bwrap_problem(binary: str) -> str:
    """Why ``binary`` cannot sandbox a process on this machine, or "" when it can: it starts a no-op in
    the namespaces every call uses."""
    path = shutil.which(binary)
    if path is None:
        return f"bubblewrap ({binary}) is not installed: install Debian's bubblewrap package"
    try:
        done = subprocess.run(
            [path, *_namespace_argv(network=False), "--ro-bind", "/", "/", "--", "true"],
            capture_output=True, text=True, env={}, timeout=_PROBE_TIMEOUT_SECONDS, check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap ({path}) could not be started: {error}"
    if done.returncode != 0:
        said = done.stderr.strip() or f"exit code {done.returncode}"
        return (f"bubblewrap ({path}) refuses to start a sandbox here ({said}); the machine may not allow user "
                "namespaces (kernel.unprivileged_userns_clone, or an AppArmor rule for bwrap)")
    return ""


def process_env(extra_names: Iterable[str] = (), *, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a sandboxed process runs with: the names of ``BASE_ENV_NAMES`` and ``extra_names``
    that ``environ`` (the console's environment) has, and nothing else."""
    source = os.environ if environ is None else environ
    return {name: source[name] for name in (*BASE_ENV_NAMES, *extra_names) if name in source}


@contextmanager
def sandboxed(argv: Sequence[str], confinement: Confinement) -> Iterator[tuple[list[str], dict[str, str]]]:
    """The argv and environment that start ``argv`` in its sandbox, for the time of the block (its
    private home is removed after it). Raises ``SandboxError`` when the sandbox is asked for and cannot
    run here."""
    state = sandbox_state()
    home = Path(tempfile.mkdtemp(prefix="workgraph-home-"))
    try:
        if confinement.home_template is not None and confinement.home_template.is_dir():
            shutil.copytree(confinement.home_template, home, symlinks=True, dirs_exist_ok=True)
        if state.mode == "none":
            # Unconfined, the agent keeps the console user's home (its CLI's login) unless one is prepared.
            home_env = str(home) if confinement.home_template is not None else os.environ.get("HOME", str(home))
            yield list(argv), {**confinement.env, "HOME": home_env, "TMPDIR": tempfile.gettempdir()}
            return
        if state.problem:
            raise SandboxError(f"the sandbox cannot run: {state.problem}")
        env = {**confinement.env, "HOME": SANDBOX_HOME, "TMPDIR": SANDBOX_TMP}
        program, binds = list(argv), []
        if confinement.bind_program:
            program[0], binds = _program_binding(argv[0], path=confinement.env.get("PATH", ""))
        with git_view_mounts(confinement.workdir) as git_view:
            yield [*bwrap_argv(confinement, home=home, read_only=binds, git_view=git_view), "--", *program], env
    finally:
        shutil.rmtree(home, ignore_errors=True)


def program_missing(program: str, *, cwd: Path, path: str) -> str:
    """Why ``program`` cannot be run from ``cwd`` with the search ``path``, or "": checked before the
    sandbox starts, so a typo reads as one rather than as the sandbox's own error."""
    if not program or "\0" in program:
        return "not a program name"
    if "/" in program:
        where = cwd / program
        return "" if where.is_file() and os.access(where, os.X_OK) else "no such executable file"
    return "" if shutil.which(program, path=path) else "not found on PATH"


def _program_binding(program: str, *, path: str) -> tuple[str, list[str]]:
    """The real path to start ``program`` by, and the folder to bind for it (none in a system folder).

    A program an npm package installed (its ``node_modules/.bin`` link) takes that whole
    ``node_modules`` folder: the package's launcher starts a native binary from another package beside
    it (the Codex CLI's ``@openai/codex-linux-x64``, say).
    """
    found = shutil.which(program, path=path) if "/" not in program else program
    if found is None:
        return program, []
    real = Path(found).resolve()
    if any(real.is_relative_to(folder) for folder in SYSTEM_FOLDERS):
        return str(real), []
    packages = [parent for parent in real.parents if parent.name == "node_modules"]
    return str(real), [str(packages[-1] if packages else real.parent)]


def bwrap_argv(confinement: Confinement, *, home: Path, read_only: Sequence[str] = (),
               git_view: Sequence[tuple[Path, Path]] = ()) -> list[str]:
    """bwrap and its options for one process (the command follows ``--``); ``read_only`` adds folders
    bound read-only, and ``git_view`` the worktree's git (source, place) bound read-only over everything
    else."""
    state_binary = shutil.which(settings.WORKGRAPH_BWRAP_BIN) or settings.WORKGRAPH_BWRAP_BIN
    argv = [state_binary, *_namespace_argv(network=confinement.network)]
    for folder in SYSTEM_FOLDERS:
        path = Path(folder)
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), folder]
        elif path.is_dir():
            argv += ["--ro-bind", folder, folder]
    for entry in ETC_ENTRIES:
        argv += ["--ro-bind-try", f"/etc/{entry}", f"/etc/{entry}"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", SANDBOX_TMP]
    for path in [*settings.WORKGRAPH_SANDBOX_READ_ONLY, *read_only]:
        argv += ["--ro-bind-try", str(path), str(path)]
    workdir = str(confinement.workdir.resolve())
    argv += ["--bind", str(home), SANDBOX_HOME, "--bind", workdir, workdir]
    for path in settings.WORKGRAPH_SANDBOX_WRITABLE:
        argv += ["--bind-try", str(path), str(path)]
    # Last, so that no writable folder a setting adds shadows it.
    for source, place in git_view:
        argv += ["--ro-bind-try", str(source), str(place)]
    # The root bwrap builds its mounts on is read-only too: nothing can be written but what is bound so.
    return [*argv, "--remount-ro", "/", "--chdir", workdir]


def _namespace_argv(*, network: bool) -> list[str]:
    # --new-session: a process inside cannot push input into the console's terminal (TIOCSTI).
    namespaces = ["--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL"]
    return [*namespaces, "--share-net"] if network else namespaces
