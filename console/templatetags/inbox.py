"""The navigation's inbox count: ``{% inbox_count as count %}`` in ``console/_inbox_count.html``, which every page and
``/inbox/count/`` render."""

from __future__ import annotations

from django import template

from graphs.reads.inbox import inbox_count as count_for

register = template.Library()


@register.simple_tag(takes_context=True)
def inbox_count(context: template.Context) -> int:
    """How many items wait on the signed-in person: one query, once per request however often asked."""
    request = context.get("request")
    if request is None or not request.user.is_authenticated:
        return 0
    if not hasattr(request, "_inbox_count"):
        request._inbox_count = count_for(request.user)
    return request._inbox_count
