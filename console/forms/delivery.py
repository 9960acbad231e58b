"""The form of a project's delivery settings page. It only gathers what was typed: graphs.delivery checks
every field and names every problem at once, as the API does."""

from __future__ import annotations

from django import forms

from console.forms.fields import TypedText
from graphs.models import ProjectDelivery


class DeliveryForm(forms.Form):
    # Text with a list to choose from: a value no list offers is graphs.delivery's to name, with the rest.
    deliver = TypedText(label="Deliver", widget=forms.Select(choices=ProjectDelivery.Deliver.choices),
                        help_text="When a run succeeds: push its branch, or push it and open a pull request.")
    remote_url = TypedText(label="Remote", help_text="The repository runs are pushed to: an https://, ssh:// or file://"
                                                     " URL, or an absolute path. Never a password in it.")
    forge = TypedText(label="Forge", widget=forms.Select(choices=ProjectDelivery.Forge.choices))
    forge_api_url = TypedText(label="Forge API", help_text="Empty for GitHub's public API; a GitLab's …/api/v4, a"
                                                           " Gitea's or Forgejo's …/api/v1.")
    forge_repo = TypedText(label="Repository on the forge", help_text="owner/name, or GitLab's project path.")
    forge_token_env = TypedText(label="Token variable", help_text="The name of the console's environment variable"
                                                                  " holding the token — never the token itself.")
    forge_webhook_secret_env = TypedText(label="Webhook secret variable",
                                         help_text="The name of the variable holding the forge's webhook secret.")
