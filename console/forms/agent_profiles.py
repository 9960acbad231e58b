"""The agent profile editor's form: a profile's content, its tools as text, and the revision's note."""

from __future__ import annotations

import re

from django import forms

from graphs.domain.agent_profiles import ORG_NODE_NAME, tool_name, tool_names_parse
from graphs.models import AgentProfile

# The claude runner passes the instructions as one command-line argument (--agents), which Linux caps at
# 128 KiB: this many characters stay under it in any script, JSON escapes included.
MAX_INSTRUCTIONS_CHARS = 30_000
MAX_TOOL_RULES = 100
# A tool rule: a tool's name, optionally with its specifier in parentheses (``Bash(git diff:*)``).
_TOOL_RULE = re.compile(r"^[A-Za-z][A-Za-z0-9_.:-]*(\([^()\x00-\x1f]*\))?$")
_MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@\[\]-]*$")
# Paths under /agents/ that an org node's name must not shadow.
RESERVED_ORG_NODES = frozenset({"new"})
_TOOLS_HELP = ("Claude Code tool rules, one a line or comma-separated: Read, Write, Bash, Bash(git diff:*), "
               "mcp__server__tool…")


class AgentProfileForm(forms.ModelForm):
    """Create or edit a profile. ``base_revision`` is the revision the editor started from."""

    instructions = forms.CharField(
        required=False, strip=False, max_length=MAX_INSTRUCTIONS_CHARS,
        widget=forms.Textarea(attrs={"rows": 18, "spellcheck": "false", "class": "skill-body"}),
        help_text="Markdown: the agent's system prompt (the claude runner's --agents prompt, the openai runner's "
                  "system message).",
    )
    allowed_tools_text = forms.CharField(
        label="Allowed tools", required=False, max_length=10_000, widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_TOOLS_HELP + " Pre-approved; in dontAsk mode nothing else that needs approval runs.",
    )
    disallowed_tools_text = forms.CharField(
        label="Disallowed tools", required=False, max_length=10_000, widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_TOOLS_HELP + " Removed from the agent, whatever else allows them.",
    )
    note = forms.CharField(required=False, max_length=2000, help_text="What changed and why, kept with the revision.")
    base_revision = forms.IntegerField(required=False, widget=forms.HiddenInput)

    class Meta:
        model = AgentProfile
        fields = ["org_node", "description", "instructions", "model", "effort", "permission_mode", "max_turns",
                  "repository_definition_first"]
        labels = {"org_node": "Org node", "repository_definition_first": "The repository's own definition first"}
        help_texts = {
            "org_node": "The name manifests give as subagent_type (planner, coder…). It cannot change later.",
            "model": "A model name or alias (sonnet, claude-sonnet-4-5, gpt-4.1…). Empty: the runner's default.",
            "permission_mode": "How the claude CLI treats a tool call that needs approval; nobody is there to "
                               "answer a prompt. dontAsk works everywhere, behind a gateway too.",
            "max_turns": "Empty: no bound of its own (a node's max_turns, then WORKGRAPH_MAX_TURNS, still apply).",
        }
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None or self.instance.org_node:
            self.fields["org_node"].disabled = True
        self.fields["allowed_tools_text"].initial = ", ".join(self.instance.allowed_tools or [])
        self.fields["disallowed_tools_text"].initial = ", ".join(self.instance.disallowed_tools or [])

    def clean_org_node(self) -> str:
        org_node = self.cleaned_data["org_node"]
        if self.fields["org_node"].disabled:
            return org_node
        if not ORG_NODE_NAME.match(org_node):
            raise forms.ValidationError("Use letters, digits, - and _ (starting with a letter or digit), at most 100.")
        if org_node in RESERVED_ORG_NODES:
            raise forms.ValidationError(f"{org_node!r} is reserved; choose another name.")
        if AgentProfile.objects.filter(project__isnull=True, org_node=org_node).exists():
            raise forms.ValidationError(f"{org_node} already has a profile.")
        return org_node

    def clean_model(self) -> str:
        model = self.cleaned_data["model"]
        # It is a command-line argument of its own: a value starting with "-" would read as an option.
        if model and not _MODEL.match(model):
            raise forms.ValidationError("A model name is letters, digits and . _ - : / @ [ ], starting with a letter "
                                        "or digit.")
        return model

    def clean_allowed_tools_text(self) -> list[str]:
        return _tool_rules(self.cleaned_data["allowed_tools_text"])

    def clean_disallowed_tools_text(self) -> list[str]:
        return _tool_rules(self.cleaned_data["disallowed_tools_text"])

    def save(self, commit: bool = True) -> AgentProfile:
        profile = super().save(commit=False)
        profile.allowed_tools = self.cleaned_data["allowed_tools_text"]
        profile.disallowed_tools = self.cleaned_data["disallowed_tools_text"]
        if commit:
            profile.save()
        return profile


def _tool_rules(text: str) -> list[str]:
    rules = list(tool_names_parse(text))
    if len(rules) > MAX_TOOL_RULES:
        raise forms.ValidationError(f"At most {MAX_TOOL_RULES} tool rules.")
    wrong = [rule for rule in rules if not _TOOL_RULE.match(rule) or not tool_name(rule)]
    if wrong:
        raise forms.ValidationError(f"Not a tool rule: {', '.join(wrong[:5])}. Write a tool's name, "
                                    "optionally with its specifier in parentheses: Bash(git diff:*).")
    return rules


class OverrideForm(forms.Form):
    """The project a new override is for."""

    project = forms.SlugField()
