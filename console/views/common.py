"""What more than one page shows the same way: a change's diff, and JSON for people to read."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.http import HttpRequest

from graphs.models import AttemptChange, RunWorkspace
from graphs.reads.changes import diff_page


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
