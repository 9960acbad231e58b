from django.conf import settings
from django.core.management.base import BaseCommand

from graphs.demo import DEMO_DEBUG_PASSWORD, demo_data_load, demo_pipeline_run


class Command(BaseCommand):
    help = "Load the demo project, task and login (idempotent) and print the login."

    def add_arguments(self, parser):
        parser.add_argument(
            "--password",
            help=f"Password for the demo login. Default: {DEMO_DEBUG_PASSWORD} with DEBUG on; otherwise a random "
            "one for a new login (printed once) and the current one for an existing login.",
        )

    def handle(self, *args, password: str | None, **options):
        # A superuser with a published password is fine on a developer's machine only.
        if password is None and settings.DEBUG:
            password = DEMO_DEBUG_PASSWORD
        login, task = demo_data_load(password=password)
        if settings.WORKGRAPH_AGENT == "offline":
            demo_pipeline_run(task=task)
        if login.password is None:
            shown = "unchanged (printed when the login was made; set another with --password)"
        elif password is None:
            shown = f"{login.password}  (generated: shown this once, store it now)"
        else:
            shown = login.password
        self.stdout.write(
            self.style.SUCCESS(f"Demo login — user: {login.username}  password: {shown}  (open http://127.0.0.1:8000/)")
        )
