"""The forms of the task, run and project pages (``views.pages``) and of the run actions (``views.actions``)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms

from graphs.domain.catalogs import ORG_NODES
from graphs.models import Project, Skill, Task, WorkGraphRun


class LinesField(forms.CharField):
    """A textarea holding one item per line, cleaned to a list of non-empty stripped lines."""

    widget = forms.Textarea(attrs={"rows": 3})

    def __init__(self, *args, max_items: int = 50, **kwargs) -> None:
        self.max_items = max_items
        super().__init__(*args, **kwargs)

    def to_python(self, value):
        text = super().to_python(value)
        return [line.strip() for line in text.splitlines() if line.strip()]

    def validate(self, value):
        if self.required and not value:
            raise forms.ValidationError(self.error_messages["required"], code="required")
        if len(value) > self.max_items:
            raise forms.ValidationError(f"At most {self.max_items} items, one per line.", code="max_items")
        if any(len(item) > 2000 for item in value):
            raise forms.ValidationError("Each item must be at most 2,000 characters.", code="item_too_long")


class TaskForm(forms.Form):
    project = forms.ModelChoiceField(queryset=Project.objects.none())
    title = forms.CharField(max_length=300)
    goal_text = forms.CharField(label="Goal", widget=forms.Textarea(attrs={"rows": 4}), max_length=20_000)
    deliverables = LinesField(help_text="One per line.")
    acceptance_criteria = LinesField(help_text="One per line: how we will know the work is done.")
    constraints = LinesField(required=False, help_text="One per line.")
    resources = LinesField(required=False, help_text="Files, links or notes the agents may use; one per line.")
    task_type = forms.ChoiceField(choices=Task.TaskType.choices, initial=Task.TaskType.DYNAMIC)
    workflow_id = forms.CharField(max_length=200, required=False, help_text="Required for a workflow task.")
    skill = forms.ModelChoiceField(
        queryset=Skill.objects.filter(status=Skill.Status.ACTIVE), required=False, to_field_name="skill_id",
        help_text="An active skill whose team template guides the planner (optional).",
    )
    planning_mode = forms.ChoiceField(choices=Task.PlanningMode.choices, initial=Task.PlanningMode.GRAPH,
                                      required=False)

    def __init__(self, *args, projects, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["project"].queryset = projects
        if len(projects[:2]) == 1:
            self.fields["project"].initial = projects[0]

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("task_type") == Task.TaskType.WORKFLOW and not cleaned.get("workflow_id"):
            self.add_error("workflow_id", "A workflow task needs the id of its workflow.")
        if cleaned.get("task_type") == Task.TaskType.DYNAMIC:
            cleaned["workflow_id"] = ""
        cleaned["planning_mode"] = cleaned.get("planning_mode") or Task.PlanningMode.GRAPH
        return cleaned


class ReviewForm(forms.Form):
    comment = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False, max_length=5000)


class ForkForm(forms.Form):
    node_id = forms.CharField(max_length=200)


class PlanForm(forms.Form):
    """Who plans the task from scratch: any org node, with its own catalog and prompt; left out, the planner."""

    org_node = forms.ChoiceField(label="Plan as", choices=[(name, name) for name in ORG_NODES], initial=ORG_NODES[0],
                                 required=False)

    def clean_org_node(self) -> str:
        return self.cleaned_data["org_node"] or ORG_NODES[0]


class BudgetForm(forms.Form):
    """The budget a run is started with; left empty, the run keeps its project's."""

    max_cost_usd = forms.DecimalField(
        label="Budget (USD)", required=False, min_value=Decimal("0.0001"), max_digits=12, decimal_places=4,
    )


class _MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class _MultipleFileField(forms.FileField):
    """Any number of files, each checked as a FileField checks one."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("widget", _MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        files = data if isinstance(data, list | tuple) else [data] if data else []
        return [super(_MultipleFileField, self).clean(file, initial) for file in files]


class DagSpecForm(forms.Form):
    spec_file = forms.FileField(label="DAG spec (JSON)", help_text="A loop-agent DAG spec: its tasks[] with executors.")
    prompt_files = _MultipleFileField(
        label="Prompt files", required=False,
        help_text="The markdown prompts its tasks name in subtask_prompt_markdown, matched by file name; "
                  "a file no task names is refused.",
    )


class RunFilterForm(forms.Form):
    """The runs list's filters, read from the query string. A value that does not clean is left out
    (its field says why) and the other filters still apply: a bad link still lists runs."""

    project = forms.ChoiceField(required=False)
    status = forms.ChoiceField(required=False, choices=[("", "Any"), *WorkGraphRun.Status.choices])
    # The org nodes that worked in the viewer's runs (graphs.reads.run_lists.run_list_org_nodes).
    org_node = forms.ChoiceField(label="Org node", required=False)
    created_from = forms.DateField(label="Created from", required=False,
                                   widget=forms.DateInput(attrs={"type": "date"}))
    created_to = forms.DateField(label="Created until", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    min_cost = forms.DecimalField(
        label="Min cost $", required=False, min_value=Decimal(0), max_digits=14, decimal_places=6,
        widget=forms.NumberInput(attrs={"step": "0.0001", "min": "0", "inputmode": "decimal", "placeholder": "0"}),
    )
    q = forms.CharField(label="Search", required=False, max_length=200,
                        widget=forms.TextInput(attrs={"type": "search", "placeholder": "task title or node id"}))

    def __init__(self, *args, projects, org_nodes, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["project"].choices = [("", "All"), *((project.slug, project.name) for project in projects)]
        self.fields["org_node"].choices = [("", "Any"), *((name, name) for name in org_nodes)]

    def selector_filters(self) -> dict[str, Any]:
        """The filters that cleaned, as ``graphs.reads.run_lists.runs_for_user`` takes them."""
        self.is_valid()
        data = self.cleaned_data
        return {
            "project_slug": data.get("project") or "",
            "status": data.get("status") or "",
            "org_node": data.get("org_node") or "",
            "created_from": data.get("created_from"),
            "created_to": data.get("created_to"),
            "min_cost_usd": data.get("min_cost"),
            "text": (data.get("q") or "").strip(),
        }
