"""`load_demo` can run on every start without duplicating anything."""

from __future__ import annotations

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from graphs.models import Project, ProjectMembership, Task

pytestmark = pytest.mark.django_db


def test_loading_the_demo_twice_leaves_one_of_everything(capsys):
    call_command("load_demo")
    call_command("load_demo")
    assert Project.objects.filter(slug="demo").count() == 1
    assert Task.objects.filter(project__slug="demo").count() == 2
    assert ProjectMembership.objects.get(project__slug="demo").role == "lead"
    assert "user: demo  password: workgraph-demo" in capsys.readouterr().out


def test_the_printed_login_works():
    call_command("load_demo", password="another-pass-123")
    assert authenticate(username="demo", password="another-pass-123") is not None


def test_the_demo_opens_on_a_finished_pipeline_run_and_a_task_waiting_to_run():
    call_command("load_demo")
    call_command("load_demo")
    finished = Task.objects.get(title="CSV export for the reports page")
    assert finished.status == "succeeded"
    assert finished.runs.count() == 1
    assert Task.objects.get(title="Audit log for account changes").runs.count() == 0
