"""Claims and log-close marks commit without waiting for the disk, and only when they own the transaction."""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from graphs.transactions import transaction_unflushed

# PostgreSQL's setting: the suite's services tests run against PostgreSQL (always under CI=true).
pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def _synchronous_commit() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        return cursor.fetchone()[0]


def test_its_own_transaction_commits_unflushed_and_the_session_is_left_as_it_was():
    with transaction_unflushed():
        assert _synchronous_commit() == "off"
    assert _synchronous_commit() == "on"


def test_inside_a_callers_transaction_the_callers_commit_decides_and_no_savepoint_is_taken():
    with transaction.atomic():
        with transaction_unflushed():
            assert _synchronous_commit() == "on"
            assert connection.savepoint_ids == []
