"""Experiments (the dataset's project's members read them, its leads start and cancel them), two compared,
and labels moved through the promotion gate (skill admins)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.urls import reverse
from ninja import Query, Router, Schema, Status

from console.api.errors import ApiError
from console.api.experiment_schemas import ComparisonOut, ExperimentIn, ExperimentOut, LabelIn, LabelOut
from console.api.schemas import ERRORS
from console.permissions import require
from graphs.domain.revisions import RevisionUnknown
from graphs.experiments.aggregates import experiment_aggregate, experiment_items, experiments_compare
from graphs.experiments.gate import GateNotMet, label_move_gated
from graphs.experiments.launch import experiment_cancel, experiment_create
from graphs.experiments.variants import ExperimentInvalid
from graphs.models import AgentProfile, Dataset, Skill
from graphs.models.experiments import Experiment
from graphs.profiles.resolve import profiles_ensure_shipped
from graphs.projects.roles import project_role

router = Router(tags=["experiments"])
SKILL_ADMIN = "graphs.manage_skills"


class CompareQuery(Schema):
    a: int
    b: int


@router.post("/experiments", response={201: ExperimentOut, **ERRORS})
def experiments_create(request, payload: ExperimentIn):
    dataset = Dataset.objects.select_related("project").filter(pk=payload.dataset).first()
    role = project_role(request.auth, dataset.project_id) if dataset is not None else None
    if role is None:
        raise Http404("no such dataset")
    require(role, "run_experiments")
    try:
        experiment = experiment_create(dataset=dataset, fields=payload.dict(exclude={"dataset"}), by=request.auth)
    except ExperimentInvalid as error:
        fields = [{"field": name, "message": message} for name, message in error.problems.items()]
        raise ApiError(400, "invalid_experiment", "The experiment is not valid; nothing was started.",
                       fields) from error
    return Status(201, experiment_out(experiment))


@router.get("/experiments/compare", response={200: ComparisonOut, **ERRORS})
def experiments_compare_read(request, query: Query[CompareQuery]):
    a, _ = _experiment_for_member(request, query.a)
    b, _ = _experiment_for_member(request, query.b)
    return comparison_out(a, b)


@router.get("/experiments/{experiment_id}", response={200: ExperimentOut, **ERRORS})
def experiments_detail(request, experiment_id: int):
    experiment, _ = _experiment_for_member(request, experiment_id)
    return experiment_out(experiment)


@router.post("/experiments/{experiment_id}/cancel", response={200: ExperimentOut, **ERRORS})
def experiments_cancel(request, experiment_id: int):
    experiment, role = _experiment_for_member(request, experiment_id)
    require(role, "run_experiments")
    if not experiment_cancel(experiment=experiment):
        raise ApiError(409, "experiment_finished", f"The experiment is {experiment.status} already.")
    return experiment_out(experiment)


@router.put("/skills/{skill_id}/labels/{label}", response={200: LabelOut, **ERRORS})
def skills_label(request, skill_id: str, label: str, payload: LabelIn):
    skill = Skill.objects.filter(skill_id=skill_id).first()
    return _label_moved(request, skill, label, payload, missing=f"no skill {skill_id}")


@router.put("/agent-profiles/{org_node}/labels/{label}", response={200: LabelOut, **ERRORS})
def profiles_label(request, org_node: str, label: str, payload: LabelIn):
    profiles_ensure_shipped()
    profile = AgentProfile.objects.filter(org_node=org_node, project__isnull=True).first()
    return _label_moved(request, profile, label, payload, missing=f"no agent profile of {org_node}")


def experiment_out(experiment: Experiment) -> dict[str, Any]:
    """The experiment as the API answers it: its fields, its aggregate and each item with its score."""
    experiment.refresh_from_db()
    items = experiment_items(experiment)
    return {
        **{name: getattr(experiment, name) for name in (
            "id", "name", "status", "error", "variant", "pins", "repetitions", "concurrency", "max_cost_usd",
            "created_at", "finished_at")},
        "project": experiment.project.slug, "dataset": experiment.dataset_id,
        "created_by": experiment.created_by.get_username() if experiment.created_by else None,
        "aggregate": experiment_aggregate(items).as_dict(),
        "items": [{**{name: getattr(item, name) for name in (
            "id", "repetition", "status", "passed", "checks", "cost_usd", "input_tokens", "output_tokens",
            "duration_ms", "loop_backs", "retries")}, "case": item.case_id, "case_title": item.case.title,
            "run": item.run_id, "run_status": item.run.status if item.run else None} for item in items],
    }


def comparison_out(a: Experiment, b: Experiment) -> dict[str, Any]:
    """``a`` and ``b`` compared, each flipped case with the address of its two runs' compare page."""
    comparison = experiments_compare(a, b)
    for row in comparison["flipped"]:
        both = row["a_run"] is not None and row["b_run"] is not None
        row["compare_url"] = reverse("runs_compare", args=[row["a_run"], row["b_run"]]) if both else None
    return comparison


def _experiment_for_member(request, experiment_id: int) -> tuple[Experiment, str]:
    """The experiment and the user's role in its project; 404 to a user who is no member of it."""
    experiment = Experiment.objects.select_related("project", "created_by").filter(pk=experiment_id).first()
    role = project_role(request.auth, experiment.project_id) if experiment is not None else None
    if role is None:
        raise Http404("not found")
    return experiment, role


def _label_moved(request, record, label: str, payload: LabelIn, *, missing: str) -> dict[str, Any]:
    if not request.auth.has_perm(SKILL_ADMIN):
        raise PermissionDenied("only skill admins (the manage_skills permission) move labels")
    if record is None:
        raise Http404(missing)
    experiment = None
    if payload.experiment is not None:
        experiment = Experiment.objects.select_related("project", "dataset").filter(pk=payload.experiment).first()
        if experiment is None:
            raise ApiError(400, "invalid_label", "The label was not moved.",
                           [{"field": "experiment", "message": f"There is no experiment {payload.experiment}."}])
    try:
        details = label_move_gated(record=record, label=label, number=payload.revision, experiment=experiment,
                                   force=payload.force, by=request.auth)
    except GateNotMet as refused:
        raise ApiError(409, "gate_not_met", "The revision does not clear the promotion gate; the label was not moved.",
                       [{"field": "", "message": reason} for reason in refused.reasons]) from refused
    except RevisionUnknown as error:
        raise ApiError(400, "invalid_label", "The label was not moved.",
                       [{"field": "revision" if label in ("production", "staging") else "label",
                         "message": str(error)}]) from error
    return {"label": label, "revision": payload.revision, **details}
