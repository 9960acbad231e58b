"""What more than one page does the same way: a change's diff, JSON for people to read, the labels of a
skill's or a profile's revisions, and going back to the page a form was on."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme

from graphs.domain.revisions import RUN_LABEL
from graphs.models import AttemptChange, RunWorkspace
from graphs.reads.changes import diff_page
from graphs.revisions import revision_labels


def diff_shown(change: RunWorkspace | AttemptChange | None) -> dict[str, Any] | None:
    """What of a change's diff a page shows (up to WORKGRAPH_DIFF_PAGE_BYTES), and whether it is cut."""
    return diff_page(change)


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)


def revision_saved_say(request: HttpRequest, revision: Any) -> None:
    """What a skill's or a profile's save tells its editor: the revision made, or that nothing changed."""
    if revision is None:
        messages.info(request, "Saved. Nothing changed, so no new revision was made.")
    else:
        messages.success(request, f"Saved as revision {revision.number}.")


def revisions_labelled(record: Any, revisions: list[Any]) -> dict[str, Any]:
    """Mark each of ``revisions`` (newest first) with the labels it carries (``labels_shown``), and say which
    revision runs of tasks use: ``run_revision``, and ``run_labelled`` False when it is the newest only
    because none is labelled production."""
    labels = revision_labels(record)
    for revision in revisions:
        revision.labels_shown = labels.get(revision.number, [])
    labelled = next((number for number, names in labels.items() if RUN_LABEL in names), None)
    newest = revisions[0].number if revisions else None
    return {"run_revision": labelled if labelled is not None else newest, "run_labelled": labelled is not None}


def redirect_back(request: HttpRequest, fallback: str) -> HttpResponse:
    """Back to the page the form was on (its ``next``, when that is of this site), else to ``fallback``."""
    back = request.POST.get("next", "")
    if back and url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()},
                                                require_https=request.is_secure()):
        return redirect(back)
    return redirect(fallback)
