"""The offline agent: deterministic plans that validate, honest placeholders, a judge that loops back once."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from graphs.agents import AgentCall, AgentCancelled, OfflineRunner, get_runner, runner_register
from graphs.domain.catalogs import ARTIFACT_TYPES
from graphs.domain.check_registry import check_run
from graphs.domain.manifest import extract_graph_manifest, normalize_graph_manifest, validate_graph_manifest
from graphs.domain.manifest_graph import data_dependencies


def _run(purpose: str = "node", **fields: Any) -> str:
    call = AgentCall(
        **(
            {"org_node": "planner", "prompt": "ignored", "cwd": Path("."), "timeout": 5.0, "purpose": purpose}
            | fields
        )
    )
    return OfflineRunner(line_delay=0).run(call).text


def _plan(org_node: str, before: dict[str, Any] | None = None) -> dict[str, Any]:
    """The offline agent's plan for ``org_node``, appended to the run ``before`` holds, checked as planning would."""
    existing = data_dependencies(before or {"nodes": []})
    text = _run("plan", org_node=org_node, existing_node_ids=tuple(existing))
    manifest = normalize_graph_manifest(extract_graph_manifest(text), existing_node_ids=existing)
    validate_graph_manifest(manifest, existing)
    return manifest


def _run_of(*node_ids: str) -> dict[str, Any]:
    return {"nodes": [{"node_id": node_id, "task_prompt": node_id} for node_id in node_ids]}


def _ids(manifest: dict[str, Any]) -> tuple[str, ...]:
    return tuple(node["node_id"] for node in manifest["nodes"])


def _merge(*manifests: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodes": [node for manifest in manifests for node in manifest["nodes"]],
        "edges": [edge for manifest in manifests for edge in manifest["edges"]],
    }


def _by_type(manifest: dict[str, Any], node_type: str) -> dict[str, Any]:
    return next(node for node in manifest["nodes"] if node.get("node_type") == node_type)


def test_its_answers_are_deterministic():
    assert _run("plan", org_node="coder", existing_node_ids=("sdd",)) == _run(
        "plan", org_node="coder", existing_node_ids=("sdd",)
    )
    prd = {"node_id": "prd", "artifact_type": "prd"}
    assert _run(node=prd) == _run(node=prd)


def test_the_plan_is_prose_followed_by_a_fenced_json_manifest():
    text = _run("plan", org_node="planner")

    assert text.startswith("[offline agent]")
    assert "```json\n" in text


def test_the_planner_plans_catalog_nodes_with_a_loop_back():
    manifest = _plan("planner")

    assert {node["artifact_type"] for node in manifest["nodes"]} <= set(ARTIFACT_TYPES)
    loop_backs = [node for node in manifest["nodes"] if node.get("on_fail", {}).get("action") == "loop_back"]
    assert [node["node_id"] for node in loop_backs] == ["benchmark"]
    assert {"from": "benchmark", "to": "prd", "edge_type": "on_failure"} in manifest["edges"]
    prd = next(node for node in manifest["nodes"] if node["node_id"] == "prd")
    assert prd["judgment"]["kind"] == "llm"
    assert "{content}" in prd["judgment"]["judge_prompt"]
    script = next(node for node in manifest["nodes"] if node["artifact_type"] == "test_script")
    assert script["judgment"] == {"kind": "mechanical", "check_ref": "check_script_compiles"}


def test_the_coder_appends_generic_nodes_after_the_planner():
    planner = _plan("planner")
    coder = _plan("coder", before=planner)

    assert not set(_ids(coder)) & set(_ids(planner))
    assert all(node["task_prompt"] and "artifact_type" not in node for node in coder["nodes"])
    assert [node["node_type"] for node in coder["nodes"]] == ["impl", "unit_test", "integration_check"]
    impl, unit_test = _by_type(coder, "impl"), _by_type(coder, "unit_test")
    assert impl["depends_on"] == ["sdd", "benchmark"]
    assert unit_test["on_fail"]["action"] == "loop_back"
    assert {"from": unit_test["node_id"], "to": impl["node_id"], "edge_type": "on_failure"} in coder["edges"]
    validate_graph_manifest(_merge(planner, coder))


def test_the_validator_appends_a_final_verdict_with_dynamic_loop_back():
    planner = _plan("planner")
    coder = _plan("coder", before=planner)
    validator = _plan("validator", before=_merge(planner, coder))

    assert [node["node_type"] for node in validator["nodes"]] == [
        "independent_benchmark",
        "test_dataset",
        "test_script",
        "final_verdict",
    ]
    verdict = _by_type(validator, "final_verdict")
    assert verdict["judgment"] == {"kind": "mechanical", "check_ref": "verdict_says_pass"}
    assert verdict["on_fail"]["action"] == "dynamic_loop_back"
    assert "coder_integration_check" in verdict["depends_on"]
    dynamic = [
        node for node in validator["nodes"] if node.get("on_fail", {}).get("action") == "dynamic_loop_back"
    ]
    assert dynamic == [verdict]
    validate_graph_manifest(_merge(planner, coder, validator))


def test_where_commands_run_the_validators_verdict_rests_on_its_test_script_having_run():
    planner = _plan("planner")
    coder = _plan("coder", before=planner)
    existing = data_dependencies(_merge(planner, coder))
    text = _run("plan", org_node="validator", existing_node_ids=tuple(existing), commands_allowed=True)
    validator = normalize_graph_manifest(extract_graph_manifest(text), existing_node_ids=existing)
    validate_graph_manifest(validator, existing)

    script, ran = _by_type(validator, "test_script"), _by_type(validator, "run_test_script")
    assert "`validator_test_script.py`" in script["task_prompt"]
    assert ran["command"] == ["python3", "validator_test_script.py"]
    assert ran["depends_on"] == ["validator_test_script", "coder_integration_check"]
    assert "task_prompt" not in ran
    assert {"from": ran["node_id"], "to": "coder_impl", "edge_type": "on_failure"} in validator["edges"]
    assert ran["node_id"] in _by_type(validator, "final_verdict")["depends_on"]
    validate_graph_manifest(_merge(planner, coder, validator))


def test_where_commands_run_a_validators_test_script_is_saved_in_the_working_folder(tmp_path):
    script = {"node_id": "validator_test_script", "node_type": "test_script", "task_prompt": "x"}

    text = _run(node=script, cwd=tmp_path, commands_allowed=True)
    assert (tmp_path / "validator_test_script.py").read_text() == text
    assert [path.name for path in tmp_path.iterdir()] == ["validator_test_script.py"]

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _run(node=script, cwd=elsewhere)
    _run(node={"node_id": "../escape", "node_type": "test_script", "task_prompt": "x"}, cwd=elsewhere,
         commands_allowed=True)
    assert list(elsewhere.iterdir()) == []
    assert not (tmp_path / "escape.py").exists()


def test_appended_ids_never_collide_with_existing_ones():
    existing = ("coder_impl", "coder_impl_2", "coder_unit_test")

    coder = _plan("coder", before=_run_of(*existing))

    assert _ids(coder) == ("coder_impl_3", "coder_unit_test_2", "coder_integration_check")


def test_any_other_org_node_gets_a_one_node_generic_plan():
    manifest = _plan("reviewer", before=_run_of("reviewer_work"))

    assert _ids(manifest) == ("reviewer_work_2",)
    assert manifest["nodes"][0]["task_prompt"]


def test_the_judge_fails_the_first_attempt_of_a_loop_back_node_only():
    loop_back = {"node_id": "benchmark", "on_fail": {"action": "loop_back", "max_attempts": 2}}
    retry = {"node_id": "prd", "on_fail": {"action": "retry_self"}}

    first = json.loads(_run("judge", node=loop_back, attempt=1))
    assert first["ok"] is False
    assert len(first["issues"]) == 1
    assert "`benchmark`" in first["issues"][0]
    assert json.loads(_run("judge", node=loop_back, attempt=2)) == {"ok": True, "issues": []}
    assert json.loads(_run("judge", node=retry, attempt=1)) == {"ok": True, "issues": []}


def test_node_output_is_a_labelled_placeholder():
    text = _run(node={"node_id": "prd", "artifact_type": "prd"})

    assert text.startswith("[offline agent] placeholder Product requirements document (PRD) for node `prd`")
    assert "(attempt 2" in _run(node={"node_id": "prd", "artifact_type": "prd"}, attempt=2)


def test_a_placeholder_says_a_real_agent_is_chosen_on_the_projects_settings_page_or_by_default():
    text = _run(node={"node_id": "prd", "artifact_type": "prd"})

    assert "Agent runner on the project's Settings page" in text
    assert "every project's default with WORKGRAPH_AGENT" in text


@pytest.mark.parametrize(
    "node",
    [
        {"node_id": "test_script", "artifact_type": "test_script"},
        {"node_id": "validator_test_script", "node_type": "test_script", "task_prompt": "x"},
    ],
)
def test_a_test_script_node_gets_a_script_that_compiles(node):
    text = _run(node=node)

    assert "[offline agent] test script: it runs the unit tests under tests/" in text
    assert check_run("check_script_compiles", text).ok
    compile(text, "placeholder.py", "exec")


def test_a_final_verdict_node_says_pass():
    text = _run(node={"node_id": "verdict", "node_type": "final_verdict", "task_prompt": "x"})

    assert "VERDICT: pass" in text.splitlines()
    assert check_run("verdict_says_pass", text).ok


def test_on_line_receives_every_line_in_order():
    lines: list[str] = []

    text = _run("plan", org_node="validator", on_line=lines.append)

    assert lines == text.splitlines()


def test_setting_the_cancel_event_stops_it():
    cancel = threading.Event()

    with pytest.raises(AgentCancelled):
        _run("plan", on_line=lambda line: cancel.set(), cancel_event=cancel)


def test_get_runner_defaults_to_the_configured_offline_agent(settings):
    settings.WORKGRAPH_AGENT = "offline"
    settings.WORKGRAPH_OFFLINE_LINE_DELAY = 0.005

    runner = get_runner()

    assert (runner.name, runner.line_delay) == ("offline", 0.005)


def test_a_paced_offline_call_spreads_its_lines_over_the_seconds_it_is_given(settings, monkeypatch):
    settings.WORKGRAPH_AGENT = "offline"
    settings.WORKGRAPH_OFFLINE_LINE_DELAY = 0
    settings.WORKGRAPH_OFFLINE_CALL_SECONDS = 2.0
    pauses: list[float] = []
    monkeypatch.setattr("graphs.agents.offline.time.sleep", pauses.append)
    lines: list[str] = []
    call = AgentCall(org_node="coder", prompt="x", cwd=Path("."), timeout=60.0, purpose="node",
                     node={"node_id": "impl", "task_prompt": "Build it."}, on_line=lines.append)

    get_runner().run(call)

    assert len(pauses) == len(lines) > 1
    assert sum(pauses) == pytest.approx(2.0)


def test_get_runner_refuses_an_unknown_name():
    with pytest.raises(ImproperlyConfigured, match="unknown agent runner 'gpt'"):
        get_runner("gpt")


def test_a_registered_runner_can_be_selected_by_name():
    double = OfflineRunner(line_delay=0)
    runner_register("offline-double", lambda: double)

    assert get_runner("offline-double") is double
