"""Stored words as pages show them: a status code such as ``awaiting_approval`` reads "awaiting approval"."""

from __future__ import annotations

from datetime import timedelta

from django import template

register = template.Library()


@register.filter
def words(value: object) -> str:
    """``value`` with its underscores read as spaces (the class and data attributes keep the code)."""
    return str(value).replace("_", " ")


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
