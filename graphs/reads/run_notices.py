"""What a run's pages say about why it stopped or what it waits for: a failed planning call's reason, the
run's own, and the attempts whose change waits for a reviewer.

A planning call that was refused (the coder's or the validator's append, or the planner's plan) leaves
its reason on its attempt; the run may end with a reason of its own. Both pages of a run (the task page's
run tree and the run graph) read them here, so they say the same, live and on reload.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graphs.models import PLANNING_NODE_ID, WorkGraphRun, WorkNodeExecution
from graphs.runs.facts import latest_by_node


@dataclass(frozen=True)
class PlanningFailure:
    """A planning call whose latest attempt failed, with the org node that planned and its reason."""

    node_exec_id: str
    node_id: str
    org_node: str
    reason: str

    def words(self) -> str:
        """``The coder's planning call failed: …``."""
        return f"The {self.org_node or 'planner'}'s planning call failed: {self.reason or 'no reason was recorded'}"


@dataclass(frozen=True)
class ReviewWait:
    """An attempt whose change waits for a reviewer: the run goes on running, its dependants wait."""

    node_exec_id: str
    node_id: str
    attempt: int

    def words(self) -> str:
        """``Waiting for a review: node build's change (attempt 2)``."""
        return f"Waiting for a review: node {self.node_id}'s change (attempt {self.attempt})"


@dataclass(frozen=True)
class RunNotices:
    """What a run's page says about how it stopped, or what it waits for, beside its status."""

    planning_failures: list[PlanningFailure]
    # The run's own reason, when it ended with one no planning failure already gives and no budget
    # banner says ("" otherwise).
    reason: str
    review_waits: list[ReviewWait] = field(default_factory=list)


def run_notices(run: WorkGraphRun) -> RunNotices:
    """The run's failed planning calls (oldest first), its own stop reason and the changes waiting for a
    reviewer (two queries)."""
    rows = (
        WorkNodeExecution.objects.filter(run=run, node_id__startswith=PLANNING_NODE_ID)
        .order_by("created_at")
        .values("node_exec_id", "node_id", "attempt", "status", "subagent_type", "error", "created_at")
    )
    failures = [
        PlanningFailure(node_exec_id=str(row["node_exec_id"]), node_id=row["node_id"], org_node=row["subagent_type"],
                        reason=row["error"])
        for row in sorted(latest_by_node(rows).values(), key=lambda row: row["created_at"])
        if row["status"] == WorkNodeExecution.Status.FAILED
    ]
    given = {failure.reason for failure in failures}
    stopped_by_budget = run.error_code == WorkGraphRun.StopCode.BUDGET_EXCEEDED
    reason = run.error if run.is_finished() and run.error and not stopped_by_budget and run.error not in given else ""
    waits = (
        WorkNodeExecution.objects.filter(run=run, status=WorkNodeExecution.Status.AWAITING_REVIEW)
        .order_by("finished_at", "node_id").values_list("node_exec_id", "node_id", "attempt")
    )
    review_waits = [ReviewWait(node_exec_id=str(pk), node_id=node_id, attempt=number) for pk, node_id, number in waits]
    return RunNotices(planning_failures=failures, reason=reason, review_waits=review_waits)
