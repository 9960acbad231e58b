"""A revision goes to production through the project's gate: the experiment that measured it must reach the
minimum pass rate and fail no case the production revision's latest experiment on the dataset passed; a move
that does not clear it is a 409 naming each reason, and a skill admin's forced move is on the audit log with
the reasons it overrode."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.utils import timezone
from ninja.testing import TestClient

from console.api import api
from graphs.models import AuditEntry, Dataset, DatasetCase, Skill
from graphs.models.experiments import Experiment, ExperimentItem
from graphs.skills.revisions import skill_label_move, skill_save

pytestmark = pytest.mark.django_db
client = TestClient(api)


@pytest.fixture
def skill(dana):
    skill = Skill(skill_id="research", status=Skill.Status.ACTIVE)
    skill_save(skill=skill, body="# Research\n\nFirst.", author=dana)
    skill_save(skill=skill, body="# Research\n\nSecond.", author=dana)
    skill_label_move(skill=skill, label="production", number=1, by=dana)
    return skill


@pytest.fixture
def cases(project):
    dataset = Dataset.objects.create(project=project, name="cases")
    return [DatasetCase.objects.create(dataset=dataset, title=f"case {n}", goal_text="Do it.", base_commit="a" * 40)
            for n in range(3)]


def measured(cases, *, revision: int, passes: list[bool]) -> Experiment:
    """A finished experiment of ``cases`` that pinned ``revision`` of the skill, each case passing as said."""
    experiment = Experiment.objects.create(
        project=cases[0].dataset.project, dataset=cases[0].dataset, name=f"revision {revision}",
        pins={"skills": {"research": revision}}, status=Experiment.Status.FINISHED, finished_at=timezone.now())
    for case, passed in zip(cases, passes, strict=True):
        ExperimentItem.objects.create(experiment=experiment, case=case, repetition=1, passed=passed,
                                      status=ExperimentItem.Status.SCORED)
    return experiment


def gate(project, *, minimum: str | None, no_regressions: bool) -> None:
    project.promotion_min_pass_rate = Decimal(minimum) if minimum is not None else None
    project.promotion_no_regressions = no_regressions
    project.save(update_fields=["promotion_min_pass_rate", "promotion_no_regressions"])


def test_a_move_that_does_not_clear_the_gate_is_refused_with_every_reason(project, dana, skill, cases):
    gate(project, minimum="0.9", no_regressions=True)
    measured(cases, revision=1, passes=[True, True, False])
    candidate = measured(cases, revision=2, passes=[False, True, True])

    answer = client.put("/skills/research/labels/production", json={"revision": 2, "experiment": candidate.pk},
                        user=dana)

    assert answer.status_code == 409 and answer.json()["code"] == "gate_not_met"
    reasons = [field["message"] for field in answer.json()["fields"]]
    assert len(reasons) == 2
    assert "pass rate is 67%" in reasons[0] and "at least 90%" in reasons[0]
    assert f"Case {cases[0].pk} passed under revision 1" in reasons[1]
    skill.refresh_from_db()
    assert skill.labels.get(label="production").revision.number == 1
    assert not AuditEntry.objects.filter(action=AuditEntry.Action.SKILL_LABEL_MOVED, after__revision=2).exists()


def test_an_experiment_that_measured_another_revision_or_none_does_not_promote(project, dana, skill, cases):
    other = measured(cases, revision=1, passes=[True, True, True])

    wrong = client.put("/skills/research/labels/production", json={"revision": 2, "experiment": other.pk}, user=dana)
    missing = client.put("/skills/research/labels/production", json={"revision": 2}, user=dana)

    assert wrong.status_code == 409 and "ran revision 1 of research, not revision 2" in wrong.json()["fields"][0][
        "message"]
    assert missing.status_code == 409 and "Name the experiment" in missing.json()["fields"][0]["message"]


def test_a_move_that_clears_the_gate_is_made_and_recorded_with_its_experiment(project, dana, skill, cases):
    gate(project, minimum="0.6", no_regressions=True)
    measured(cases, revision=1, passes=[True, False, False])
    candidate = measured(cases, revision=2, passes=[True, True, False])

    answer = client.put("/skills/research/labels/production", json={"revision": 2, "experiment": candidate.pk},
                        user=dana)

    assert answer.status_code == 200, answer.json()
    assert answer.json() == {"label": "production", "revision": 2, "experiment": candidate.pk, "forced": False,
                             "overridden": []}
    entry = AuditEntry.objects.get(action=AuditEntry.Action.SKILL_LABEL_MOVED, after__revision=2)
    assert entry.after["experiment"] == candidate.pk and entry.before["revision"] == 1


def test_a_skill_admin_forces_a_move_and_the_audit_log_keeps_the_reasons_overridden(project, dana, skill, cases):
    gate(project, minimum="1", no_regressions=False)
    candidate = measured(cases, revision=2, passes=[True, False, False])

    answer = client.put("/skills/research/labels/production",
                        json={"revision": 2, "experiment": candidate.pk, "force": True}, user=dana)

    assert answer.status_code == 200 and answer.json()["forced"] is True
    entry = AuditEntry.objects.get(action=AuditEntry.Action.SKILL_LABEL_MOVED, after__revision=2)
    assert entry.actor == dana and entry.after["forced"] is True
    assert "pass rate is 33%" in entry.after["overridden"][0]


def test_staging_needs_no_experiment_and_only_skill_admins_move_labels(project, dana, alice, skill):
    assert client.put("/skills/research/labels/staging", json={"revision": 2}, user=dana).status_code == 200
    assert client.put("/skills/research/labels/staging", json={"revision": 1}, user=alice).status_code == 403
    assert client.put("/skills/research/labels/nightly", json={"revision": 1}, user=dana).status_code == 400
    assert client.put("/skills/research/labels/staging", json={"revision": 9}, user=dana).status_code == 400


def test_an_agent_profiles_label_goes_through_the_same_gate(project, dana, cases):
    gate(project, minimum="0.5", no_regressions=False)
    experiment = Experiment.objects.create(
        project=project, dataset=cases[0].dataset, name="coder 1", pins={"profiles": {"coder": 1}},
        status=Experiment.Status.FINISHED, finished_at=timezone.now())
    ExperimentItem.objects.create(experiment=experiment, case=cases[0], repetition=1, passed=False,
                                  status=ExperimentItem.Status.SCORED)

    refused = client.put("/agent-profiles/coder/labels/production", json={"revision": 1, "experiment": experiment.pk},
                         user=dana)

    assert refused.status_code == 409 and "pass rate is 0%" in refused.json()["fields"][0]["message"]


def test_the_gate_is_a_project_setting_of_the_project_api(project, alice):
    changed = client.patch(f"/projects/{project.slug}", json={"promotion_min_pass_rate": "0.75",
                                                              "promotion_no_regressions": True}, user=alice)
    wrong = client.patch(f"/projects/{project.slug}", json={"promotion_min_pass_rate": "1.5"}, user=alice)

    assert changed.status_code == 200, changed.json()
    assert (changed.json()["promotion_min_pass_rate"], changed.json()["promotion_no_regressions"]) == ("0.75", True)
    assert wrong.status_code == 400 and wrong.json()["fields"][0]["field"] == "promotion_min_pass_rate"
