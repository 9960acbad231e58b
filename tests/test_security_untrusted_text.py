"""Untrusted text (task fields, agent prompts and outputs, log lines) renders inert on every page,
and log file paths cannot escape the log directory whatever comes in."""

from __future__ import annotations

import pytest
from django.test import Client

from graphs.engine import run_start
from tests.run_builders import node, planned_run

pytestmark = pytest.mark.django_db

XSS = [
    "<script>alert('x')</script>",
    '<img src=x onerror="alert(1)">',
    '<a href="javascript:alert(1)">click</a>',
    "<svg/onload=alert(1)>",
    "</textarea><script>alert(2)</script>",
    '"><iframe src="https://evil.example/"></iframe>',
    "![tracker](https://evil.example/pixel.png)",
]
PAYLOAD = "\n".join(XSS)


def test_payloads_everywhere_render_as_text_on_every_page(alice, task, scripted_runner, inline_executor):
    task.title = XSS[0]
    task.goal_text = PAYLOAD
    task.deliverables = XSS
    task.acceptance_criteria = XSS
    task.save()
    scripted_runner.replies[("node", XSS[1])] = PAYLOAD
    spec = node(XSS[1], task_prompt=PAYLOAD, promotes_to_artifact={"artifact_type": "doc"})
    run = planned_run(task, {"nodes": [spec], "edges": []})
    run.executions.filter(node_id="__planning__").update(
        input_payload={"prompt": PAYLOAD}, output_payload={"raw_response": PAYLOAD, "new_node_ids": [XSS[1]]}
    )
    run_start(run=run)
    inline_executor.drain()
    execution = run.executions.get(node_id=XSS[1])
    client = Client()
    client.force_login(alice)
    pages = ["/", "/tasks/", f"/tasks/{task.pk}/", f"/runs/{run.run_id}/", f"/runs/{run.run_id}/planning/",
             f"/executions/{execution.pk}/"]
    for url in pages:
        html = client.get(url).content.decode()
        for payload in XSS:
            if "<" in payload:
                assert payload not in html, (url, payload)
        assert '<img src="https://evil.example' not in html and "<img src=x" not in html, url
        assert "<iframe" not in html and "<svg/onload" not in html, url
    assert "&lt;script&gt;" in client.get(f"/executions/{execution.pk}/").content.decode()
