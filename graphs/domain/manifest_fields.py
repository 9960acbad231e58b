"""The shapes of manifest fields that several validators check: an id, a command and a number of
seconds, and how a field's allowed values are named.

graphs.domain.manifest_nodes checks nodes with these, and so do the judgment kinds (graphs.domain.judgments),
which graphs.domain.manifest_nodes reads. Each ``*_errors`` function returns the problems of one field, every line
starting with the ``label`` it is given, so a message names the node and the field.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# A command (a command node's or a command judgment's argv) is bounded like every stored string.
COMMAND_MAX_ARGS = 100
COMMAND_ARG_MAX_LENGTH = 4000


def is_id(value: Any) -> bool:
    """Whether ``value`` can name something: a string with more than whitespace in it."""
    return isinstance(value, str) and bool(value.strip())


def choices(values: Iterable[str]) -> str:
    return ", ".join(values)


def command_errors(command: Any, label: str) -> list[str]:
    """A command is an argv: a non-empty list of non-empty strings, run without a shell."""
    if not isinstance(command, list) or not command:
        return [f"{label} must be a non-empty list of strings (the program and its arguments), not {command!r}"]
    if len(command) > COMMAND_MAX_ARGS:
        return [f"{label} has {len(command)} arguments, over the limit of {COMMAND_MAX_ARGS}"]
    errors = []
    for index, arg in enumerate(command):
        if not isinstance(arg, str) or not arg:
            errors.append(f"{label}[{index}] must be a non-empty string, not {arg!r}")
        elif len(arg) > COMMAND_ARG_MAX_LENGTH:
            errors.append(f"{label}[{index}] is {len(arg)} characters, over the limit of {COMMAND_ARG_MAX_LENGTH}")
        elif "\x00" in arg:
            errors.append(f"{label}[{index}] contains a NUL character")
    return errors


def timeout_errors(timeout: Any, label: str) -> list[str]:
    """A number of seconds (a timeout, a deadline) is a positive integer; None leaves the default."""
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 1):
        return [f"{label} must be a positive integer number of seconds, not {timeout!r}"]
    return []
