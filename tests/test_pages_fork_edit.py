"""The page that re-runs a node with an edited prompt or argv: the current value in a form, a submission
that forks with the edit or says what the rules refused (making nothing), the links to it for whoever may
fork, and the edit as a diff where a reviewer approves it and on the compare page."""

from __future__ import annotations

import html
import re

import pytest

from graphs.engine import run_start
from graphs.models import WorkGraphRun
from tests.clients import signed_in
from tests.run_builders import command_node, edges_for, latest, node, planned_run

pytestmark = pytest.mark.django_db


def text_of(page: str, pattern: str) -> str:
    """The unescaped text the first element matching ``pattern`` (a regex up to its opening tag's end) holds."""
    found = re.search(pattern + r"[^>]*>(.*?)</", page, re.S)
    assert found, f"nothing matches {pattern!r}"
    return html.unescape(found.group(1))


def textarea_of(page: str, name: str) -> str:
    """What a browser shows in the textarea ``name``: its text less the one newline after its opening tag."""
    text = text_of(page, rf'<textarea name="{name}"')
    return text[1:] if text.startswith("\n") else text


def page_of(response) -> str:
    return response.content.decode()


@pytest.fixture
def finished(task, scripted_runner, inline_executor) -> WorkGraphRun:
    nodes = [node("build"), node("check", "build", task_prompt="Check <b>it</b>."),
             command_node("tests", "print(1)", "check"), {"node_id": "prd", "artifact_type": "prd", "depends_on": []}]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    inline_executor.drain()
    run.refresh_from_db()
    return run


def url(run: WorkGraphRun, node_id: str = "") -> str:
    return f"/runs/{run.run_id}/fork/edit/" + (f"?node={node_id}" if node_id else "")


def test_the_page_shows_the_nodes_prompt_and_what_runs_again(alice, finished):
    page = page_of(signed_in(alice).get(url(finished, "check")))

    assert textarea_of(page, "prompt") == "Check <b>it</b>."
    assert "Check &lt;b&gt;it&lt;/b&gt;." in page
    assert re.search(r'<input type="hidden" name="node_id" value="check"', page)
    rerun = re.sub(r"<[^>]+>", "", page[page.index('id="fork-edit-rerun"'):].split("</p>")[0])
    assert "Runs again: check, tests." in rerun and "Reused: build, prd." in rerun


def test_a_command_node_shows_its_argv_as_json_and_a_catalog_node_says_it_has_no_prompt(alice, finished):
    client = signed_in(alice)
    argv = textarea_of(page_of(client.get(url(finished, "tests"))), "argv")
    assert argv.replace("\n", "").startswith('["') and '"print(1)"' in argv
    catalog = page_of(client.get(url(finished, "prd")))
    assert 'id="fork-edit-form"' not in catalog
    assert "catalog node" in text_of(catalog, r'id="fork-edit-unavailable"')


def test_submitting_forks_with_the_edit_and_opens_the_new_runs_graph(alice, finished, inline_executor):
    answer = signed_in(alice).post(url(finished), {"node_id": "check", "prompt": "Check the export.\r\n"})

    fork = WorkGraphRun.objects.exclude(pk=finished.pk).get()
    assert answer.status_code == 302 and answer["Location"] == f"/runs/{fork.run_id}/"
    assert (fork.fork_edit["before"], fork.fork_edit["after"], fork.fork_edit["by"]) == (
        "Check <b>it</b>.", "Check the export.\n", "alice")
    inline_executor.drain()
    assert "Check the export." in latest(fork)["check"].input_payload["prompt"]


@pytest.mark.parametrize(
    ("form", "error"),
    [
        ({"node_id": "check", "prompt": "  "}, "The prompt cannot be empty."),
        ({"node_id": "check", "prompt": "Check <b>it</b>."}, "This is the node's current prompt"),
        ({"node_id": "tests", "argv": "python3 -V"}, "The argv must be a JSON list of strings"),
        ({"node_id": "tests", "argv": '["python3", ""]'}, "The argv[1] must be a non-empty string"),
        ({"node_id": "tests", "argv": '{"a": 1}'}, "The argv must be a JSON list of strings"),
    ],
)
def test_an_edit_the_rules_refuse_is_a_form_error_and_makes_nothing(alice, finished, form, error):
    answer = signed_in(alice).post(url(finished), form)

    assert answer.status_code == 400
    page = page_of(answer)
    field = "prompt" if "prompt" in form else "argv"
    assert error in text_of(page, rf'<p class="error" id="error-{field}"')
    assert textarea_of(page, field) == form[field]
    assert WorkGraphRun.objects.count() == 1


def test_a_run_under_way_cannot_be_forked_and_the_page_says_so(alice, task):
    run = planned_run(task, {"nodes": [node("check")], "edges": []}, status="running")
    page = page_of(signed_in(alice).get(url(run, "check")))
    assert 'id="fork-edit-form"' not in page
    assert "once it has ended" in text_of(page, r'id="fork-edit-unavailable"')
    assert signed_in(alice).post(url(run), {"node_id": "check", "prompt": "Again."}).status_code == 400
    assert WorkGraphRun.objects.count() == 1


def test_a_reviewer_may_not_open_or_submit_it_and_an_unknown_node_is_404(alice, bob, finished):
    assert signed_in(bob).get(url(finished, "check")).status_code == 403
    assert signed_in(bob).post(url(finished), {"node_id": "check", "prompt": "x"}).status_code == 403
    assert signed_in(alice).get(url(finished, "deploy")).status_code == 404
    assert WorkGraphRun.objects.count() == 1


def test_the_node_page_and_the_graph_link_to_it_for_a_lead_only(alice, bob, finished):
    check = latest(finished)["check"]
    node_page = page_of(signed_in(alice).get(f"/executions/{check.pk}/"))
    assert f'data-fork-edit href="{url(finished, "check")}"' in node_page
    assert "fork-edit-link" not in page_of(signed_in(bob).get(f"/executions/{check.pk}/"))
    prd = latest(finished)["prd"]
    assert "fork-edit-link" not in page_of(signed_in(alice).get(f"/executions/{prd.pk}/"))
    panel = page_of(signed_in(alice).get(f"/runs/{finished.run_id}/panel/?node=check"))
    assert f'<a data-fork-edit href="{url(finished, "check")}">Re-run from here with an edit…</a></form>' in panel


def test_where_plans_need_approval_the_fork_waits_and_its_planning_page_shows_the_diff(
    alice, project, finished, inline_executor
):
    project.require_plan_approval = True
    project.save(update_fields=["require_plan_approval"])
    client = signed_in(alice)

    answer = client.post(url(finished), {"node_id": "check", "prompt": "Check the export.\nThen say so."})

    fork = WorkGraphRun.objects.exclude(pk=finished.pk).get()
    assert fork.status == "awaiting_approval"
    assert answer["Location"] == f"/runs/{fork.run_id}/planning/"
    page = page_of(client.get(answer["Location"]))
    assert 'id="fork-edit" data-node-id="check" data-field="prompt"' in page
    section = page[page.index('id="fork-edit"'):].split("</section>")[0]
    assert [html.unescape(t) for t in re.findall(r'<td class="text old">([^<]*)</td>', section) if t] == [
        "Check <b>it</b>."]
    assert [t for t in re.findall(r'<td class="text new">([^<]*)</td>', section) if t] == [
        "Check the export.", "Then say so."]
    assert 'data-action="approve"' in page

    client.post(f"/runs/{fork.run_id}/approve/", {"comment": ""})
    inline_executor.drain()
    fork.refresh_from_db()
    assert fork.status in ("succeeded", "failed") and fork.review_decision == "approved"


def test_the_compare_page_of_the_fork_and_its_source_shows_the_edit(alice, finished):
    client = signed_in(alice)
    client.post(url(finished), {"node_id": "check", "prompt": "Check the export."})
    fork = WorkGraphRun.objects.exclude(pk=finished.pk).get()

    page = page_of(client.get(f"/runs/{finished.run_id}/compare/{fork.run_id}/"))

    section = page[page.index('id="fork-edit"'):].split("</section>")[0]
    assert "This fork edits the prompt of <code>check</code>" in section and "Edited by alice" in section
    assert ('<tr class="changed"><td class="number">1</td><td class="text old">Check &lt;b&gt;it&lt;/b&gt;.</td>'
            '<td class="number">1</td><td class="text new">Check the export.</td></tr>') in section
    other = planned_run(finished.task, {"nodes": [node("check")], "edges": []}, status="succeeded")
    assert 'id="fork-edit"' not in page_of(client.get(f"/runs/{other.run_id}/compare/{fork.run_id}/"))


def test_a_reviewer_who_may_not_start_runs_is_told_approving_the_edit_starts_the_fork(
    alice, bob, project, finished, inline_executor
):
    project.require_plan_approval = True
    project.save(update_fields=["require_plan_approval"])
    signed_in(alice).post(url(finished), {"node_id": "check", "prompt": "Check twice."})
    fork = WorkGraphRun.objects.exclude(pk=finished.pk).get()
    reviewer = signed_in(bob)

    assert 'data-action="approve">Approve and run</button>' in page_of(reviewer.get(f"/runs/{fork.run_id}/planning/"))
    answer = reviewer.post(f"/runs/{fork.run_id}/approve/", {"comment": "ok"}, follow=True)

    assert "Plan approved; the run has started." in page_of(answer)
    inline_executor.drain()
    assert WorkGraphRun.objects.get(pk=fork.pk).is_finished()
