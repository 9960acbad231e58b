"""The task page's facts that span its runs: each run's artifacts, the Outcome and the run it comes from,
the last verdict an earlier run reached, and why a new run cannot be made now."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from graphs.domain.mechanical_checks import final_verdict_read
from graphs.models import Artifact, Task, WorkGraphRun, WorkNodeExecution

# Why "Run pipeline" (and Plan, and Run again) are disabled while a run of the task is under way.
RUN_UNDER_WAY = "A run is under way: cancel it or wait for it to end."

_JUDGED = (WorkNodeExecution.Status.SUCCEEDED, WorkNodeExecution.Status.FAILED)


@dataclass(frozen=True, slots=True)
class RunVerdict:
    """A run's final verdict as the Outcome shows it, with the attempt that holds its evidence."""

    run: WorkGraphRun
    verdict: str
    line: str
    evidence_pk: Any


@dataclass(frozen=True, slots=True)
class TaskOutcome:
    """The Outcome of the task's latest finished run, the run it comes from, and — when that run reached
    no verdict (a cancelled re-run) — the newest verdict an earlier run did reach, kept in view."""

    run: WorkGraphRun | None
    facts: dict
    verdict: RunVerdict | None
    last_verdict: RunVerdict | None

    @property
    def shown(self) -> bool:
        return bool(self.facts) or self.last_verdict is not None


def runs_artifacts(artifacts: Sequence[Artifact]) -> dict[Any, list[Artifact]]:
    """Each run's artifacts (``artifacts`` being the task's, newest first), one per node and type: a node
    that ran again lists the artifact of its latest attempt, not every attempt's copy. No query."""
    kept: dict[Any, dict[tuple[str, str], Artifact]] = {}
    for artifact in artifacts:
        key = (artifact.node_exec.node_id, artifact.artifact_type)
        kept.setdefault(artifact.run_id, {}).setdefault(key, artifact)
    return {run_id: list(by_key.values()) for run_id, by_key in kept.items()}


def task_outcome(task: Task, runs: Sequence[WorkGraphRun]) -> TaskOutcome:
    """The task's Outcome (``runs`` being its runs, newest first, with their manifests). One query."""
    finished = [run for run in runs if run.is_finished()]
    verdicts = _runs_verdicts(finished)
    facts = task.outcome or {}
    run = next((run for run in runs if str(run.run_id) == facts.get("run_id")), None)
    verdict = verdicts.get(run.pk) if run is not None else None
    last = None
    if verdict is None:
        last = next((verdicts[earlier.pk] for earlier in finished if earlier is not run and earlier.pk in verdicts),
                    None)
    return TaskOutcome(run=run, facts=facts, verdict=verdict, last_verdict=last)


def task_run_refusal(runs: Sequence[WorkGraphRun], *, imported: bool = False) -> str:
    """Why no new run of the task can be made now, in words; empty when one can. A run that is only
    planned, never started, is no refusal for a new plan or pipeline, which supersedes it; an imported
    task's "Run again" still waits for it (``imported``)."""
    blocking = [run for run in runs if not run.is_finished() and (imported or not run.is_unstarted())]
    return RUN_UNDER_WAY if blocking else ""


def _runs_verdicts(runs: Sequence[WorkGraphRun]) -> dict[Any, RunVerdict]:
    """Each of ``runs`` that reached a final verdict: its last judged verdict node's answer (one query)."""
    verdict_ids = {
        node["node_id"]
        for run in runs
        for node in (run.graph_manifest or {}).get("nodes", [])
        if isinstance(node, dict) and node.get("node_type") == "final_verdict"
    }
    if not verdict_ids:
        return {}
    by_pk = {run.pk: run for run in runs}
    rows = (
        WorkNodeExecution.objects.filter(run__in=runs, node_id__in=verdict_ids, status__in=_JUDGED)
        .order_by("-finished_at")
        .values_list("run_id", "node_exec_id", "output_payload__text")
    )
    found: dict[Any, RunVerdict] = {}
    for run_id, pk, text in rows:
        if run_id in found:
            continue
        read = final_verdict_read(text if isinstance(text, str) else "")
        if read is not None:
            found[run_id] = RunVerdict(run=by_pk[run_id], verdict=read.verdict, line=read.line, evidence_pk=pk)
    return found
