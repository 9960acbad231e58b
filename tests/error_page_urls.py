"""The console's routes and one view that fails, to see the 500 page (tests.test_error_pages)."""

from django.http import HttpRequest, HttpResponse
from django.urls import path

from console.urls import handler400, handler403, handler404, handler500
from console.urls import urlpatterns as console_urlpatterns


def broken(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("secret-detail-of-the-failure")


urlpatterns = [path("broken/", broken), *console_urlpatterns]

__all__ = ["handler400", "handler403", "handler404", "handler500", "urlpatterns"]
