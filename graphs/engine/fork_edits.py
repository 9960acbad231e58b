"""Fork a run from a node with that node's prompt or argv edited (``graphs.domain.fork_edits``).

The fork runs the edited manifest: the edited node and its dependants run again, the nodes upstream
keep their outputs. It records the edit — who, which field, before and after — and, where the project
requires plan approval, waits for a reviewer like a plan (``graphs.engine.review``): approved, it starts;
rejected, it ends there.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from graphs.domain.fork_edits import node_edit_apply
from graphs.engine.recovery import run_fork
from graphs.errors import InvalidTransitionError
from graphs.models import WorkGraphRun


def run_fork_edited(
    *, run: WorkGraphRun, node_id: str, by: AbstractBaseUser, prompt: str | None = None, argv: Any = None
) -> WorkGraphRun:
    """Fork ``run`` from ``node_id`` with its prompt (an agent node) or argv (a command node) replaced.

    Everything is checked before anything is made: an edit the manifest's rules refuse raises
    ``ForkEditError``, a run that cannot be forked ``InvalidTransitionError``, and either leaves no run.
    """
    run.refresh_from_db()
    if not run.is_forkable():
        raise InvalidTransitionError(entity="run", current=run.state_label(), requested="forked")
    manifest, edit = node_edit_apply(run.graph_manifest, node_id, prompt=prompt, argv=argv)
    record = {**edit.as_dict(), "by": by.get_username(), "at": timezone.now().isoformat()}
    return run_fork(run=run, node_id=node_id, manifest=manifest, fork_edit=record,
                    awaiting_approval=run.task.project.require_plan_approval, by=by)
