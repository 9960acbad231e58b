"""Deterministic ``graph.json`` payloads for the DAG visualizer's benchmark and harness.

The shape is exactly the console's ``GET /runs/<run_id>/graph.json`` contract: ``run``, ``nodes``,
``edges`` and ``attempts``. ``dag_payload(n)`` builds a random layered DAG the way merged runs look
(planner, then coder, then validator layers; ~1.5 data edges per node, mostly to the previous layer,
some skipping layers; a few ``on_failure`` loop-backs to ancestors that fired), with a planning band
on top. ``small_payload()`` is a hand-written 12-node run with a loop-back that fired twice.
"""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta

_BASE_TIME = datetime(2025, 3, 4, 9, 0, 0, tzinfo=UTC)
_CATALOG = ["brd", "prd", "sdd", "benchmark", "test_dataset", "test_script"]
_CODER_KINDS = ["impl", "unit_test", "integration_check", "refactor", "migration", "api", "docs"]
_VALIDATOR_KINDS = ["independent_benchmark", "test_dataset", "test_script", "review", "fuzz"]


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


class _Builder:
    """Accumulates nodes, edges and attempts so every attempt row agrees with its node's counters."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.nodes: list[dict] = []
        self.edges: list[dict] = []
        self.attempts: list[dict] = []
        self._by_id: dict[str, dict] = {}

    def node(self, node_id: str, *, org_node: str, kind: str, depends_on: list[str], **extra: object) -> dict:
        node = {
            "node_id": node_id,
            "label": node_id,
            "org_node": org_node,
            "kind": kind,
            "artifact_type": None,
            "node_type": None,
            "judgment_kind": "none",
            "on_fail_action": None,
            "status": "not_started",
            "attempts": 0,
            "latest_exec_id": None,
            "duration_ms": None,
            "depends_on": depends_on,
        }
        node.update(extra)
        self.nodes.append(node)
        self._by_id[node_id] = node
        return node

    def edge(self, source: str, target: str, edge_type: str, fired: int = 0) -> None:
        self.edges.append({"from": source, "to": target, "edge_type": edge_type, "fired": fired})

    def node_by_id(self, node_id: str) -> dict:
        return self._by_id[node_id]

    def attempt(
        self,
        node_id: str,
        *,
        status: str,
        cause: str,
        start: datetime | None,
        seconds: int,
        cause_node_id: str = "",
    ) -> dict:
        """Adds the node's next attempt; the node's status, counter and latest exec follow it."""
        node = self._by_id[node_id]
        node["attempts"] += 1
        finished = (
            start + timedelta(seconds=seconds) if start and status not in ("running", "queued") else None
        )
        row = {
            "node_exec_id": _uuid(self.rng),
            "node_id": node_id,
            "attempt": node["attempts"],
            "cause": cause,
            "cause_node_id": cause_node_id,
            "status": status,
            "started_at": start,
            "finished_at": finished,
        }
        self.attempts.append(row)
        node["status"] = status
        node["latest_exec_id"] = row["node_exec_id"]
        node["duration_ms"] = seconds * 1000 if finished else None
        return row

    def last_attempt(self, node_id: str) -> dict | None:
        rows = [row for row in self.attempts if row["node_id"] == node_id]
        return rows[-1] if rows else None

    def payload(self, *, status: str, manifest_version: int) -> dict:
        self.attempts.sort(
            key=lambda a: (a["started_at"] is None, a["started_at"] or _BASE_TIME, a["node_id"])
        )
        attempts = [
            {**row, "started_at": _iso(row["started_at"]), "finished_at": _iso(row["finished_at"])}
            for row in self.attempts
        ]
        run = {
            "run_id": _uuid(self.rng),
            "status": status,
            "manifest_version": manifest_version,
            "task_id": _uuid(self.rng),
            "error": "",
        }
        return {"run": run, "nodes": self.nodes, "edges": self.edges, "attempts": attempts}


def _add_planning(builder: _Builder, org_nodes: list[str]) -> None:
    for index, org_node in enumerate(org_nodes):
        node_id = "__planning__" if org_node == "planner" else f"__planning__:{org_node}"
        builder.node(node_id, org_node=org_node, kind="planning", depends_on=[])
        builder.attempt(
            node_id,
            status="succeeded",
            cause="planning",
            start=_BASE_TIME + timedelta(minutes=20 * index),
            seconds=40,
        )


def _stage(layer: int, n_layers: int) -> str:
    third = layer * 3 // n_layers
    return ("planner", "coder", "validator")[third]


def _ancestor(builder: _Builder, node_id: str, hops: int, rng: random.Random) -> str:
    """Walks ``hops`` random dependency steps upstream; loop-back targets must be ancestors."""
    current = builder.node_by_id(node_id)
    for _ in range(hops):
        if not current["depends_on"]:
            break
        current = builder.node_by_id(rng.choice(current["depends_on"]))
    return current["node_id"]


def _run_node(builder: _Builder, node_id: str, layer: int, frontier: int, rng: random.Random) -> None:
    """Gives the node attempts that fit its depth: done above the frontier, in flight at it, idle below."""
    start = _BASE_TIME + timedelta(minutes=2 + 2 * layer, seconds=rng.randint(0, 50))
    seconds = rng.randint(15, 100)
    if layer < frontier - 1:
        if rng.random() < 0.08:
            builder.attempt(node_id, status="failed", cause="initial", start=start, seconds=seconds)
            start += timedelta(seconds=seconds + 5)
            builder.attempt(node_id, status="succeeded", cause="retry_self", start=start, seconds=seconds)
        elif rng.random() < 0.02:
            builder.attempt(node_id, status="failed", cause="initial", start=start, seconds=5)
            start += timedelta(seconds=20)
            builder.attempt(
                node_id, status="succeeded", cause="transient_retry", start=start, seconds=seconds
            )
        else:
            builder.attempt(node_id, status="succeeded", cause="initial", start=start, seconds=seconds)
    elif layer <= frontier:
        status = rng.choices(["running", "failed", "queued", "succeeded"], weights=[40, 15, 20, 25])[0]
        builder.attempt(
            node_id,
            status=status,
            cause="initial",
            start=None if status == "queued" else start,
            seconds=seconds,
        )
    else:
        builder.node_by_id(node_id)["status"] = rng.choices(
            ["pending", "not_started", "blocked", "cancelled"], weights=[50, 40, 7, 3]
        )[0]


def _add_loop_backs(builder: _Builder, layers: list[list[str]], frontier: int, rng: random.Random) -> None:
    """~4% of nodes get a loop-back to an ancestor; those that already ran fired it 1-3 times."""
    for layer_index, layer in enumerate(layers[2:], start=2):
        for source in layer:
            if rng.random() >= 0.04:
                continue
            target = _ancestor(builder, source, rng.randint(1, 4), rng)
            if target == source:
                continue
            builder.node_by_id(source)["on_fail_action"] = "loop_back"
            last = builder.last_attempt(source)
            ran = layer_index < frontier - 1 and last is not None and last["finished_at"] is not None
            fired = rng.choice([1, 1, 2, 3]) if ran else 0
            builder.edge(source, target, "on_failure", fired)
            if not fired:
                continue
            final_status = last["status"]
            last["status"] = "failed"
            moment = last["finished_at"]
            for fire in range(fired):
                moment += timedelta(seconds=10)
                builder.attempt(
                    target,
                    status="succeeded",
                    cause="loop_back",
                    cause_node_id=source,
                    start=moment,
                    seconds=40,
                )
                moment += timedelta(seconds=70)
                builder.attempt(
                    source,
                    status=final_status if fire == fired - 1 else "failed",
                    cause="loop_back",
                    cause_node_id=source,
                    start=moment,
                    seconds=45,
                )
                moment += timedelta(seconds=45)


def dag_payload(n_nodes: int, *, seed: int = 7) -> dict:
    """A random layered run with ``n_nodes`` work nodes plus three planning nodes.

    Deterministic for a given ``(n_nodes, seed)``. About 1.5 data edges per node, ~4% of nodes carry a
    ``loop_back`` ``on_failure`` edge to an ancestor (most fired 1-3 times, with matching attempt rows),
    statuses progress with depth: done upstream, running/failed around the frontier, pending below.
    """
    rng = random.Random(seed)
    builder = _Builder(rng)
    _add_planning(builder, ["planner", "coder", "validator"])

    n_layers = max(3, round((n_nodes**0.5) * 0.8))
    layers: list[list[str]] = [[] for _ in range(n_layers)]
    frontier = int(n_layers * 0.55)
    for index in range(n_nodes):
        layer_index = index * n_layers // n_nodes
        org_node = _stage(layer_index, n_layers)
        kinds = (
            _CATALOG if org_node == "planner" else _CODER_KINDS if org_node == "coder" else _VALIDATOR_KINDS
        )
        suffix = rng.choice(kinds)
        node_id = f"n{index:04d}_{suffix}"
        depends_on: list[str] = []
        for _ in range(rng.choices([1, 2, 3], weights=[45, 45, 10])[0] if layer_index else 0):
            back = 1 if rng.random() < 0.7 else rng.randint(1, min(5, layer_index))
            source = rng.choice(layers[layer_index - back])
            if source not in depends_on:
                depends_on.append(source)
        builder.node(
            node_id,
            org_node=org_node,
            kind="catalog" if org_node == "planner" else "generic",
            depends_on=depends_on,
            judgment_kind=rng.choice(["none", "mechanical", "llm"]),
            artifact_type=suffix if org_node == "planner" else None,
        )
        for dep in depends_on:
            builder.edge(dep, node_id, "needs_judgment" if rng.random() < 0.35 else "zero_token")
        layers[layer_index].append(node_id)
        _run_node(builder, node_id, layer_index, frontier, rng)

    _add_loop_backs(builder, layers, frontier, rng)
    builder.node_by_id(layers[-1][-1])["node_type"] = "final_verdict"
    return builder.payload(status="running", manifest_version=3)


def small_payload() -> dict:
    """A 12-node merged run (planner, coder, validator) whose integration check looped back twice."""
    builder = _Builder(random.Random(12))
    _add_planning(builder, ["planner", "coder", "validator"])
    specs = [
        ("brd", "planner", [], "zero_token"),
        ("prd", "planner", ["brd"], "needs_judgment"),
        ("sdd", "planner", ["prd"], "needs_judgment"),
        ("benchmark", "planner", ["prd"], "zero_token"),
        ("test_dataset", "planner", ["sdd"], "zero_token"),
        ("test_script", "planner", ["sdd", "test_dataset"], "needs_judgment"),
        ("impl", "coder", ["sdd"], "needs_judgment"),
        ("unit_test", "coder", ["impl"], "zero_token"),
        ("integration_check", "coder", ["impl", "unit_test", "test_script"], "needs_judgment"),
        ("independent_benchmark", "validator", ["integration_check", "benchmark"], "needs_judgment"),
        ("validator_test_script", "validator", ["integration_check"], "zero_token"),
        ("final_verdict", "validator", ["independent_benchmark", "validator_test_script"], "needs_judgment"),
    ]
    for node_id, org_node, depends_on, edge_type in specs:
        builder.node(
            node_id,
            org_node=org_node,
            kind="catalog" if org_node == "planner" else "generic",
            depends_on=depends_on,
            artifact_type=node_id if node_id in _CATALOG else None,
            judgment_kind="llm" if edge_type == "needs_judgment" else "mechanical",
        )
        for dep in depends_on:
            builder.edge(dep, node_id, edge_type)
    builder.node_by_id("integration_check")["on_fail_action"] = "loop_back"
    builder.node_by_id("final_verdict").update(node_type="final_verdict", on_fail_action="dynamic_loop_back")
    builder.edge("integration_check", "impl", "on_failure", fired=2)

    moment = _BASE_TIME + timedelta(minutes=1)
    for node_id in ["brd", "prd", "sdd", "benchmark", "test_dataset", "test_script"]:
        builder.attempt(node_id, status="succeeded", cause="initial", start=moment, seconds=50)
        moment += timedelta(seconds=55)
    moment = _BASE_TIME + timedelta(minutes=21)
    for cause, check_status in [("initial", "failed"), ("loop_back", "failed"), ("loop_back", "succeeded")]:
        cause_node = "integration_check" if cause == "loop_back" else ""
        builder.attempt(
            "impl", status="succeeded", cause=cause, cause_node_id=cause_node, start=moment, seconds=90
        )
        moment += timedelta(seconds=95)
        builder.attempt(
            "unit_test", status="succeeded", cause=cause, cause_node_id=cause_node, start=moment, seconds=40
        )
        moment += timedelta(seconds=45)
        builder.attempt(
            "integration_check",
            status=check_status,
            cause=cause,
            cause_node_id=cause_node,
            start=moment,
            seconds=60,
        )
        moment += timedelta(seconds=70)
    moment = _BASE_TIME + timedelta(minutes=41)
    builder.attempt("independent_benchmark", status="running", cause="initial", start=moment, seconds=0)
    builder.attempt("validator_test_script", status="queued", cause="initial", start=None, seconds=0)
    builder.node_by_id("final_verdict")["status"] = "pending"
    return builder.payload(status="running", manifest_version=3)
