"""The forges' webhooks (``POST /forge/<slug>/events``): no session and no token — the forge proves the event
is its own by signing it with the project's webhook secret (graphs.delivery.forge_events). An event that
cannot be verified is a 401, recorded on the audit log; a verified one is accepted (202), acted on or not."""

from __future__ import annotations

from ninja import Router, Schema

from console.api.errors import ApiError
from console.api.schemas import ERRORS
from graphs.delivery.forge_events import ForgeEventRefused, forge_event_receive

router = Router(tags=["delivery"])


class ForgeEventOut(Schema):
    forge: str
    event: str
    outcome: str


@router.post("/forge/{slug}/events", auth=None, response={202: ForgeEventOut, **ERRORS})
def forge_event(request, slug: str):
    try:
        received = forge_event_receive(slug=slug, headers=request.headers, body=request.body)
    except ForgeEventRefused as refused:
        raise ApiError(401, "unauthenticated", f"The event was refused: {refused}") from refused
    return 202, ForgeEventOut(forge=received.forge, event=received.event, outcome=received.outcome)
