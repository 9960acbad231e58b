"""Django project for the Work Graph Console: settings, routing, the Celery app and the web layer."""

from console.celery import app as celery_app

__all__ = ["celery_app"]
