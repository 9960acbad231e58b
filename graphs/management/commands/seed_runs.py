from django.core.management.base import BaseCommand

from graphs.runs.seeding import runs_seed


class Command(BaseCommand):
    help = ("Add N runs with their tasks and attempts to a project (made if missing), for measuring the runs "
            "list at scale; each member of the project sees them.")

    def add_arguments(self, parser):
        parser.add_argument("count", type=int, help="How many runs to add.")
        parser.add_argument("--project", default="seed-runs", help="The project's slug. Default: seed-runs.")
        parser.add_argument("--seed", type=int, default=1, help="The random seed: the same seed makes the same runs.")

    def handle(self, *args, count: int, project: str, seed: int, **options):
        seeded = runs_seed(count, project_slug=project, seed=seed)
        self.stdout.write(self.style.SUCCESS(
            f"Added {seeded.runs:,} runs, {seeded.tasks:,} tasks and {seeded.attempts:,} attempts to"
            f" project {seeded.project.slug}."))
