"""The browser's status facts come from the server: one JSON generated from the models, on every page,
and no script keeps a list of statuses of its own."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.test import Client

from graphs.models import WorkGraphRun, WorkNodeExecution
from graphs.runs.vocabulary import status_vocabulary

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(path for path in (ROOT / "static" / "js").rglob("*.js") if "vendor" not in path.parts)
STATUSES = {choice.value for choice in [*WorkGraphRun.Status, *WorkNodeExecution.Status]}
# An array literal (a list, the start of a Set) and the quoted strings in it.
ARRAY = re.compile(r"\[([^\[\]]*)\]")
QUOTED = re.compile(r"""["'`]([a-z_]+)["'`]""")


def test_the_vocabulary_says_what_the_models_define():
    vocabulary = status_vocabulary()
    assert set(vocabulary["run"]["finished"]) == WorkGraphRun.FINISHED_STATUSES
    assert set(vocabulary["attempt"]["finished"]) == WorkNodeExecution.FINISHED_STATUSES
    assert set(vocabulary["attempt"]["active"]) == WorkNodeExecution.ACTIVE_STATUSES
    assert vocabulary["run"]["all"] == list(WorkGraphRun.Status.values)
    assert vocabulary["run"]["words"]["awaiting_approval"] == "awaiting approval"
    assert vocabulary["attempt"]["words"]["not_started"] == "not started"  # a graph's node with no attempt
    assert set(vocabulary["attempt"]["focus"]) <= set(WorkNodeExecution.Status.values)


def test_the_front_end_tests_read_the_vocabulary_the_server_generates():
    fixture = json.loads((ROOT / "tests" / "fixtures" / "status" / "vocabulary.json").read_text())
    assert fixture == status_vocabulary(), "regenerate tests/fixtures/status/vocabulary.json from status_vocabulary()"


@pytest.mark.django_db
def test_every_page_carries_the_vocabulary_for_its_scripts(alice, task):
    client = Client()
    client.force_login(alice)
    for url in ("/", f"/tasks/{task.pk}/", "/runs/"):
        page = client.get(url).content.decode()
        found = re.search(r'<script id="status-vocabulary" type="application/json">(.*?)</script>', page, re.S)
        assert found, url
        assert json.loads(found.group(1)) == status_vocabulary()


@pytest.mark.parametrize("script", SCRIPTS, ids=[str(path.relative_to(ROOT)) for path in SCRIPTS])
def test_no_script_lists_statuses_by_hand(script):
    listed = [
        sorted(set(QUOTED.findall(array)) & STATUSES) for array in ARRAY.findall(script.read_text())
    ]
    assert not [statuses for statuses in listed if len(statuses) >= 2], (
        f"{script.name} lists statuses by hand; read them from static/js/status-vocabulary.js"
    )


def test_the_check_finds_a_hand_kept_list():
    text = 'const FINISHED = new Set(["planning_failed", "succeeded", "failed"]);'
    assert [set(QUOTED.findall(array)) & STATUSES for array in ARRAY.findall(text)] == [
        {"planning_failed", "succeeded", "failed"}
    ]
