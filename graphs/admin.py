from django import forms
from django.contrib import admin

from graphs import models
from graphs.audit import audit_record
from graphs.delivery.project_settings import FIELDS as DELIVERY_FIELDS
from graphs.delivery.project_settings import delivery_settings_problems
from graphs.profiles.revisions import profile_save
from graphs.skills.revisions import skill_save

Action = models.AuditEntry.Action


class MembershipInline(admin.TabularInline):
    model = models.ProjectMembership
    extra = 0
    autocomplete_fields = ["user"]


class ProjectDeliveryForm(forms.ModelForm):
    """A project's delivery settings, checked by graphs.delivery as the API and the settings page check them."""

    class Meta:
        model = models.ProjectDelivery
        fields = DELIVERY_FIELDS

    def clean(self):
        cleaned = super().clean()
        values = {name: cleaned.get(name) or "" for name in DELIVERY_FIELDS}
        for name, message in delivery_settings_problems(values, project=self.instance.project).items():
            self.add_error(name, message)
        cleaned.update(values)
        return cleaned


class ProjectDeliveryInline(admin.StackedInline):
    model = models.ProjectDelivery
    form = ProjectDeliveryForm
    can_delete = False
    max_num = 1


@admin.register(models.Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "target_folder", "require_plan_approval", "require_change_review", "allow_commands",
                    "allow_command_network", "llm_failure_classifier", "max_run_cost_usd"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline, ProjectDeliveryInline]

    # The admin saves a project and its members in one transaction (changeform_view's): their audit
    # entries are written in it too.
    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if change and not form.changed_data:
            return
        fields = form.changed_data if change else list(form.cleaned_data)
        audit_record(
            actor=request.user, action=Action.PROJECT_EDITED if change else Action.PROJECT_CREATED,
            object_type="project", object_id=obj.slug, project=obj,
            before={name: form.initial.get(name) for name in fields} if change else None,
            after={name: form.cleaned_data.get(name) for name in fields},
            summary=f"{'Changed ' + ', '.join(fields) + ' of' if change else 'Created'} the project {obj.slug}"
                    " in the Django admin",
        )

    def save_formset(self, request, form, formset, change):
        super().save_formset(request, form, formset, change)
        if formset.model is models.ProjectMembership:
            _memberships_audit(request.user, project=form.instance, formset=formset)
        if formset.model is models.ProjectDelivery:
            for delivery_form in formset.forms:
                if delivery_form.has_changed():
                    changed = delivery_form.changed_data
                    audit_record(
                        actor=request.user, action=Action.DELIVERY_EDITED, object_type="project",
                        object_id=form.instance.slug, project=form.instance,
                        before={name: delivery_form.initial.get(name) for name in changed},
                        after={name: delivery_form.cleaned_data.get(name) for name in changed},
                        summary=f"Changed {', '.join(changed)} of where the project {form.instance.slug} delivers"
                                " in the Django admin")


def _memberships_audit(actor, *, project: models.Project, formset) -> None:
    def record(action: str, membership: models.ProjectMembership, summary: str, before=None, after=None) -> None:
        audit_record(actor=actor, action=action, object_type="member", object_id=membership.user.get_username(),
                     project=project, before=before, after=after, summary=f"{summary} in the Django admin")

    for membership in formset.new_objects:
        record(Action.MEMBER_ADDED, membership, f"Added {membership.user} as a {membership.role}",
               after={"role": membership.role})
    initial = {row.instance.pk: row.initial for row in formset.forms}
    for membership, changed in formset.changed_objects:
        was = initial.get(membership.pk, {})
        record(Action.MEMBER_ROLE_CHANGED, membership, f"Changed {', '.join(changed)} of {membership.user}",
               before={name: was.get(name) for name in changed},
               after={name: getattr(membership, "user_id" if name == "user" else name) for name in changed})
    for membership in formset.deleted_objects:
        record(Action.MEMBER_REMOVED, membership, f"Removed {membership.user}", before={"role": membership.role})


@admin.register(models.AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    """The audit log, read-only: nothing here adds, changes or deletes an entry."""

    list_display = ["created_at", "actor_name", "action", "project_slug", "object_type", "object_id", "summary"]
    list_filter = ["action"]
    search_fields = ["actor_name", "project_slug", "object_id", "summary"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class SkillRevisionInline(admin.TabularInline):
    model = models.SkillRevision
    extra = 0
    fields = ["number", "author", "note", "git_commit_sha", "created_at"]
    readonly_fields = fields
    can_delete = False


@admin.register(models.Skill)
class SkillAdmin(admin.ModelAdmin):
    list_display = ["skill_id", "name", "owner_org_node", "status", "source", "updated_at"]
    list_filter = ["status", "owner_org_node", "source"]
    search_fields = ["skill_id", "name", "description"]
    # Status moves only through skill_status_change (the console's skill page), which
    # checks the transition and records the reason.
    readonly_fields = [
        "status", "status_reason", "team_template", "template_warnings", "created_at", "updated_at",
    ]
    inlines = [SkillRevisionInline]

    def save_model(self, request, obj, form, change):
        # Admin edits go through skill_save too, so they keep revisions and re-parse the template.
        skill_save(skill=obj, body=obj.body, author=request.user, note="edited in the Django admin")
        # skill_save leaves the defect flag alone (the engine sets it); here an admin may clear it on purpose.
        if change and {"defect_reported_at", "defect_note"} & set(form.changed_data):
            obj.save(update_fields=["defect_reported_at", "defect_note"])


class AgentProfileRevisionInline(admin.TabularInline):
    model = models.AgentProfileRevision
    extra = 0
    fields = ["number", "author", "note", "permission_mode", "model", "created_at"]
    readonly_fields = fields
    can_delete = False


@admin.register(models.AgentProfile)
class AgentProfileAdmin(admin.ModelAdmin):
    list_display = ["org_node", "project", "model", "permission_mode", "updated_at"]
    list_filter = ["permission_mode", "org_node"]
    search_fields = ["org_node", "description", "project__slug"]
    inlines = [AgentProfileRevisionInline]

    def save_model(self, request, obj, form, change):
        # Admin edits go through profile_save too, so they keep revisions.
        profile_save(profile=obj, author=request.user, note="edited in the Django admin")


@admin.register(models.Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ["title", "project", "task_type", "status", "created_at"]
    list_filter = ["status", "task_type", "project"]
    search_fields = ["title", "goal_text"]
    raw_id_fields = ["created_by", "skill"]


class ExecutionInline(admin.TabularInline):
    model = models.WorkNodeExecution
    extra = 0
    fields = ["node_id", "attempt", "cause", "subagent_type", "status", "started_at", "finished_at"]
    readonly_fields = fields
    can_delete = False
    show_change_link = True


@admin.register(models.WorkGraphRun)
class WorkGraphRunAdmin(admin.ModelAdmin):
    list_display = ["run_id", "task", "status", "manifest_version", "created_at"]
    list_filter = ["status"]
    raw_id_fields = ["task", "forked_from"]
    inlines = [ExecutionInline]


@admin.register(models.RunLayout)
class RunLayoutAdmin(admin.ModelAdmin):
    """The server's layouts, to see why one failed (``error``); the page never needs them edited."""

    list_display = ["run", "manifest_version", "status", "node_count", "compute_ms", "created_at"]
    list_filter = ["status"]
    raw_id_fields = ["run"]
    readonly_fields = ["run", "digest", "manifest_version", "status", "node_count", "compute_ms", "error"]
    exclude = ["layout"]


@admin.register(models.WorkNodeExecution)
class WorkNodeExecutionAdmin(admin.ModelAdmin):
    list_display = ["node_id", "attempt", "cause", "subagent_type", "status", "run", "started_at"]
    list_filter = ["status", "cause", "subagent_type"]
    search_fields = ["node_id"]
    raw_id_fields = ["run", "skill_ref"]


@admin.register(models.ExecutionLogFile)
class ExecutionLogFileAdmin(admin.ModelAdmin):
    list_display = ["node_exec", "status", "last_seq", "line_count", "size_bytes", "created_at"]
    raw_id_fields = ["node_exec", "project"]


@admin.register(models.Artifact)
class ArtifactAdmin(admin.ModelAdmin):
    list_display = ["artifact_type", "task", "run", "created_at"]
    list_filter = ["artifact_type"]
    raw_id_fields = ["task", "run", "node_exec"]
