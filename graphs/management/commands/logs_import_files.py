from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from graphs.log_maintenance import logs_import_files


class Command(BaseCommand):
    help = "Store in the database the JSONL log files that earlier versions wrote to disk (safe to run again)."

    def add_arguments(self, parser):
        default = settings.WORKGRAPH_LOG_DIR or Path(settings.VAR_DIR) / "logs"
        parser.add_argument("--dir", type=Path, default=default, help=f"where the files are (default: {default})")

    def handle(self, *args, **options):
        directory = options["dir"]
        if not directory.is_dir():
            raise CommandError(f"{directory} is not a directory")
        report = logs_import_files(directory=directory)
        self.stdout.write(
            f"imported {report.lines} line(s) of {report.logs} log(s) from {directory}; "
            f"{report.skipped_lines} unreadable line(s) skipped"
        )
        if report.missing_files:
            self.stderr.write(f"{len(report.missing_files)} log file(s) not found, e.g. {report.missing_files[0]}")
