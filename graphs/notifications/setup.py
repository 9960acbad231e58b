"""Installing notifications in a process: their jobs' handlers, and the listener that turns each committed
notification into webhook deliveries and emails (``GraphsConfig.ready``)."""

from __future__ import annotations

from graphs.executors import job_handlers_install
from graphs.notifications import notification_listener_register
from graphs.notifications.delivery import webhook_deliver_job
from graphs.notifications.email import email_send_job
from graphs.notifications.fanout import notification_fanout
from graphs.notifications.jobs import NotificationJob


def notifications_install() -> None:
    job_handlers_install({NotificationJob.WEBHOOK_DELIVER: webhook_deliver_job,
                          NotificationJob.EMAIL_SEND: email_send_job})
    notification_listener_register(notification_fanout)
