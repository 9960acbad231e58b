"""A hostile agent tries every escape the console once left open; each fails, is recorded, and leaves
every other repository and the project's own folder as they were.

The agent is ``tests/hostile_claude.py``, started by the real claude runner in the real sandbox
(bubblewrap; tests/hostile_runs.py starts it): it answers with what each escape found, so a test reads in
the attempt's output what the agent could reach.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import uuid
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from graphs.engine import run_start
from graphs.models import AttemptChange
from tests.hostile_runs import SECRETS, digest, escapes_found, project_files, run_branch_unmoved
from tests.processes import all_gone
from tests.repos import repository_create
from tests.run_builders import command_node, latest, planned_run

pytestmark = [pytest.mark.sandbox, pytest.mark.django_db]


def test_an_agent_sees_none_of_the_consoles_secrets_in_any_environment(hostile):
    row = hostile("read_secrets")
    seen = json.loads(escapes_found(row)["read_secrets"])

    assert row.status == "succeeded"
    for name, value in SECRETS.items():
        assert value not in row.output_payload["text"], f"the agent read {name}"
    assert not set(SECRETS) & set(seen)
    environs = [key for key in seen if key.startswith("/proc/")]
    assert environs, "the agent saw no process at all: the test would prove nothing"
    # Its own PID namespace: only the sandbox's few processes, none of the machine's.
    assert all(int(key.split("/")[2]) < 10 for key in environs)


def test_an_agent_cannot_read_the_consoles_files_or_another_projects(hostile, tmp_path):
    other = repository_create(tmp_path / "other")
    (other / "secret.txt").write_text("another project's secret")
    probe = Path(django_settings.VAR_DIR) / "probe.txt"
    probe.write_text("the console's own file")
    targets = [other / "secret.txt", probe, Path(django_settings.BASE_DIR) / "manage.py",
               Path(django_settings.BASE_DIR) / "console" / "settings.py"]
    if django_settings.DATABASES["default"]["ENGINE"] == "console.sqlite":
        targets.append(Path(django_settings.DATABASES["default"]["TEST"]["NAME"]))

    found = {}
    for target in targets:
        row = hostile("read_file", read=str(target))
        assert row.status == "succeeded"
        found[str(target)] = escapes_found(row)["read_file"]

    assert all(result == "refused: No such file or directory" for result in found.values()), found


def test_an_agent_cannot_write_outside_its_worktree(hostile, repo, tmp_path):
    other = repository_create(tmp_path / "other")
    before = digest(other), project_files(repo)

    folders = [str(other), str(repo), str(django_settings.VAR_DIR), "/usr", "/etc", "/"]

    row = hostile("write_outside", write=folders)

    assert row.status == "succeeded"
    # What the agent wrote into its private /tmp (where this suite keeps the console's var/) went with it.
    assert not [folder for folder in folders if os.path.lexists(os.path.join(folder, "planted-by-agent"))]
    assert (digest(other), project_files(repo)) == before


def test_an_agent_that_points_git_at_another_repository_fails_tampered_and_commits_nothing(hostile, repo, tmp_path):
    other = repository_create(tmp_path / "other")
    before = digest(other), project_files(repo)

    row = hostile("redirect_git", other_git_dir=str(other / ".git"))

    assert row.status == "failed"
    assert row.judgment_result["kind"] == "workspace_tampered"
    [issue] = row.judgment_result["issues"]
    assert "the worktree's .git file was rewritten" in issue and str(other / ".git") in issue
    assert row.failure["rule"] == "workspace_tampered"
    assert not AttemptChange.objects.filter(node_exec=row).exclude(result_commit="").exists()
    assert run_branch_unmoved(row)
    assert (digest(other), project_files(repo)) == before


def test_an_agent_that_deletes_git_fails_tampered_and_no_enclosing_repository_is_touched(hostile, repo, tmp_path,
                                                                                        settings):
    enclosing = repository_create(tmp_path / "enclosing")
    settings.WORKGRAPH_WORKSPACE_DIR = enclosing / "workspaces"
    before = digest(enclosing, skip=("workspaces",)), project_files(repo)

    row = hostile("delete_git")

    assert row.status == "failed"
    assert row.judgment_result["issues"] == ["the worktree's .git file was deleted"]
    assert run_branch_unmoved(row)
    assert (digest(enclosing, skip=("workspaces",)), project_files(repo)) == before


def test_a_repository_the_agent_plants_runs_none_of_its_programs_as_the_console(hostile, repo, tmp_path):
    marker = tmp_path / "payload-ran"
    before = project_files(repo)

    row = hostile("plant_repository", marker=str(marker))

    assert escapes_found(row)["plant_repository"] == "planted a repository"
    assert row.status == "failed"
    assert row.judgment_result["issues"] == ["the worktree's .git file was replaced by a repository of the agent's own"]
    assert not marker.exists(), "git ran the agent's program as the console"
    assert run_branch_unmoved(row)
    assert project_files(repo) == before


def test_a_repository_the_agent_nests_in_its_change_runs_none_of_its_programs(hostile, repo, tmp_path):
    marker = tmp_path / "payload-ran"
    before = project_files(repo)

    row = hostile("plant_nested_repository", marker=str(marker))

    assert escapes_found(row)["plant_nested_repository"] == "planted a nested repository"
    assert not marker.exists(), "git ran the nested repository's program as the console"
    assert row.status == "succeeded"
    assert "ordinary.txt" in [entry["path"] for entry in AttemptChange.objects.get(node_exec=row).files]
    assert project_files(repo) == before


def test_a_symlink_out_of_the_worktree_fails_the_judgment_naming_it(hostile, repo):
    before = project_files(repo)

    row = hostile("escaping_symlinks")

    assert row.status == "failed"
    assert row.judgment_result["kind"] == "write_set"
    [issue] = row.judgment_result["issues"]
    assert "passwd-link -> /etc/passwd" in issue and "up -> ../../../.." in issue
    assert "fine-link" not in issue
    assert run_branch_unmoved(row)
    assert project_files(repo) == before


DETACHES_AND_HANGS = """
import subprocess, sys, time
subprocess.Popen(["setsid", sys.executable, "-c", "import time; time.sleep(300)", sys.argv[1]])
print("started", flush=True)
time.sleep(300)
"""


@pytest.mark.django_db(transaction=True)
def test_a_setsid_child_does_not_outlive_its_commands_timeout(repo_task, commands_allowed, inline_executor):
    marker = f"workgraph-test-{uuid.uuid4().hex}"
    spec = command_node("detaches", DETACHES_AND_HANGS, args=(marker,), timeout_seconds=2)
    run = planned_run(repo_task, {"nodes": [spec], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    row = latest(run)["detaches"]

    assert row.output_payload["timed_out"] is True
    assert row.output_payload["text"] == "started\n"
    assert all_gone(marker), "a detached child outlived its command's sandbox"


CONNECTS = """
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5).close()
    print("connected")
except OSError as error:
    print(f"no network: {error}")
"""


@pytest.fixture
def listening_port():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        stop = threading.Event()

        def accept() -> None:
            server.settimeout(0.1)
            while not stop.is_set():
                try:
                    server.accept()[0].close()
                except TimeoutError:
                    continue

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        yield server.getsockname()[1]
        stop.set()
        thread.join()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("allowed", "said"), [(False, "no network"), (True, "connected")])
def test_a_command_reaches_the_network_only_where_its_project_allows(repo_task, commands_allowed, inline_executor,
                                                                     listening_port, allowed, said):
    commands_allowed.allow_command_network = allowed
    commands_allowed.save(update_fields=["allow_command_network"])
    run = planned_run(repo_task, {"nodes": [command_node("net", CONNECTS, args=(str(listening_port),))], "edges": []})
    run_start(run=run)
    inline_executor.drain()

    assert latest(run)["net"].output_payload["text"].startswith(said)
