"""A fork from a node with its prompt or argv edited: the fork runs the edit at that node only, reuses
what is upstream, records who changed what, waits for a reviewer where the project asks, and an edit
the manifest's rules refuse makes nothing."""

from __future__ import annotations

import hashlib
import json

import pytest

from graphs.domain.fork_edits import ForkEditError
from graphs.engine import run_cancel, run_start
from graphs.engine.fork_edits import run_fork_edited
from graphs.engine.review import run_plan_approve, run_plan_reject
from graphs.errors import InvalidTransitionError
from graphs.models import WorkGraphRun
from tests.run_builders import command_node, edges_for, latest, node, planned_run


def chain() -> dict:
    nodes = [node("plan"), node("build", "plan"), node("check", "build"), node("ship", "check")]
    return {"nodes": nodes, "edges": edges_for(nodes)}


def finished(task, manifest, inline_executor) -> WorkGraphRun:
    run = planned_run(task, manifest)
    run_start(run=run)
    inline_executor.drain()
    run.refresh_from_db()
    return run


@pytest.mark.django_db
def test_the_fork_runs_the_edited_prompt_at_that_node_and_reuses_what_is_upstream(
    task, alice, scripted_runner, inline_executor
):
    run = finished(task, chain(), inline_executor)
    prompts = {}
    scripted_runner.replies[("node", "check")] = lambda call: prompts.setdefault("check", call.prompt) and "checked"
    scripted_runner.calls.clear()

    fork = run_fork_edited(run=run, node_id="check", prompt="Check only the CSV export.\r\nSay what you ran.", by=alice)
    inline_executor.drain()
    fork.refresh_from_db()

    assert fork.status == "succeeded"
    assert "Check only the CSV export.\nSay what you ran." in prompts["check"]
    assert scripted_runner.node_calls() == [("check", 1), ("ship", 1)]
    rows = latest(fork)
    assert [rows[n].cause for n in ("plan", "build", "check", "ship")] == ["fork", "fork", "fork", "initial"]
    assert rows["build"].output_payload["reused_from"] == str(latest(run)["build"].pk)
    edit = fork.fork_edit
    assert (edit["node_id"], edit["field"], edit["by"]) == ("check", "task_prompt", alice.get_username())
    assert (edit["before"], edit["after"]) == ("Do check.", "Check only the CSV export.\nSay what you ran.")
    assert edit["at"]
    # Only that field of that node changed; the source run keeps its own manifest.
    changed = [n["node_id"] for n, o in zip(fork.graph_manifest["nodes"], run.graph_manifest["nodes"]) if n != o]
    assert changed == ["check"]
    assert {**fork.graph_manifest["nodes"][2], "task_prompt": "Do check."} == run.graph_manifest["nodes"][2]
    assert fork.graph_manifest["edges"] == run.graph_manifest["edges"]
    run.refresh_from_db()
    assert run.graph_manifest == chain() and run.fork_edit == {}


@pytest.mark.usefixtures("sandbox_writable")
@pytest.mark.django_db
def test_the_claude_cli_is_sent_the_edited_prompt(task, alice, claude_cli, inline_executor, monkeypatch, tmp_path):
    record = tmp_path / "record.json"
    monkeypatch.setenv("FAKE_CLAUDE_RECORD", str(record))
    claude_cli("plan_prose_fenced.json")
    run = finished(task, {"nodes": [node("check")], "edges": []}, inline_executor)

    fork = run_fork_edited(run=run, node_id="check", prompt="Check the CSV export, and only it.", by=alice)
    inline_executor.drain()

    sent = latest(fork)["check"].input_payload["prompt"]
    assert "## Your assignment\n\nCheck the CSV export, and only it." in sent and "Do check." not in sent
    assert json.loads(record.read_text())["stdin_sha256"] == hashlib.sha256(sent.encode()).hexdigest()


@pytest.mark.django_db
def test_a_command_nodes_fork_runs_its_edited_argv(task, alice, commands_allowed, scripted_runner, inline_executor):
    nodes = [node("build"), command_node("tests", "print('old suite')", "build")]
    run = finished(task, {"nodes": nodes, "edges": edges_for(nodes)}, inline_executor)
    argv = [*nodes[1]["command"][:2], "print('new suite')"]

    fork = run_fork_edited(run=run, node_id="tests", argv=argv, by=alice)
    inline_executor.drain()
    fork.refresh_from_db()

    assert fork.status == "succeeded"
    assert latest(fork)["tests"].output_payload["text"] == "new suite\n"
    assert (fork.fork_edit["field"], fork.fork_edit["before"], fork.fork_edit["after"]) == (
        "command", nodes[1]["command"], argv)


@pytest.mark.parametrize(
    ("node_id", "edit", "field", "message"),
    [
        ("check", {"prompt": "  \n "}, "prompt", "The prompt cannot be empty."),
        ("check", {"prompt": "Do check."}, "prompt", "This is the node's current prompt"),
        ("check", {"argv": ["python3"]}, "argv", "check is an agent node"),
        ("tests", {"argv": []}, "argv", "The argv must be a non-empty list of strings"),
        ("tests", {"argv": ["python3", ""]}, "argv", "The argv[1] must be a non-empty string"),
        ("tests", {"argv": "python3 -m pytest"}, "argv", "must be a non-empty list of strings"),
        ("tests", {"prompt": "Run the tests."}, "prompt", "tests is a command node"),
        ("prd", {"prompt": "Write it shorter."}, "node", "prd is a catalog node"),
        ("deploy", {"prompt": "Deploy."}, "node", "There is no node 'deploy' in this run."),
    ],
)
@pytest.mark.django_db
def test_an_edit_the_rules_refuse_says_why_and_makes_nothing(
    task, alice, scripted_runner, inline_executor, node_id, edit, field, message
):
    nodes = [node("check"), command_node("tests", "print(1)", "check"),
             {"node_id": "prd", "artifact_type": "prd", "depends_on": []}]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)}, status="failed")

    with pytest.raises(ForkEditError) as refused:
        run_fork_edited(run=run, node_id=node_id, by=alice, **edit)

    assert message in " ".join(refused.value.errors[field])
    assert WorkGraphRun.objects.filter(task=task).count() == 1


@pytest.mark.django_db
def test_a_run_that_cannot_be_forked_is_refused_before_the_edit_is_read(task, alice, scripted_runner):
    run = planned_run(task, chain(), status="running")
    with pytest.raises(InvalidTransitionError):
        run_fork_edited(run=run, node_id="check", prompt="", by=alice)
    assert WorkGraphRun.objects.filter(task=task).count() == 1


@pytest.fixture
def approval_required(project):
    project.require_plan_approval = True
    project.save(update_fields=["require_plan_approval"])
    return project


@pytest.mark.django_db
def test_where_plans_need_approval_the_edited_fork_waits_and_approval_starts_it(
    task, alice, approval_required, scripted_runner, inline_executor
):
    run = finished(task, chain(), inline_executor)
    scripted_runner.calls.clear()

    fork = run_fork_edited(run=run, node_id="check", prompt="Check it twice.", by=alice)
    inline_executor.drain()
    fork.refresh_from_db()
    assert fork.status == "awaiting_approval"
    assert scripted_runner.node_calls() == []
    task.refresh_from_db()
    assert task.status == "awaiting_approval"

    run_plan_approve(run=fork, reviewer=alice, comment="fine")
    inline_executor.drain()
    fork.refresh_from_db()
    assert fork.status == "succeeded"
    assert scripted_runner.node_calls() == [("check", 1), ("ship", 1)]


@pytest.mark.django_db
def test_a_rejected_edit_ends_the_fork_rejected_without_running_it(
    task, alice, approval_required, scripted_runner, inline_executor
):
    run = finished(task, chain(), inline_executor)
    scripted_runner.calls.clear()
    fork = run_fork_edited(run=run, node_id="check", prompt="Skip the checks.", by=alice)

    run_plan_reject(run=fork, reviewer=alice, comment="the checks stay")
    inline_executor.drain()
    fork.refresh_from_db()

    assert (fork.status, fork.review_decision) == ("rejected", "rejected")
    assert scripted_runner.node_calls() == []
    assert fork.fork_edit["after"] == "Skip the checks."


@pytest.mark.django_db
def test_an_edited_fork_waiting_for_a_reviewer_can_be_cancelled(
    task, alice, approval_required, scripted_runner, inline_executor
):
    run = finished(task, chain(), inline_executor)
    fork = run_fork_edited(run=run, node_id="check", prompt="Check it twice.", by=alice)

    run_cancel(run=fork)
    inline_executor.drain()
    fork.refresh_from_db()

    assert fork.status == "cancelled"
    assert set(latest(fork)[n].status for n in ("check", "ship")) == {"cancelled"}
