"""Installing delivery in a process: the job that tries a delivery, the job that polls the forges, and the
listener that hears a run succeed and asks for its delivery (``GraphsConfig.ready``)."""

from __future__ import annotations

from graphs.delivery.deliveries import delivery_try_job, run_succeeded_deliver
from graphs.delivery.jobs import DeliveryJob
from graphs.delivery.polling import forge_poll_job
from graphs.executors import FORGE_POLL_JOB, job_handlers_install
from graphs.notifications import notification_listener_register


def delivery_install() -> None:
    job_handlers_install({DeliveryJob.DELIVERY_TRY: delivery_try_job, FORGE_POLL_JOB: forge_poll_job})
    notification_listener_register(run_succeeded_deliver)
