from django.apps import AppConfig


class GraphsConfig(AppConfig):
    name = "graphs"
    verbose_name = "Work graphs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Job handlers register themselves on import; every process that runs jobs needs them.
        from graphs import engine, pipeline  # noqa: F401
        from graphs.events import run_event_listener_register
        from graphs.live import log_closed_publish, log_line_publish, run_event_publish
        from graphs.logs import log_close_listener_register, log_listener_register

        # Every process that writes logs or emits run events publishes them to the watching pages.
        log_listener_register(log_line_publish)
        log_close_listener_register(log_closed_publish)
        run_event_listener_register(run_event_publish)
