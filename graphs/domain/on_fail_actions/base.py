"""What an on_fail action is made of, and what it is given when a node's judgment fails.

Nothing here imports the engine: graphs.domain.manifest_nodes and graphs.domain.manifest validate with the
actions (a node's on_fail, its on_failure edges), and the engine runs them under the run lock, giving each
the failure and the means to act on the run (``FailedAttempt``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


class FailedAttempt(Protocol):
    """A failed attempt as its node's ``on_fail`` action sees it, and what the action may do to the run."""

    @property
    def action(self) -> str: ...

    @property
    def node_id(self) -> str:
        """The failing node."""
        ...

    @property
    def manifest(self) -> Mapping[str, Any]:
        """The run's manifest, merged and validated."""
        ...

    @property
    def issues(self) -> list[str]:
        """What the judge found wrong (never empty)."""
        ...

    @property
    def content(self) -> str:
        """The failing output."""
        ...

    @property
    def findings(self) -> list[str]:
        """What rerun attempts are told: the issues and, when the judgment read a verdict, its words."""
        ...

    def attempts_add(
        self, node_ids: Sequence[str], *, cause: str, feedback: list[str], cause_node_id: str = ""
    ) -> None:
        """Add the next attempt of each node, with ``cause`` and the ``feedback`` its prompt carries."""
        ...

    def log(self, outcome: str, **fields: Any) -> None:
        """Log the action's ``outcome`` on the failing attempt."""
        ...

    def org_nodes(self) -> dict[str, str]:
        """Each node_id of the run and the org node that planned it."""
        ...

    def skills_flag(self, skill_ids: set[str], *, note: str) -> None:
        """Report a defect in each skill, with ``note`` saying what went wrong."""
        ...


Respond = Callable[[FailedAttempt], None]
# The problems of a node's on_fail, each line starting with ``label`` (which names the node).
NodeErrors = Callable[[Mapping[str, Any], str], list[str]]
# The problems of a node's on_failure edges: (node_id, the edges' targets, what a node depends on).
FailureEdgeErrors = Callable[[str, list[str], Callable[[str], set[str]]], list[str]]
# One line of the planning prompt's on_fail rules for (org_node, whether it appends); None: not offered.
PromptRule = Callable[[str, bool], str | None]


def no_errors(node: Mapping[str, Any], label: str) -> list[str]:
    return []


@dataclass(frozen=True)
class OnFailAction:
    """One ``on_fail.action`` a node may declare: what the manifest requires of it, what the engine does
    when the node's judgment fails, and what planning prompts say of it."""

    name: str
    prompt_rule: PromptRule
    # What the action does while the node has attempts left; None ends the node failed at once.
    respond: Respond | None = None
    node_errors: NodeErrors = no_errors
    # None: the action takes no on_failure edge, and one from its node is an error.
    failure_edge_errors: FailureEdgeErrors | None = None
    # The action reads the failing output's verdict, so the rerun attempts are told its words.
    reads_verdict: bool = False


def reruns_add(failure: FailedAttempt, node_ids: Sequence[str], *, cause: str) -> None:
    """Add an attempt of each node, whose work the failing node used, telling it why the node failed."""
    feedback = [f"Node {failure.node_id!r} failed its judgment after using this work: {issue}"
                for issue in failure.findings]
    failure.attempts_add(node_ids, cause=cause, cause_node_id=failure.node_id, feedback=feedback)
