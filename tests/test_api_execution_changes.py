"""The API's execution detail carries what the attempt changed: its commits, each file with its added and
removed lines, their totals, and the diff up to the page limit — what the node page shows."""

from __future__ import annotations

import pytest
from django.test import Client

from graphs.engine import run_start
from graphs.models import AttemptChange
from tests.repos import writes
from tests.run_builders import edges_for, latest, node, planned_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(alice) -> Client:
    client = Client()
    client.force_login(alice)
    return client


@pytest.fixture
def landed(repo_task, scripted_runner, inline_executor):
    """A run of one node on a repository, which rewrites a one-line file as three lines and adds a binary file."""

    def work(call):
        writes("blob.bin", "\0\1\2")(call)
        return writes("src/app.py", "one\ntwo\nthree\n")(call)

    scripted_runner.replies[("node", "first")] = work
    nodes = [node("first")]
    run = planned_run(repo_task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    inline_executor.drain()
    return run


def test_an_attempts_files_lines_and_diff_are_in_its_detail(api, landed):
    execution = latest(landed)["first"]
    change = AttemptChange.objects.get(node_exec=execution)

    changes = api.get(f"/api/executions/{execution.pk}").json()["changes"]

    assert changes["files"] == [{"path": "blob.bin", "added": 0, "removed": 0, "binary": True},
                                {"path": "src/app.py", "added": 3, "removed": 1, "binary": False}]
    assert (changes["lines_added"], changes["lines_removed"]) == (3, 1)
    assert changes["diff"] == change.diff and "+three" in changes["diff"]
    assert (changes["diff_cut"], changes["diff_bytes"]) == (False, change.diff_bytes)
    assert (changes["base_commit"], changes["result_commit"], changes["merge_commit"]) == (
        change.base_commit, change.result_commit, change.merge_commit)
    assert api.get(changes["patch_url"]).content.decode() == change.diff


def test_a_diff_past_the_page_limit_is_cut_and_says_so(api, landed, settings):
    settings.WORKGRAPH_DIFF_PAGE_BYTES = 1024
    execution = latest(landed)["first"]
    big = "\n".join(f"+line {number}" for number in range(2000))
    AttemptChange.objects.filter(node_exec=execution).update(diff=big, diff_bytes=len(big))

    changes = api.get(f"/api/executions/{execution.pk}").json()["changes"]

    assert changes["diff"] == big[:1024]
    assert (changes["diff_cut"], changes["diff_bytes"]) == (True, len(big))


def test_an_attempt_without_a_change_record_has_null_changes(api, task, scripted_runner, inline_executor):
    nodes = [node("first")]
    run = planned_run(task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    inline_executor.drain()

    detail = api.get(f"/api/executions/{latest(run)['first'].pk}").json()

    assert detail["changes"] is None
