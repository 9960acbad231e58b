"""Where a project delivers: every field checked and every problem named at once — through the API, the project's
Delivery page and the Django admin alike — nothing saved until all are right; a token's variable named, never its
value, and only a variable the operator allows; the change on the audit log; members read it, leads change it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from console.forms.delivery import DeliveryForm
from graphs.admin import ProjectDeliveryForm
from graphs.models import AuditEntry, ProjectDelivery
from tests.clients import signed_in
from tests.deliveries import SECRET_ENV, TOKEN, TOKEN_ENV

pytestmark = pytest.mark.django_db


def patch(user, project, body: dict):
    return signed_in(user).patch(f"/api/projects/{project.slug}/delivery", data=json.dumps(body),
                                 content_type="application/json")


def problems(answer) -> dict[str, str]:
    assert answer.status_code == 400, answer.content
    assert answer.json()["code"] == "invalid_delivery"
    return {item["field"]: item["message"] for item in answer.json()["fields"]}


def test_every_problem_is_named_at_once_and_nothing_is_saved(project, alice, forge_token):
    answer = patch(alice, project, {
        "deliver": "sometimes", "remote_url": "git@github.com:acme/app.git", "forge": "bitbucket",
        "forge_api_url": "https://api.github.com", "forge_repo": "acme", "forge_token_env": "GITHUB_TOKEN",
        "forge_webhook_secret_env": "not a name",
    })

    found = problems(answer)
    assert set(found) == {"deliver", "remote_url", "forge", "forge_token_env", "forge_webhook_secret_env"}
    assert found["remote_url"] == "Write an SSH remote as a URL: ssh://git@host/owner/name.git."
    assert "GITHUB_TOKEN is not among the variables this console lets projects name (WORKGRAPH_FORGE_SECRET_ENV:" \
           f" {TOKEN_ENV}, {SECRET_ENV})" in found["forge_token_env"]
    assert not ProjectDelivery.objects.exists() and not AuditEntry.objects.filter(action="delivery.edited").exists()


def test_the_forge_fields_are_checked_against_the_forge_chosen(project, alice, forge_token):
    found = problems(patch(alice, project, {
        "deliver": "pull_request", "remote_url": "https://gitlab.example/acme/app.git", "forge": "gitlab",
        "forge_api_url": "https://gitlab.example", "forge_repo": "app.git"}))

    assert found == {
        "forge_api_url": "A gitlab API's address ends in /api/v4, like https://gitlab.example.com/api/v4.",
        "forge_repo": "The project's path on GitLab, like group/subgroup/name.",
        "forge_token_env": "Name the variable holding the forge's token: the forge's API needs one.",
    }
    assert problems(patch(alice, project, {"deliver": "pull_request", "remote_url": "https://github.com/a/b.git"})) == {
        "forge": "A pull request is opened on a forge: choose github, gitlab or gitea."}


@pytest.mark.parametrize(("url", "problem"), [
    ("https://me:hunter22@github.com/acme/app.git", "The URL holds a password: it is stored and shown."),
    ("http://git.example.com/acme/app.git", "Plain http:// sends the token unencrypted"),
    ("ftp://git.example.com/app.git", "An https://, ssh:// or file:// URL"),
    ("/no/such/folder.git", "No folder /no/such/folder.git on the console's machine."),
    ("relative/app.git", "An https://, ssh:// or file:// URL"),
])
def test_a_remote_that_would_leak_the_token_or_go_nowhere_is_refused(project, alice, url, problem):
    assert problem in problems(patch(alice, project, {"deliver": "push", "remote_url": url}))["remote_url"]


def test_a_remote_on_this_machine_may_be_plain_http_a_path_or_file_url_but_not_the_projects_own_folder(
        project, alice, tmp_path):
    own = problems(patch(alice, project, {"deliver": "push", "remote_url": project.target_folder}))

    for url in ("http://127.0.0.1:3000/acme/app.git", str(tmp_path), f"file://{tmp_path}"):
        assert patch(alice, project, {"deliver": "push", "remote_url": url}).status_code == 200, url
    assert own == {"remote_url": "That is the project's own folder: name the repository its runs are delivered to."}


def test_a_variable_agents_or_commands_get_is_no_token(project, alice, forge_token, settings):
    settings.WORKGRAPH_AGENT_ENV = [*settings.WORKGRAPH_AGENT_ENV, TOKEN_ENV]

    found = problems(patch(alice, project, {"forge_token_env": TOKEN_ENV}))

    assert found == {"forge_token_env": f"{TOKEN_ENV} is passed to agents or commands (WORKGRAPH_AGENT_ENV,"
                                        " WORKGRAPH_COMMAND_ENV): not a secret."}


def test_saved_settings_keep_variable_names_are_on_the_audit_log_and_say_what_is_unset(
        project, alice, forge_token, monkeypatch):
    monkeypatch.delenv(SECRET_ENV)
    answer = patch(alice, project, {"deliver": "pull_request", "remote_url": "https://github.com/acme/app.git",
                                    "forge": "github", "forge_repo": "acme/app", "forge_token_env": TOKEN_ENV,
                                    "forge_webhook_secret_env": SECRET_ENV})

    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["forge_api_url"] == "https://api.github.com"
    assert body["notes"] == [f"{SECRET_ENV} (forge_webhook_secret_env) is not set in this process's environment:"
                             " delivery fails until it is set where the console's workers run."]
    entry = AuditEntry.objects.get(action="delivery.edited")
    assert (entry.actor, entry.project, entry.before["deliver"], entry.after["forge_token_env"]) == (
        alice, project, "off", TOKEN_ENV)
    assert TOKEN not in json.dumps([entry.before, entry.after, entry.summary, body])
    assert patch(alice, project, {"forge_repo": "acme/app"}).status_code == 200
    assert AuditEntry.objects.filter(action="delivery.edited").count() == 1, "a change that changes nothing is none"


def test_members_read_where_the_project_delivers_and_only_leads_change_it(project, alice, bob, charlie):
    patch(alice, project, {"deliver": "push", "remote_url": "https://github.com/acme/app.git"})

    read = signed_in(bob).get(f"/api/projects/{project.slug}/delivery")

    assert (read.status_code, read.json()["remote_url"]) == (200, "https://github.com/acme/app.git")
    assert patch(bob, project, {"deliver": "off"}).status_code == 403
    assert signed_in(charlie).get(f"/api/projects/{project.slug}/delivery").status_code == 404


def test_the_delivery_page_marks_each_problem_on_its_field_and_keeps_what_was_typed(project, alice, bob):
    page = signed_in(alice).post(f"/projects/{project.slug}/delivery/", {
        "deliver": "pull_request", "remote_url": "https://me:pw@github.com/acme/app.git", "forge": "",
        "forge_api_url": "", "forge_repo": "", "forge_token_env": "", "forge_webhook_secret_env": ""})
    text = page.content.decode()

    assert page.status_code == 400
    assert 'id="error-remote_url"' in text and 'id="error-forge"' in text
    assert 'value="https://me:pw@github.com/acme/app.git"' in text
    assert 'id="delivery-form"' not in signed_in(bob).get(f"/projects/{project.slug}/delivery/").content.decode()


def test_the_delivery_page_saves_and_the_project_page_links_to_it(project, alice, tmp_path):
    saved = signed_in(alice).post(f"/projects/{project.slug}/delivery/", {
        "deliver": "push", "remote_url": str(tmp_path), "forge": "", "forge_api_url": "", "forge_repo": "",
        "forge_token_env": "", "forge_webhook_secret_env": ""})

    assert saved.status_code == 302
    assert ProjectDelivery.objects.get(project=project).remote_url == str(tmp_path)
    assert f'href="/projects/{project.slug}/delivery/"' in signed_in(alice).get(
        f"/projects/{project.slug}/").content.decode()


def test_the_admin_checks_a_projects_delivery_as_the_api_does_and_records_the_change(project, tmp_path,
                                                                                      django_user_model):
    admin = signed_in(django_user_model.objects.create_superuser("root", "root@example.com", "x" * 20))
    url = f"/admin/graphs/project/{project.pk}/change/"
    form = {"slug": project.slug, "name": project.name, "target_folder": project.target_folder, "base_ref": "",
            "agent": "", "memberships-TOTAL_FORMS": "0", "memberships-INITIAL_FORMS": "0",
            "delivery-TOTAL_FORMS": "1", "delivery-INITIAL_FORMS": "0", "delivery-0-project": str(project.pk),
            "delivery-0-deliver": "push", "delivery-0-remote_url": "https://me:pw@git.example/acme/app.git",
            **{f"delivery-0-{name}": "" for name in ("forge", "forge_api_url", "forge_repo", "forge_token_env",
                                                     "forge_webhook_secret_env")}}

    refused = admin.post(url, form)
    saved = admin.post(url, {**form, "delivery-0-remote_url": str(tmp_path)})

    assert refused.status_code == 200 and "The URL holds a password" in refused.content.decode()
    assert saved.status_code == 302 and ProjectDelivery.objects.get(project=project).remote_url == str(tmp_path)
    entry = AuditEntry.objects.get(action="delivery.edited")
    assert entry.summary == (f"Changed deliver, remote_url of where the project {project.slug} delivers in the"
                             " Django admin")
    assert set(DeliveryForm().fields) == set(ProjectDeliveryForm().fields)


def test_the_console_refuses_to_start_when_its_own_secrets_may_be_named_as_tokens():
    env = {**os.environ, "SECRET_KEY": "x" * 50, "WORKGRAPH_FORGE_SECRET_ENV": "GITHUB_TOKEN,SECRET_KEY",
           "DJANGO_SETTINGS_MODULE": "console.settings"}

    done = subprocess.run([sys.executable, "-c", "import django; django.setup()"], env=env, capture_output=True,
                          text=True, timeout=60)

    assert done.returncode != 0
    assert "WORKGRAPH_FORGE_SECRET_ENV may not name the console's own settings or variables agents and commands" \
           " get: SECRET_KEY" in done.stderr


def test_a_project_without_delivery_reads_as_delivering_nothing(project, alice):
    body = signed_in(alice).get(f"/api/projects/{project.slug}/delivery").json()

    assert (body["deliver"], body["remote_url"], body["notes"]) == ("off", "", [])
    assert not ProjectDelivery.objects.exists()
