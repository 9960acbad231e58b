"""In a real browser against daphne: "Run again" on a task imported from a DAG spec makes a new run of
the stored spec, and the page follows it to its end beside the earlier run."""

from __future__ import annotations

import pytest

from graphs.models import DagSpec, WorkGraphRun
from graphs.planning.dag_specs import dag_spec_import
from graphs.runs.status import run_status_set
from tests.browser.conftest import PAGE_WAIT_MS, sign_in
from tests.dag_specs import pi, spec_of

pytestmark = pytest.mark.django_db(transaction=True)


def test_run_again_runs_the_imported_spec_and_the_page_follows_it(chromium, console_server, alice, project):
    first = dag_spec_import(project=project, spec=spec_of(pi("draft"), pi("polish", "draft")),
                            source_name="small.json", imported_by=alice)
    run_status_set(run=first, status="cancelled")
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    sign_in(page, f"{console_server}/tasks/{first.task_id}/", "alice")
    assert page.inner_text("#run-pipeline") == "Run again"

    page.click("#run-pipeline")
    page.wait_for_selector(".message:has-text('A new run of the imported spec was made.')")
    again = WorkGraphRun.objects.filter(task_id=first.task_id).exclude(pk=first.pk).get()
    assert not again.pipeline and DagSpec.objects.filter(run=again).exists()
    page.wait_for_selector(f"#run-{again.run_id}[data-run-status='succeeded'][data-dag-spec]")
    sections = page.eval_on_selector_all("#runs > .run-tree", "els => els.map(e => e.dataset.runId)")
    assert sections == [str(again.run_id), str(first.run_id)], "the new run first, the import's run under it"
    page.wait_for_selector("#run-pipeline:not([disabled])")
