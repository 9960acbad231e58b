"""Email notifications: one message per event, or — when several come for one recipient within a batch's
minute (``WORKGRAPH_EMAIL_BATCH_SECONDS``) — one message listing them all.

A recipient is mailed at most once a batch: the job finds when they were last mailed, waits out the rest
of the batch when that was too recent, then claims every notice still unsent for them and mails them
together. Duplicate jobs find nothing left to claim.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db.models import Max
from django.utils import timezone

from graphs.models import EmailNotice
from graphs.notifications.jobs import email_send_submit

logger = logging.getLogger(__name__)
# How long a mail server that cannot be reached is waited for before the notices are tried again.
SEND_RETRY_SECONDS = 60


def email_send_job(user_id: str) -> None:
    user = get_user_model().objects.filter(pk=user_id, is_active=True).exclude(email="").first()
    if user is None:
        return
    batch = timedelta(seconds=settings.WORKGRAPH_EMAIL_BATCH_SECONDS)
    now = timezone.now()
    last = EmailNotice.objects.filter(user=user, sent_at__isnull=False).aggregate(last=Max("sent_at"))["last"]
    if last is not None and now < last + batch:
        email_send_submit(user_id=user.pk, delay=(last + batch - now).total_seconds())
        return
    # One UPDATE claims what is unsent: a job running beside this one claims none of the same notices.
    if not EmailNotice.objects.filter(user=user, sent_at__isnull=True).update(sent_at=now):
        return
    claimed = list(EmailNotice.objects.filter(user=user, sent_at=now))
    subject, text = email_message(claimed)
    try:
        send_mail(subject, text, settings.DEFAULT_FROM_EMAIL, [user.email])
    except OSError:
        logger.warning("could not mail %s; trying again in %s s", user.email, SEND_RETRY_SECONDS, exc_info=True)
        EmailNotice.objects.filter(pk__in=[notice.pk for notice in claimed]).update(sent_at=None)
        email_send_submit(user_id=user.pk, delay=SEND_RETRY_SECONDS)


def email_message(notices: list[EmailNotice]) -> tuple[str, str]:
    """The subject and text of the message carrying ``notices``: the event's own for one, a digest for more."""
    if len(notices) == 1:
        return notices[0].subject, notices[0].text
    subject = f"{len(notices)} notifications from the Work Graph Console"
    parts = [f"{notice.subject}\n\n{notice.text}" for notice in notices]
    return subject, ("\n\n" + "-" * 40 + "\n\n").join(parts)
