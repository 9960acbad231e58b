"""Agent text made storable: PostgreSQL text and JSONB cannot hold NUL characters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

REPLACEMENT = "\ufffd"


def storable(value: Any) -> Any:
    """Return ``value`` (a string or JSON-shaped data) with every NUL character replaced by U+FFFD.

    Agent output is untrusted and sometimes binary (or holds a "\\u0000" escape); without this, saving
    it fails on PostgreSQL and the attempt it belongs to could not even record why it failed.
    """
    return json_transform(value, leaf=_without_nul)


def json_transform(value: Any, *, leaf: Callable[[Any], Any]) -> Any:
    """A copy of JSON-shaped data with ``leaf`` applied to every key and scalar.

    Walks without recursion, so data nested thousands of levels deep (hostile agent output) is safe.
    """
    if not isinstance(value, dict | list | tuple):
        return leaf(value)
    root: Any = {} if isinstance(value, dict) else []
    pending = [(value, root)]
    while pending:
        source, target = pending.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in items:
            if isinstance(item, dict | list | tuple):
                copied: Any = {} if isinstance(item, dict) else []
                pending.append((item, copied))
            else:
                copied = leaf(item)
            if isinstance(target, dict):
                target[leaf(key)] = copied
            else:
                target.append(copied)
    return root


def _without_nul(value: Any) -> Any:
    if isinstance(value, str) and "\x00" in value:
        return value.replace("\x00", REPLACEMENT)
    return value
