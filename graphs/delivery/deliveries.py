"""A run's delivery: asked for when the run succeeds (a listener hears it) or by a lead, then tried by a job.

A try pushes the run's branch (graphs.delivery.push) and, where the project asks for pull requests, finds
the open one for the branch or opens it (graphs.delivery.forge_clients). A try is claimed with a
conditional update, so a job delivered twice tries once. A transient failure (a remote that did not
answer, a forge's 5xx) is tried again after a backoff that doubles, ``WORKGRAPH_DELIVERY_ATTEMPTS`` tries
in all; any other failure, or the last try's, leaves the delivery ``failed`` with its reason in words,
every secret value redacted, for a lead to correct and retry. The run stays succeeded either way.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from graphs.audit import audit_record
from graphs.delivery.credentials import Secret, redacted, secret_read, secrets_present
from graphs.delivery.failures import DeliveryFailed
from graphs.delivery.forge_clients import forge_client
from graphs.delivery.forge_clients.base import PullRequest, PullRequestExists
from graphs.delivery.jobs import delivery_try_submit
from graphs.delivery.pull_requests import pull_request_body, pull_request_title
from graphs.delivery.push import base_branch_of, branch_push
from graphs.errors import WorkGraphError
from graphs.models import AuditEntry, ForgeFeedback, ProjectDelivery, RunDelivery, RunWorkspace, WorkGraphRun
from graphs.notifications import DELIVERY_FAILED, RUN_DELIVERED, RUN_SUCCEEDED, Notification, notify
from graphs.workspaces.worktrees import BRANCH_PREFIX

logger = logging.getLogger(__name__)

State = RunDelivery.State
# The user name git gives with a token over https: what each forge documents for token pushes.
GIT_USERNAMES = {"github": "x-access-token", "gitlab": "oauth2", "gitea": "workgraph", "": "workgraph"}
# A try outlives this many timeouts only when its process died: another job may then claim it.
_STALE_TIMEOUTS = 10


class DeliveryRefused(WorkGraphError):
    """A lead's request for a delivery that cannot be made now; ``code`` names why, the message says it."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def run_delivery_request(*, run: WorkGraphRun, by: AbstractBaseUser, remote_branch: str | None = None
                         ) -> RunDelivery:
    """A lead asks for the run's delivery — its first, or again after it failed or went: the delivery is
    (re)queued and tried now; the audit log records who asked. ``remote_branch`` names another branch of the
    console's to deliver to (a follow-up run updating its source run's pull request). Raises
    ``DeliveryRefused`` for a run that did not succeed or a project that delivers nothing."""
    if run.status != WorkGraphRun.Status.SUCCEEDED:
        raise DeliveryRefused("not_deliverable", f"The run is {run.status}: only a run that succeeded is delivered.")
    project = run.task.project
    project_delivery = ProjectDelivery.objects.filter(project=project).first()
    if project_delivery is None or not project_delivery.is_on():
        raise DeliveryRefused("delivery_off", f"The project {project.slug} delivers nothing: its delivery setting"
                                              " is off. A lead sets where it delivers first.")
    with transaction.atomic():
        existing = RunDelivery.objects.select_for_update(no_key=True).filter(run=run).first()
        before = existing.state if existing is not None else None
        delivery = _queued(run, project_delivery, trigger=RunDelivery.Trigger.REQUESTED, by=by,
                           remote_branch=remote_branch or (existing.remote_branch if existing else None))
        if before != State.PENDING:
            again = "Retried" if before == State.FAILED else "Asked for" if before is None else "Asked again for"
            audit_record(actor=by, action=AuditEntry.Action.DELIVERY_REQUESTED, object_type="run", object_id=run.pk,
                         project=project, before={"state": before}, after={"state": State.PENDING},
                         summary=f"{again} the delivery of a run of \u201c{run.task.title}\u201d to"
                                 f" {redacted(project_delivery.remote_url, [])} ({delivery.remote_branch})")
    delivery_try_submit(run_id=run.pk)
    return delivery


def run_succeeded_deliver(notification: Notification) -> None:
    """Notification listener: a run that succeeded in a project that delivers gets its delivery queued."""
    if notification.event != RUN_SUCCEEDED:
        return
    run = WorkGraphRun.objects.select_related("task__project").filter(pk=notification.run_id).first()
    project_delivery = ProjectDelivery.objects.filter(project_id=run.task.project_id).first() if run else None
    if project_delivery is None or not project_delivery.is_on() or RunDelivery.objects.filter(run=run).exists():
        return
    # A follow-up run started for its pull request's feedback updates that pull request's branch.
    updates = ForgeFeedback.objects.filter(follow_up_run=run).values_list("remote_branch", flat=True).first()
    with transaction.atomic():
        _queued(run, project_delivery, trigger=RunDelivery.Trigger.SUCCEEDED, by=None, remote_branch=updates)
    delivery_try_submit(run_id=run.pk)


def delivery_try_job(run_id: str) -> None:
    """Try the run's delivery once, if it is pending and due and no other try holds it; record how it went."""
    delivery = RunDelivery.objects.filter(pk=run_id, state=State.PENDING).first()
    if delivery is None:
        return  # delivered, failed or gone: a duplicate job has nothing to do
    now = timezone.now()
    if delivery.next_try_at is not None and delivery.next_try_at > now + timedelta(seconds=0.5):
        delivery_try_submit(run_id=run_id, delay=(delivery.next_try_at - now).total_seconds())
        return
    stale = now - timedelta(seconds=_STALE_TIMEOUTS * settings.WORKGRAPH_DELIVERY_TIMEOUT_SECONDS)
    claimed = RunDelivery.objects.filter(
        Q(tried_at__isnull=True) | Q(tried_at__lt=stale), pk=run_id, state=State.PENDING, attempts=delivery.attempts,
    ).update(attempts=delivery.attempts + 1, tried_at=now, next_try_at=None)
    if claimed != 1:
        return
    delivery.attempts += 1
    run = WorkGraphRun.objects.select_related("task__project").get(pk=run_id)
    project_delivery = ProjectDelivery.objects.filter(project=run.task.project).first()
    secrets = secrets_present([project_delivery.forge_token_env, project_delivery.forge_webhook_secret_env]
                              if project_delivery else [])
    try:
        _deliver(delivery, run, project_delivery)
    except DeliveryFailed as failure:
        _failed(delivery, reason=redacted(str(failure), secrets), transient=failure.transient)
    except Exception as error:
        # A bug or an answer the console cannot read must not leave the delivery claimed and silent.
        logger.exception("delivery of run %s failed unexpectedly", run_id)
        _failed(delivery, transient=False, reason=redacted(
            f"An error the console did not expect ({type(error).__name__}); its log has the details.", secrets))


def delivery_console_head(*, run: WorkGraphRun, remote_branch: str) -> str | None:
    """The commit the console last pushed to ``remote_branch`` for the run's project, if it pushed there."""
    return (RunDelivery.objects.filter(run__task__project_id=run.task.project_id, remote_branch=remote_branch,
                                       pushed_at__isnull=False).exclude(head_commit="")
            .order_by("-pushed_at").values_list("head_commit", flat=True).first())


def _queued(run: WorkGraphRun, project_delivery: ProjectDelivery, *, trigger: str, by: AbstractBaseUser | None,
            remote_branch: str | None) -> RunDelivery:
    """The run's delivery made pending from the start (a first or new request; call in a transaction)."""
    workspace = RunWorkspace.objects.filter(run=run).first()
    values: dict[str, Any] = {
        "state": State.PENDING, "mode": project_delivery.deliver, "trigger": trigger, "requested_by": by,
        "remote_branch": remote_branch or (workspace.branch if workspace else f"{BRANCH_PREFIX}{run.run_id.hex[:8]}"),
        "error": "", "attempts": 0, "next_try_at": None, "tried_at": None,
    }
    delivery, _ = RunDelivery.objects.update_or_create(run=run, defaults=values)
    return delivery


def _deliver(delivery: RunDelivery, run: WorkGraphRun, project_delivery: ProjectDelivery | None) -> None:
    """Push the run's branch, then open or find its pull request when the project asks for one."""
    if project_delivery is None or not project_delivery.is_on():
        raise DeliveryFailed("The project delivers nothing now: its delivery setting is off.")
    workspace = RunWorkspace.objects.filter(run=run).first()
    if workspace is None:
        raise DeliveryFailed("The run has no branch to push: the project's folder is not a git repository.")
    if workspace.head_commit == workspace.base_commit:
        raise DeliveryFailed(f"The run changed nothing: {workspace.branch} is still the commit it started from"
                             f" ({workspace.base_commit[:12]}), so there is nothing to deliver.")
    project = run.task.project
    token = (secret_read(project_delivery.forge_token_env, setting="forge_token_env")
             if project_delivery.forge_token_env else None)
    repository = Path(workspace.repository)
    base = base_branch_of(repository, project.base_ref)
    pushed = branch_push(
        repository=repository, remote_url=project_delivery.remote_url, commit=workspace.head_commit,
        branch=delivery.remote_branch, base_branch=base, token=token,
        username=GIT_USERNAMES.get(project_delivery.forge, "workgraph"),
        console_head=delivery_console_head(run=run, remote_branch=delivery.remote_branch),
        timeout=settings.WORKGRAPH_DELIVERY_TIMEOUT_SECONDS)
    now = timezone.now()
    mode = project_delivery.deliver
    RunDelivery.objects.filter(pk=delivery.pk).update(head_commit=pushed.commit, pushed_at=now, mode=mode)
    if mode != ProjectDelivery.Deliver.PULL_REQUEST:
        _settled(delivery, state=State.PUSHED)
        return
    try:
        pull_request = _pull_request(run, project_delivery, token=token, head=delivery.remote_branch, base=base)
    except DeliveryFailed as failure:
        raise DeliveryFailed(f"The branch {delivery.remote_branch} was pushed; its pull request was not opened:"
                             f" {failure}", transient=failure.transient) from failure
    _settled(delivery, state=State.OPENED, pull_request_number=pull_request.number,
             pull_request_url=pull_request.url, opened_at=now)


def _pull_request(run: WorkGraphRun, project_delivery: ProjectDelivery, *, token: Secret | None, head: str,
                  base: str | None) -> PullRequest:
    """The open pull request from ``head`` into ``base``: found, or opened with the run's title and body."""
    if base is None:
        base_ref = run.task.project.base_ref or "HEAD"
        raise DeliveryFailed(f"The project's base ref ({base_ref}) names no branch for a pull request to target:"
                             " name one in the project's base_ref.")
    if token is None:
        raise DeliveryFailed("The forge's API needs a token: forge_token_env names no variable.")
    client = forge_client(forge=project_delivery.forge, api_url=project_delivery.forge_api_url,
                          repo=project_delivery.forge_repo, token=token,
                          timeout=settings.WORKGRAPH_DELIVERY_TIMEOUT_SECONDS)
    found = client.pull_request_find(head=head, base=base)
    if found is not None:
        return found
    try:
        return client.pull_request_open(head=head, base=base, title=pull_request_title(run),
                                        body=pull_request_body(run))
    except PullRequestExists as exists:
        # Opened by someone else between the look and the open, or closed again since: look once more.
        found = client.pull_request_find(head=head, base=base)
        if found is None:
            raise DeliveryFailed(f"The forge says a pull request from {head} exists, yet none is open into {base}:"
                                 f" {exists}") from exists
        return found


def _settled(delivery: RunDelivery, *, state: str, **fields: Any) -> None:
    RunDelivery.objects.filter(pk=delivery.pk).update(state=state, error="", next_try_at=None, tried_at=None, **fields)
    notify(RUN_DELIVERED, run=delivery.pk, state=state, remote_branch=delivery.remote_branch,
           pull_request_url=fields.get("pull_request_url", ""))


def _failed(delivery: RunDelivery, *, reason: str, transient: bool) -> None:
    """Schedule the next try of a transient failure while tries are left; else the delivery failed."""
    tries = settings.WORKGRAPH_DELIVERY_ATTEMPTS
    if transient and delivery.attempts < tries:
        wait = settings.WORKGRAPH_DELIVERY_BACKOFF_SECONDS * 2 ** (delivery.attempts - 1)
        RunDelivery.objects.filter(pk=delivery.pk).update(
            state=State.PENDING, tried_at=None, next_try_at=timezone.now() + timedelta(seconds=wait),
            error=f"{reason} Trying again in {wait:g} s (try {delivery.attempts} of {tries}).")
        delivery_try_submit(run_id=delivery.pk, delay=wait)
        logger.info("delivery of run %s will be tried again in %s s: %s", delivery.pk, wait, reason)
        return
    given_up = f" Tried {delivery.attempts} times (WORKGRAPH_DELIVERY_ATTEMPTS)." if transient else ""
    RunDelivery.objects.filter(pk=delivery.pk).update(state=State.FAILED, tried_at=None, next_try_at=None,
                                                      error=f"{reason}{given_up}")
    notify(DELIVERY_FAILED, run=delivery.pk, error=f"{reason}{given_up}", remote_branch=delivery.remote_branch)
    logger.warning("delivery of run %s failed: %s", delivery.pk, reason)
