"""The user's own API tokens: list, create (shown once), revoke."""

from __future__ import annotations

from django.http import Http404
from ninja import Router, Status

from console.api.schemas import ERRORS, TokenCreatedOut, TokenIn, TokenOut
from graphs.models import ApiToken
from graphs.tokens import token_create, token_revoke

router = Router(tags=["tokens"])


@router.get("/tokens", response={200: list[TokenOut], **ERRORS})
def tokens_list(request):
    return list(ApiToken.objects.filter(user=request.auth))


@router.post("/tokens", response={201: TokenCreatedOut, **ERRORS})
def tokens_create(request, payload: TokenIn):
    token, raw = token_create(user=request.auth, name=payload.name)
    fields = ("id", "name", "prefix", "created_at", "last_used_at", "revoked_at")
    return Status(201, {**{name: getattr(token, name) for name in fields}, "token": raw})


@router.delete("/tokens/{token_id}", response={204: None, **ERRORS})
def tokens_revoke(request, token_id: int):
    if not token_revoke(user=request.auth, token_id=token_id):
        raise Http404("no such token")
    return Status(204, None)
