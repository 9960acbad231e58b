from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from graphs.skills.folders import skills_import


class Command(BaseCommand):
    help = (
        "Import skills from <folder>/<skill_id>/SKILL.md (front matter may set name, description, owner). "
        "A revision is kept only when a body changed; the folder's git commit is recorded when it has one."
    )

    def add_arguments(self, parser):
        parser.add_argument("folder")

    def handle(self, *args, folder: str, **options):
        root = Path(folder)
        if not root.is_dir():
            raise CommandError(f"{folder} is not a folder")
        report = skills_import(folder=root)
        if report.git_commit_sha:
            self.stdout.write(f"git commit: {report.git_commit_sha}")
        for label, skill_ids in (("created", report.created), ("updated", report.updated),
                                 ("unchanged", report.unchanged)):
            self.stdout.write(f"{label}: {len(skill_ids)}" + (f" ({', '.join(skill_ids)})" if skill_ids else ""))
        for skill_id, warnings in report.warnings.items():
            for warning in warnings:
                self.stderr.write(f"warning: {skill_id}: {warning}")
        for reason in report.skipped:
            self.stderr.write(f"skipped {reason}")
