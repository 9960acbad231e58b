"""Skill administration pages: list, create, edit with a live preview, status, revisions and usage.

Every page needs the global ``graphs.manage_skills`` permission: anonymous users are sent to sign
in, signed-in users without it get 403.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from console.forms.revisions import RevisionPairForm, conflict_shown
from console.forms.skills import MAX_BODY_CHARS, SkillForm, SkillStatusForm
from console.views.common import revision_saved_say, revisions_labelled
from graphs.domain.markdown import markdown_render_safe
from graphs.domain.revisions import RevisionConflict
from graphs.errors import WorkGraphError
from graphs.models import Skill
from graphs.skills.revisions import skill_revisions_diff, skill_save
from graphs.skills.statuses import skill_allowed_statuses, skill_status_change, skill_status_history
from graphs.skills.team_templates import TEMPLATE_EXAMPLE, TEMPLATE_NODE_FIELD_HELP, team_template_parse
from graphs.skills.usage import skill_owners, skill_usage, skills_for_admin

SKILLS_PER_PAGE = 50


def _skill_admin(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    return login_required(permission_required("graphs.manage_skills", raise_exception=True)(view))


@_skill_admin
def skill_list(request: HttpRequest) -> HttpResponse:
    filters = {
        "status": request.GET.get("status", "") if request.GET.get("status") in Skill.Status.values else "",
        "owner": request.GET.get("owner", "")[:100],
        "text": request.GET.get("q", "")[:200],
    }
    page = Paginator(skills_for_admin(**filters), SKILLS_PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "skills/skill_list.html",
        {"page": page, "filters": filters, "statuses": Skill.Status.choices, "owners": skill_owners(),
         "query": query.urlencode()},
    )


@_skill_admin
def skill_new(request: HttpRequest) -> HttpResponse:
    form = SkillForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        skill = form.save(commit=False)
        skill.source = Skill.Source.CONSOLE
        skill_save(skill=skill, body=form.cleaned_data["body"], author=request.user,
                   note=form.cleaned_data["note"] or "created in the console")
        messages.success(request, f"Skill {skill.skill_id} created as a draft.")
        return redirect("skill_detail", skill_id=skill.skill_id)
    return _editor(request, form, skill=None)


@_skill_admin
def skill_edit(request: HttpRequest, skill_id: str) -> HttpResponse:
    skill = _skill_or_404(skill_id)
    latest = skill.revisions.order_by("-number").values_list("number", flat=True).first() or 0
    form = SkillForm(request.POST or None, instance=skill, initial={"base_revision": latest})
    if request.method == "POST" and form.is_valid():
        try:
            revision = skill_save(skill=form.save(commit=False), body=form.cleaned_data["body"], author=request.user,
                                  note=form.cleaned_data["note"], base_revision=form.cleaned_data["base_revision"])
        except RevisionConflict as conflict:
            return _editor(request, conflict_shown(form, conflict), skill=skill, conflict=conflict, status=409)
        revision_saved_say(request, revision)
        return redirect("skill_detail", skill_id=skill.skill_id)
    return _editor(request, form, skill=skill)


@_skill_admin
@require_POST
def skill_preview(request: HttpRequest) -> JsonResponse:
    """The editor's live preview: the body rendered and sanitized, and its parsed team template."""
    body = request.POST.get("body", "")
    if len(body) > MAX_BODY_CHARS:
        return JsonResponse({"error": f"the body is longer than {MAX_BODY_CHARS} characters"}, status=400)
    return JsonResponse(_rendered(body))


@_skill_admin
def skill_detail(request: HttpRequest, skill_id: str) -> HttpResponse:
    skill = _skill_or_404(skill_id)
    revisions = list(skill.revisions.select_related("author").order_by("-number"))
    return render(
        request,
        "skills/skill_detail.html",
        {
            "skill": skill,
            "body_html": mark_safe(markdown_render_safe(skill.body)),  # noqa: S308 — sanitized by nh3
            "template_json": _pretty(skill.team_template) if skill.team_template is not None else "",
            "revisions": revisions,
            **revisions_labelled(skill, revisions),
            "diff_url": reverse("skill_diff", kwargs={"skill_id": skill.skill_id}),
            "status_form": SkillStatusForm(),
            "next_statuses": [(s, Skill.Status(s).label) for s in skill_allowed_statuses(skill)],
            "history": skill_status_history(skill)[:50],
            "usage": skill_usage(skill=skill, viewer=request.user),
        },
    )


@_skill_admin
@require_POST
def skill_status(request: HttpRequest, skill_id: str) -> HttpResponse:
    skill = _skill_or_404(skill_id)
    form = SkillStatusForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose the new status and say why.")
        return redirect("skill_detail", skill_id=skill.skill_id)
    try:
        skill_status_change(skill=skill, status=form.cleaned_data["status"], reason=form.cleaned_data["reason"],
                            by=request.user)
    except WorkGraphError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"{skill.skill_id} is now {skill.status}.")
    return redirect("skill_detail", skill_id=skill.skill_id)


@_skill_admin
def skill_diff(request: HttpRequest, skill_id: str) -> HttpResponse:
    skill = _skill_or_404(skill_id)
    numbers = list(skill.revisions.order_by("number").values_list("number", flat=True))
    form = RevisionPairForm(request.GET or _latest_pair(numbers))
    context = {"skill": skill, "subject": skill.skill_id, "crumbs": "skills/_crumbs.html", "numbers": numbers}
    old = new = None
    if form.is_valid():
        revisions = {r.number: r for r in skill.revisions.filter(number__in=form.cleaned_data.values())}
        old, new = revisions.get(form.cleaned_data["old"]), revisions.get(form.cleaned_data["new"])
    if old is None or new is None:
        # A hand-edited or stale link: the page says so and offers the revisions there are.
        problem = (f"This skill has no such pair of revisions; it has {len(numbers)}: choose two."
                   if numbers else "This skill has no revisions to compare yet.")
        return render(request, "revisions/diff.html", {**context, "problem": problem}, status=404)
    return render(request, "revisions/diff.html",
                  {**context, "old": old, "new": new, "lines": skill_revisions_diff(old=old, new=new)})


@_skill_admin
def skill_usage_page(request: HttpRequest, skill_id: str) -> HttpResponse:
    skill = _skill_or_404(skill_id)
    return render(
        request, "skills/skill_usage.html", {"skill": skill, "usage": skill_usage(skill=skill, viewer=request.user)}
    )


def _skill_or_404(skill_id: str) -> Skill:
    skill = Skill.objects.filter(skill_id=skill_id).first()
    if skill is None:
        raise Http404(f"no skill has the id {skill_id}")
    return skill


def _editor(request: HttpRequest, form: SkillForm, *, skill: Skill | None, conflict: RevisionConflict | None = None,
            status: int | None = None) -> HttpResponse:
    body = form.data.get("body", "") if form.is_bound else (skill.body if skill else "")
    return render(
        request,
        "skills/skill_form.html",
        {"form": form, "skill": skill, **_rendered(body), "template_fields": TEMPLATE_NODE_FIELD_HELP.items(),
         "tools": sorted(settings.WORKGRAPH_TOOL_REGISTRY.items()), "template_example": TEMPLATE_EXAMPLE,
         "conflict": conflict},
        status=status or (400 if form.errors else 200),
    )


def _rendered(body: str) -> dict[str, Any]:
    parsed = team_template_parse(body.replace("\r\n", "\n"))
    return {
        "html": markdown_render_safe(body),
        "template_json": _pretty(parsed.template) if parsed.template is not None else "",
        "warnings": parsed.warnings,
    }


def _latest_pair(numbers: list[int]) -> dict[str, int] | None:
    if len(numbers) < 2:
        return None
    return {"old": numbers[-2], "new": numbers[-1]}


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)
