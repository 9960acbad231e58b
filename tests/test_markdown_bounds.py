"""Rendering and searching skill Markdown stays bounded whatever the body holds: the work done is
asserted here; how long it takes is measured in tests/bench/bench_markdown_bounds.py."""

from __future__ import annotations

import pytest

from graphs.domain import markdown
from graphs.domain.markdown import fenced_blocks_find, markdown_render_safe
from tests.clients import signed_in

# Each of these made markdown-it spend seconds on 200,000 characters.
HOSTILE_BODIES = {
    "image openers": "![" * 100_000,
    "brackets": "[" * 200_000,
    "emphasis": "*a" * 100_000,
    "many hostile paragraphs": ("![" * 4_000 + "\n\n") * 24,
}


@pytest.mark.parametrize("body", HOSTILE_BODIES.values(), ids=HOSTILE_BODIES.keys())
def test_a_fence_after_a_hostile_body_is_found(body):
    assert fenced_blocks_find(body + "\n\n```team-template\n{}\n```\n", tags=("team-template",)) == ["{}\n"]


@pytest.fixture
def inline_parsed(monkeypatch) -> list[int]:
    """The length of each paragraph markdown-it's inline parser is given, as rendering goes."""
    lengths: list[int] = []
    parse = markdown._PARSER.inline.parse

    def counted(src, md, env, tokens):
        lengths.append(len(src))
        return parse(src, md, env, tokens)

    monkeypatch.setattr(markdown._PARSER.inline, "parse", counted)
    return lengths


@pytest.mark.django_db
@pytest.mark.parametrize("body", HOSTILE_BODIES.values(), ids=HOSTILE_BODIES.keys())
def test_the_preview_of_a_hostile_200_000_character_body_parses_no_paragraph_beyond_the_limit(
    dana, body, inline_parsed
):
    response = signed_in(dana).post("/skills/preview/", {"body": body})
    assert response.status_code == 200
    assert all(length <= markdown.MAX_INLINE_CHARS for length in inline_parsed)
    assert sum(inline_parsed) <= len(body)


def test_a_paragraph_too_long_for_prose_renders_as_plain_text():
    html = markdown_render_safe("Short *prose*.\n\n" + "*x* " * 10_000)
    assert "<em>prose</em>" in html
    assert html.count("<em>") == 1 and "*x* *x*" in html


def test_once_the_time_budget_is_spent_the_rest_renders_as_plain_text(monkeypatch):
    monkeypatch.setattr(markdown, "INLINE_BUDGET_SECONDS", 0)
    html = markdown_render_safe("# Title\n\nSome *prose*.\n")
    assert "<h1>Title</h1>" in html and "Some *prose*." in html
