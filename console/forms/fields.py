"""Form fields that only gather what was typed, for forms whose every rule is the domain's: a field refused
by the form would hide the other fields' problems (the domain never sees the submission) and name its own
in other words than the API's."""

from __future__ import annotations

from django import forms
from django.core.validators import ProhibitNullCharactersValidator


class TypedText(forms.CharField):
    """Text as typed, never refused here: the domain names what is missing, too long or holds a NUL."""

    def __init__(self, **kwargs) -> None:
        super().__init__(required=False, **kwargs)
        self.validators = [v for v in self.validators if not isinstance(v, ProhibitNullCharactersValidator)]


class TickedChoices(forms.MultipleChoiceField):
    """The boxes ticked, never refused here: the domain names none ticked, or a value no box offers."""

    def __init__(self, **kwargs) -> None:
        super().__init__(required=False, **kwargs)

    def validate(self, value: list[str]) -> None:
        """Refuse nothing: the domain checks the choice with the rest of the submission."""
