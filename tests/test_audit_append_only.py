"""The audit log is append-only: an entry saved again, deleted, or changed or deleted through a query set
is refused and stays as it was; the Django admin shows entries read-only, with no add, change or delete.
Deleting a user or a project keeps their entries, which still name them."""

from __future__ import annotations

import pytest

from graphs.audit import audit_record
from graphs.models import AuditEntry, AuditEntryImmutable
from tests import factories
from tests.clients import signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def entry(project, alice) -> AuditEntry:
    return audit_record(actor=alice, action=AuditEntry.Action.RUN_CANCELLED, object_type="run", object_id="r1",
                        summary="Cancelled a run", project=project, before={"status": "running"})


def test_an_entry_refuses_to_be_saved_again_or_deleted(entry):
    entry.summary = "Nothing happened"

    with pytest.raises(AuditEntryImmutable):
        entry.save()
    with pytest.raises(AuditEntryImmutable):
        entry.delete()

    assert AuditEntry.objects.get(pk=entry.pk).summary == "Cancelled a run"


def test_query_sets_refuse_to_update_or_delete_entries(entry):
    with pytest.raises(AuditEntryImmutable):
        AuditEntry.objects.filter(pk=entry.pk).update(summary="rewritten")
    with pytest.raises(AuditEntryImmutable):
        AuditEntry.objects.all().delete()
    with pytest.raises(AuditEntryImmutable):
        AuditEntry.objects.bulk_update([entry], ["summary"])

    assert AuditEntry.objects.get(pk=entry.pk).summary == "Cancelled a run"


def test_an_action_outside_the_vocabulary_is_refused_where_it_is_written(alice):
    with pytest.raises(ValueError, match="not an audit action"):
        audit_record(actor=alice, action="run.vanished", object_type="run", object_id="r1", summary="?")

    assert not AuditEntry.objects.exists()


def test_deleting_the_actor_or_the_project_keeps_the_entry_and_its_names(entry, project, alice):
    alice.delete()
    project.delete()

    kept = AuditEntry.objects.get(pk=entry.pk)
    assert (kept.actor, kept.actor_name, kept.project, kept.project_slug) == (None, "alice", None, project.slug)


def test_the_admin_lists_and_shows_entries_but_offers_no_add_change_or_delete(entry):
    root = factories.UserFactory(username="root", is_staff=True, is_superuser=True)
    client = signed_in(root)

    listing = client.get("/admin/graphs/auditentry/")
    assert listing.status_code == 200 and "Cancelled a run" in listing.content.decode()
    assert "delete_selected" not in listing.content.decode()
    shown = client.get(f"/admin/graphs/auditentry/{entry.pk}/change/")
    assert shown.status_code == 200 and 'name="_save"' not in shown.content.decode()
    assert client.get("/admin/graphs/auditentry/add/").status_code == 403
    assert client.post(f"/admin/graphs/auditentry/{entry.pk}/change/", {"summary": "rewritten"}).status_code == 403
    assert client.post(f"/admin/graphs/auditentry/{entry.pk}/delete/", {"post": "yes"}).status_code == 403
    assert AuditEntry.objects.get(pk=entry.pk).summary == "Cancelled a run"
