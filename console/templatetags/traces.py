"""The link from a run's page to its trace in the team's tracing tool (WORKGRAPH_TRACE_URL_TEMPLATE)."""

from django import template
from django.conf import settings

from graphs.models import WorkGraphRun

register = template.Library()


@register.simple_tag
def trace_url(run: WorkGraphRun) -> str:
    """The URL of the run's trace, or "" when no template is set or the run has no trace yet."""
    pattern = settings.WORKGRAPH_TRACE_URL_TEMPLATE
    if not pattern or not run.trace_id:
        return ""
    return pattern.replace("{trace_id}", run.trace_id)
