"""The user's own API tokens: list, create (shown once, from a session only), revoke."""

from __future__ import annotations

from django.http import Http404
from ninja import Router, Status
from ninja.throttling import UserRateThrottle

from console.api.auth import token_refuse
from console.api.errors import ApiError
from console.api.schemas import ERRORS, ErrorOut, TokenCreatedOut, TokenIn, TokenOut
from graphs.models import ApiToken
from graphs.tokens import TokenLimitReached, token_create, token_revoke

router = Router(tags=["tokens"])


class TokenMintThrottle(UserRateThrottle):
    """Per user: the active-token cap alone would let a script mint and revoke tokens without end."""

    scope = "token_mint"


@router.get("/tokens", response={200: list[TokenOut], **ERRORS})
def tokens_list(request):
    return list(ApiToken.objects.filter(user=request.auth))


@router.post("/tokens", response={201: TokenCreatedOut, **ERRORS, 429: ErrorOut}, throttle=[TokenMintThrottle("30/h")])
def tokens_create(request, payload: TokenIn):
    token_refuse(request)
    try:
        token, raw = token_create(user=request.auth, name=payload.name, lifetime_days=payload.expires_in_days,
                                  read_only=payload.read_only)
    except TokenLimitReached as error:
        raise ApiError(409, "token_limit", str(error)) from error
    fields = ("id", "name", "prefix", "created_at", "last_used_at", "expires_at", "read_only", "revoked_at")
    return Status(201, {**{name: getattr(token, name) for name in fields}, "token": raw})


@router.delete("/tokens/{token_id}", response={204: None, **ERRORS})
def tokens_revoke(request, token_id: int):
    if not token_revoke(user=request.auth, token_id=token_id):
        raise Http404("no such token")
    return Status(204, None)
