"""A project's datasets page (every member reads it, each dataset with its experiments; a lead makes a dataset
there), and the "Add to dataset" form of a run's pages. The rules are graphs.datasets'; these views show its
messages."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from console.forms.datasets import AddToDatasetForm, DatasetForm
from console.permissions import can, project_for_member, require, run_for_member
from console.views.common import redirect_back
from graphs.datasets.cases import CaseInvalid, case_from_run
from graphs.datasets.edits import DatasetInvalid, dataset_create
from graphs.datasets.reads import project_datasets, project_datasets_with_cases
from graphs.datasets.sources import run_addable, runs_addable
from graphs.experiments.reads import datasets_with_experiments
from graphs.models import Project, WorkGraphRun
from graphs.reads.todo_tree import RunTree


@login_required
def project_datasets_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The project's datasets, each with its cases; a lead adds a dataset below them."""
    project, role = project_for_member(request.user, slug)
    form = DatasetForm(request.POST or None)
    if request.method == "POST":
        require(role, "edit_datasets")
        if form.is_valid():
            try:
                dataset = dataset_create(project=project, fields=form.cleaned_data, by=request.user)
            except DatasetInvalid as error:
                for name, message in error.problems.items():
                    form.add_error(name if name in form.fields else None, message)
            else:
                messages.success(request, f"Dataset {dataset.name} created: add cases from the pages of runs that"
                                          " failed, were cancelled or were sent back.")
                return redirect(f"{reverse('project_datasets', args=[project.slug])}#dataset-{dataset.pk}")
    return render(request, "console/project_datasets.html", {
        "project": project, "role": role, "form": form, "can_edit": can(role, "edit_datasets"),
        "datasets": datasets_with_experiments(project_datasets_with_cases(project)),
    }, status=400 if form.errors else 200)


@login_required
@require_POST
def run_add_to_dataset(request: HttpRequest, run_id) -> HttpResponse:
    """Add the run to the chosen dataset of its project as a case; back to the page the form was on."""
    run, role = run_for_member(request.user, run_id)
    require(role, "edit_datasets")
    form = AddToDatasetForm(request.POST, project=run.task.project)
    if not form.is_valid():
        messages.error(request, "Choose a dataset of the project to add the run to.")
    else:
        dataset = form.cleaned_data["dataset"]
        try:
            case = case_from_run(dataset=dataset, run=run, by=request.user)
        except CaseInvalid as error:
            messages.error(request, f"The run was not added to {dataset.name}: {' '.join(error.problems.values())}")
        else:
            messages.success(request, f"Added to {dataset.name} as a case starting from {case.base_commit[:12]}.")
    return redirect_back(request, reverse("run_graph", args=[run.run_id]))


def add_to_dataset_offers(*, project: Project, role: str | None, runs: list[WorkGraphRun] | None = None,
                          trees: list[RunTree] | None = None) -> dict[str, Any]:
    """What a run's page needs for its "Add to dataset" form, for a lead: the ids of the ``runs`` it is
    offered on (or of the task page's ``trees``, read from what they hold), and the project's datasets
    when there is any; nothing for anyone else."""
    if not can(role, "edit_datasets"):
        return {"datasets": [], "addable": set()}
    if trees is not None:
        addable = {tree.run.pk for tree in trees if run_addable(
            status=tree.run.status, has_workspace=tree.workspace is not None,
            causes=tree.causes)}
    else:
        addable = runs_addable(runs or [])
    return {"datasets": list(project_datasets(project)) if addable else [], "addable": addable}
