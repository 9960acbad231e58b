"""Datasets of a project's cases: every member reads them; leads create and rename datasets and add cases."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.http import Http404
from ninja import Router, Status

from console.api.dataset_schemas import CaseIn, CaseOut, DatasetDetailOut, DatasetIn, DatasetOut, DatasetPatch
from console.api.errors import ApiError
from console.api.schemas import ERRORS
from console.permissions import project_for_member, require
from graphs.datasets.cases import CaseInvalid, case_create
from graphs.datasets.edits import DatasetInvalid, dataset_create, dataset_update
from graphs.datasets.reads import dataset_cases, dataset_read, project_datasets
from graphs.models import Dataset
from graphs.projects.roles import project_role

router = Router(tags=["datasets"])
Saved = TypeVar("Saved")


@router.get("/projects/{slug}/datasets", response={200: list[DatasetOut], **ERRORS})
def datasets_list(request, slug: str):
    project, _ = project_for_member(request.auth, slug)
    return list(project_datasets(project))


@router.post("/projects/{slug}/datasets", response={201: DatasetOut, **ERRORS})
def datasets_create(request, slug: str, payload: DatasetIn):
    project, role = project_for_member(request.auth, slug)
    require(role, "edit_datasets")
    dataset = _saved(lambda: dataset_create(project=project, fields=payload.dict(), by=request.auth))
    return Status(201, dataset_read(dataset.pk))


@router.get("/datasets/{dataset_id}", response={200: DatasetDetailOut, **ERRORS})
def datasets_detail(request, dataset_id: int):
    dataset, _ = _dataset_for_member(request, dataset_id)
    dataset.case_rows = list(dataset_cases().filter(dataset=dataset))
    return dataset


@router.patch("/datasets/{dataset_id}", response={200: DatasetOut, **ERRORS})
def datasets_update(request, dataset_id: int, payload: DatasetPatch):
    dataset, role = _dataset_for_member(request, dataset_id)
    require(role, "edit_datasets")
    _saved(lambda: dataset_update(dataset=dataset, changes=payload.dict(exclude_unset=True), by=request.auth))
    return dataset_read(dataset.pk)


@router.post("/datasets/{dataset_id}/cases", response={201: CaseOut, **ERRORS})
def cases_create(request, dataset_id: int, payload: CaseIn):
    dataset, role = _dataset_for_member(request, dataset_id)
    require(role, "edit_datasets")
    case = _saved(lambda: case_create(dataset=dataset, fields=payload.dict(exclude_unset=True), by=request.auth))
    return Status(201, dataset_cases().get(pk=case.pk))


def _dataset_for_member(request, dataset_id: int) -> tuple[Dataset, str]:
    """The dataset and the user's role in its project; 404 to a user who is no member of it, as for a project."""
    dataset = dataset_read(dataset_id)
    role = project_role(request.auth, dataset.project_id) if dataset is not None else None
    if role is None:
        raise Http404("not found")
    return dataset, role


def _saved(save: Callable[[], Saved]) -> Saved:
    try:
        return save()
    except (DatasetInvalid, CaseInvalid) as error:
        fields = [{"field": name, "message": message} for name, message in error.problems.items()]
        what = "case" if isinstance(error, CaseInvalid) else "dataset"
        raise ApiError(400, f"invalid_{what}", f"The {what} is not valid; nothing was saved.", fields) from error
