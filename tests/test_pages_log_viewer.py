"""What the node page gives its raw log viewer: each line with its kind for the filter, Follow ticked
while the log is still written (and not once it is closed), the JSONL download beside it, and the words
for each state of the live log.
``tests/js/log-filter.test.mjs`` holds the viewer's rules; the browser tests drive it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

from graphs.logs.store import log_append, log_file_close
from tests import factories
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def client(alice) -> Client:
    client = Client()
    client.force_login(alice)
    return client


@pytest.fixture
def attempt(task):
    run = planned_run(task, {"nodes": [node("a")], "edges": []}, status="running")
    return factories.ExecutionFactory(run=run, node_id="a", status="running")


def test_each_line_carries_its_kind_escaped(client, attempt):
    log_append(execution=attempt, event="node_start", text="begin")
    log_append(execution=attempt, event='x"><script>alert(1)</script>', text="odd kind")
    log_file_close(execution=attempt)
    html = client.get(f"/executions/{attempt.pk}/").content.decode()
    assert 'data-event="node_start"' in html
    assert "<script>alert(1)" not in html
    assert 'data-event="x&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"' in html


def test_follow_is_ticked_while_the_log_is_written(client, attempt):
    log_append(execution=attempt, event="node_start", text="begin")
    html = client.get(f"/executions/{attempt.pk}/").content.decode()
    assert '<input type="checkbox" id="log-follow" checked>' in html


def test_a_closed_log_is_read_from_its_start_with_its_download_beside_it(client, attempt):
    log_append(execution=attempt, event="node_start", text="begin")
    log_file_close(execution=attempt)
    html = client.get(f"/executions/{attempt.pk}/").content.decode()
    assert '<input type="checkbox" id="log-follow">' in html
    assert f'href="/executions/{attempt.pk}/log.jsonl">Download JSONL</a>' in html


def test_the_words_for_the_logs_state_are_the_servers_and_the_script_only_picks_one(client, attempt):
    html = client.get(f"/executions/{attempt.pk}/").content.decode()
    words = re.search(r'<template id="log-state-words">(.*?)</template>', html, re.S)
    assert words, "the page carries the words for each state of its log"
    assert dict(re.findall(r'<span data-state="(\w+)">([^<]+)</span>', words.group(1))) == {
        "connecting": "connecting", "open": "open", "reconnecting": "reconnecting", "refused": "refused",
        "closed": "closed", "complete": "log complete"}
    script = (ROOT / "static" / "js" / "execution-page.js").read_text()
    assert "log complete" not in script and "textContent =" not in script
