"""What a forge says of a delivered pull request, applied: the one place a webhook's event and a poll's
reading both end (graphs.delivery.forge_events, graphs.delivery.polling).

``ForgeNews`` names the pull request (by number, branch or head commit) and says any of: its checks of a
commit, its state (open, merged, closed), that a review may have asked for changes. Applied to the latest
delivery of that branch:

- the checks of the delivered head are kept on the delivery (``checks``, as the API and task page show them);
  each that failed starts one follow-up run (graphs.delivery.follow_ups) — a check of an older commit
  changes nothing;
- merged or closed moves the branch's open deliveries to ``merged`` or ``closed`` (reopened: back to open);
- the reviews are read through the forge's client, and each reviewer's latest request for changes starts one
  follow-up run carrying it.

Everything here is idempotent: the same news applied twice changes nothing more.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db.models import Q

from graphs.delivery.credentials import secret_read
from graphs.delivery.failures import DeliveryFailed
from graphs.delivery.follow_ups import check_failed_follow_up, review_follow_up
from graphs.delivery.forge_clients import forge_client
from graphs.delivery.forge_clients.base import Check, ForgeClient
from graphs.delivery.forge_payloads import ForgeNews
from graphs.models import Project, ProjectDelivery, RunDelivery

logger = logging.getLogger(__name__)

State = RunDelivery.State
# The deliveries whose pull request the forge still speaks of.
WATCHED_STATES = (State.OPENED, State.PUSHED, State.MERGED, State.CLOSED)
# A review decision that replaces the reviewer's earlier one; a comment does not.
_DECISIONS = ("approved", "changes_requested", "dismissed")


def news_apply(project: Project, news: ForgeNews, *, client: ForgeClient | None = None) -> str:
    """Apply ``news`` to the delivery it concerns; return what was done, in words. News of a branch or pull
    request the console did not deliver is ignored."""
    delivery = _delivery_of(project, news)
    if delivery is None:
        return "ignored: the console delivered no such branch or pull request"
    setting = ProjectDelivery.objects.get(project=project)
    done = []
    if news.pull_request_state:
        done.append(_state_apply(delivery, news.pull_request_state))
    if news.checks:
        done.append(_checks_apply(delivery, news, setting, client=client))
    if news.reviews_to_read and delivery.pull_request_number is not None:
        done.append(_reviews_apply(delivery, setting, client=client))
    return "; ".join(part for part in done if part) or "nothing to do"


def _delivery_of(project: Project, news: ForgeNews) -> RunDelivery | None:
    """The latest delivery of the branch the news names (by pull request, branch or head commit)."""
    rows = RunDelivery.objects.filter(run__task__project=project, pushed_at__isnull=False, state__in=WATCHED_STATES)
    if news.pull_request_number is not None:
        found = rows.filter(pull_request_number=news.pull_request_number)
    elif news.branch:
        found = rows.filter(remote_branch=news.branch)
    elif news.head_sha:
        found = rows.filter(head_commit=news.head_sha)
    else:
        return None
    branch = found.order_by("-pushed_at").values_list("remote_branch", flat=True).first()
    if branch is None:
        return None
    return rows.filter(remote_branch=branch).select_related("run__task").order_by("-pushed_at").first()


def _state_apply(delivery: RunDelivery, state: str) -> str:
    """Merged or closed: the branch's deliveries say so; reopened: they are open again."""
    branch = RunDelivery.objects.filter(run__task__project_id=delivery.run.task.project_id,
                                        remote_branch=delivery.remote_branch)
    if state in (State.MERGED, State.CLOSED):
        moved = branch.filter(state__in=(State.OPENED, State.PUSHED) if state == State.MERGED else (State.OPENED,)
                              ).update(state=state)
        return f"the pull request is {state}" if moved else ""
    if state == "open":
        moved = branch.filter(state=State.CLOSED, pull_request_number__isnull=False).update(state=State.OPENED)
        return "the pull request is open again" if moved else ""
    return ""


def _checks_apply(delivery: RunDelivery, news: ForgeNews, setting: ProjectDelivery, *,
                  client: ForgeClient | None) -> str:
    """Keep the checks of the delivered head, and act on each that failed."""
    if news.head_sha and news.head_sha != delivery.head_commit:
        return "ignored checks of a commit that is not the delivered head"
    kept = {check.get("name"): check for check in delivery.checks or []}
    for check in news.checks:
        kept[check.name] = {"name": check.name, "status": check.status, "conclusion": check.conclusion,
                            "url": check.url}
    RunDelivery.objects.filter(pk=delivery.pk).update(checks=list(kept.values()))

    def log_read(check: Check) -> str:
        """The log the forge serves apart from the check (a GitLab job's), read once a follow-up is started."""
        try:
            return (client or delivery_client(setting)).check_log(check=check)
        except DeliveryFailed as failure:
            logger.warning("could not read the log of the check %s: %s", check.name, failure)
            return f"(The forge did not give the check's log: {failure})"

    started = [check_failed_follow_up(delivery, check, forge=setting.forge, log_read=log_read)
               for check in news.checks if check.failed()]
    acted = [row for row in started if row is not None]
    if not acted:
        return f"{len(news.checks)} check(s) recorded"
    return " ".join(row.note for row in acted)


def _reviews_apply(delivery: RunDelivery, setting: ProjectDelivery, *, client: ForgeClient | None) -> str:
    """Read the pull request's reviews; each reviewer's latest decision that requests changes is acted on."""
    try:
        client = client or delivery_client(setting)
        reviews = client.reviews_list(number=delivery.pull_request_number)
        latest = {}
        for review in reviews:
            if review.state in _DECISIONS:
                latest[review.author] = review
        wanted = [review for review in latest.values() if review.state == "changes_requested"]
        comments = client.review_comments_list(number=delivery.pull_request_number) if wanted else []
    except DeliveryFailed as failure:
        logger.warning("could not read the reviews of %s: %s", delivery.remote_branch, failure)
        return "the reviews could not be read from the forge"
    acted = [row for row in (review_follow_up(delivery, review, comments, forge=setting.forge) for review in wanted)
             if row is not None]
    return " ".join(row.note for row in acted)


def delivery_client(setting: ProjectDelivery) -> ForgeClient:
    """The project's forge client, with its token; ``DeliveryFailed`` when the token cannot be read."""
    token = secret_read(setting.forge_token_env, setting="forge_token_env")
    return forge_client(forge=setting.forge, api_url=setting.forge_api_url, repo=setting.forge_repo, token=token,
                        timeout=settings.WORKGRAPH_DELIVERY_TIMEOUT_SECONDS)


def delivery_refresh(delivery: RunDelivery, setting: ProjectDelivery) -> str:
    """Read the delivery's pull request from its forge — its state, the checks of the delivered head, its
    reviews — and apply it, as a webhook would have; ``DeliveryFailed`` when the forge cannot be read."""
    client = delivery_client(setting)
    pull = client.pull_request_get(number=delivery.pull_request_number)
    checks: tuple[Check, ...] = tuple(client.checks_list(ref=delivery.head_commit))
    news = ForgeNews(branch=delivery.remote_branch, pull_request_number=delivery.pull_request_number,
                     head_sha=delivery.head_commit, checks=checks, pull_request_state=pull.state,
                     reviews_to_read=pull.state == "open")
    return news_apply(delivery.run.task.project, news, client=client)


def deliveries_open() -> list[RunDelivery]:
    """The latest delivery of each branch whose pull request is open, in projects with a forge."""
    rows = (RunDelivery.objects.filter(state=State.OPENED, pull_request_number__isnull=False)
            .filter(~Q(run__task__project__delivery__forge=""))
            .select_related("run__task__project").order_by("-pushed_at"))
    latest: dict[tuple, RunDelivery] = {}
    for row in rows:
        latest.setdefault((row.run.task.project_id, row.remote_branch), row)
    return list(latest.values())
