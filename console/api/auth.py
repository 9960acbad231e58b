"""API authentication: a personal token (``Authorization: Bearer wgc_…``) or the browser session.

Session requests to unsafe methods must carry the CSRF token (django-ninja's cookie auth checks it).
A request that sends a Bearer token is judged by the token alone: a bad, expired or revoked one is a
401, never a fall back to the session (whose CSRF check would answer a misleading 403).
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from ninja.errors import AuthenticationError
from ninja.security import HttpBearer, SessionAuth

from console.api.errors import ApiError
from graphs.tokens import token_authenticate

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class TokenAuth(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str):
        api_token = token_authenticate(token)
        if api_token is None:
            raise AuthenticationError
        if api_token.read_only and request.method not in SAFE_METHODS:
            raise ApiError(403, "read_only_token", "This token may only read; use a full token to make changes.")
        request.user = api_token.user
        request.api_token = api_token
        return api_token.user


def token_refuse(request: HttpRequest) -> None:
    """Raise PermissionDenied when the request authenticated with a token rather than the session."""
    if getattr(request, "api_token", None) is not None:
        raise PermissionDenied("tokens are created from a signed-in session, not with another token")


AUTH = [TokenAuth(), SessionAuth()]
