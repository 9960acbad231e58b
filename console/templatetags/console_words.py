"""Stored words as pages show them: a status code such as ``awaiting_approval`` reads "awaiting approval"."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.utils import timezone
from django.utils.html import json_script
from django.utils.safestring import SafeString

from graphs.domain.duration_words import duration_text
from graphs.runs.vocabulary import status_vocabulary, status_words

register = template.Library()


@register.filter
def words(value: object) -> str:
    """``value`` with its underscores read as spaces (the class and data attributes keep the code)."""
    return status_words(str(value))


@register.simple_tag
def status_vocabulary_script() -> SafeString:
    """The status vocabulary as the page's scripts read it (``static/js/status-vocabulary.js``)."""
    return json_script(status_vocabulary(), "status-vocabulary")


@register.filter
def duration_words(value: timedelta) -> str:
    """A duration in the pages' words (``graphs.domain.duration_words``): ``42 s``, ``3 min 05 s``."""
    return duration_text(value)


@register.filter
def since_words(value: datetime) -> str:
    """How long ago ``value`` was, in the same words: ``42 s``, ``3 min 05 s``."""
    return duration_text(timezone.now() - value)
