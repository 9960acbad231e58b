"""``{% profile_revision_url revision %}``: the page of an agent profile revision (an attempt's page links it)."""

from django import template

from console.views.agent_profiles import revision_url
from graphs.models import AgentProfileRevision

register = template.Library()


@register.simple_tag
def profile_revision_url(revision: AgentProfileRevision) -> str:
    return revision_url(revision)
