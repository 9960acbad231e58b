"""Stored words as pages show them: a status code such as ``awaiting_approval`` reads "awaiting approval"."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def words(value: object) -> str:
    """``value`` with its underscores read as spaces (the class and data attributes keep the code)."""
    return str(value).replace("_", " ")
