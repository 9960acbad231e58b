from django.apps import AppConfig


class GraphsConfig(AppConfig):
    name = "graphs"
    verbose_name = "Work graphs"
    default_auto_field = "django.db.models.BigAutoField"
