"""The parts of an edited fork other pages show: the link to the page that makes one (to whoever may fork),
and the edit a fork made, as a diff (the compare page, the planning inspector where a reviewer approves it)."""

from __future__ import annotations

from typing import Any

from django import template

from console.permissions import can
from graphs.domain.fork_edits import editable_field
from graphs.engine.state import manifest_node
from graphs.models import WorkGraphRun
from graphs.projects.roles import project_role
from graphs.reads.comparisons import fork_edit_shown

register = template.Library()


@register.inclusion_tag("console/_fork_edit_link.html", takes_context=True)
def fork_edit_link(context: dict[str, Any], run: WorkGraphRun, node_id: str) -> dict[str, Any]:
    """"Re-run from here with an edit…" for a node whose prompt or argv can be edited, to whoever may fork
    the run; while the run is under way it says the fork waits for the run's end."""
    user = context["request"].user
    node = manifest_node(run.graph_manifest, node_id)
    shown = node is not None and editable_field(node) is not None and can(
        project_role(user, run.task.project_id), "fork_run")
    return {"shown": shown, "run": run, "node_id": node_id, "forkable": run.is_forkable()}


@register.inclusion_tag("console/_fork_edit_diff.html")
def fork_edit_diff(run: WorkGraphRun) -> dict[str, Any]:
    """The edit ``run`` made to the node it was forked from, before and after; nothing for any other run."""
    return {"edit": fork_edit_shown(run)}
