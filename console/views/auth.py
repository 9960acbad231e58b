"""What the sign-in pages answer beyond django.contrib.auth's own views."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def login_locked_out(request: HttpRequest, original_response: HttpResponse | None, credentials: dict | None):
    """What django-axes answers a sign-in while its username or address is locked out."""
    minutes = round(settings.AXES_COOLOFF_TIME.total_seconds() / 60)
    return render(request, "registration/locked_out.html", {"minutes": minutes}, status=429)
