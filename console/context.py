"""What every page's template is given besides the request, the user and the messages."""

from __future__ import annotations

from django.http import HttpRequest

from graphs.workspaces.sandbox import sandbox_state


def sandbox(request: HttpRequest) -> dict[str, str]:
    """Why agents and commands run unconfined here ("" when they run sandboxed), for the notice every
    signed-in page shows."""
    if not request.user.is_authenticated:
        return {}
    return {"agents_unconfined": sandbox_state().unconfined_reason()}
