"""The console gzips what it answers to a client that accepts it — a large run's graph.json, a page, a
streamed log — and answers the same bytes uncompressed to one that does not."""

from __future__ import annotations

import gzip
import re

import pytest

from graphs.engine import pipeline_start
from graphs.models import WorkGraphRun
from tests.clients import signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished_run(task, inline_executor) -> WorkGraphRun:
    pipeline_start(task=task)
    inline_executor.drain()
    return WorkGraphRun.objects.get(task=task)


def _tokens_masked(body: bytes) -> bytes:
    return re.sub(rb"[A-Za-z0-9]{64}", b"<csrf token>", body)


def _both_ways(client, url: str) -> tuple[object, bytes, object, bytes]:
    """The answer to ``url`` with gzip accepted, its body unzipped, and the answer without."""
    zipped = client.get(url, HTTP_ACCEPT_ENCODING="gzip")
    body = b"".join(zipped.streaming_content) if zipped.streaming else zipped.content
    plain = client.get(url)
    plain_body = b"".join(plain.streaming_content) if plain.streaming else plain.content
    return zipped, gzip.decompress(body), plain, plain_body


def test_graph_json_and_pages_are_gzipped_for_a_client_that_accepts_it(finished_run, alice):
    client = signed_in(alice)
    for url in (f"/runs/{finished_run.run_id}/graph.json", f"/runs/{finished_run.run_id}/"):
        zipped, unzipped, plain, plain_body = _both_ways(client, url)

        assert zipped.status_code == plain.status_code == 200
        assert zipped["Content-Encoding"] == "gzip" and "Accept-Encoding" in zipped["Vary"]
        assert not plain.has_header("Content-Encoding")
        # Two answers of a page differ by their masked CSRF tokens only.
        assert _tokens_masked(unzipped) == _tokens_masked(plain_body) and len(unzipped) > 1000


def test_a_streamed_log_is_gzipped_as_it_streams(finished_run, alice):
    execution = finished_run.executions.exclude(node_id__startswith="__").first()
    zipped, unzipped, _, plain_body = _both_ways(signed_in(alice), f"/executions/{execution.pk}/log.jsonl")

    assert zipped.streaming and zipped["Content-Encoding"] == "gzip"
    assert unzipped == plain_body and b'"event"' in unzipped

