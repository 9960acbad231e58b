"""Importing loop-agent DAG specs into a project, and downloading the spec a run came from."""

from __future__ import annotations

from uuid import UUID

from django.http import Http404
from ninja import Router, Status

from console.api.errors import ApiError
from console.api.schemas import ERRORS, DagSpecImportOut, DagSpecIn, ErrorOut
from console.permissions import require, run_for_member
from console.views.downloads import dag_spec_file
from graphs.models import Project
from graphs.planning.dag_spec_check import DagSpecError
from graphs.planning.dag_specs import dag_spec_import, dag_spec_run_warnings
from graphs.projects.roles import project_role

router = Router(tags=["DAG specs"])


@router.post("/projects/{slug}/dag-specs", response={201: DagSpecImportOut, 422: ErrorOut, **ERRORS})
def dag_specs_import(request, slug: str, payload: DagSpecIn):
    project = Project.objects.filter(slug=slug).first()
    role = project_role(request.auth, project.pk) if project else None
    if role is None:
        raise Http404("no such project")
    require(role, "import_dag_spec")
    try:
        run = dag_spec_import(project=project, spec=payload.spec, prompt_files=payload.prompt_files,
                              source_name=payload.source_name, imported_by=request.auth)
    except DagSpecError as error:
        # 422: the request is well formed (400 is for that) but the spec in it cannot be imported.
        raise ApiError(422, "invalid_dag_spec", str(error),
                       fields=[{"field": "spec", "message": problem} for problem in error.errors]) from error
    return Status(201, {"run_id": run.run_id, "task_id": run.task_id, "status": run.status,
                        "warnings": dag_spec_run_warnings(run)})


@router.get("/runs/{run_id}/dag-spec", response={200: None, **ERRORS})
def runs_dag_spec(request, run_id: UUID):
    run, _ = run_for_member(request.auth, run_id)
    return dag_spec_file(run)
