"""The page that re-runs a run from a node with the node's prompt (or a command node's argv) edited:
it shows the current value in a form, and its submission forks the run with the edit
(``graphs.engine.fork_edits``), or shows what the manifest's rules refused, having made nothing."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from console.permissions import require, run_for_member
from graphs.domain import manifest_graph
from graphs.domain.fork_edits import COMMAND, FIELD_WORDS, ForkEditError, argv_parse, argv_text, editable_field
from graphs.engine.fork_edits import run_fork_edited
from graphs.engine.state import manifest_node
from graphs.errors import WorkGraphError
from graphs.models import WorkGraphRun


class ForkEditForm(forms.Form):
    node_id = forms.CharField(max_length=200, widget=forms.HiddenInput)
    # Kept as typed: a prompt's leading spaces and blank lines are the agent's to read.
    prompt = forms.CharField(required=False, strip=False, max_length=100_000,
                             widget=forms.Textarea(attrs={"rows": 16, "spellcheck": "false"}))
    argv = forms.CharField(
        label="Argv", required=False, strip=False, max_length=500_000,
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
        help_text='The program and its arguments as a JSON list of strings, run without a shell: '
                  '["python3", "-m", "pytest", "-q"].',
    )


@login_required
def run_fork_edit(request: HttpRequest, run_id) -> HttpResponse:
    run, role = run_for_member(request.user, run_id)
    require(role, "fork_run")
    node_id = request.POST.get("node_id", "") if request.method == "POST" else request.GET.get("node", "")
    node = manifest_node(run.graph_manifest, node_id)
    if node is None:
        raise Http404(f"no node {node_id!r} in this run")
    field = editable_field(node)
    if request.method != "POST":
        form = ForkEditForm(initial={"node_id": node_id, **_current(node, field)})
        return _page(request, run, node, field, form)
    form = ForkEditForm(request.POST)
    if form.is_valid() and field is not None:
        fork = _fork(request, run, node_id, field, form)
        if fork is not None:
            waits = fork.status == WorkGraphRun.Status.AWAITING_APPROVAL
            messages.success(request, f"Forked from {node_id} with its {FIELD_WORDS[field]} edited: "
                             + ("the fork waits for a reviewer to approve the edit." if waits
                                else "it and every node after it run again."))
            return redirect("run_planning" if waits else "run_graph", run_id=fork.run_id)
    return _page(request, run, node, field, form)


def _fork(request: HttpRequest, run: WorkGraphRun, node_id: str, field: str, form: ForkEditForm):
    """The fork with the form's edit, or None with the refusal added to ``form``."""
    edit: dict[str, Any] = {}
    if field == COMMAND:
        try:
            edit["argv"] = argv_parse(form.cleaned_data["argv"])
        except ValueError as error:
            form.add_error("argv", str(error))
            return None
    else:
        edit["prompt"] = form.cleaned_data["prompt"]
    try:
        return run_fork_edited(run=run, node_id=node_id, by=request.user, **edit)
    except ForkEditError as error:
        for name, refusals in error.errors.items():
            for refusal in refusals:
                form.add_error(name if name in form.fields else None, refusal)
    except WorkGraphError as error:
        form.add_error(None, str(error))
    return None


def _current(node: dict[str, Any], field: str | None) -> dict[str, str]:
    if field == COMMAND:
        return {"argv": argv_text(node.get(COMMAND))}
    return {"prompt": str(node.get(field) or "")} if field else {}


def _page(request: HttpRequest, run: WorkGraphRun, node: dict[str, Any], field: str | None,
          form: ForkEditForm) -> HttpResponse:
    manifest = run.graph_manifest
    node_id = node["node_id"]
    rerun = {node_id} | manifest_graph.downstream_of(manifest, node_id)
    order = manifest_graph.topological_order(manifest)
    return render(request, "console/fork_edit.html", {
        "run": run, "task": run.task, "node": node, "node_id": node_id, "form": form,
        "field": FIELD_WORDS.get(field or "", ""), "is_command": field == COMMAND,
        "forkable": run.is_forkable(), "approval": run.task.project.require_plan_approval,
        "rerun": [n for n in order if n in rerun], "reused": [n for n in order if n not in rerun],
    }, status=400 if form.is_bound and form.errors else 200)
