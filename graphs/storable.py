"""Agent text made storable: PostgreSQL text and JSONB cannot hold NUL characters."""

from __future__ import annotations

from typing import Any

REPLACEMENT = "\ufffd"


def storable(value: Any) -> Any:
    """Return ``value`` (a string or JSON-shaped data) with every NUL character replaced by U+FFFD.

    Agent output is untrusted and sometimes binary (or holds a "\\u0000" escape); without this, saving
    it fails on PostgreSQL and the attempt it belongs to could not even record why it failed. Walks
    without recursion, like the manifest library, so deeply nested data is safe.
    """
    if isinstance(value, str):
        return value.replace("\x00", REPLACEMENT) if "\x00" in value else value
    if not isinstance(value, dict | list | tuple):
        return value
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
                copied = storable(item)
            if isinstance(target, dict):
                target[storable(key)] = copied
            else:
                target.append(copied)
    return root
