"""What the skill and agent profile pages share: a refused save shown on the form that made it, and the
pair of revisions a diff page compares."""

from __future__ import annotations

from django import forms

from graphs.domain.revisions import RevisionConflict


def conflict_shown(form: forms.ModelForm, conflict: RevisionConflict) -> forms.ModelForm:
    """``form`` with the conflict as its error, keeping every typed field, now made on the newer revision.

    Saving it again is a choice made with both versions on the page: it replaces the newer revision.
    """
    form.add_error(None, str(conflict))
    form.data = form.data.copy()
    form.data["base_revision"] = conflict.latest
    return form


class RevisionPairForm(forms.Form):
    """The two revision numbers to compare."""

    old = forms.IntegerField(min_value=1)
    new = forms.IntegerField(min_value=1)

