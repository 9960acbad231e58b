"""A fork's edit of the node it is forked from: a generic node's prompt (``task_prompt``) or a command
node's argv (``command``), applied to a copy of the run's manifest and held to the manifest's node rules.

A catalog node has no prompt of its own (its assignment is its artifact type's), so it takes no edit.
Only the one field changes: every other node, and every other field of the edited one, stays as it was.

No Django and no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphs.domain.manifest_fields import command_errors
from graphs.domain.manifest_nodes import is_command_node, node_errors
from graphs.domain.storable import json_transform

PROMPT = "task_prompt"
COMMAND = "command"
# What a person calls each field, on the pages and in the API's errors.
FIELD_WORDS = {PROMPT: "prompt", COMMAND: "argv"}


class ForkEditError(ValueError):
    """An edit the manifest's rules refuse; ``errors`` maps ``prompt``, ``argv`` or ``node`` to its messages."""

    def __init__(self, errors: Mapping[str, list[str]]) -> None:
        self.errors = {field: list(messages) for field, messages in errors.items()}
        super().__init__(" ".join(message for messages in self.errors.values() for message in messages))


@dataclass(frozen=True)
class NodeEdit:
    """One field of one node, before and after: a prompt is a string, an argv a list of strings."""

    node_id: str
    field: str
    before: Any
    after: Any

    def as_dict(self) -> dict[str, Any]:
        return {"node_id": self.node_id, "field": self.field, "before": self.before, "after": self.after}


def editable_field(node: Mapping[str, Any]) -> str | None:
    """The field of ``node`` a fork may edit: its argv (a command node), its prompt (a generic node), or
    None (a catalog node, whose assignment comes from its artifact type)."""
    if is_command_node(node):
        return COMMAND
    if PROMPT in node:
        return PROMPT
    return None


def node_edit_apply(
    manifest: Mapping[str, Any], node_id: str, *, prompt: str | None = None, argv: Any = None
) -> tuple[dict[str, Any], NodeEdit]:
    """A copy of ``manifest`` with ``node_id``'s prompt or argv replaced, and the edit made.

    Raise ``ForkEditError`` when the node is unknown or is a catalog node; otherwise it names every problem
    of the edit at once: a field the node does not have, and a new value that breaks a node rule (an empty
    prompt, an argv that is no list of non-empty strings) or changes nothing.
    """
    edited: dict[str, Any] = json_transform(dict(manifest), leaf=lambda item: item)
    node = next((n for n in edited.get("nodes") or [] if isinstance(n, dict) and n.get("node_id") == node_id), None)
    if node is None:
        raise ForkEditError({"node": [f"There is no node {node_id!r} in this run."]})
    field = editable_field(node)
    given = {name: value for name, value in ((PROMPT, prompt), (COMMAND, argv)) if value is not None}
    if field is None:
        raise ForkEditError({"node": [
            f"{node_id} is a catalog node (artifact type {node.get('artifact_type')}): its assignment comes from the"
            " catalog, so it has no prompt to edit. Fork from it without an edit."
        ]})
    kind = "a command node: it runs its argv and has no prompt" if field == COMMAND else (
        "an agent node: it has a prompt and runs no argv")
    errors = {FIELD_WORDS[name]: [f"{node_id} is {kind}."] for name in given if name != field}
    if field not in given and not errors:
        errors[FIELD_WORDS[field]] = [f"Give the node's new {FIELD_WORDS[field]}."]
    after = _prompt_clean(given.get(field)) if field == PROMPT else given.get(field)
    before = manifest_node_field(manifest, node_id, field)
    if field in given:
        value_errors = _edit_errors(node, field, before=before, after=after)
        if value_errors:
            errors[FIELD_WORDS[field]] = value_errors
    if errors:
        raise ForkEditError(errors)
    return edited, NodeEdit(node_id=node_id, field=field, before=before, after=after)


def manifest_node_field(manifest: Mapping[str, Any], node_id: str, field: str) -> Any:
    node = next((n for n in manifest.get("nodes") or [] if isinstance(n, Mapping) and n.get("node_id") == node_id), {})
    return json_transform(node.get(field), leaf=lambda item: item)


def _prompt_clean(prompt: Any) -> Any:
    # A browser's form sends CRLF line ends: the prompt is stored as the agent will read it.
    return prompt.replace("\r\n", "\n") if isinstance(prompt, str) else prompt


def _edit_errors(node: dict[str, Any], field: str, *, before: Any, after: Any) -> list[str]:
    """What is wrong with ``after`` as ``node``'s ``field``, which it is set to when its own rules allow."""
    errors = _value_errors(field, after)
    if errors:
        return errors
    node[field] = after
    errors = node_errors(node, f"node {node['node_id']!r}")
    if not errors and before == after:
        errors = [f"This is the node's current {FIELD_WORDS[field]}: change it, or fork without an edit."]
    return errors


def _value_errors(field: str, value: Any) -> list[str]:
    if field == PROMPT:
        return [] if isinstance(value, str) and value.strip() else ["The prompt cannot be empty."]
    return command_errors(value, "The argv")


def argv_parse(text: str) -> list[str]:
    """The argv a person typed as a JSON list of strings, as the page shows it; ValueError says what is wrong."""
    shape = 'The argv must be a JSON list of strings, such as ["python3", "-m", "pytest"]'
    try:
        argv = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{shape}: {error}.") from None
    if not isinstance(argv, list):
        raise ValueError(f"{shape}.")
    return argv


def argv_text(argv: Any) -> str:
    """An argv as the page's form shows it: a JSON list, one argument a line when it has several."""
    return json.dumps(argv, ensure_ascii=False, indent=None if len(argv or []) < 2 else 0)


def edit_text(field: str, value: Any) -> str:
    """An edited value as a diff compares it: a prompt as it is, an argv one argument a line."""
    if field == COMMAND:
        return "\n".join(str(arg) for arg in value or [])
    return str(value or "")
