"""API authentication: a personal token (``Authorization: Bearer wgc_…``) or the browser session.

Session requests to unsafe methods must carry the CSRF token (django-ninja's cookie auth checks it).
"""

from __future__ import annotations

from django.http import HttpRequest
from ninja.security import HttpBearer, SessionAuth

from graphs.tokens import token_authenticate


class TokenAuth(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str):
        user = token_authenticate(token)
        if user is not None:
            request.user = user
        return user


AUTH = [TokenAuth(), SessionAuth()]
