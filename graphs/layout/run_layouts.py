"""When a run's DAG is laid out on the server, and where the layout is kept.

A run's drawing changes when a manifest version is stored (nodes appended) and when a planning call
starts or ends (a box in the planning row, the owner of the nodes it added). Each such run event queues
``run_layout_refresh`` as a background job (a Celery task in the distributed mode, the in-process
executor in the embedded one); graph.json queues it too for a drawing it has no layout for yet (a fork,
a run from before layouts were kept, a job that was lost). The job lays out the drawing as it is when it
runs, once per drawing (``RunLayout`` is unique per run and input digest), keeping every position of the
run's newest layout whose nodes are all still drawn: appended nodes go below and nothing drawn moves, as
in the page's own appends. A failure is recorded on the row with its reason; the page then lays the
graph out in the browser, as it does while the layout is computing. A run keeps its newest
``KEPT_LAYOUTS_PER_RUN`` layouts; a drawing whose layout was let go is laid out again if it comes back.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import DataError, IntegrityError, transaction
from django.utils import timezone

from graphs.executors import job_submit
from graphs.layout.compute import (
    MAX_WORK_NODES,
    LayoutError,
    layout_compute,
    layout_digest,
    layout_input,
    layout_work_nodes,
)
from graphs.logs.events import RunEvent
from graphs.models import PLANNING_NODE_ID, RunLayout, WorkGraphRun
from graphs.reads.graph import run_graph_data, run_graph_statuses
from graphs.runs.facts import run_node_total

logger = logging.getLogger(__name__)

# How many of a run's layouts are kept: the drawing on screen and the newest earlier ones a next drawing
# may keep its positions from. Each holds every node's position (0.3 MB at 3,000 nodes), and a run
# draws anew with each planning call and manifest version.
KEPT_LAYOUTS_PER_RUN = 4
# The background job that lays a run out; its handler is installed at start-up (graphs.layout.apps).
RUN_LAYOUT_JOB = "run_layout"


def run_layout_submit(*, run_id: Any) -> None:
    """Lay out the run's graph on the server as it is drawn now."""
    job_submit(RUN_LAYOUT_JOB, str(run_id))


def run_layout_on_event(event: RunEvent) -> None:
    """Run event listener: queue a layout when the event may have changed what the run's graph draws."""
    if not settings.WORKGRAPH_SERVER_LAYOUT:
        return
    planning_changed = event["event"] == "nodes" and any(
        str(node.get("node_id") or "").startswith(PLANNING_NODE_ID) for node in event.get("nodes", [])
    )
    if event["event"] == "nodes_appended" or planning_changed:
        run_layout_submit(run_id=event["run_id"])


def run_layout_job(arg: str) -> None:
    run_layout_refresh(run_id=arg)


def run_layout_refresh(*, run_id: Any) -> RunLayout | None:
    """Lay out the run's graph as graph.json draws it now, unless that drawing has a layout already or
    is being laid out by another worker. Returns the drawing's row (ready, failed or computing
    elsewhere), or None when the server does not lay this run out: the setting is off, the run is gone,
    or it has no work node or more than the page draws at once."""
    if not settings.WORKGRAPH_SERVER_LAYOUT:
        return None
    run = WorkGraphRun.objects.filter(pk=run_id).first()
    if run is None:
        return None
    if run_graph_collapses(run):
        return None
    drawing = layout_input(run_graph_data(run))
    if not 0 < layout_work_nodes(drawing) <= MAX_WORK_NODES:
        return None
    digest = layout_digest(drawing)
    row, claimed = _layout_claim(run=run, digest=digest, node_count=len(drawing["nodes"]))
    if not claimed:
        return row
    previous = _previous_layout(run=run, node_ids={node["node_id"] for node in drawing["nodes"]})
    try:
        computed = layout_compute(drawing=drawing, previous=previous, node_binary=settings.WORKGRAPH_NODE_BINARY,
                                  timeout=settings.WORKGRAPH_LAYOUT_TIMEOUT_SECONDS)
    except LayoutError as error:
        logger.warning("run %s: the server could not lay out its graph: %s", run.pk, error)
        RunLayout.objects.filter(pk=row.pk).update(status=RunLayout.Status.FAILED, error=str(error),
                                                   updated_at=timezone.now())
    else:
        try:
            RunLayout.objects.filter(pk=row.pk).update(status=RunLayout.Status.READY, layout=computed.layout,
                                                       compute_ms=computed.total_ms, updated_at=timezone.now())
        except DataError as error:  # a value the database's JSON cannot hold: recorded, never left computing
            logger.warning("run %s: the server's layout could not be stored: %s", run.pk, error)
            RunLayout.objects.filter(pk=row.pk).update(status=RunLayout.Status.FAILED, updated_at=timezone.now(),
                                                       error=f"the layout could not be stored: {error}")
    _older_layouts_delete(run=run)
    # None only if newer drawings' layouts have let this one go meanwhile.
    return RunLayout.objects.filter(pk=row.pk).first()


def _older_layouts_delete(*, run: WorkGraphRun) -> None:
    """Let go of the run's layouts past its newest ``KEPT_LAYOUTS_PER_RUN``, but never one another
    worker is computing (its worker stores into the row when it ends)."""
    kept = list(
        RunLayout.objects.filter(run=run).order_by("-created_at", "-pk").values_list("pk", flat=True)[
            :KEPT_LAYOUTS_PER_RUN
        ]
    )
    RunLayout.objects.filter(run=run).exclude(pk__in=kept).exclude(status=RunLayout.Status.COMPUTING).delete()


def _layout_claim(*, run: WorkGraphRun, digest: str, node_count: int) -> tuple[RunLayout, bool]:
    """The row of this drawing, and whether this worker is to compute it: it created the row, or took
    over one left computing for longer than a layout may take (its worker died)."""
    try:
        with transaction.atomic():
            row = RunLayout.objects.create(run=run, digest=digest, manifest_version=run.manifest_version,
                                           node_count=node_count)
        return row, True
    except IntegrityError:
        pass
    now = timezone.now()
    abandoned = now - timedelta(seconds=2 * settings.WORKGRAPH_LAYOUT_TIMEOUT_SECONDS)
    taken = RunLayout.objects.filter(
        run=run, digest=digest, status=RunLayout.Status.COMPUTING, updated_at__lt=abandoned
    ).update(updated_at=now)
    return RunLayout.objects.get(run=run, digest=digest), taken == 1


def _previous_layout(*, run: WorkGraphRun, node_ids: set[str]) -> dict[str, Any] | None:
    """The run's newest ready layout that places only nodes still drawn (none was removed), else None."""
    for layout in (
        RunLayout.objects.filter(run=run, status=RunLayout.Status.READY)
        .order_by("-created_at", "-pk")
        .values_list("layout", flat=True)
        .iterator(chunk_size=4)
    ):
        if all(entry[0] in node_ids for entry in layout["pos"]):
            return layout
    return None


def run_graph_with_layout(*, run: WorkGraphRun, whole: bool = False) -> dict[str, Any]:
    """graph.json: the run's graph (``run_graph_data``) and, under ``layout``, what the server has laid
    out of it (``run_layout_served``). A drawing with no layout yet gets one queued. A run of more work
    nodes than the page draws at once (``run_graph_collapses``) is opened folded into stages, which
    need its nodes' statuses alone (``run_graph_statuses``, not laid out), unless ``whole`` is asked for."""
    if run_graph_collapses(run):
        graph = run_graph_data(run) if whole else run_graph_statuses(run)
        graph["layout"] = {"state": "off" if not settings.WORKGRAPH_SERVER_LAYOUT else "skipped", "error": "",
                           "placed": None}
        return graph
    graph = run_graph_data(run)
    graph["layout"] = run_layout_served(run=run, graph=graph)
    if graph["layout"]["state"] == "missing":
        run_layout_submit(run_id=run.pk)
    return graph


def run_graph_collapses(run: WorkGraphRun) -> bool:
    """Whether the run has more work nodes than the page draws at once: it opens folded into stages, and
    the server lays none of it out."""
    return run_node_total(run) > MAX_WORK_NODES


def run_layout_served(*, run: WorkGraphRun, graph: Mapping[str, Any]) -> dict[str, Any]:
    """What the server has laid out of ``graph`` (``run_graph_data(run)``), for the page.

    ``state`` is that of this very drawing's layout: ``ready``, ``computing``, ``failed`` (``error`` says
    why), ``missing`` (not asked for yet), ``skipped`` (no work node, or more than the page draws at
    once) or ``off`` (WORKGRAPH_SERVER_LAYOUT). ``placed`` is this drawing's layout when ready, else the
    run's newest ready one (layout.js's layoutToJSON), else None: the page draws it as it is when it
    places every node, and otherwise keeps its positions and places only the rest. Two queries at most.
    """
    if not settings.WORKGRAPH_SERVER_LAYOUT:
        return {"state": "off", "error": "", "placed": None}
    drawing = layout_input(graph)
    if not 0 < layout_work_nodes(drawing) <= MAX_WORK_NODES:
        return {"state": "skipped", "error": "", "placed": None}
    current = (
        RunLayout.objects.filter(run=run, digest=layout_digest(drawing)).values("status", "error", "layout").first()
    )
    if current is None:
        state, error, placed = "missing", "", None
    else:
        state, error, placed = current["status"], current["error"], current["layout"]
    if placed is None:
        placed = (
            RunLayout.objects.filter(run=run, status=RunLayout.Status.READY)
            .order_by("-created_at", "-pk")
            .values_list("layout", flat=True)
            .first()
        )
    return {"state": state, "error": error, "placed": placed}
