"""What of prompts, outputs and tools' texts a span carries: nothing unless the setting says so."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.conf import settings


@dataclass(frozen=True)
class ContentPolicy:
    capture: bool
    max_chars: int

    def text(self, value: Any) -> str | None:
        """``value`` as text cut to the maximum, or None when content is not captured or there is none."""
        if not self.capture or value is None or value == "":
            return None
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return text[: self.max_chars]

    def messages(self, role: str, value: Any) -> str | None:
        """A GenAI ``*.messages`` attribute: one message of ``role`` with the text as its only part."""
        text = self.text(value)
        if text is None:
            return None
        return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}], ensure_ascii=False)


def content_policy() -> ContentPolicy:
    """The policy the settings set (read on each call, so a test's override_settings applies)."""
    return ContentPolicy(capture=settings.WORKGRAPH_OTEL_CAPTURE_CONTENT,
                         max_chars=settings.WORKGRAPH_OTEL_CONTENT_MAX_CHARS)
