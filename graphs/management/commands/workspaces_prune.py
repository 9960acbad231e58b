from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from graphs.logs.maintenance import duration_parse
from graphs.models import WorkGraphRun
from graphs.workspaces.worktrees import workspaces_prune


class Command(BaseCommand):
    help = ("Delete the git branches and attempt refs of finished runs older than --older-than (30d, 12h, 90m); "
            "the changes recorded in the console stay.")

    def add_arguments(self, parser):
        parser.add_argument("--older-than", required=True, help="30d, 12h, 90m, or a number of days")

    def handle(self, *args, **options):
        try:
            older_than = duration_parse(options["older_than"])
        except ValueError as error:
            raise CommandError(str(error)) from error
        runs = WorkGraphRun.objects.filter(
            status__in=list(WorkGraphRun.FINISHED_STATUSES), created_at__lt=timezone.now() - older_than,
            workspace__isnull=False,
        )
        pruned = workspaces_prune(list(runs))
        self.stdout.write(f"pruned the branches of {pruned} run(s) older than {options['older_than']}")
