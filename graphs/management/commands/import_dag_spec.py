from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from graphs.models import Project
from graphs.planning.dag_spec_check import (
    DagSpecError,
    dag_spec_parse,
    dag_spec_prompt_files_check,
    dag_spec_prompt_paths,
)
from graphs.planning.dag_specs import dag_spec_import, dag_spec_run_warnings


class Command(BaseCommand):
    help = (
        "Import a loop-agent DAG spec (JSON) into a project as a task with a planned run; the markdown prompt "
        "files its tasks name are read from beside the spec."
    )

    def add_arguments(self, parser):
        parser.add_argument("project", help="the project's slug")
        parser.add_argument("file", help="the spec's JSON file")

    def handle(self, *args, project: str, file: str, **options):
        target = Project.objects.filter(slug=project).first()
        if target is None:
            raise CommandError(f"no project {project!r}")
        path = Path(file)
        try:
            text = path.read_bytes()
        except OSError as error:
            raise CommandError(f"cannot read {file}: {error.strerror}") from error
        try:
            spec = dag_spec_parse(text)
            run = dag_spec_import(project=target, spec=spec, prompt_files=_prompt_files(path.parent, spec),
                                  source_name=path.name)
        except DagSpecError as error:
            problems = "\n".join(f"  - {problem}" for problem in error.errors)
            raise CommandError(f"{file} cannot be imported; nothing was created:\n{problems}") from error
        self.stdout.write(f"task: {run.task_id}")
        self.stdout.write(f"run: {run.run_id} ({run.status})")
        self.stdout.write(f"nodes: {len(run.graph_manifest['nodes'])}")
        for warning in dag_spec_run_warnings(run):
            self.stderr.write(f"warning: {warning}")


def _prompt_files(folder: Path, spec: dict) -> dict[str, str]:
    """The prompt files the spec names that sit in ``folder`` or below it; one that does not is left out,
    for the spec's check to name. Their sizes are checked before any is read, as an upload's are."""
    root = folder.resolve()
    found = {}
    for named in dag_spec_prompt_paths(spec):
        candidate = (root / named).resolve()
        if candidate.is_relative_to(root) and candidate.is_file():
            found[named] = candidate
    dag_spec_prompt_files_check(spec, sizes={named: path.stat().st_size for named, path in found.items()})
    return {named: path.read_text(encoding="utf-8", errors="replace") for named, path in found.items()}
