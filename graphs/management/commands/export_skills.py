from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from graphs.models import Skill
from graphs.skills.folders import skills_export


class Command(BaseCommand):
    help = "Write every skill (or the named ones) to <folder>/<skill_id>/SKILL.md, front matter first."

    def add_arguments(self, parser):
        parser.add_argument("folder")
        parser.add_argument("skill_ids", nargs="*", help="only these skills (default: all)")

    def handle(self, *args, folder: str, skill_ids: list[str], **options):
        skills = Skill.objects.order_by("skill_id")
        if skill_ids:
            skills = skills.filter(skill_id__in=skill_ids)
            missing = sorted(set(skill_ids) - set(skills.values_list("skill_id", flat=True)))
            if missing:
                raise CommandError(f"no such skills: {', '.join(missing)}")
        paths = skills_export(folder=Path(folder), skills=skills)
        self.stdout.write(f"exported: {len(paths)}")
        for path in paths:
            self.stdout.write(f"  {path}")
