"""The audit log's page in the docs names every action the log records, so an action added to the
vocabulary (graphs.models.audit) is documented where a reader looks for it."""

from __future__ import annotations

from pathlib import Path

from graphs.models import AuditEntry

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_the_audit_page_names_every_action_of_the_vocabulary():
    text = (DOCS / "audit.md").read_text()

    assert [action for action in AuditEntry.Action.values if f"`{action}`" not in text] == []
