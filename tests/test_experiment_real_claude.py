"""Experiments on real parts: each run on the pinned Claude Code CLI in the console's sandbox, its model calls
answered by the Messages API stand-in, and each case checked by the demo project's unit tests run as command
judgments run commands. The stand-in's worker does what its node's task — the skill revision's team template —
says: revision 2 asks it to fix the CSV export and run the unit tests, and it does, so the case at the broken
commit passes; revision 1 asks it to tidy the export only, and that case still fails. The two experiments'
pass rates differ for that one case, which the compare API and page list as flipped, fail → pass."""

from __future__ import annotations

import json
import re

import pytest

from graphs.experiments.launch import experiment_create
from graphs.models import Skill
from graphs.models.experiments import Experiment, ExperimentItem
from graphs.skills.revisions import skill_save
from tests.clients import signed_in
from tests.experiment_cases import UNIT_TESTS, demo_dataset, demo_repository
from tests.pipeline_answers import JUDGE_ASK, VERDICT_ASK, manifest_answer
from tests.standins.anthropic_api import Reply, Request, text, tool

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sandbox]

TIDY = "Tidy reports/csv_export.py."
FIX = "Fix reports/csv_export.py so its unit tests pass, and run them before you answer."
# The coder's stage after the template's node: nothing more to write.
DONE_ASK = "Say whether the export needs anything more."
# What the worker runs when its task asks for the fix: the export's rows end as CSV's do again.
FIX_COMMAND = """sed -i 's/lineterminator=";"/lineterminator="\\\\r\\\\n"/' reports/csv_export.py"""


def template_body(task: str) -> str:
    template = {"version": 1, "nodes": [{"node_id": "export", "task": task,
                                         "requested_tools": ["shell", "read_file", "write_file"]}]}
    return f"# CSV export\n\n```team-template\n{json.dumps(template)}\n```\n"


def _script(request: Request) -> Reply:
    asked = request.first_user_text
    if "## Team template from your skill" in asked:
        task = FIX if FIX in asked else TIDY
        node = {"node_id": "export", "task": task, "depends_on": [],
                "requested_tools": ["shell", "read_file", "write_file"]}
        return text("Adapted.\n```json\n" + json.dumps({"nodes": [node]}) + "\n```")
    if JUDGE_ASK in asked:
        return text('{"ok": true, "issues": []}')
    if "You are the `coder` agent. Plan" in asked:
        return text(manifest_answer({"node_id": "impl", "node_type": "implementation", "depends_on": ["export"],
                                     "task_prompt": DONE_ASK}))
    if "You are the `validator` agent. Plan" in asked:
        return text(manifest_answer({"node_id": "validator_final_verdict", "node_type": "final_verdict",
                                     "depends_on": ["impl"], "task_prompt": VERDICT_ASK,
                                     "judgment": {"kind": "mechanical", "check_ref": "verdict_says_pass"}}))
    if VERDICT_ASK in asked:
        return text("VERDICT: pass\nThe export is done.")
    if FIX in asked:
        turns = [tool("Bash", {"command": FIX_COMMAND, "description": "Fix the line terminator"}),
                 tool("Bash", {"command": " ".join(UNIT_TESTS), "description": "Run the unit tests"}),
                 text("Fixed the line terminator; the unit tests pass.")]
        return turns[min(request.turn, len(turns) - 1)]
    if TIDY in asked:
        turns = [tool("Bash", {"command": "head -3 reports/csv_export.py", "description": "Read the export"}),
                 text("The export is tidy already.")]
        return turns[min(request.turn, len(turns) - 1)]
    return text("Done.")


@pytest.fixture
def measured(real_claude, project, alice, tmp_path, inline_executor):
    working, broken = demo_repository(tmp_path / "demo")
    project.target_folder, project.allow_commands = str(tmp_path / "demo"), True
    project.save(update_fields=["target_folder", "allow_commands"])
    skill = Skill(skill_id="csv-export", status=Skill.Status.ACTIVE)
    for task in (TIDY, FIX):
        skill_save(skill=skill, body=template_body(task), author=alice)
    dataset = demo_dataset(project, working=working, broken=broken)
    dataset.cases.update(skill=skill)
    real_claude.script = _script
    experiments = []
    for number in (1, 2):
        experiments.append(experiment_create(dataset=dataset, by=alice, fields={
            "name": f"revision {number}", "variant": {"skills": {"csv-export": number}}}))
        inline_executor.drain()
    return [Experiment.objects.get(pk=experiment.pk) for experiment in experiments], real_claude


def test_two_revisions_of_a_skill_score_differently_and_the_flipped_case_is_named(measured, alice):
    (first, second), standin = measured
    assert [experiment.status for experiment in (first, second)] == ["finished", "finished"]
    outcomes = {(item.experiment_id, item.case.title): item.passed
                for item in ExperimentItem.objects.select_related("case")}
    assert outcomes == {
        (first.pk, "Export at a working commit"): True, (first.pk, "Export at a broken commit"): False,
        (second.pk, "Export at a working commit"): True, (second.pk, "Export at a broken commit"): True,
    }
    failing = ExperimentItem.objects.get(experiment=first, case__title="Export at a broken commit")
    assert [(check["argv"], check["exit_code"]) for check in failing.checks] == [(UNIT_TESTS, 1)]
    assert failing.run.status == "succeeded"  # the run did what it was asked; the check found it wanting
    fixes = [request for request in standin.requests if FIX in request.first_user_text and request.turn == 0]
    assert fixes and all(TIDY not in request.first_user_text for request in fixes)

    client = signed_in(alice)
    comparison = client.get(f"/api/experiments/compare?a={first.pk}&b={second.pk}").json()
    assert (comparison["a"]["pass_rate"], comparison["b"]["pass_rate"]) == (0.5, 1.0)
    assert [(row["title"], row["a_passed"], row["b_passed"]) for row in comparison["flipped"]] == [
        ("Export at a broken commit", False, True)]
    page = client.get(f"/experiments/compare/?a={first.pk}&b={second.pk}").content.decode()
    assert re.findall(r'data-flip="([a-z-]+)">\s*<td>([^<]+)</td>', page) == [
        ("fail-pass", "Export at a broken commit")]
    assert comparison["flipped"][0]["compare_url"] in page
