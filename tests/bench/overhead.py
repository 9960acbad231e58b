"""Measuring the engine's overhead per node on a run that has finished.

Each node's wait is ``ready_at → started_at`` ("dependencies met → node started"), its busy time is
``started_at → finished_at`` (claim, prompt, agent, log, finish), and the wall time is the run's own
``started_at → finished_at``. With the instant agent all three are engine overhead.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from graphs.engine import run_start, run_wait_finished
from graphs.models import PLANNING_NODE_ID, Task, WorkGraphRun
from tests.graphs import edges_for, node, planned_run

GRAPHS = ("chain40", "fanout500")
RUN_TIMEOUT = 600.0


def chain_manifest(length: int) -> dict:
    nodes = [node("n0")] + [node(f"n{i}", f"n{i - 1}") for i in range(1, length)]
    return {"nodes": nodes, "edges": edges_for(nodes)}


def fanout_manifest(leaves: int) -> dict:
    """One root, ``leaves`` nodes that depend on it, one join that depends on all of them."""
    leaf_ids = [f"leaf{i:03d}" for i in range(leaves)]
    nodes = [node("root"), *(node(leaf, "root") for leaf in leaf_ids), node("join", *leaf_ids)]
    return {"nodes": nodes, "edges": edges_for(nodes)}


def manifest_for(graph: str) -> dict:
    return chain_manifest(40) if graph == "chain40" else fanout_manifest(498)


@dataclass(frozen=True)
class Measurement:
    graph: str
    nodes: int
    wall_s: float
    wait_median_ms: float
    wait_p95_ms: float
    busy_median_ms: float

    @property
    def per_node_ms(self) -> float:
        """Wall time over node count: the critical-path cost per node of a chain, throughput for a fan-out."""
        return self.wall_s * 1000 / self.nodes


def run_measure(*, graph: str, run: WorkGraphRun) -> Measurement:
    """Read a finished run's timings."""
    rows = list(
        run.executions.exclude(node_id__startswith=PLANNING_NODE_ID).values(
            "ready_at", "started_at", "finished_at"
        )
    )
    waits = [(row["started_at"] - row["ready_at"]).total_seconds() * 1000 for row in rows]
    busy = [(row["finished_at"] - row["started_at"]).total_seconds() * 1000 for row in rows]
    return Measurement(
        graph=graph,
        nodes=len(rows),
        wall_s=(run.finished_at - run.started_at).total_seconds(),
        wait_median_ms=statistics.median(waits),
        wait_p95_ms=statistics.quantiles(waits, n=20)[18],
        busy_median_ms=statistics.median(busy),
    )


def graph_run(*, task: Task, graph: str, timeout: float = RUN_TIMEOUT) -> Measurement:
    """Start ``graph`` as an already planned run of ``task`` on this process's executor, wait, measure."""
    run = planned_run(task, manifest_for(graph))
    run_start(run=run)
    run = run_wait_finished(run_id=run.run_id, timeout=timeout, poll=0.05)
    if run.status != "succeeded":
        raise RuntimeError(f"{graph}: the run ended {run.status} ({run.error or 'no error'})")
    return run_measure(graph=graph, run=run)


def table(rows: list[tuple[str, Measurement]]) -> str:
    header = (
        f"{'mode':<34} {'graph':<10} {'nodes':>5} {'wall s':>7} {'ms/node':>8} "
        f"{'ready→start p50':>15} {'p95':>8} {'start→end p50':>13}"
    )
    lines = [header, "-" * len(header)]
    for mode, m in rows:
        lines.append(
            f"{mode:<34} {m.graph:<10} {m.nodes:>5} {m.wall_s:>7.2f} {m.per_node_ms:>8.1f} "
            f"{m.wait_median_ms:>12.1f} ms {m.wait_p95_ms:>5.1f} ms {m.busy_median_ms:>10.1f} ms"
        )
    return "\n".join(lines)
