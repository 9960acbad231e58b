from django.conf import settings
from django.core.management.base import BaseCommand

from graphs.demo import demo_data_load, demo_pipeline_run


class Command(BaseCommand):
    help = "Load the demo project, task and login (idempotent) and print the login."

    def add_arguments(self, parser):
        parser.add_argument("--password", default="workgraph-demo", help="Password for the demo login.")

    def handle(self, *args, password: str, **options):
        login, task = demo_data_load(password=password)
        if settings.WORKGRAPH_AGENT == "offline":
            demo_pipeline_run(task=task)
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo login — user: {login.username}  password: {login.password}  "
                f"(open http://127.0.0.1:8000/)"
            )
        )
