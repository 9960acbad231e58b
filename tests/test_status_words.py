"""Statuses read as words on every page, the same in the templates and in the live scripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.template.loader import render_to_string
from django.test import Client

from tests.run_builders import node, planned_run

CASES = json.loads((Path(__file__).parent / "fixtures" / "status" / "words.json").read_text())


@pytest.mark.parametrize("case", CASES, ids=[case["status"] or "(none)" for case in CASES])
def test_the_status_chip_reads_the_shared_cases(case):
    chip = render_to_string("console/_status.html", {"status": case["status"]})
    assert f">{case['words']}</span>" in chip
    assert f'data-status="{case["status"]}"' in chip


@pytest.mark.django_db
def test_a_run_awaiting_approval_reads_so_on_the_task_page(alice, task):
    planned_run(task, {"nodes": [node("a")], "edges": []}, status="awaiting_approval")
    client = Client()
    client.force_login(alice)
    page = client.get(f"/tasks/{task.pk}/").content.decode()
    assert 'data-status="awaiting_approval">awaiting approval</span>' in page
    assert ">awaiting_approval<" not in page
