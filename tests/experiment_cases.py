"""A repository holding the demo project's CSV export and its unit tests at two commits — one whose export
works and one whose export is broken — and a dataset of one case at each, checked by those unit tests."""

from __future__ import annotations

import shutil
from pathlib import Path

from graphs.demo import DEMO_PROJECT_FILES
from graphs.models import Dataset, DatasetCase, Project
from tests.repos import git

# The demo project's unit tests, run as a command judgment runs a command.
UNIT_TESTS = ["python3", "-m", "unittest", "discover", "-s", "tests", "-t", "."]


def demo_repository(folder: Path) -> tuple[str, str]:
    """Make ``folder`` a repository of the demo project; return its commit whose export works, and the next,
    whose export ends its lines wrongly."""
    shutil.copytree(DEMO_PROJECT_FILES, folder, ignore=shutil.ignore_patterns("__pycache__"))
    git(folder, "init", "--quiet", "--initial-branch=main")
    git(folder, "add", "--all")
    _commit(folder, "the CSV export")
    working = git(folder, "rev-parse", "HEAD").strip()
    export = folder / "reports" / "csv_export.py"
    export.write_text(export.read_text().replace('lineterminator="\\r\\n"', 'lineterminator=";"'))
    _commit(folder, "a broken line terminator")
    return working, git(folder, "rev-parse", "HEAD").strip()


def demo_dataset(project: Project, *, working: str, broken: str, name: str = "CSV export") -> Dataset:
    """A dataset of ``project`` with a case at each commit, both checked by the demo's unit tests."""
    dataset = Dataset.objects.create(project=project, name=name)
    for title, commit in (("Export at a working commit", working), ("Export at a broken commit", broken)):
        DatasetCase.objects.create(dataset=dataset, title=title, goal_text="Export the monthly report as CSV.",
                                   deliverables=["reports/csv_export.py"], acceptance_criteria=["The tests pass."],
                                   base_commit=commit, checks=[UNIT_TESTS])
    return dataset


def _commit(folder: Path, message: str) -> None:
    git(folder, "add", "--all")
    git(folder, "-c", "user.name=Lead", "-c", "user.email=lead@example.com", "commit", "--quiet", "-m", message)
