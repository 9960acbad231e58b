from django.core.management.base import BaseCommand, CommandError

from graphs.logs.maintenance import duration_parse, logs_prune


class Command(BaseCommand):
    help = "Delete the lines of logs closed longer ago than --older-than (30d, 12h, 90m); headers stay."

    def add_arguments(self, parser):
        parser.add_argument("--older-than", required=True, help="30d, 12h, 90m, or a number of days")
        parser.add_argument("--dry-run", action="store_true", help="only count what would be pruned")

    def handle(self, *args, **options):
        try:
            older_than = duration_parse(options["older_than"])
        except ValueError as error:
            raise CommandError(str(error)) from error
        report = logs_prune(older_than=older_than, dry_run=options["dry_run"])
        verb = "would prune" if options["dry_run"] else "pruned"
        self.stdout.write(
            f"{verb} {report.lines} line(s) of {report.logs} log(s) closed more than {options['older_than']} ago"
        )
