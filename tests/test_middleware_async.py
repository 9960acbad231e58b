"""Under ASGI a request runs its middleware on the event loop and only its view in a thread: every
middleware of the console is async-capable, so no request crosses from a thread back into the loop
(asgiref's AsyncToSync), where one caught by daphne's stop would never finish."""

from __future__ import annotations

import asyncio
from unittest import mock

import pytest
from asgiref.sync import AsyncToSync
from django.conf import settings
from django.test import AsyncClient
from django.utils.module_loading import import_string


@pytest.mark.parametrize("path", settings.MIDDLEWARE)
def test_each_middleware_can_run_async(path):
    assert getattr(import_string(path), "async_capable", False), f"{path} would run sync under daphne"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("path", "status"), [
    ("/login/", 200),
    ("/static/js/live.js", 200),
    ("/tasks/", 302),
    ("/api/no-such-thing", 404),
    ("/no-such-page/", 404),
])
def test_a_request_served_async_never_crosses_back_into_the_loop(path, status):
    crossings = []
    crossing = AsyncToSync.__call__

    def counted(self, *args, **kwargs):
        crossings.append(self.awaitable)
        return crossing(self, *args, **kwargs)

    with mock.patch.object(AsyncToSync, "__call__", counted):
        response = asyncio.run(AsyncClient().get(path))
    assert response.status_code == status
    assert crossings == []
