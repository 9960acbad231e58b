"""Two attempts of a node, or two runs of a task, side by side: what the compare pages show, and the
edit an edited fork made to its node (on the compare page and where a reviewer approves it).

An attempt comparison diffs what went into each attempt and what came out of it (prompt, input payload,
output, judgment); a run comparison lines up the two manifests' nodes with each node's latest attempt in
either run and what each run cost. Reads are shaped so their number does not grow with the nodes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

from graphs.domain.duration_words import duration_text
from graphs.domain.fork_edits import FIELD_WORDS, edit_text
from graphs.domain.manifest_graph import manifest_node_ids
from graphs.domain.text_diffs import MINUS, TextDiff, text_diff
from graphs.models import PLANNING_NODE_ID, ExperimentItem, WorkGraphRun, WorkNodeExecution
from graphs.reads.graph import NOT_STARTED
from graphs.runs.accounting import NO_SPEND, Spend, spend_by_run
from graphs.runs.facts import latest_by_node

# --- Two attempts of one node -------------------------------------------------------------------------


@dataclass(frozen=True)
class ComparedPart:
    """One thing both attempts have (their prompt, output, …), as text, with its diff."""

    name: str
    slug: str
    diff: TextDiff


@dataclass(frozen=True)
class AttemptComparison:
    old: WorkNodeExecution
    new: WorkNodeExecution
    parts: list[ComparedPart]


def attempt_pair_problem(*, old: WorkNodeExecution, new: WorkNodeExecution) -> str | None:
    """Why the two attempts cannot be compared, or None when they can: they must be attempts of the same
    node of one task, in one run or in two (a run and its fork, a run and a later one)."""
    if old.node_id != new.node_id:
        return (f"These are attempts of two different nodes ({old.node_id} and {new.node_id}): only attempts "
                "of one node can be compared.")
    if old.run.task_id != new.run.task_id:
        return "These attempts belong to two different tasks: only attempts of one task's node can be compared."
    return None


def attempts_comparison(*, old: WorkNodeExecution, new: WorkNodeExecution) -> AttemptComparison:
    """The prompt, the input payload (less its prompt, shown apart), the output and the judgment of both
    attempts, each with its line diff. No query: the rows are read as they are."""
    texts = [
        ("Prompt", "prompt", _prompt(old), _prompt(new)),
        ("Input payload", "input", _input_json(old), _input_json(new)),
        ("Output", "output", _output(old), _output(new)),
        ("Judgment", "judgment", _judgment_json(old), _judgment_json(new)),
    ]
    return AttemptComparison(
        old=old, new=new,
        parts=[ComparedPart(name=name, slug=slug, diff=text_diff(old=a, new=b)) for name, slug, a, b in texts],
    )


def _prompt(execution: WorkNodeExecution) -> str:
    return str((execution.input_payload or {}).get("prompt", ""))


def _input_json(execution: WorkNodeExecution) -> str:
    payload = {key: value for key, value in (execution.input_payload or {}).items() if key != "prompt"}
    return _pretty(payload) if payload else ""


def _output(execution: WorkNodeExecution) -> str:
    # A planning call's answer is its raw response; a node's is its text (as the node panel reads them).
    output = execution.output_payload or {}
    return str(output.get("raw_response" if execution.is_planning else "text", ""))


def _judgment_json(execution: WorkNodeExecution) -> str:
    return _pretty(execution.judgment_result) if execution.judgment_result else ""


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


# --- Two runs of one task -----------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeAttempt:
    """A node's latest attempt in one run; ``reused`` when a fork copied it from the run it came from
    (it did not run there: its times are the fork's creation)."""

    node_exec_id: Any
    attempt: int
    status: str
    duration: timedelta | None
    reused: bool = False

    def duration_text(self) -> str:
        """``reused``, or how long it ran (``42 s``); "" when it has not both started and finished."""
        if self.reused:
            return "reused"
        return duration_text(self.duration) if self.duration is not None else ""


@dataclass(frozen=True)
class ComparedNode:
    """A node of either run's manifest, with its latest attempt in each (None: not in it, or not started)."""

    node_id: str
    presence: Literal["both", "added", "removed"]
    old: NodeAttempt | None
    new: NodeAttempt | None

    @property
    def old_status(self) -> str | None:
        """The latest status in the old run; None when the node is not in its manifest."""
        return None if self.presence == "added" else self.old.status if self.old else NOT_STARTED

    @property
    def new_status(self) -> str | None:
        """The latest status in the new run; None when the node is not in its manifest."""
        return None if self.presence == "removed" else self.new.status if self.new else NOT_STARTED

    @property
    def status_changed(self) -> bool:
        return self.presence == "both" and self.old_status != self.new_status

    @property
    def duration_change(self) -> timedelta | None:
        """How much longer (negative: shorter) the new run's attempt took; None unless both ran to an end
        in their own run (a reused attempt did not run in it)."""
        if self.old is None or self.new is None or self.old.reused or self.new.reused:
            return None
        if self.old.duration is None or self.new.duration is None:
            return None
        return self.new.duration - self.old.duration

    def duration_change_text(self) -> str:
        """``+1.2 s`` or ``-35 s`` (the minus being ``MINUS``); ``reused`` when the new run reused the
        attempt; "" when no change can be told (one has not finished, or the old one was reused)."""
        if self.new is not None and self.new.reused:
            return "reused"
        change = self.duration_change
        if change is None:
            return ""
        return f"{MINUS if change < timedelta(0) else '+'}{duration_text(abs(change))}"


@dataclass(frozen=True)
class RunComparison:
    old: WorkGraphRun
    new: WorkGraphRun
    nodes: list[ComparedNode]
    old_spend: Spend
    new_spend: Spend

    @property
    def added(self) -> list[str]:
        return [node.node_id for node in self.nodes if node.presence == "added"]

    @property
    def removed(self) -> list[str]:
        return [node.node_id for node in self.nodes if node.presence == "removed"]

    @property
    def cost_change(self) -> Decimal | None:
        """The new run's cost less the old's; None unless both reported one."""
        if self.old_spend.cost_usd is None or self.new_spend.cost_usd is None:
            return None
        return self.new_spend.cost_usd - self.old_spend.cost_usd

    def cost_change_text(self) -> str:
        """``+$0.0120`` or ``-$0.0040`` (the minus being ``MINUS``); "" unless both runs reported a cost."""
        change = self.cost_change
        if change is None:
            return ""
        return f"{MINUS if change < 0 else '+'}${abs(change):.4f}"


def run_pair_problem(*, old: WorkGraphRun, new: WorkGraphRun) -> str | None:
    """Why the two runs cannot be compared, or None when they can: they must be runs of one task, or two
    experiments' runs of one case (each experiment's run has a task of its own)."""
    if old.task_id != new.task_id and not _runs_of_one_case(old, new):
        return "These runs belong to two different tasks: only runs of one task can be compared."
    return None


def _runs_of_one_case(old: WorkGraphRun, new: WorkGraphRun) -> bool:
    cases = ExperimentItem.objects.filter(run_id__in=[old.pk, new.pk]).values_list("case_id", flat=True)
    return len(cases) == 2 and len(set(cases)) == 1


def runs_comparison(*, old: WorkGraphRun, new: WorkGraphRun) -> RunComparison:
    """The nodes of both manifests — the old run's in its order, then those only the new run has — each
    with its latest attempt in either run, and what each run cost (planning calls included). Two
    queries, however many nodes and attempts."""
    rows = list(
        WorkNodeExecution.objects.filter(run_id__in=[old.pk, new.pk])
        .exclude(node_id__startswith=PLANNING_NODE_ID)
        .values("run_id", "node_exec_id", "node_id", "attempt", "status", "started_at", "finished_at",
                "output_payload__reused_from")
    )
    latest: dict[Any, dict[str, dict]] = {old.pk: {}, new.pk: {}}
    for run_id, by_node in latest.items():
        by_node.update(latest_by_node(row for row in rows if row["run_id"] == run_id))
    spends = spend_by_run(WorkNodeExecution.objects.filter(run_id__in=[old.pk, new.pk]))
    old_ids, new_ids = manifest_node_ids(old.graph_manifest or {}), manifest_node_ids(new.graph_manifest or {})
    in_new = set(new_ids)
    in_old = set(old_ids)
    nodes = [
        ComparedNode(node_id=node_id, presence="both" if node_id in in_new else "removed",
                     old=_node_attempt(latest[old.pk].get(node_id)),
                     new=_node_attempt(latest[new.pk].get(node_id)) if node_id in in_new else None)
        for node_id in old_ids
    ] + [
        ComparedNode(node_id=node_id, presence="added", old=None, new=_node_attempt(latest[new.pk].get(node_id)))
        for node_id in new_ids if node_id not in in_old
    ]
    return RunComparison(old=old, new=new, nodes=nodes, old_spend=spends.get(old.pk, NO_SPEND),
                         new_spend=spends.get(new.pk, NO_SPEND))


def _node_attempt(row: dict | None) -> NodeAttempt | None:
    if row is None:
        return None
    duration = row["finished_at"] - row["started_at"] if row["started_at"] and row["finished_at"] else None
    return NodeAttempt(node_exec_id=row["node_exec_id"], attempt=row["attempt"], status=row["status"],
                       duration=duration, reused=bool(row["output_payload__reused_from"]))


# --- The edit an edited fork made ----------------------------------------------------------------------


@dataclass(frozen=True)
class ForkEditShown:
    """An edited fork's edit as a reviewer reads it: which node, which field, who, and the diff."""

    run: WorkGraphRun
    node_id: str
    # "prompt" or "argv", as FIELD_WORDS names the field.
    field: str
    by: str
    at: datetime | None
    diff: TextDiff


def fork_edit_shown(run: WorkGraphRun) -> ForkEditShown | None:
    """``run``'s edit of the node it was forked from, with its diff (an argv one argument a line); None
    for a run that is no edited fork. No query."""
    edit = run.fork_edit or {}
    if not edit:
        return None
    field = edit.get("field", "")
    at = edit.get("at")
    return ForkEditShown(
        run=run, node_id=str(edit.get("node_id", "")), field=FIELD_WORDS.get(field, field), by=str(edit.get("by", "")),
        at=datetime.fromisoformat(at) if isinstance(at, str) and at else None,
        diff=text_diff(old=edit_text(field, edit.get("before")), new=edit_text(field, edit.get("after"))),
    )
