"""A project's forge token and webhook secret: read, when they are needed, from the console's environment
variables the project names, and kept out of everything the console writes.

A project stores only the variables' names, and only names the console's operator allows
(``WORKGRAPH_FORGE_SECRET_ENV``): a lead cannot have the console send another of its secrets (its
``SECRET_KEY``, its database's URL) to a remote of their choosing. A value is handed to the one git command
or HTTP request that needs it; every message a delivery records passes through ``redacted`` first, which
replaces a value (and its URL-encoded form) by the variable's name.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import quote

from django.conf import settings

from graphs.delivery.failures import DeliveryFailed

NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")
# A value this short could stand for too much of any text: such a token is refused rather than redacted badly.
SHORTEST_VALUE = 8
# A password written into a URL (https://user:password@host): whatever it is, it is not shown.
_URL_PASSWORD = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^/@:\s]*):[^/@\s]*@", re.IGNORECASE)


@dataclass(frozen=True)
class Secret:
    """A secret's value and the variable it came from; its repr shows the name alone."""

    name: str
    value: str = field(repr=False)


def secret_name_problem(name: str, *, setting: str) -> str | None:
    """What is wrong with naming the variable ``name`` as the project's ``setting``, or None."""
    if not NAME_PATTERN.match(name):
        return "The name of an environment variable: letters, digits and '_', not starting with a digit."
    allowed = settings.WORKGRAPH_FORGE_SECRET_ENV
    if name not in allowed:
        listed = ", ".join(allowed) if allowed else "none yet"
        return (f"{name} is not among the variables this console lets projects name (WORKGRAPH_FORGE_SECRET_ENV:"
                f" {listed}); its administrator adds it there.")
    if name in settings.WORKGRAPH_AGENT_ENV or name in settings.WORKGRAPH_COMMAND_ENV:
        return f"{name} is passed to agents or commands (WORKGRAPH_AGENT_ENV, WORKGRAPH_COMMAND_ENV): not a secret."
    return None


def secret_read(name: str, *, setting: str) -> Secret:
    """The value of the variable ``name`` that the project names as ``setting``; ``DeliveryFailed`` (naming
    the variable, never a value) when it may not be named, is unset or too short to be a token."""
    problem = secret_name_problem(name, setting=setting)
    if problem is not None:
        raise DeliveryFailed(f"{setting} names {name}, which the console does not read for a project: {problem}")
    value = os.environ.get(name, "")
    if not value.strip():
        raise DeliveryFailed(f"The variable {name} ({setting}) is not set in the console's environment.")
    if len(value) < SHORTEST_VALUE:
        raise DeliveryFailed(f"The variable {name} ({setting}) holds fewer than {SHORTEST_VALUE} characters:"
                             " not a token the console will send.")
    return Secret(name=name, value=value)


def secrets_present(names: Iterable[str]) -> list[Secret]:
    """The secrets among ``names`` set in the environment now, to redact: whatever a message might echo."""
    found = []
    for name in names:
        value = os.environ.get(name, "") if name and NAME_PATTERN.match(name) else ""
        if value:
            found.append(Secret(name=name, value=value))
    return found


def redacted(text: str, secrets: Iterable[Secret]) -> str:
    """``text`` with each secret's value, as it is and URL-encoded, replaced by ``[<its variable>]``, and any
    password written into a URL by ``[redacted]``."""
    for secret in sorted(secrets, key=lambda each: len(each.value), reverse=True):
        if not secret.value:
            continue
        for form in {secret.value, quote(secret.value, safe=""), quote(secret.value)}:
            text = text.replace(form, f"[{secret.name}]")
    return _URL_PASSWORD.sub(lambda found: f"{found['scheme']}{found['user']}:[redacted]@", text)
