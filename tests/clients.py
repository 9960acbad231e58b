"""Signed-in clients for page, API and WebSocket tests."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.conf import settings
from django.test import Client

ALLOWED_ORIGIN = (b"origin", b"http://testserver")


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


async def socket_headers(user) -> list[tuple[bytes, bytes]]:
    """Headers a browser page of the console sends when it opens a WebSocket as ``user``."""
    session_key = await sync_to_async(lambda: signed_in(user).cookies[settings.SESSION_COOKIE_NAME].value)()
    return [ALLOWED_ORIGIN, (b"cookie", f"{settings.SESSION_COOKIE_NAME}={session_key}".encode())]
