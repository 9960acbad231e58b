"""What a run and an attempt changed, on the pages: the run's files with the nodes that changed them,
its diff drawn from escaped JSON, the patches to download, the branch and the commands that bring it
into a checkout; and a plain word where a project's folder is not a repository."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from graphs.engine import run_start
from graphs.models import AttemptChange, RunWorkspace
from tests.clients import signed_in
from tests.repos import writes, writes_then_gives_up
from tests.run_builders import edges_for, latest, node, planned_run

pytestmark = pytest.mark.django_db

HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture
def landed(repo_task, scripted_runner, inline_executor):
    """A run of two nodes on a repository: both change app code, the second also a file named with markup."""

    def second(call):
        writes("src/app.py", "print('hello')\nprint('again')\n")(call)
        return writes(f"notes/{HOSTILE}.txt", f"{HOSTILE}\n")(call)

    scripted_runner.replies[("node", "first")] = writes("src/app.py", "print('hi')\n")
    scripted_runner.replies[("node", "second")] = second
    nodes = [node("first"), node("second", "first")]
    run = planned_run(repo_task, {"nodes": nodes, "edges": edges_for(nodes)})
    run_start(run=run)
    inline_executor.drain()
    return run


def test_the_run_page_lists_each_changed_file_with_the_nodes_that_changed_it(landed, alice):
    page = signed_in(alice).get(f"/runs/{landed.run_id}/").content.decode()

    rows = re.findall(r"<tr><td><code>(.*?)</code></td>.*?<td>(.*?)</td></tr>", page, re.S)
    assert [(unescape(path), nodes) for path, nodes in rows] == [
        (f"notes/{HOSTILE}.txt", "second"), ("src/app.py", "first, second")]
    assert HOSTILE not in page  # every file name is escaped
    diff = json.loads(unescape(re.search(r'<script id="run-diff" type="application/json">(.*?)</script>', page,
                                          re.S).group(1)))
    assert "+print('again')" in diff and "<" not in re.search(
        r'<script id="run-diff" type="application/json">(.*?)</script>', page, re.S).group(1)
    assert f"Changes on <code>{RunWorkspace.objects.get(run=landed).branch}</code>" in page


def test_the_task_page_names_the_branch_and_the_commands_that_bring_it_into_a_checkout(landed, alice, repo):
    page = signed_in(alice).get(f"/tasks/{landed.task_id}/").content.decode()

    branch = RunWorkspace.objects.get(run=landed).branch
    assert f"git fetch {repo} {branch}\ngit merge FETCH_HEAD" in page


def test_the_patches_download_whole_and_as_text_never_as_a_page(landed, alice):
    client = signed_in(alice)
    change = AttemptChange.objects.get(node_exec=latest(landed)["second"])

    run_patch = client.get(f"/runs/{landed.run_id}/changes.patch")
    attempt_patch = client.get(f"/executions/{change.node_exec_id}/changes.patch")

    assert run_patch["Content-Type"].startswith("text/x-diff") and "attachment" in run_patch["Content-Disposition"]
    assert run_patch.content.decode() == RunWorkspace.objects.get(run=landed).diff
    assert attempt_patch.content.decode() == change.diff and HOSTILE in attempt_patch.content.decode()


def test_a_diff_past_the_page_cap_is_cut_on_the_page_and_whole_in_the_download(landed, alice, settings):
    settings.WORKGRAPH_DIFF_PAGE_BYTES = 1024
    workspace = RunWorkspace.objects.get(run=landed)
    client = signed_in(alice)
    big = "\n".join(f"line {number}" for number in range(2000))
    RunWorkspace.objects.filter(pk=workspace.pk).update(diff=big, diff_bytes=len(big))

    page = client.get(f"/runs/{landed.run_id}/").content.decode()

    assert "The page shows the first part of a" in page
    assert client.get(f"/runs/{landed.run_id}/changes.patch").content.decode() == big


def test_a_run_of_a_folder_that_is_not_a_repository_says_its_changes_are_not_recorded(task, alice, scripted_runner,
                                                                                      inline_executor):
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    client = signed_in(alice)

    page = client.get(f"/runs/{run.run_id}/").content.decode()

    assert "changes are neither isolated nor recorded" in page
    assert client.get(f"/runs/{run.run_id}/changes.patch").status_code == 404


def test_the_node_page_shows_what_the_attempt_changed_and_where_it_landed(landed, alice):
    row = latest(landed)["second"]
    change = AttemptChange.objects.get(node_exec=row)

    page = signed_in(alice).get(f"/executions/{row.pk}/").content.decode()

    branch = RunWorkspace.objects.get(run=landed).branch
    assert f"Landed on <code>{branch}</code> as {change.merge_commit[:12]}" in page
    assert '<a href="#changes">Changes <span class="tag">2</span></a>' in page
    assert HOSTILE not in page
    shown = re.search(r'<script id="attempt-diff" type="application/json">(.*?)</script>', page, re.S).group(1)
    assert "<" not in shown and "+print('again')" in json.loads(unescape(shown))


def test_the_node_page_of_a_failed_attempt_names_the_ref_its_change_is_kept_on(repo_task, alice, scripted_runner,
                                                                               inline_executor):
    scripted_runner.replies[("node", "build")] = writes_then_gives_up("half.txt", "half\n")
    run = planned_run(repo_task, {"nodes": [node("build")], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    row = latest(run)["build"]

    page = signed_in(alice).get(f"/executions/{row.pk}/").content.decode()

    assert f"Kept on <code>refs/workgraph/attempts/{row.pk}</code>" in page


def test_the_node_page_of_a_folder_that_is_not_a_repository_says_so(task, alice, scripted_runner, inline_executor):
    run = planned_run(task, {"nodes": [node("a")], "edges": []})
    run_start(run=run)
    inline_executor.drain()

    page = signed_in(alice).get(f"/executions/{latest(run)['a'].pk}/").content.decode()

    assert "its change is neither isolated nor recorded" in page
