"""Stored words as pages show them: a status code such as ``awaiting_approval`` reads "awaiting approval"."""

from __future__ import annotations

from datetime import timedelta

from django import template
from django.utils.html import json_script
from django.utils.safestring import SafeString

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
    """A duration as a table cell reads it: ``4.2 s``, ``3 min 05 s``, ``2 h 07 min``."""
    seconds = value.total_seconds()
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"
