"""Measuring orchestration overhead the same way for the engine, its peer and the bare-Celery floor.

Every system runs the same two graphs of tasks that do nothing: a 40-node chain and a 500-node
fan-out/fan-in (one root, 498 leaves, one join). For each it reports:

- wall time: from handing the graph over to the system reporting it finished;
- "dependencies met → node started": for every node with dependencies, from the moment its last
  dependency finished to the moment it started, median and p95 — the hand-off cost between nodes,
  which for a fan-out also holds the queueing of hundreds of nodes made ready at once;
- in-node time (start → end) median: a no-op for the peer and the floor; for the engine, what it
  does inside a node (claim, prompt, agent call, judgment, log, recording the result).

"Started" and "finished" are the engine's ``started_at`` / ``finished_at`` and, for the others, the
wall clock read inside the task body, all on this one machine's clock.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from django.conf import settings
from django.utils import timezone

from graphs.domain import manifest_graph
from graphs.engine import run_start, run_wait_finished
from graphs.models import PLANNING_NODE_ID, Task, WorkGraphRun
from tests.bench.report import p95
from tests.run_builders import edges_for, node, planned_run

GRAPHS = ("chain40", "fanout500")
LEAVES = 498
RUN_TIMEOUT = 600.0

Spans = dict[str, tuple[float, float]]  # node -> (started, finished), epoch seconds


def chain_manifest(length: int) -> dict:
    nodes = [node("n0")] + [node(f"n{i}", f"n{i - 1}") for i in range(1, length)]
    return {"nodes": nodes, "edges": edges_for(nodes)}


def fanout_manifest(leaves: int) -> dict:
    """One root, ``leaves`` nodes that depend on it, one join that depends on all of them."""
    leaf_ids = [f"leaf{i:03d}" for i in range(leaves)]
    nodes = [node("root"), *(node(leaf, "root") for leaf in leaf_ids), node("join", *leaf_ids)]
    return {"nodes": nodes, "edges": edges_for(nodes)}


def manifest_for(graph: str) -> dict:
    return chain_manifest(40) if graph == "chain40" else fanout_manifest(LEAVES)


@dataclass(frozen=True)
class Measurement:
    graph: str
    nodes: int
    wall_s: float
    wait_median_ms: float
    wait_p95_ms: float
    busy_median_ms: float
    waits_ms: tuple[float, ...] = ()

    @property
    def per_node_ms(self) -> float:
        """Wall time over node count: the critical-path cost per node of a chain, throughput for a fan-out."""
        return self.wall_s * 1000 / self.nodes

    @classmethod
    def from_spans(cls, *, graph: str, wall_s: float, spans: Spans) -> Measurement:
        dependencies = manifest_graph.data_dependencies(manifest_for(graph))
        if set(spans) != set(dependencies):
            raise ValueError(f"{graph}: timings for {len(spans)} nodes, the graph has {len(dependencies)}")
        waits = [
            (spans[node_id][0] - max(spans[dep][1] for dep in deps)) * 1000
            for node_id, deps in dependencies.items()
            if deps
        ]
        return cls(
            graph=graph,
            nodes=len(spans),
            wall_s=wall_s,
            wait_median_ms=statistics.median(waits),
            wait_p95_ms=p95(waits),
            busy_median_ms=statistics.median((end - start) * 1000 for start, end in spans.values()),
            waits_ms=tuple(waits),
        )


def run_measure(*, graph: str, run: WorkGraphRun, handed_over: float) -> Measurement:
    """Read a finished run's timings; ``handed_over`` is when ``run_start`` was called (epoch seconds)."""
    rows = run.executions.exclude(node_id__startswith=PLANNING_NODE_ID).values("node_id", "started_at", "finished_at")
    spans = {row["node_id"]: (row["started_at"].timestamp(), row["finished_at"].timestamp()) for row in rows}
    return Measurement.from_spans(graph=graph, wall_s=run.finished_at.timestamp() - handed_over, spans=spans)


def graph_run(*, task: Task, graph: str, timeout: float = RUN_TIMEOUT) -> Measurement:
    """Start ``graph`` as an already planned run of ``task`` on this process's executor, wait, measure."""
    run = planned_run(task, manifest_for(graph))
    handed_over = timezone.now().timestamp()
    run_start(run=run)
    run = run_wait_finished(run_id=run.run_id, timeout=timeout, poll=0.05)
    if run.status != "succeeded":
        raise RuntimeError(f"{graph}: the run ended {run.status} ({run.error or 'no error'})")
    return run_measure(graph=graph, run=run, handed_over=handed_over)


def combined(graph: str, runs: list[Measurement]) -> Measurement:
    """Repeated runs of one graph as one row: the median wall time, waits pooled over every run."""
    waits = [wait for run in runs for wait in run.waits_ms]
    return Measurement(
        graph=graph,
        nodes=runs[0].nodes,
        wall_s=statistics.median(run.wall_s for run in runs),
        wait_median_ms=statistics.median(waits),
        wait_p95_ms=p95(waits),
        busy_median_ms=statistics.median(run.busy_median_ms for run in runs),
    )


@dataclass(frozen=True)
class Row:
    system: str
    measurement: Measurement
    runs: int


FLOOR = "bare Celery (floor)"
PEER = "Prefect 3.9.1 (peer)"
CELERY_CONCURRENCY = 2
CELERY = f"engine, Celery + Redis ({CELERY_CONCURRENCY} processes)"
EMBEDDED = f"engine, embedded (SQLite, {settings.WORKGRAPH_EMBEDDED_WORKERS} threads)"


@dataclass(frozen=True)
class Target:
    """A target of the benchmark: a ratio of the engine's figure to another system's, at most ``limit``."""

    label: str
    ratio: float
    limit: float

    @property
    def met(self) -> bool:
        return self.ratio <= self.limit

    def line(self) -> str:
        verdict = "met" if self.met else "NOT met"
        return f"{self.label}: {self.ratio:.2f}x (target <= {self.limit:.2f}x): {verdict}"


def targets(rows: list[Row]) -> list[Target]:
    """The fan-out's targets in both modes (wall against the peer and the floor, the scheduling latency's
    p95 against the peer's) and the chain's against the floor in the Celery mode."""
    found = {(row.system, row.measurement.graph): row.measurement for row in rows}
    wanted: list[tuple[str, str, str, str, float]] = []  # (label, system, graph, figure, over which system)
    for system, mode in ((CELERY, "Celery"), (EMBEDDED, "embedded")):
        wanted += [
            (f"fan-out 500, {mode}: wall / Prefect's", system, "fanout500", "wall_s", PEER, 0.5),
            (f"fan-out 500, {mode}: wall / the floor's", system, "fanout500", "wall_s", FLOOR, 1.5),
            (f"fan-out 500, {mode}: deps met -> start p95 / Prefect's", system, "fanout500", "wait_p95_ms", PEER,
             1.0),
        ]
    wanted.append(("chain 40, Celery: wall / the floor's", CELERY, "chain40", "wall_s", FLOOR, 2.0))
    return [
        Target(label=label, ratio=getattr(ours, figure) / getattr(theirs, figure), limit=limit)
        for label, system, graph, figure, other, limit in wanted
        if (ours := found.get((system, graph))) and (theirs := found.get((other, graph)))
    ]


def comparison(rows: list[Row]) -> tuple[str, str]:
    """The results as a plain-text table and as a markdown table, each engine row with its ratios."""
    # Per graph: the engine's rows in the order they came, then the peer, then the floor.
    rows = sorted(rows, key=lambda row: (GRAPHS.index(row.measurement.graph), row.system in (PEER, FLOOR),
                                         row.system == FLOOR))
    walls = {(row.system, row.measurement.graph): row.measurement.wall_s for row in rows}
    header = ["system", "graph", "runs", "wall s", "ms/node", "deps met→start p50", "p95", "in-node p50",
              "wall ÷ floor", "wall ÷ peer"]
    cells = [header]
    for row in rows:
        m = row.measurement
        engine = row.system not in (FLOOR, PEER)
        cells.append([
            row.system, m.graph, str(row.runs), f"{m.wall_s:.2f}", f"{m.per_node_ms:.1f}",
            f"{m.wait_median_ms:.1f} ms", f"{m.wait_p95_ms:.1f} ms", f"{m.busy_median_ms:.2f} ms",
            _ratio(m.wall_s, walls.get((FLOOR, m.graph))) if engine else "",
            _ratio(m.wall_s, walls.get((PEER, m.graph))) if engine else "",
        ])
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    text = [" ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)) for line in cells]
    text.insert(1, "-" * len(text[0]))
    markdown = ["| " + " | ".join(line) + " |" for line in cells]
    markdown.insert(1, "|" + "---|" * len(header))
    return "\n".join(text), "\n".join(markdown)


def _ratio(wall: float, other: float | None) -> str:
    return f"{wall / other:.2f}x" if other else "n/a"

