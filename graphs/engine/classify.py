"""Classifying a failed attempt before it is recorded: the deterministic rules, then — in a project
that asks for it (``Project.llm_failure_classifier``) and only when the rules answer Unknown — the
judge agent, whose answer ``graphs.domain.failure_judge.failure_answer_validate`` checks and caps.

It runs while the attempt still holds its heartbeat and before the run lock is taken: an agent call
may take minutes, and no other worker should wait on it.
"""

from __future__ import annotations

import threading
from pathlib import Path

from graphs.agents import AgentError, AgentRunner
from graphs.domain.failure_judge import failure_answer_validate, failure_prompt
from graphs.domain.failures import FailureCategory, FailureClassification, FailureFacts, failure_classify
from graphs.domain.json_extraction import extract_json_payload
from graphs.engine.calls import attempt_agent_call
from graphs.logs.store import log_append
from graphs.models import WorkNodeExecution


def attempt_failure_classify(
    execution: WorkNodeExecution,
    *,
    facts: FailureFacts,
    runner: AgentRunner,
    node: dict,
    cancel_event: threading.Event,
    cwd: Path,
) -> FailureClassification:
    """How the failed attempt is classified: by the rules, or by the judge agent when the rules do not
    know and the attempt's project asks for it. An agent that cannot answer leaves it Unknown, saying why."""
    classification = failure_classify(facts)
    if not classification.is_unknown() or not execution.run.task.project.llm_failure_classifier:
        return classification
    try:
        answer = attempt_agent_call(runner, execution, node=node, prompt=failure_prompt(node_id=execution.node_id,
                                                                                         facts=facts),
                                    purpose="judge", cancel_event=cancel_event, cwd=cwd).text
    except AgentError as error:
        asked = FailureClassification(category=FailureCategory.UNKNOWN, confidence=classification.confidence,
                                      evidence=classification.evidence, rule="llm",
                                      note=f"fell back to Unknown: the judge agent could not answer ({error.kind})")
    else:
        # The object that names a category; failing that, any object, so the reason can say what is wrong.
        verdict = extract_json_payload(answer, required_keys=("category",)) or extract_json_payload(answer)
        asked = failure_answer_validate(verdict)
        if asked.is_unknown() and not asked.evidence:
            asked = FailureClassification(category=asked.category, confidence=asked.confidence,
                                          evidence=classification.evidence, rule=asked.rule, note=asked.note)
    log_append(execution=execution, event="failure_classified", **asked.as_dict())
    return asked
