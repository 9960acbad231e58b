"""``manage.py import_dag_spec <project> <file>`` imports a spec with the prompt files beside it, or
exits non-zero naming every problem and creating nothing."""

from __future__ import annotations

import json
import shutil
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from graphs.models import DagSpec, Task, WorkGraphRun
from tests.dag_specs import BACKEND_TEST_SPEC, FIXTURES, pi, spec_of

pytestmark = pytest.mark.django_db


def test_it_imports_the_spec_reading_the_prompt_files_beside_it(project):
    out, err = StringIO(), StringIO()
    call_command("import_dag_spec", project.slug, str(BACKEND_TEST_SPEC), stdout=out, stderr=err)
    run = WorkGraphRun.objects.get()
    assert f"run: {run.run_id} (ready)" in out.getvalue()
    assert "nodes: 7" in out.getvalue()
    assert err.getvalue().startswith("warning: the project does not allow commands, so the shell tasks ")
    kept = DagSpec.objects.get(run=run)
    assert kept.source_name == "backend-test-dag.json"
    assert set(kept.prompt_files) == {"./backend-test-dag.review-cases.prompt.md",
                                      "./backend-test-dag.generate-pytest.prompt.md",
                                      "./backend-test-dag.retrospect.prompt.md"}


def test_an_invalid_spec_exits_non_zero_naming_every_problem(project, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(spec_of(pi("a", "b"), pi("b", "a"), {"id": "c", "executor": "static"})))
    with pytest.raises(CommandError) as caught:
        call_command("import_dag_spec", project.slug, str(path))
    message = str(caught.value)
    assert "nothing was created" in message
    assert "  - task 'c': unknown executor 'static'" in message
    assert "  - dependency cycle: 'a' -> 'b' -> 'a'" in message
    assert Task.objects.count() == 0


def test_a_prompt_file_that_is_not_beside_the_spec_is_named(project, tmp_path):
    shutil.copy(BACKEND_TEST_SPEC, tmp_path / "spec.json")
    shutil.copy(FIXTURES / "backend-test-dag.review-cases.prompt.md", tmp_path)
    with pytest.raises(CommandError) as caught:
        call_command("import_dag_spec", project.slug, str(tmp_path / "spec.json"))
    assert "'./backend-test-dag.generate-pytest.prompt.md' was not supplied" in str(caught.value)
    assert "review-cases" not in str(caught.value)


def test_an_unknown_project_or_an_unreadable_file_is_an_error(project, tmp_path):
    with pytest.raises(CommandError, match="no project 'elsewhere'"):
        call_command("import_dag_spec", "elsewhere", str(BACKEND_TEST_SPEC))
    with pytest.raises(CommandError, match="cannot read"):
        call_command("import_dag_spec", project.slug, str(tmp_path / "absent.json"))
    (tmp_path / "text.json").write_text("not json")
    with pytest.raises(CommandError, match="the spec is not valid JSON"):
        call_command("import_dag_spec", project.slug, str(tmp_path / "text.json"))
