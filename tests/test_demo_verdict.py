"""The demo's verdict rests on tests that ran: its folder holds the CSV export and its unit tests, the
validator's command runs them and names each, and a broken export fails the run instead of passing."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from graphs.demo import DEMO_PROJECT_FILES, demo_data_load, demo_pipeline_run, demo_project_files_copy
from graphs.models import Task, WorkGraphRun
from tests.run_builders import latest

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"


@pytest.fixture
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path


def test_the_demo_verdict_rests_on_the_csv_exports_unit_tests_which_ran_and_passed(var_dir, settings):
    settings.DEBUG = True
    call_command("load_demo")
    task = Task.objects.get(title="CSV export for the reports page")
    rows = latest(WorkGraphRun.objects.get(task=task))

    assert task.status == Task.Status.SUCCEEDED and task.outcome["verdict"] == "PASS"
    ran = rows["validator_run_test_script"].output_payload["text"]
    assert "tested: 5 unit tests under tests/, 0 failed, 0 in error" in ran
    assert "test_the_pages_filters_apply_to_the_export" in ran and "nothing was tested" not in ran
    verdict = rows["validator_final_verdict"].output_payload["text"]
    assert "this pass rests on `validator_run_test_script`" in verdict
    assert "nothing was actually checked" not in verdict
    assert not list((var_dir / "demo-project").rglob("__pycache__")), "the check leaves the folder as it was"


def test_a_broken_export_fails_the_demo_run_instead_of_passing_it(var_dir):
    _, task = demo_data_load(password=PASSWORD)
    export = var_dir / "demo-project" / "reports" / "csv_export.py"
    export.write_text(export.read_text().replace('lineterminator="\\r\\n"', 'lineterminator=";"'))

    demo_pipeline_run(task=task)

    task.refresh_from_db()
    assert task.status == Task.Status.FAILED and task.outcome.get("verdict") != "PASS"
    ran = latest(WorkGraphRun.objects.get(task=task))["validator_run_test_script"]
    assert ran.status == "failed" and "FAILED" in ran.output_payload["text"]


def test_loading_the_demo_again_keeps_what_someone_changed_in_its_folder(var_dir):
    target = var_dir / "demo-project"
    copied = demo_project_files_copy(target)
    assert {path.relative_to(target).as_posix() for path in copied} >= {"reports/csv_export.py",
                                                                        "tests/test_csv_export.py"}
    (target / "reports" / "csv_export.py").write_text("# edited\n")
    (target / "tests" / "test_csv_export.py").unlink()

    assert demo_project_files_copy(target) == [target / "tests" / "test_csv_export.py"]
    assert (target / "reports" / "csv_export.py").read_text() == "# edited\n"
    assert (target / "tests" / "test_csv_export.py").read_text() == (
        DEMO_PROJECT_FILES / "tests" / "test_csv_export.py"
    ).read_text()
