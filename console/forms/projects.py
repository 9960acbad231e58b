"""The forms of the project pages: a project's settings and its members. They only gather what was typed:
every rule is checked by graphs.projects, whose messages the pages show on the fields they name — all of
them at once, as the API names them. A form that refused a field itself would hide the others' problems
until it was fixed."""

from __future__ import annotations

from django import forms
from django.conf import settings

from console.forms.fields import TypedText
from graphs.models import ProjectMembership
from graphs.projects.edits import agent_choices

COMMANDS_CONFIRM_LABEL = (
    "I understand: with commands allowed, agents' command nodes and command judgments run any program in the"
    " project's folder (each attempt's worktree), inside the sandbox; with network, they also reach any host."
)


class ProjectForm(forms.Form):
    slug = TypedText(
        help_text="In the project's address; lowercase letters, digits, '-' and '_'. It never changes.", strip=False)
    name = TypedText()
    target_folder = TypedText(
        label="Folder", help_text="The absolute path of the folder agents work in; best the top of a git repository.")
    base_ref = TypedText(
        label="Base ref", help_text="The branch, tag or commit each run starts from; empty: the repository's HEAD.")
    # Text with a list to choose from: a name no runner has is graphs.projects' to name, with the rest.
    agent = TypedText(label="Agent runner", widget=forms.Select)
    max_run_cost_usd = TypedText(label="Budget per run (USD)",
                                 help_text="What one run's agent calls may spend; empty: no budget.")
    require_plan_approval = forms.BooleanField(
        required=False, help_text="Every plan, and every append to a run, waits for a reviewer's approval.")
    require_change_review = forms.BooleanField(
        required=False, help_text="An attempt's change waits for a reviewer's approval before it lands on the run's"
                                  " branch; a reviewer may ask the agent to amend it.")
    allow_commands = forms.BooleanField(
        required=False, help_text="Command nodes and command judgments (your test suite, say) run programs.")
    allow_command_network = forms.BooleanField(required=False, help_text="Those programs reach the network.")
    promotion_min_pass_rate = TypedText(
        label="Promotion: minimum pass rate",
        help_text="From 0 to 1: the pass rate an experiment must reach for the revision it measured to be labelled"
                  " production; empty: none.")
    promotion_no_regressions = forms.BooleanField(
        label="Promotion: no regressions", required=False,
        help_text="A case that passed under the production revision's latest experiment on the same dataset may not"
                  " fail under the promoted revision's.")
    confirm_commands = forms.BooleanField(label="Confirm commands", required=False, help_text=COMMANDS_CONFIRM_LABEL)

    def __init__(self, *args, creating: bool, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        default = f"The console's default ({settings.WORKGRAPH_AGENT})"
        self.fields["agent"].widget.choices = [("", default), *((name, name) for name in agent_choices())]
        if not creating:
            del self.fields["slug"]

    def values(self) -> dict:
        """What the form holds, as graphs.projects takes it (without the confirmation)."""
        return {name: value for name, value in self.cleaned_data.items() if name != "confirm_commands"}


class MemberAddForm(forms.Form):
    username = TypedText()
    # Text with a list to choose from: a role no list offers is graphs.projects' to name, with the username's.
    role = TypedText(widget=forms.Select(choices=ProjectMembership.Role.choices), initial=ProjectMembership.Role.VIEWER)
