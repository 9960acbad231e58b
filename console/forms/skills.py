"""The skill pages' forms: a skill's editor, and a status change with its reason."""

from __future__ import annotations

from django import forms

from graphs.models import Skill

MAX_BODY_CHARS = 200_000
# Paths under /skills/ that a skill_id must not shadow.
RESERVED_SKILL_IDS = frozenset({"new", "preview"})


class SkillForm(forms.ModelForm):
    """Create or edit a skill. ``base_revision`` is the revision the editor started from."""

    # Markdown is whitespace-sensitive (a trailing newline, indented code): the body is kept as typed.
    body = forms.CharField(
        required=False, strip=False, max_length=MAX_BODY_CHARS,
        widget=forms.Textarea(attrs={"rows": 26, "spellcheck": "false", "class": "skill-body"}),
        help_text='Markdown. One fenced block tagged team-template may hold {"version": 1, "nodes": [...]}.',
    )
    note = forms.CharField(
        required=False, max_length=2000, help_text="What changed and why, kept with the revision."
    )
    base_revision = forms.IntegerField(required=False, widget=forms.HiddenInput)

    class Meta:
        model = Skill
        fields = ["skill_id", "name", "description", "owner_org_node", "body"]
        labels = {"skill_id": "Skill id", "owner_org_node": "Owner org node"}
        help_texts = {
            "skill_id": "Letters, digits, - and _. Manifests refer to the skill by it, so it cannot change later.",
            "owner_org_node": "The org node (planner, coder, validator…) that owns the skill.",
        }
        widgets = {
            "description": forms.Textarea(attrs={"rows": 2}),
        }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            self.fields["skill_id"].disabled = True

    def clean_skill_id(self) -> str:
        skill_id = self.cleaned_data["skill_id"]
        if skill_id in RESERVED_SKILL_IDS:
            raise forms.ValidationError(f"{skill_id!r} is reserved; choose another id.")
        return skill_id


class SkillStatusForm(forms.Form):
    status = forms.ChoiceField(choices=Skill.Status.choices)
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), max_length=4000)
