from django.apps import AppConfig


class GraphsConfig(AppConfig):
    name = "graphs"
    verbose_name = "Work graphs"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Job handlers register themselves on import; every process that runs jobs needs them.
        from graphs import engine, pipeline  # noqa: F401
