"""Where a project delivers its runs: every field checked, every problem named at once, nothing saved unless
all are right — as a project's own fields are (graphs.projects.edits).

A remote is an ``https://`` or ``ssh://`` URL, a ``file://`` URL or an absolute path; plain ``http://``
only to this machine (a forge on loopback), where no token crosses a network. A URL may name a user but
never a password: the URL is stored and shown, the token lives in the variable ``forge_token_env`` names.
Saving leaves notes beside the problems: a variable named but not set in this process, what a forge
without a token can do.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from graphs.audit import audit_changes, audit_record
from graphs.delivery.credentials import secret_name_problem
from graphs.models import AuditEntry, Project, ProjectDelivery

FIELDS = ("deliver", "remote_url", "forge", "forge_api_url", "forge_repo", "forge_token_env",
          "forge_webhook_secret_env")
MAX_CHARS = {"deliver": 16, "remote_url": 1000, "forge": 16, "forge_api_url": 1000, "forge_repo": 300,
             "forge_token_env": 100, "forge_webhook_secret_env": 100}
GITHUB_API_URL = "https://api.github.com"
# Each forge's API, as its documentation names the base every path hangs from.
_API_SUFFIX = {"gitlab": "/api/v4", "gitea": "/api/v1"}
_REPO_PART = r"[A-Za-z0-9_.][A-Za-z0-9_.-]*"
_OWNER_NAME = re.compile(rf"^{_REPO_PART}/{_REPO_PART}$")
_GITLAB_PATH = re.compile(rf"^{_REPO_PART}(?:/{_REPO_PART})+$")
_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:")


class DeliverySettingsInvalid(ValueError):
    """The settings given cannot be saved: ``problems`` maps each field to what is wrong with it."""

    def __init__(self, problems: dict[str, str]) -> None:
        super().__init__("; ".join(f"{name}: {message}" for name, message in problems.items()))
        self.problems = problems


@dataclass(frozen=True)
class DeliverySaved:
    delivery: ProjectDelivery
    notes: list[str]


def project_delivery_of(project: Project) -> ProjectDelivery:
    """The project's delivery settings: its saved row, or the defaults (delivering nothing), unsaved."""
    return ProjectDelivery.objects.filter(project=project).first() or ProjectDelivery(project=project)


def project_delivery_update(*, project: Project, changes: dict[str, Any], by: AbstractBaseUser | None
                            ) -> DeliverySaved:
    """Apply ``changes`` (fields of ``FIELDS``) to the project's delivery settings at once, or raise
    ``DeliverySettingsInvalid`` naming every problem and change nothing. The audit log records ``by``
    changing the fields that changed, before and after (variable names only: the settings hold no value)."""
    current = project_delivery_of(project)
    before = {name: getattr(current, name) for name in FIELDS}
    problems = {name: "Not a delivery setting." for name in changes if name not in FIELDS}
    values = {**before, **{name: value for name, value in changes.items() if name in FIELDS}}
    problems.update(delivery_settings_problems(values, project=project))
    if problems:
        raise DeliverySettingsInvalid(problems)
    changed_before, changed_after = audit_changes(before, values)
    if changed_after:
        for name in FIELDS:
            setattr(current, name, values[name])
        with transaction.atomic():
            current.save()
            audit_record(actor=by, action=AuditEntry.Action.DELIVERY_EDITED, object_type="project",
                         object_id=project.slug, project=project, before=changed_before, after=changed_after,
                         summary=f"Changed {', '.join(changed_after)} of where the project"
                                 f" {project.slug} delivers")
    return DeliverySaved(delivery=current, notes=project_delivery_notes(current))


def project_delivery_notes(delivery: ProjectDelivery) -> list[str]:
    """What the settings mean now, in words, beyond their problems: variables named but not set here."""
    notes = []
    for name, setting in ((delivery.forge_token_env, "forge_token_env"),
                          (delivery.forge_webhook_secret_env, "forge_webhook_secret_env")):
        if name and not os.environ.get(name):
            notes.append(f"{name} ({setting}) is not set in this process's environment: delivery fails until it"
                         " is set where the console's workers run.")
    if delivery.is_on() and not delivery.forge_token_env and urlsplit(delivery.remote_url).scheme == "https":
        notes.append("No token is named: the push to an https:// remote works only if it needs no credentials.")
    return notes


def delivery_settings_problems(values: dict[str, Any], *, project: Project) -> dict[str, str]:
    """Normalize ``values`` in place and return every problem with them, by field."""
    problems: dict[str, str] = {}
    for name in FIELDS:
        value = values.get(name)
        if not isinstance(value, str):
            problems[name] = "Must be text."
        elif "\x00" in value:
            problems[name] = "Must not contain NUL characters."
        elif len(value) > MAX_CHARS[name]:
            problems[name] = f"At most {MAX_CHARS[name]:,} characters (this has {len(value):,})."
        else:
            values[name] = value.strip()
    if "deliver" not in problems and values["deliver"] not in ProjectDelivery.Deliver.values:
        problems["deliver"] = "One of off, push or pull_request."
    if "forge" not in problems and values["forge"] not in ProjectDelivery.Forge.values:
        problems["forge"] = "One of github, gitlab or gitea (Gitea's API serves Forgejo too), or empty to push only."
    # A setting that is wrong is read as asking for the most, so the fields it governs are still checked.
    on = values.get("deliver") != ProjectDelivery.Deliver.OFF
    forge = values["forge"] if "forge" not in problems else None
    if forge == "github" and not values["forge_api_url"] and "forge_api_url" not in problems:
        values["forge_api_url"] = GITHUB_API_URL
    checks = {
        "remote_url": lambda: _remote_problem(values["remote_url"], required=on, project=project),
        "forge": lambda: ("A pull request is opened on a forge: choose github, gitlab or gitea."
                          if values["deliver"] == ProjectDelivery.Deliver.PULL_REQUEST and not forge else None),
        "forge_api_url": lambda: None if forge is None else _api_url_problem(values["forge_api_url"], forge=forge),
        "forge_repo": lambda: None if forge is None else _repo_problem(values["forge_repo"], forge=forge),
        "forge_token_env": lambda: _variable_problem(values["forge_token_env"], setting="forge_token_env",
                                                     required=forge is None or bool(forge)),
        "forge_webhook_secret_env": lambda: _variable_problem(values["forge_webhook_secret_env"],
                                                              setting="forge_webhook_secret_env", required=False),
    }
    for name, check in checks.items():
        problem = None if name in problems else check()
        if problem:
            problems[name] = problem
    return problems


def _remote_problem(url: str, *, required: bool, project: Project) -> str | None:
    if not url:
        return "Name the repository runs are pushed to." if required else None
    if url.startswith("/"):
        return _local_problem(Path(url), project=project)
    if _SCP_LIKE.match(url):
        return "Write an SSH remote as a URL: ssh://git@host/owner/name.git."
    parts = urlsplit(url)
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost"):
            return "A file:// URL names a folder on this machine: file:///path/to/repository.git."
        return _local_problem(Path(parts.path), project=project)
    if parts.scheme not in ("https", "ssh", "http"):
        return "An https://, ssh:// or file:// URL, or the absolute path of a repository on this machine."
    if not parts.hostname:
        return "The URL names no host."
    if parts.password is not None:
        return ("The URL holds a password: it is stored and shown. Put the token in the variable forge_token_env"
                " names instead.")
    if parts.scheme == "http" and not _loopback(parts.hostname):
        return "Plain http:// sends the token unencrypted: use https:// (http:// is for a forge on this machine)."
    return None


def _local_problem(path: Path, *, project: Project) -> str | None:
    if not path.is_absolute():
        return "A path on this machine is absolute: /srv/git/app.git."
    if not path.is_dir():
        return f"No folder {path} on the console's machine."
    if path.resolve() == Path(project.target_folder).resolve():
        return "That is the project's own folder: name the repository its runs are delivered to."
    return None


def _api_url_problem(url: str, *, forge: str) -> str | None:
    if not forge:
        return "Only with a forge: leave it empty to push only." if url else None
    if not url:
        return f"Name the {forge} API's address, like https://{forge}.example.com{_API_SUFFIX.get(forge, '')}."
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        return "An https:// URL of the forge's API."
    if parts.username is not None or parts.password is not None:
        return "The API's URL holds no credentials: the token lives in the variable forge_token_env names."
    if parts.scheme == "http" and not _loopback(parts.hostname):
        return "Plain http:// sends the token unencrypted: use https:// (http:// is for a forge on this machine)."
    suffix = _API_SUFFIX.get(forge)
    if suffix and not parts.path.rstrip("/").endswith(suffix):
        return f"A {forge} API's address ends in {suffix}, like https://{forge}.example.com{suffix}."
    return None


def _repo_problem(repo: str, *, forge: str) -> str | None:
    if not forge:
        return "Only with a forge: leave it empty to push only." if repo else None
    if not repo:
        return "Name the repository on the forge: owner/name" + (", or the project's path." if forge == "gitlab"
                                                                  else ".")
    pattern = _GITLAB_PATH if forge == "gitlab" else _OWNER_NAME
    if not pattern.match(repo) or repo.endswith(".git"):
        return ("The project's path on GitLab, like group/subgroup/name." if forge == "gitlab"
                else "owner/name, like acme/app.")
    return None


def _variable_problem(name: str, *, setting: str, required: bool) -> str | None:
    if not name:
        return "Name the variable holding the forge's token: the forge's API needs one." if required else None
    return secret_name_problem(name, setting=setting)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
