"""The seed backend-test DAG spec and small specs built for the import tests."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures" / "dag_specs"
BACKEND_TEST_SPEC = FIXTURES / "backend-test-dag.json"


def backend_test_spec() -> dict[str, Any]:
    """The seed's backend-test DAG spec (tests/fixtures/dag_specs), as a fresh copy each time."""
    return json.loads(BACKEND_TEST_SPEC.read_text())


def backend_test_prompt_files() -> dict[str, str]:
    """The markdown prompts the backend-test spec's tasks name, by file name."""
    return {path.name: path.read_text() for path in FIXTURES.glob("*.prompt.md")}


def pi(task_id: str, *deps: str, prompt: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"id": task_id, "executor": "pi", "role": "implementer", "depends_on": list(deps),
            "subtask_prompt": prompt or f"Do {task_id}.", **extra}


def shell(task_id: str, *deps: str, commands: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"id": task_id, "executor": "shell", "role": "verifier", "depends_on": list(deps),
            "shell": {"commands": commands or ["true"]}, **extra}


def gate(task_id: str, reads: str, **extra: Any) -> dict[str, Any]:
    return {"id": task_id, "executor": "shell", "role": "verifier", "depends_on": [reads],
            "shell": {"commands": [], "verdictGate": {"fromNodeId": reads, "accept": ["VERDICT: pass"],
                                                      "lineMode": "first-verdict-line"}}, **extra}


def spec_of(*tasks: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"title": "Small spec", "objective": "Check the import.", "tasks": [copy.deepcopy(t) for t in tasks],
            **fields}
