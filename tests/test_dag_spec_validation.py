"""A DAG spec is checked as a whole before anything is imported: every problem is named at once."""

from __future__ import annotations

import pytest

from graphs.planning.dag_spec_check import DagSpecError, dag_spec_parse
from graphs.planning.dag_spec_plan import dag_spec_plan
from tests.dag_specs import backend_test_prompt_files, backend_test_spec, gate, pi, shell, spec_of


def _errors(spec, prompt_files=None) -> list[str]:
    with pytest.raises(DagSpecError) as caught:
        dag_spec_plan(spec, prompt_files=prompt_files)
    return caught.value.errors


def test_the_seeds_backend_test_spec_is_valid_with_its_prompt_files():
    plan = dag_spec_plan(backend_test_spec(), prompt_files=backend_test_prompt_files())
    assert len(plan.manifest["nodes"]) == 7


def test_every_problem_is_named_at_once():
    spec = spec_of(
        pi("a"),
        pi("a"),
        {"id": "b", "executor": "cursor", "subtask_prompt": "Do b."},
        pi("c", "ghost"),
        pi("d", prompt="Use {{upstream.a}} and {{mystery}}."),
        pi("e", retryPolicy={"maxAttempts": 0, "retryCategories": ["quota"]}),
    )
    errors = _errors(spec)
    assert "task 'a': the id is used by more than one task" in errors
    assert "task 'b': unknown executor 'cursor'; the console runs pi, shell" in errors
    assert "task 'c': depends on 'ghost', which is not a task of the spec" in errors
    assert any(e.startswith("task 'd': placeholder {{upstream.a}} names a task this one does not depend")
               for e in errors)
    assert any(e.startswith("task 'd': placeholder {{mystery}} is unknown") for e in errors)
    assert any(e.startswith("task 'e': retryPolicy.maxAttempts must be an integer from 1 to 11") for e in errors)
    assert any("retryCategories names 'quota', which is not a transient error" in e for e in errors)
    assert len(errors) == 7


def test_a_dependency_cycle_is_named_with_its_tasks():
    errors = _errors(spec_of(pi("a", "c"), pi("b", "a"), pi("c", "b")))
    assert errors == ["dependency cycle: 'a' -> 'c' -> 'b' -> 'a' (each node depends on the next)"]


def test_a_task_without_an_executor_is_refused_even_with_spec_defaults():
    task = pi("a")
    del task["executor"]
    errors = _errors(spec_of(task, defaults={"executor": "pi"}))
    assert errors == ["task 'a': executor is missing; every task names its executor (pi, shell)"]


@pytest.mark.parametrize(
    ("policy", "complaint"),
    [
        ("three times", "retryPolicy must be an object"),
        ({"maxAttempts": 3, "backoff": "random"}, "retryPolicy.backoff 'random' is not one of exponential, fixed"),
        ({"maxAttempts": 3, "initialDelayMs": -5}, "retryPolicy.initialDelayMs must be a number of milliseconds"),
        ({"maxAttempts": 3, "jitter": True}, "retryPolicy has unknown fields jitter"),
    ],
)
def test_a_bad_retry_policy_is_named(policy, complaint):
    [error] = _errors(spec_of(pi("a", retryPolicy=policy)))
    assert error.startswith("task 'a': ") and complaint in error


def test_a_writer_or_a_shell_task_may_not_have_a_retry_policy():
    errors = _errors(spec_of(pi("w", toolProfile="write", retryPolicy={"maxAttempts": 2}),
                             shell("s", retryPolicy={"maxAttempts": 2})))
    assert any(e.startswith("task 'w': retryPolicy on a write task") for e in errors)
    assert any(e.startswith("task 's': retryPolicy belongs to pi tasks") for e in errors)


def test_a_prompt_needs_exactly_one_source_and_a_named_file_must_be_supplied():
    errors = _errors(spec_of(
        pi("both", subtask_prompt_markdown="./x.prompt.md"),
        {"id": "neither", "executor": "pi"},
        {"id": "missing", "executor": "pi", "subtask_prompt_markdown": "./absent.prompt.md"},
    ))
    assert errors == [
        "task 'both': has both subtask_prompt and subtask_prompt_markdown; give one",
        "task 'neither': needs a prompt: subtask_prompt or subtask_prompt_markdown",
        "task 'missing': its prompt file './absent.prompt.md' was not supplied; upload it with the spec",
    ]


def test_the_seeds_spec_without_its_prompt_files_names_each_missing_file():
    errors = _errors(backend_test_spec())
    assert [e.split(":")[0] for e in errors] == [
        "task 'review-backend-cases-pi'", "task 'generate-backend-pytest-pi'", "task 'test-retrospect-pi'",
    ]


def test_placeholders_may_name_the_spec_its_variables_the_task_and_direct_dependencies():
    prompt = "{{title}} / {{objective}} / {{var.module}} / {{ task.id }} / {{task.writeSet}} / {{upstream.a}}"
    plan = dag_spec_plan(spec_of(pi("a"), pi("b", "a", prompt=prompt, writeSet=["src/**", "docs/**"]),
                                 variables={"module": "ORDER"}))
    node = plan.manifest["nodes"][1]
    assert node["task_prompt"].startswith(
        "Small spec / Check the import. / ORDER / b / src/**, docs/** / the output of `a` (under "
    )


def test_a_variable_that_is_not_defined_is_named():
    [error] = _errors(spec_of(pi("a", prompt="Module {{var.module}}"), variables={"other": "x"}))
    assert error == "task 'a': placeholder {{var.module}} names no variable of the spec's variables"


@pytest.mark.parametrize(
    ("gate_fields", "complaint"),
    [
        ({"accept": ["VERDICT: pass", "VERDICT: request-revision"]}, "verdictGate.accept must be ['VERDICT: pass']"),
        ({"lineMode": "first-non-empty"}, "verdictGate.lineMode 'first-non-empty' is not supported"),
        ({"fromNodeId": "elsewhere"}, "verdictGate.fromNodeId 'elsewhere' is not a task of the spec"),
    ],
)
def test_a_verdict_gate_that_the_console_cannot_honour_is_named(gate_fields, complaint):
    checked = gate("g", "review")
    checked["shell"]["verdictGate"].update(gate_fields)
    [error] = _errors(spec_of(pi("review"), checked))
    assert error.startswith("task 'g': ") and complaint in error


def test_a_verdict_gate_depends_on_exactly_the_task_it_reads():
    checked = gate("g", "review")
    checked["depends_on"] = ["review", "other"]
    [error] = _errors(spec_of(pi("review"), pi("other"), checked))
    assert "depends on exactly its fromNodeId 'review'" in error


def test_a_shell_task_needs_commands_or_a_gate_but_not_both():
    both = gate("both", "a")
    both["shell"]["commands"] = ["make test"]
    errors = _errors(spec_of(pi("a"), both, {"id": "none", "executor": "shell", "shell": {"commands": []}},
                             {"id": "no-block", "executor": "shell"}))
    assert errors == [
        "task 'both': has both shell.commands and a verdictGate; a shell task does one",
        "task 'none': a shell task needs shell.commands or a shell.verdictGate",
        "task 'no-block': a shell task needs a shell block with commands or a verdictGate",
    ]


def test_a_revision_round_loops_back_to_an_upstream_task_a_bounded_number_of_times():
    errors = _errors(spec_of(pi("plan"), pi("review", "plan"), pi("aside"),
                             gate("g", "review", revision={"loopBackTo": "aside", "maxRounds": 9}),
                             pi("p", revision={"loopBackTo": "plan", "maxRounds": 1})))
    assert errors == [
        "task 'g': revision.loopBackTo 'aside' is not upstream of this task",
        "task 'g': revision.maxRounds must be an integer from 1 to 5, not 9",
        "task 'p': revision belongs to a shell task (a gate or a check), whose failure it revises",
        "task 'p': revision.loopBackTo 'plan' is not upstream of this task",
    ]


@pytest.mark.parametrize(
    ("text", "complaint"),
    [("{not json", "the spec is not valid JSON"), ("[1, 2]", "the spec must be a JSON object")],
)
def test_a_document_that_is_not_a_spec_object_is_refused(text, complaint):
    with pytest.raises(DagSpecError) as caught:
        dag_spec_parse(text)
    assert caught.value.errors[0].startswith(complaint)


def test_a_spec_without_tasks_is_refused():
    assert _errors({"title": "empty", "tasks": []}) == ["the spec needs a non-empty tasks list"]
