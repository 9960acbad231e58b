"""Manifests the validation tests build, and the errors validation reports for them."""

from __future__ import annotations

from typing import Any

import pytest

from graphs.domain.manifest import ManifestError, validate_graph_manifest


def node(node_id: str, *deps: str, **fields: Any) -> dict[str, Any]:
    """A node with a task prompt, unless it is a catalog node (``artifact_type``)."""
    shape = {} if "artifact_type" in fields else {"task_prompt": f"Do the {node_id} step."}
    return {"node_id": node_id, "depends_on": list(deps), **shape, **fields}


def graph(*nodes: Any, edges: list[Any] | None = None) -> dict[str, Any]:
    return {"nodes": list(nodes), "edges": edges or []}


def errors(manifest: Any, existing: dict[str, list[str]] | None = None, **limits: int) -> list[str]:
    """Every error validation reports for ``manifest`` (it must report some)."""
    with pytest.raises(ManifestError) as caught:
        validate_graph_manifest(manifest, existing, **limits)
    return caught.value.errors


def one_error(manifest: Any, existing: dict[str, list[str]] | None = None, **limits: int) -> str:
    """The one error validation reports for ``manifest``."""
    reported = errors(manifest, existing, **limits)
    assert len(reported) == 1, reported
    return reported[0]
