from django.core.management.base import BaseCommand, CommandError

from graphs.agents.check import CHECK_ORG_NODE, agent_check
from graphs.models import Project
from graphs.profiles.resolve import profile_resolve


class Command(BaseCommand):
    help = ("Check a project's agent before its first run: its program's version in the sandbox, then one real "
            "one-line call; says in plain words what is wrong.")

    def add_arguments(self, parser):
        parser.add_argument("project", help="the project's slug")
        parser.add_argument("--timeout", type=float, default=120.0, help="seconds the one-line call may take")

    def handle(self, *args, project: str, timeout: float, **options):
        found = Project.objects.filter(slug=project).first()
        if found is None:
            raise CommandError(f"no project {project!r}")
        result = agent_check(found.agent, profile=profile_resolve(org_node=CHECK_ORG_NODE, project=found),
                             timeout=timeout)
        if not result.ok:
            raise CommandError(f"{result.status}: {result.words}")
        self.stdout.write(f"{result.status}: {result.words}")
