"""Polling the forges, where their webhooks cannot reach the console: every ``WORKGRAPH_FORGE_POLL_SECONDS``
(Celery beat in the distributed mode, a timer of the serving process in the embedded one) each open pull
request is read through its forge's client and applied as a webhook's event would be (graphs.delivery.feedback).
"""

from __future__ import annotations

import logging

from graphs.delivery.failures import DeliveryFailed
from graphs.delivery.feedback import deliveries_open, delivery_refresh
from graphs.models import ProjectDelivery

logger = logging.getLogger(__name__)


def forge_poll_job(_: str = "") -> int:
    """Read every open pull request the console delivered from its forge and apply what it says; return how
    many were read. A forge that cannot be read now is tried again at the next poll."""
    read = 0
    settings_of: dict[object, ProjectDelivery | None] = {}
    for delivery in deliveries_open():
        project_id = delivery.run.task.project_id
        if project_id not in settings_of:
            settings_of[project_id] = ProjectDelivery.objects.filter(project_id=project_id).first()
        setting = settings_of[project_id]
        if setting is None or not setting.forge or not setting.forge_token_env:
            continue
        try:
            outcome = delivery_refresh(delivery, setting)
        except DeliveryFailed as failure:
            logger.warning("could not read %s's pull request from its forge: %s", delivery.remote_branch, failure)
            continue
        except Exception:
            # One pull request the console cannot read must not keep the others from being read.
            logger.exception("reading %s's pull request from its forge failed", delivery.remote_branch)
            continue
        read += 1
        logger.debug("polled %s: %s", delivery.remote_branch, outcome)
    return read
