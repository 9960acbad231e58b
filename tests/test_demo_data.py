"""`load_demo` can run on every start without duplicating anything."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.test import Client

from graphs.models import Project, ProjectMembership, Skill, Task
from graphs.tokens import token_create

pytestmark = pytest.mark.django_db


def test_loading_the_demo_twice_leaves_one_of_everything(capsys, settings):
    settings.DEBUG = True
    call_command("load_demo")
    call_command("load_demo")
    assert Project.objects.filter(slug="demo").count() == 1
    assert Task.objects.filter(project__slug="demo").count() == 2
    assert ProjectMembership.objects.get(project__slug="demo").role == "lead"
    assert "user: demo  password: workgraph-demo" in capsys.readouterr().out
    skills = {skill.skill_id: skill for skill in Skill.objects.all()}
    assert set(skills) == {"csv-exports", "sourced-research"}
    assert all(skill.status == "active" and skill.revisions.count() == 1 for skill in skills.values())
    assert skills["sourced-research"].team_template is not None and skills["sourced-research"].template_warnings == []


def test_the_demo_never_writes_over_a_skill_an_admin_edited(settings):
    call_command("load_demo")
    Skill.objects.filter(skill_id="csv-exports").update(body="edited")
    call_command("load_demo")
    assert Skill.objects.get(skill_id="csv-exports").body == "edited"


def test_the_printed_login_works():
    call_command("load_demo", password="another-pass-123")
    assert signs_in("demo", "another-pass-123")


def signs_in(username: str, password: str) -> bool:
    return Client().post("/login/", {"username": username, "password": password}).status_code == 302


def printed_password(output: str) -> str:
    return re.search(r"password: (\S+)", output).group(1)


def test_with_debug_on_the_demo_login_is_the_documented_one(capsys, settings):
    settings.DEBUG = True
    call_command("load_demo")
    assert "user: demo  password: workgraph-demo" in capsys.readouterr().out
    assert signs_in("demo", "workgraph-demo")


def test_with_debug_off_the_demo_login_gets_a_random_password_printed_once(capsys, settings):
    settings.DEBUG = False
    call_command("load_demo")
    password = printed_password(capsys.readouterr().out)
    assert password != "workgraph-demo" and len(password) >= 16
    assert signs_in("demo", password) and not signs_in("demo", "workgraph-demo")
    call_command("load_demo")
    again = capsys.readouterr().out
    assert password not in again and "unchanged" in again
    assert signs_in("demo", password)


def test_another_machine_gets_another_random_password(capsys, settings, django_user_model):
    settings.DEBUG = False
    call_command("load_demo")
    first = printed_password(capsys.readouterr().out)
    django_user_model.objects.filter(username="demo").delete()
    call_command("load_demo")
    assert printed_password(capsys.readouterr().out) != first


def test_loading_the_demo_again_keeps_the_demo_users_tokens(settings, django_user_model):
    settings.DEBUG = True
    call_command("load_demo")
    token, _ = token_create(user=django_user_model.objects.get(username="demo"), name="cli")
    call_command("load_demo")
    token.refresh_from_db()
    assert token.revoked_at is None


def test_the_demo_opens_on_a_finished_pipeline_run_and_a_task_waiting_to_run():
    call_command("load_demo")
    call_command("load_demo")
    finished = Task.objects.get(title="CSV export for the reports page")
    assert finished.status == "succeeded"
    assert finished.runs.count() == 1
    assert Task.objects.get(title="Audit log for account changes").runs.count() == 0
