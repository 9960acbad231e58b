"""An experiment's page and two experiments compared (every member of the experiment's project reads them).
The figures and their words are graphs.experiments.reads'; these views find the experiments and say why a
link names none."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from console.permissions import can
from graphs.experiments.reads import comparison_page, experiment_page, experiment_read
from graphs.models.experiments import Experiment
from graphs.projects.roles import project_role

COMPARE_TEMPLATE = "console/compare_experiments.html"
# The largest id a bigint column holds: a longer number in a link is no experiment, not a database error.
MAX_ID = 2**63 - 1


@login_required
def experiment_detail(request: HttpRequest, experiment_id: int) -> HttpResponse:
    """The experiment: its status and variant, its aggregate, each item with its run and score, and a form
    to compare it with another experiment of its dataset."""
    experiment, role = _readable(request, experiment_id)
    if experiment is None:
        return render(request, "console/experiment.html",
                      {"problem": f"There is no experiment {experiment_id} you may read."}, status=404)
    return render(request, "console/experiment.html", {
        "page": experiment_page(experiment), "experiment": experiment, "project": experiment.project,
        "can_run": can(role, "run_experiments"),
    })


@login_required
def experiments_compare(request: HttpRequest) -> HttpResponse:
    """Experiments ``?a=`` and ``?b=`` side by side: their figures and differences, then each case whose
    outcome flipped, pass → fail first, each with a link to its two runs' comparison."""
    ids = {side: request.GET.get(side, "").strip() for side in ("a", "b")}
    unusable = [side for side, value in ids.items() if not value.isdecimal()]
    if unusable:
        named = " and ".join(f"?{side}=" for side in unusable)
        return render(request, COMPARE_TEMPLATE, {
            "problem": f"Name two experiments by their ids: {named} must be a number (an experiment's id)."},
            status=400)
    (a, _), (b, _) = _readable(request, int(ids["a"])), _readable(request, int(ids["b"]))
    missing = [ids[side] for side, experiment in (("a", a), ("b", b)) if experiment is None]
    if missing:
        return render(request, COMPARE_TEMPLATE, {"problem": " ".join(
            f"There is no experiment {value} you may read." for value in missing), "a": a, "b": b}, status=404)
    return render(request, COMPARE_TEMPLATE, {"a": a, "b": b, "page": comparison_page(a, b)})


def _readable(request: HttpRequest, experiment_id: int) -> tuple[Experiment | None, str | None]:
    """The experiment and the user's role in its project; (None, None) alike for an experiment that is not
    there and one of a project the user is no member of, so a page never tells the two apart. An id past
    what the database stores names none."""
    experiment = experiment_read(experiment_id) if 0 < experiment_id <= MAX_ID else None
    role = project_role(request.user, experiment.project_id) if experiment is not None else None
    return (experiment, role) if role is not None else (None, None)
