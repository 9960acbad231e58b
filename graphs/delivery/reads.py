"""A run's delivery as the API's ``delivery`` object and the task page show it, and what a lead may do next."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from graphs.models import ForgeFeedback, Project, ProjectDelivery, RunDelivery, WorkGraphRun

State = RunDelivery.State


def run_delivery(run: WorkGraphRun) -> RunDelivery | None:
    """The run's delivery record, or None for a run never delivered."""
    return RunDelivery.objects.filter(run=run).first()


def run_delivery_out(delivery: RunDelivery | None) -> dict[str, Any] | None:
    """The API's ``delivery`` object: its state, the branch on the remote, the pull request, the checks and
    why it failed, in words; None for a run never delivered."""
    if delivery is None:
        return None
    pull_request = None
    if delivery.pull_request_number is not None:
        pull_request = {"number": delivery.pull_request_number, "url": delivery.pull_request_url}
    return {
        "state": delivery.state, "state_label": delivery.get_state_display(), "remote_branch": delivery.remote_branch,
        "head_commit": delivery.head_commit, "pull_request": pull_request,
        "checks": [{name: check.get(name) for name in ("name", "status", "conclusion", "url")}
                   for check in delivery.checks or []],
        "error": delivery.error, "attempts": delivery.attempts, "next_try_at": delivery.next_try_at,
        "trigger": delivery.trigger, "pushed_at": delivery.pushed_at, "opened_at": delivery.opened_at,
        "updated_at": delivery.updated_at,
        "feedback": [{"kind": item.kind, "name": item.name, "outcome": item.outcome, "note": item.note,
                      "follow_up_run": str(item.follow_up_run_id) if item.follow_up_run_id else None,
                      "created_at": item.created_at}
                     for item in ForgeFeedback.objects.filter(source_run_id=delivery.run_id)],
    }


@dataclass(frozen=True)
class DeliveryOffer:
    """What the task page shows of a run's delivery: the record (None before any), the button a lead
    gets — ``Deliver``, ``Retry`` or ``Deliver again`` — or none with why, and what its forge said that
    asked for work (``feedback``: the follow-up runs started, or that a person is needed)."""

    delivery: RunDelivery | None
    action: str
    why_not: str
    feedback: tuple[ForgeFeedback, ...] = field(default=())


def task_delivery_offers(project: Project, runs: Iterable[WorkGraphRun]) -> dict[Any, DeliveryOffer]:
    """The delivery of each of ``runs`` that succeeded, the action a lead may take on it and its forge's
    feedback, by run id: two queries (a third once a pull request was opened), none when no run succeeded
    (only a run that succeeded is delivered)."""
    succeeded = [run for run in runs if run.status == WorkGraphRun.Status.SUCCEEDED]
    if not succeeded:
        return {}
    setting = ProjectDelivery.objects.filter(project=project).first()
    deliveries = {row.run_id: row for row in RunDelivery.objects.filter(run__in=succeeded)}
    feedback: dict[Any, list[ForgeFeedback]] = {}
    if any(row.pull_request_number is not None for row in deliveries.values()):
        for item in ForgeFeedback.objects.filter(source_run__in=succeeded):
            feedback.setdefault(item.source_run_id, []).append(item)
    offers = {run.pk: _offer(run, deliveries.get(run.pk), setting) for run in succeeded}
    return {pk: DeliveryOffer(offer.delivery, offer.action, offer.why_not, tuple(feedback.get(pk, ())))
            for pk, offer in offers.items()}


def _offer(run: WorkGraphRun, delivery: RunDelivery | None, setting: ProjectDelivery | None) -> DeliveryOffer:
    if setting is None or not setting.is_on():
        return DeliveryOffer(delivery, "", "The project delivers nothing: a lead sets where in its delivery settings.")
    if delivery is None:
        return DeliveryOffer(None, "Deliver", "")
    if delivery.state == State.FAILED:
        return DeliveryOffer(delivery, "Retry", "")
    if delivery.state == State.PENDING:
        return DeliveryOffer(delivery, "Try now", "")
    return DeliveryOffer(delivery, "Deliver again", "")
