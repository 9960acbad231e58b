"""The audit log pages' filters, read from the query string and checked as the API checks them
(``graphs.reads.audit``): a bad value is named on its field."""

from __future__ import annotations

from django import forms

from graphs.models import AuditEntry
from graphs.reads.audit import FAMILIES, AuditFilterInvalid, AuditFilters, audit_filters

_MOMENT = {"type": "datetime-local", "step": "1"}


class AuditFilterForm(forms.Form):
    action = forms.ChoiceField(required=False, choices=[
        ("", "Any"),
        ("Kinds", [(family, f"any {family.replace('_', ' ')} decision") for family in FAMILIES]),
        ("Actions", AuditEntry.Action.choices),
    ])
    actor = forms.CharField(label="Who", required=False, max_length=150,
                            widget=forms.TextInput(attrs={"placeholder": "username"}))
    since = forms.CharField(label="Since", required=False, max_length=64, widget=forms.DateTimeInput(attrs=_MOMENT))
    until = forms.CharField(label="Until", required=False, max_length=64, widget=forms.DateTimeInput(attrs=_MOMENT))

    def __init__(self, *args, projects: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if projects:
            self.fields["project"] = forms.CharField(label="Project", required=False, max_length=50,
                                                     widget=forms.TextInput(attrs={"placeholder": "slug"}))

    def clean(self):
        data = super().clean()
        if not self.errors:
            try:
                self.filters = audit_filters(**{name: data.get(name) or "" for name in self.fields})
            except AuditFilterInvalid as error:
                self.add_error(error.field, f"{error.message[0].upper()}{error.message[1:]}.")
        return data

    def audit_filters(self) -> AuditFilters | None:
        """The filters, checked; None when one of them is wrong (its field says why)."""
        return self.filters if self.is_valid() else None
