"""The pages that list the runners, the judgment kinds and the on_fail actions name every one the code
registers, read from the registries themselves (the settings: tests/test_docs_configuration.py); and the
README's documentation list names every page of the docs site."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graphs.domain.judgments.registry import JUDGMENT_KINDS
from graphs.domain.on_fail_actions.registry import ON_FAIL_ACTIONS
from graphs.domain.runners import RUNNERS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _unnamed(names, page: str) -> list[str]:
    """The ``names`` the page never writes as code (`name`)."""
    text = (DOCS / page).read_text()
    return [name for name in names if f"`{name}`" not in text]


@pytest.mark.parametrize(("registry", "page"), [
    (RUNNERS, "agents.md"),
    (RUNNERS, "concepts.md"),
    (JUDGMENT_KINDS, "concepts.md"),
    (ON_FAIL_ACTIONS, "concepts.md"),
])
def test_each_page_that_lists_a_registry_names_all_of_it(registry, page):
    assert _unnamed(list(registry), page) == []


def test_a_name_a_page_leaves_out_is_found():
    assert _unnamed(["claude", "no_such_runner"], "agents.md") == ["no_such_runner"]


def test_the_readme_lists_every_page_of_the_docs():
    section = (ROOT / "README.md").read_text().split("## The documentation", 1)[1]
    linked = set(re.findall(r"\(docs/([\w-]+\.md)\)", section))

    assert sorted(path.name for path in DOCS.glob("*.md") if path.name not in linked) == []
