"""The datasets page's forms: a new dataset, and the "Add to dataset" of a run's pages. They only gather what
was chosen or typed: graphs.datasets checks every field, and names each problem as the API does."""

from __future__ import annotations

from django import forms

from console.forms.fields import TypedText
from graphs.models import Dataset, Project


class DatasetForm(forms.Form):
    name = TypedText(help_text="Unique in the project: what it measures (say, \u201cCSV exports that failed\u201d).")
    description = TypedText(widget=forms.Textarea(attrs={"rows": 2}),
                            help_text="What its cases have in common, and why they were chosen.")


class AddToDatasetForm(forms.Form):
    """The dataset of the run's project a run is added to, as a case."""

    dataset = forms.ModelChoiceField(queryset=Dataset.objects.none(), empty_label=None)

    def __init__(self, *args, project: Project, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = Dataset.objects.filter(project=project).order_by("name")
