"""import_skills reads <skill_id>/SKILL.md folders; export_skills writes them back."""

from __future__ import annotations

import shutil
import subprocess
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from graphs.models import Skill
from graphs.skills.folders import skills_export, skills_import
from tests import factories

pytestmark = pytest.mark.django_db

RESEARCH = """---
name: Finance research
description: Collect and check official figures
owner: planner
---

# Finance research

```team-template
{"version": 1, "nodes": [{"node_id": "collect", "task": "Collect the filings"}]}
```
"""


def write_skill(folder: Path, skill_id: str, text: str) -> Path:
    path = folder / skill_id / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def library(tmp_path) -> Path:
    write_skill(tmp_path, "finance-research", RESEARCH)
    write_skill(tmp_path, "plain", "# Plain skill\n\nNo front matter here.\n")
    (tmp_path / "not-a-skill").mkdir()
    return tmp_path


def run_command(name: str, *args: str) -> str:
    out = StringIO()
    call_command(name, *args, stdout=out, stderr=out)
    return out.getvalue()


def test_a_first_import_creates_draft_skills_from_front_matter_and_body(library):
    report = skills_import(folder=library)
    assert (report.created, report.updated, report.unchanged) == (["finance-research", "plain"], [], [])
    skill = Skill.objects.get(skill_id="finance-research")
    assert (skill.name, skill.description, skill.owner_org_node) == (
        "Finance research", "Collect and check official figures", "planner"
    )
    assert skill.body.startswith("# Finance research")
    assert skill.team_template["nodes"][0]["node_id"] == "collect"
    assert (skill.status, skill.source) == ("draft", "import")
    assert skill.file_path == str((library / "finance-research" / "SKILL.md").resolve())
    assert skill.revisions.count() == 1


def test_importing_the_same_folder_twice_reports_everything_unchanged(library):
    run_command("import_skills", str(library))
    output = run_command("import_skills", str(library))
    assert "created: 0" in output and "updated: 0" in output
    assert "unchanged: 2 (finance-research, plain)" in output
    assert Skill.objects.get(skill_id="plain").revisions.count() == 1


def test_a_changed_body_is_updated_with_a_new_revision(library):
    skills_import(folder=library)
    write_skill(library, "plain", "# Plain skill\n\nNow with more care.\n")
    report = skills_import(folder=library)
    assert (report.updated, report.unchanged) == (["plain"], ["finance-research"])
    assert list(Skill.objects.get(skill_id="plain").revisions.values_list("number", flat=True)) == [1, 2]


def test_changed_front_matter_alone_updates_the_skill_in_a_revision_of_its_own(library):
    skills_import(folder=library)
    write_skill(library, "finance-research", RESEARCH.replace("owner: planner", "owner: coder"))
    report = skills_import(folder=library)
    assert report.updated == ["finance-research"]
    skill = Skill.objects.get(skill_id="finance-research")
    assert skill.owner_org_node == "coder"
    assert list(skill.revisions.values_list("number", "owner_org_node")) == [(1, "planner"), (2, "coder")]


def test_an_invalid_skill_id_or_broken_front_matter_is_skipped_and_reported(library):
    write_skill(library, "bad id", "# Spaces are not allowed\n")
    write_skill(library, "unclosed", "---\nname: never closed\n# Body\n")
    report = skills_import(folder=library)
    assert sorted(report.skipped) == [
        "bad id: not a valid skill id (letters, digits, - and _ only)",
        "unclosed: the front matter opened with --- is never closed",
    ]
    assert not Skill.objects.filter(skill_id="unclosed").exists()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")
def test_the_import_command_prints_the_template_warnings_of_the_skills_it_imported(library):
    write_skill(library, "sloppy", '```beaver-team-template\n{"version": 1, "nodes": [{"node_id": "a", "task": "A",'
                                   ' "requested_tools": ["web_fecth"], "colour": "red"}]}\n```\n')
    out = run_command("import_skills", str(library))
    assert "warning: sloppy: template node 'a': field 'colour' is not a template field; planning ignores it" in out
    assert "warning: sloppy: template node 'a': tool 'web_fecth' is not in the tool registry" in out
    assert "warning: finance-research" not in out
    again = run_command("import_skills", str(library))
    assert "unchanged: 3" in again and "warning: sloppy" in again, "an unchanged skill's warnings still show"


def test_the_folders_git_commit_is_recorded_on_the_skill_and_its_revision(library):
    git = ["git", "-C", str(library), "-c", "user.name=t", "-c", "user.email=t@example.test"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "skills"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    report = skills_import(folder=library)
    assert report.git_commit_sha == head
    skill = Skill.objects.get(skill_id="plain")
    assert skill.current_git_commit_sha == head
    assert skill.revisions.get().git_commit_sha == head


def test_a_folder_outside_git_records_no_commit(library):
    skills_import(folder=library)
    assert Skill.objects.get(skill_id="plain").current_git_commit_sha == ""


def test_export_then_import_round_trips_unchanged(tmp_path, library):
    skills_import(folder=library)
    factories.SkillFactory(skill_id="console-made", name="", description="", body="# Console\n")
    exported = tmp_path / "exported"
    output = run_command("export_skills", str(exported))
    assert "exported: 3" in output
    assert (exported / "console-made" / "SKILL.md").read_text() == "# Console\n"
    assert (exported / "finance-research" / "SKILL.md").read_text().startswith("---\nname: Finance research\n")
    report = skills_import(folder=exported)
    assert report.unchanged == ["finance-research", "plain"]
    # console-made had no revision yet: importing it records its first one, nothing else changes.
    assert report.updated == ["console-made"]


def test_export_writes_only_the_named_skills(tmp_path):
    factories.SkillFactory(skill_id="one")
    factories.SkillFactory(skill_id="two")
    paths = skills_export(folder=tmp_path, skills=Skill.objects.filter(skill_id="two"))
    assert paths == [tmp_path / "two" / "SKILL.md"]
