from django.apps import AppConfig


class GraphsConfig(AppConfig):
    name = "graphs"
    verbose_name = "Work graphs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.contrib.auth.signals import user_login_failed
        from django.core import checks
        from django.db.models.signals import pre_save

        from graphs.audit import sign_in_failed_record
        from graphs.delivery.setup import delivery_install
        from graphs.engine import JOB_HANDLERS
        from graphs.executors import job_handlers_install
        from graphs.experiments.scoring import experiments_install
        from graphs.logs.events import run_event_listener_register
        from graphs.logs.live import log_closed_publish, log_line_publish, run_event_publish
        from graphs.logs.store import log_close_listener_register, log_listener_register
        from graphs.notifications.setup import notifications_install
        from graphs.reads.inbox_events import inbox_event_publish
        from graphs.telemetry.export import attempt_log_closed
        from graphs.tokens import user_tokens_revoke_on_credentials_change
        from graphs.workspaces.sandbox import sandbox_deploy_check

        # A deployment whose agents would run unconfined hears so from `check --deploy`.
        checks.register(sandbox_deploy_check, checks.Tags.security, deploy=True)
        # Every process that runs jobs (workers, the embedded server, commands) runs the engine's.
        job_handlers_install(JOB_HANDLERS)
        # … and tells webhooks and members by email what its runs did.
        notifications_install()
        # … and delivers the runs that succeed where their project delivers them (graphs.delivery).
        delivery_install()
        # … and scores the runs of experiments as they end (graphs.experiments).
        experiments_install()

        # Every process that writes logs or emits run events publishes them to the watching pages.
        log_listener_register(log_line_publish)
        log_close_listener_register(log_closed_publish)
        # Every closed log is an attempt whose spans can be made (when traces are exported).
        log_close_listener_register(attempt_log_closed)
        run_event_listener_register(run_event_publish)
        # … and tells the inbox sockets of the run's project when one may change what waits on people.
        run_event_listener_register(inbox_event_publish)
        # A token must not outlive the password it was minted under, nor its user's deactivation.
        pre_save.connect(user_tokens_revoke_on_credentials_change, sender=get_user_model(),
                         dispatch_uid="graphs.tokens.revoke_on_credentials_change")
        # A failed sign-in is on the audit log, with the name tried and the address it came from.
        user_login_failed.connect(sign_in_failed_record, dispatch_uid="graphs.audit.sign_in_failed")
