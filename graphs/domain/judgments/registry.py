"""The judgment kinds a manifest may declare, one entry each: adding a kind is its module and a line here."""

from __future__ import annotations

from typing import Any

from graphs.domain.judgments import command, llm, mechanical, none
from graphs.domain.judgments.base import JudgmentKind

# In the order planning prompts describe them and error messages list them.
JUDGMENT_KINDS: dict[str, JudgmentKind] = {
    kind.name: kind for kind in (none.KIND, mechanical.KIND, llm.KIND, command.KIND)
}
# What a node without a ``judgment``, or with one that names no kind, is judged by.
DEFAULT_JUDGMENT_KIND = none.KIND.name


def judgment_kind(name: Any) -> JudgmentKind | None:
    """The kind called ``name``, or None when no kind is (``name`` may be any JSON value)."""
    return JUDGMENT_KINDS.get(name) if isinstance(name, str) else None
