"""Agent profile pages: the list, a profile (the console's, or a project's override), its editor with a
sanitized preview, a revision, and the diff of two revisions.

Like the skill pages, every page needs the global ``graphs.manage_skills`` permission: anonymous users are
sent to sign in, signed-in users without it get 403.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.contrib.auth.decorators import login_required, permission_required
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from console.forms.agent_profiles import AgentProfileForm, OverrideForm
from console.forms.revisions import RevisionPairForm, conflict_shown
from console.views.common import revision_saved_say, revisions_labelled
from graphs.domain.markdown import markdown_render_safe
from graphs.domain.revisions import RevisionConflict
from graphs.models import AgentProfile, AgentProfileRevision, Project
from graphs.profiles.resolve import profile_override_create, profile_override_remove, profiles_ensure_shipped
from graphs.profiles.revisions import profile_revisions_diff, profile_save


def _profile_admin(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    return login_required(permission_required("graphs.manage_skills", raise_exception=True)(view))


@_profile_admin
def profile_list(request: HttpRequest) -> HttpResponse:
    profiles_ensure_shipped()
    profiles = (AgentProfile.objects.select_related("project").annotate(revision_count=Count("revisions"))
                .order_by("org_node", "project__slug"))
    return render(request, "agent_profiles/profile_list.html", {"profiles": profiles})


@_profile_admin
def profile_new(request: HttpRequest) -> HttpResponse:
    form = AgentProfileForm(request.POST or None)
    if request.method == "POST" and "preview" not in request.POST and form.is_valid():
        profile = form.save(commit=False)
        profile_save(profile=profile, author=request.user, note=form.cleaned_data["note"] or "created in the console")
        messages.success(request, f"The {profile.org_node} profile is created.")
        return redirect(_url("agent_profile_detail", profile))
    return _editor(request, form, profile=None)


@_profile_admin
def profile_detail(request: HttpRequest, org_node: str, slug: str | None = None) -> HttpResponse:
    profile = _profile_or_404(org_node, slug)
    revisions = list(profile.revisions.select_related("author").order_by("-number"))
    for revision in revisions:
        revision.page_url = _url("agent_profile_revision", profile, number=revision.number)
    overrides = [] if slug else list(
        AgentProfile.objects.filter(org_node=org_node, project__isnull=False).select_related("project"))
    return render(request, "agent_profiles/profile_detail.html", {
        "profile": profile,
        "instructions_html": mark_safe(markdown_render_safe(profile.instructions)),  # noqa: S308 — sanitized by nh3
        "revisions": revisions,
        **revisions_labelled(profile, revisions),
        "diff_url": _url("agent_profile_diff", profile),
        "overrides": overrides,
        "projects": [] if slug else Project.objects.exclude(pk__in=[o.project_id for o in overrides]).order_by("slug"),
    })


@_profile_admin
def profile_edit(request: HttpRequest, org_node: str, slug: str | None = None) -> HttpResponse:
    profile = _profile_or_404(org_node, slug)
    latest = profile.revisions.order_by("-number").values_list("number", flat=True).first() or 0
    form = AgentProfileForm(request.POST or None, instance=profile, initial={"base_revision": latest})
    if request.method == "POST" and "preview" not in request.POST and form.is_valid():
        try:
            revision = profile_save(profile=form.save(commit=False), author=request.user,
                                    note=form.cleaned_data["note"], base_revision=form.cleaned_data["base_revision"])
        except RevisionConflict as conflict:
            return _editor(request, conflict_shown(form, conflict), profile=profile, conflict=conflict, status=409)
        revision_saved_say(request, revision)
        return redirect(_url("agent_profile_detail", profile))
    return _editor(request, form, profile=profile)


@_profile_admin
def profile_revision(request: HttpRequest, org_node: str, number: int, slug: str | None = None) -> HttpResponse:
    profile = _profile_or_404(org_node, slug)
    revision = profile.revisions.select_related("author").filter(number=number).first()
    if revision is None:
        raise Http404(f"the {profile} profile has no revision {number}")
    return render(request, "agent_profiles/profile_revision.html", {
        "profile": profile, "revision": revision,
        "instructions_html": mark_safe(markdown_render_safe(revision.instructions)),  # noqa: S308 — sanitized by nh3
        "latest": profile.revisions.order_by("-number").values_list("number", flat=True).first(),
    })


@_profile_admin
def profile_diff(request: HttpRequest, org_node: str, slug: str | None = None) -> HttpResponse:
    profile = _profile_or_404(org_node, slug)
    numbers = list(profile.revisions.order_by("number").values_list("number", flat=True))
    form = RevisionPairForm(request.GET or ({"old": numbers[-2], "new": numbers[-1]} if len(numbers) > 1 else None))
    old = new = None
    if form.is_valid():
        revisions = {r.number: r for r in profile.revisions.select_related("author")
                     .filter(number__in=form.cleaned_data.values())}
        old, new = revisions.get(form.cleaned_data["old"]), revisions.get(form.cleaned_data["new"])
    context = {"profile": profile, "subject": str(profile), "crumbs": "agent_profiles/_crumbs.html", "numbers": numbers}
    if old is None or new is None:
        # A hand-edited or stale link: the page says so and offers the revisions there are.
        context["problem"] = (f"This profile has no such pair of revisions; it has {len(numbers)}: choose two."
                              if len(numbers) > 1 else "This profile has no two revisions to compare yet.")
        return render(request, "revisions/diff.html", context, status=404)
    return render(request, "revisions/diff.html",
                  {**context, "old": old, "new": new, "lines": profile_revisions_diff(old=old, new=new)})


@_profile_admin
@require_POST
def profile_override(request: HttpRequest, org_node: str) -> HttpResponse:
    """Start a project's override of the console's profile, as a copy of it, and open its editor."""
    console = AgentProfile.objects.filter(org_node=org_node, project__isnull=True).first()
    if console is None:
        raise Http404(f"no profile of {org_node}")
    form = OverrideForm(request.POST)
    project = Project.objects.filter(slug=form.cleaned_data["project"]).first() if form.is_valid() else None
    if project is None:
        messages.error(request, "Choose one of the projects listed.")
        return redirect(_url("agent_profile_detail", console))
    override = profile_override_create(profile=console, project=project, author=request.user)
    messages.success(request, f"{project.name} now has its own {org_node} profile, copied from the console's.")
    return redirect(_url("agent_profile_edit", override))


@_profile_admin
@require_POST
def profile_override_delete(request: HttpRequest, org_node: str, slug: str) -> HttpResponse:
    override = _profile_or_404(org_node, slug)
    profile_override_remove(override=override, by=request.user)
    messages.success(request, f"{override.project.name} runs {org_node} with the console's profile again.")
    return redirect("agent_profile_detail", org_node=org_node)


def revision_url(revision: AgentProfileRevision) -> str:
    """The page of ``revision``, in its profile's pages (the console's, or a project's override)."""
    return _url("agent_profile_revision", revision.profile, number=revision.number)


def _url(name: str, profile: AgentProfile, **kwargs) -> str:
    if profile.project_id:
        return reverse(f"{name}_project", kwargs={"org_node": profile.org_node, "slug": profile.project.slug, **kwargs})
    return reverse(name, kwargs={"org_node": profile.org_node, **kwargs})


def _profile_or_404(org_node: str, slug: str | None) -> AgentProfile:
    if slug is None and org_node in ("planner", "coder", "validator"):
        profiles_ensure_shipped()
    profile = (AgentProfile.objects.select_related("project")
               .filter(org_node=org_node, project__slug=slug) if slug else
               AgentProfile.objects.filter(org_node=org_node, project__isnull=True)).first()
    if profile is None:
        raise Http404(f"no profile of {org_node}" + (f" in {slug}" if slug else ""))
    return profile


def _editor(request: HttpRequest, form: AgentProfileForm, *, profile: AgentProfile | None,
            conflict: RevisionConflict | None = None, status: int | None = None) -> HttpResponse:
    instructions = form.data.get("instructions", "") if form.is_bound else (profile.instructions if profile else "")
    return render(request, "agent_profiles/profile_form.html", {
        "form": form, "profile": profile,
        "preview_html": mark_safe(markdown_render_safe(instructions)),  # noqa: S308 — sanitized by nh3
        "cancel_url": _url("agent_profile_detail", profile) if profile else reverse("agent_profile_list"),
        "conflict": conflict,
    }, status=status or (400 if form.errors else 200))
