"""Argument parsing shared by the management commands."""

import uuid


def uuid_or_none(value: str) -> uuid.UUID | None:
    """Return ``value`` as a UUID, or None when it is not one (so lookups never raise on bad input)."""
    try:
        return uuid.UUID(value)
    except ValueError:
        return None
