"""The project page's Check the agent button: its project's runner checked (graphs.agents.check), the words shown."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from console.permissions import project_for_member, require
from graphs.agents.check import CHECK_ORG_NODE, agent_check
from graphs.profiles.resolve import profile_resolve


@login_required
@require_POST
def project_agent_check(request: HttpRequest, slug: str) -> HttpResponse:
    """Check the project's agent (a lead's action: it makes a real, paid call) and say what was found."""
    project, role = project_for_member(request.user, slug)
    require(role, "edit_project")
    result = agent_check(project.agent, profile=profile_resolve(org_node=CHECK_ORG_NODE, project=project))
    (messages.success if result.ok else messages.error)(request, f"Check the agent: {result.words}")
    return redirect("project_detail", slug=project.slug)
