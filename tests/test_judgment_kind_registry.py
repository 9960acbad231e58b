"""A judgment kind is one module and one line of the registry: a kind defined here, with its manifest
rule, its judge and its planning-prompt line, is accepted, offered and judged once that line adds it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from graphs.domain.judgments import JUDGMENT_KINDS, JudgeRequest, Judgment, JudgmentKind
from graphs.domain.manifest import ManifestError, validate_graph_manifest
from graphs.domain.prompts import TaskBrief, planning_prompt
from graphs.engine import run_start
from tests.run_builders import latest, node, planned_run


def _mentions_errors(spec: Mapping[str, Any], label: str) -> list[str]:
    if not (isinstance(spec.get("word"), str) and spec["word"].strip()):
        return [f"{label}: a mentions judgment needs word, the word the output must contain"]
    return []


def _mentions_judge(request: JudgeRequest) -> Judgment:
    word = request.spec["word"]
    if word.lower() in request.content.lower():
        return Judgment(ok=True, kind="mentions", detail={"word": word})
    return Judgment(ok=False, kind="mentions", issues=[f"the output never mentions {word!r}"], detail={"word": word})


MENTIONS = JudgmentKind(
    name="mentions",
    errors=_mentions_errors,
    judge=_mentions_judge,
    prompt_rule=lambda: '{"kind": "mentions", "word": "<word>"}: the output passes when it contains the word.',
)


@pytest.fixture
def mentions(monkeypatch):
    monkeypatch.setitem(JUDGMENT_KINDS, MENTIONS.name, MENTIONS)


def _manifest(judgment: dict) -> dict:
    return {"nodes": [node("draft", judgment=judgment, on_fail={"action": "retry_self", "max_attempts": 2})],
            "edges": []}


@pytest.mark.django_db
def test_a_node_judged_by_the_kind_fails_and_passes_as_its_judge_decides(
    mentions, task, scripted_runner, inline_executor
):
    manifest = _manifest({"kind": "mentions", "word": "export"})
    validate_graph_manifest(manifest)
    scripted_runner.replies.update({
        ("node", "draft", 1): "A plan for the import screen.",
        ("node", "draft", 2): "A plan for the CSV Export button.",
    })
    run = planned_run(task, manifest)

    run_start(run=run)
    inline_executor.drain()

    first, second = run.executions.filter(node_id="draft").order_by("attempt")
    assert (first.status, first.judgment_result) == ("failed", {
        "ok": False, "kind": "mentions", "issues": ["the output never mentions 'export'"], "word": "export",
    })
    assert second.input_payload["feedback"] == [
        "Your previous attempt was rejected: the output never mentions 'export'"
    ]
    assert (second.status, second.judgment_result["ok"]) == ("succeeded", True)
    assert latest(run)["draft"] == second
    run.refresh_from_db()
    assert run.status == "succeeded"


def test_a_malformed_judgment_of_the_kind_is_refused_with_the_kinds_own_message(mentions):
    with pytest.raises(ManifestError) as refused:
        validate_graph_manifest(_manifest({"kind": "mentions", "word": " "}))

    assert refused.value.errors == ["node 'draft': a mentions judgment needs word, the word the output must contain"]


def test_an_external_node_is_not_judged_by_a_kind_that_does_not_say_it_may_be(mentions):
    manifest = _manifest({"kind": "mentions", "word": "export"})
    manifest["nodes"][0]["executor"] = "external"

    with pytest.raises(ManifestError) as refused:
        validate_graph_manifest(manifest)

    assert refused.value.errors == [
        "node 'draft': an external node's report is judged as it arrives, so its judgment.kind must be one of"
        " none, mechanical, not 'mentions'"
    ]


def test_planning_prompts_describe_the_kind(mentions):
    prompt = planning_prompt(org_node="coder", brief=TaskBrief(title="CSV export", goal_text="Export reports."))

    assert '- {"kind": "mentions", "word": "<word>"}: the output passes when it contains the word.' in prompt


def test_without_its_line_in_the_registry_the_kind_is_unknown():
    with pytest.raises(ManifestError) as refused:
        validate_graph_manifest(_manifest({"kind": "mentions", "word": "export"}))

    assert refused.value.errors == [
        "node 'draft': judgment.kind 'mentions' is not one of none, mechanical, llm, command"
    ]
    prompt = planning_prompt(org_node="coder", brief=TaskBrief(title="CSV export", goal_text="Export reports."))
    assert '"kind": "mentions"' not in prompt
