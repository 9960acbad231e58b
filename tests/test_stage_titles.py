"""A stage's heading is written in words by the server (``graphs.reads.todo_tree.stage_title``): the nodes of an
imported DAG spec read as such, any other stage by its org node's name, never an identifier a stylesheet reshapes."""

from __future__ import annotations

import pytest

from graphs.planning.dag_specs import IMPORT_ORG_NODE
from graphs.reads.todo_tree import stage_title


@pytest.mark.parametrize(("org_node", "title"), [
    ("planner", "Planner"),
    ("validator", "Validator"),
    ("code_reviewer", "Code reviewer"),
    ("security-audit", "Security audit"),
    (IMPORT_ORG_NODE, "Imported DAG spec"),
])
def test_a_stage_is_headed_by_its_org_node_in_words(org_node, title):
    assert stage_title(org_node) == title
