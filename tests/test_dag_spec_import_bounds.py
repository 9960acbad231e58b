"""A DAG spec import is bounded: each task's prompt with its placeholders filled in, each prompt file
and all the import stores. Past a bound the import is refused before anything is stored, naming what
and how big, and a prompt stops growing as it passes its bound; a prompt file no task names is refused.
The API answers 422, the project page lists the problem, ``manage.py import_dag_spec`` exits non-zero."""

from __future__ import annotations

import json
import tracemalloc

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from graphs.models import DagSpec, Task, WorkGraphRun
from graphs.planning.dag_spec_check import DagSpecError
from graphs.planning.dag_spec_plan import dag_spec_plan
from graphs.planning.dag_specs import dag_spec_import
from tests.clients import signed_in
from tests.dag_specs import pi, spec_of

pytestmark = pytest.mark.django_db

READ_ONLY = "\n\nRead-only: do not change any file."


def _errors(spec, prompt_files=None) -> list[str]:
    with pytest.raises(DagSpecError) as caught:
        dag_spec_plan(spec, prompt_files=prompt_files)
    return caught.value.errors


def _nothing_stored() -> bool:
    return (Task.objects.count(), WorkGraphRun.objects.count(), DagSpec.objects.count()) == (0, 0, 0)


def _markdown_task(task_id: str, path: str) -> dict:
    task = pi(task_id)
    del task["subtask_prompt"]
    return {**task, "subtask_prompt_markdown": path}


def test_a_placeholder_repeated_100000_times_is_refused_without_the_prompt_ever_being_built():
    # A spec under 1 MB that comes to 100 million characters once filled in.
    spec = spec_of(pi("huge", prompt="{{var.v}}" * 100_000), variables={"v": "x" * 1000})

    tracemalloc.start()
    try:
        errors = _errors(spec)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert errors[0] == ("task 'huge': its prompt is 100,000,036 bytes with its placeholders filled in, "
                         "over the limit of 262,144 (WORKGRAPH_DAG_SPEC_PROMPT_MAX_BYTES)")
    assert peak < 32 * 1024 * 1024


def test_a_prompt_at_its_bound_is_filled_in_whole_and_one_byte_more_is_refused(settings):
    spec = spec_of(pi("a", prompt="{{var.v}}-" * 100), variables={"v": "é" * 10})
    prompt = ("é" * 10 + "-") * 100 + READ_ONLY
    size = len(prompt.encode())

    settings.WORKGRAPH_DAG_SPEC_PROMPT_MAX_BYTES = size
    assert dag_spec_plan(spec).manifest["nodes"][0]["task_prompt"] == prompt
    settings.WORKGRAPH_DAG_SPEC_PROMPT_MAX_BYTES = size - 1
    assert _errors(spec) == [f"task 'a': its prompt is {size:,} bytes with its placeholders filled in, over the "
                             f"limit of {size - 1:,} (WORKGRAPH_DAG_SPEC_PROMPT_MAX_BYTES)"]


def test_the_whole_import_is_bounded_naming_the_task_that_takes_it_past(project, alice, settings):
    prompt = "{{title}}" * 100
    spec = spec_of(pi("a", prompt=prompt), pi("b", "a", prompt=prompt), pi("c", "b", prompt=prompt),
                   title="t" * 100)
    spec_size = len(json.dumps(spec, ensure_ascii=False).encode())
    prompt_size = 100 * 100 + len(READ_ONLY)
    settings.WORKGRAPH_DAG_SPEC_IMPORT_MAX_BYTES = spec_size + prompt_size + prompt_size // 2

    with pytest.raises(DagSpecError) as caught:
        dag_spec_import(project=project, spec=spec, imported_by=alice)

    assert caught.value.errors == [
        f"the import would store at least {spec_size + 2 * prompt_size:,} bytes (the spec, its prompt files and "
        f"its tasks' prompts), over the limit of {settings.WORKGRAPH_DAG_SPEC_IMPORT_MAX_BYTES:,} "
        "(WORKGRAPH_DAG_SPEC_IMPORT_MAX_BYTES); the prompt of task 'b' takes it past"
    ]
    assert _nothing_stored()


def test_prompt_files_count_towards_the_import(settings):
    spec = spec_of(_markdown_task("a", "./a.prompt.md"))
    settings.WORKGRAPH_DAG_SPEC_IMPORT_MAX_BYTES = 4096

    [problem] = _errors(spec, {"a.prompt.md": "Do it. " * 1000})

    assert problem.endswith("the spec and its prompt files alone do")


def test_a_prompt_file_over_its_bound_is_refused_and_its_task_not_checked(settings):
    settings.WORKGRAPH_DAG_SPEC_PROMPT_FILE_MAX_BYTES = 1024
    spec = spec_of(_markdown_task("a", "./prompts/big.prompt.md"))

    errors = _errors(spec, {"big.prompt.md": "{{nope}}" * 200})

    assert errors == ["prompt file 'big.prompt.md': it is 1,600 bytes, over the limit of 1,024 "
                      "(WORKGRAPH_DAG_SPEC_PROMPT_FILE_MAX_BYTES)"]


def test_a_prompt_file_no_task_names_is_refused():
    spec = spec_of(_markdown_task("a", "./a.prompt.md"))

    errors = _errors(spec, {"a.prompt.md": "Do a.", "stray.md": "x" * 100})

    assert errors == ["prompt file 'stray.md': no task of the spec names it in subtask_prompt_markdown, so it is "
                      "refused; supply only the prompt files the tasks name"]


def test_a_placeholder_repeated_is_one_problem_however_often_it_appears():
    errors = _errors(spec_of(pi("a", prompt="{{nope}}" * 1000)))

    assert errors == ["task 'a': placeholder {{nope}} is unknown; use title, objective, var.<name>, task.<field> "
                      "or upstream.<task id>"]


# --- the API, the project page and the command ---------------------------------------------------


def _api_import(user, project, body) -> object:
    return signed_in(user).post(f"/api/projects/{project.slug}/dag-specs", data=json.dumps(body),
                                content_type="application/json")


def test_the_api_answers_422_naming_the_task_and_its_prompts_size(project, alice, settings):
    settings.WORKGRAPH_DAG_SPEC_PROMPT_MAX_BYTES = 1024
    spec = spec_of(pi("a"), pi("wide", "a", prompt="{{objective}}" * 100), objective="o" * 100)

    response = _api_import(alice, project, {"spec": spec})

    assert response.status_code == 422
    assert response.json()["fields"] == [{"field": "spec", "message": (
        f"task 'wide': its prompt is {10_000 + len(READ_ONLY):,} bytes with its placeholders filled in, over "
        "the limit of 1,024 (WORKGRAPH_DAG_SPEC_PROMPT_MAX_BYTES)")}]
    assert _nothing_stored()


def test_the_api_refuses_a_prompt_file_the_spec_does_not_name(project, alice):
    spec = spec_of(_markdown_task("a", "./a.prompt.md"))

    response = _api_import(alice, project, {"spec": spec, "prompt_files": {"a.prompt.md": "Do a.",
                                                                          "unused.md": "x" * 10_000}})

    assert response.status_code == 422
    assert "prompt file 'unused.md': no task of the spec names it" in response.json()["fields"][0]["message"]
    assert _nothing_stored()


def _page_import(user, project, spec, *files: tuple[str, bytes]) -> object:
    return signed_in(user).post(f"/projects/{project.slug}/", {
        "spec_file": SimpleUploadedFile("spec.json", json.dumps(spec).encode(), content_type="application/json"),
        "prompt_files": [SimpleUploadedFile(name, content, content_type="text/markdown") for name, content in files],
    })


def test_the_page_lists_an_upload_the_spec_does_not_name_and_stores_nothing(project, alice):
    spec = spec_of(_markdown_task("a", "./a.prompt.md"))

    response = _page_import(alice, project, spec, ("a.prompt.md", b"Do a."), ("notes.md", b"x" * 10_000))

    assert response.status_code == 400
    assert "prompt file &#x27;notes.md&#x27;: no task of the spec names it" in response.content.decode()
    assert _nothing_stored()


def test_the_page_refuses_a_prompt_file_over_its_bound_naming_its_size(project, alice, settings):
    settings.WORKGRAPH_DAG_SPEC_PROMPT_FILE_MAX_BYTES = 1024
    spec = spec_of(_markdown_task("a", "./a.prompt.md"))

    response = _page_import(alice, project, spec, ("a.prompt.md", b"Do a. " * 1000))

    assert response.status_code == 400
    page = response.content.decode()
    assert "prompt file &#x27;a.prompt.md&#x27;: it is 6,000 bytes, over the limit of 1,024" in page
    assert _nothing_stored()


def test_the_page_refuses_a_prompt_over_its_bound_naming_the_task(project, alice, settings):
    settings.WORKGRAPH_DAG_SPEC_PROMPT_MAX_BYTES = 1024
    spec = spec_of(pi("loud", prompt="{{var.v}}" * 1000), variables={"v": "abc"})

    response = _page_import(alice, project, spec)

    assert response.status_code == 400
    assert f"task &#x27;loud&#x27;: its prompt is {3000 + len(READ_ONLY):,} bytes" in response.content.decode()
    assert _nothing_stored()


def test_the_command_refuses_a_prompt_file_over_its_bound_beside_the_spec(project, tmp_path, settings):
    settings.WORKGRAPH_DAG_SPEC_PROMPT_FILE_MAX_BYTES = 1024
    (tmp_path / "spec.json").write_text(json.dumps(spec_of(_markdown_task("a", "./a.prompt.md"))))
    (tmp_path / "a.prompt.md").write_text("Do a. " * 1000)

    with pytest.raises(CommandError) as caught:
        call_command("import_dag_spec", project.slug, str(tmp_path / "spec.json"))

    assert "  - prompt file './a.prompt.md': it is 6,000 bytes, over the limit of 1,024" in str(caught.value)
    assert _nothing_stored()


def test_the_command_refuses_a_prompt_over_its_bound(project, tmp_path, settings):
    settings.WORKGRAPH_DAG_SPEC_PROMPT_MAX_BYTES = 1024
    (tmp_path / "spec.json").write_text(json.dumps(spec_of(pi("loud", prompt="{{title}}" * 1000))))

    with pytest.raises(CommandError) as caught:
        call_command("import_dag_spec", project.slug, str(tmp_path / "spec.json"))

    assert "  - task 'loud': its prompt is " in str(caught.value)
    assert _nothing_stored()
