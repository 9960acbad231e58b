"""Manifest extraction against the naive scan (``raw_decode`` at every ``{``), on demand.

    .venv/bin/python -m pytest tests/bench -o python_files='bench_*.py' -s

Prints median and p95 seconds per input and the naive/ours ratio, then whether the hostile inputs meet
their p95 targets. The naive scan gets a time budget per input so the benchmark always finishes; a run
that hits it is reported as stopped.
"""

import json
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

from graphs.domain.manifest import extract_graph_manifest

NAIVE_BUDGET_SECONDS = 30.0
# The p95 seconds the hostile inputs must stay under.
P95_TARGET_SECONDS = {"1 MB adversarial": 0.200, "250 KB escaped quotes": 0.100}
_STOPPED = object()


def _naive_extract(text: str, deadline: float) -> Any:
    """The seed planner's approach: a whole-text parse, then ``raw_decode`` at every ``{``."""
    decoder = json.JSONDecoder()
    candidates = []
    try:
        candidates.append(json.loads(text))
    except (json.JSONDecodeError, RecursionError):
        pass
    for found in candidates:
        if isinstance(found, dict) and _manifest_in(found) is not None:
            return _manifest_in(found)
    for index, char in enumerate(text):
        if char != "{":
            continue
        if time.perf_counter() > deadline:
            return _STOPPED
        try:
            found, _ = decoder.raw_decode(text, index)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(found, dict) and _manifest_in(found) is not None:
            return _manifest_in(found)
    return None


def _manifest_in(candidate: dict[str, Any]) -> dict[str, Any] | None:
    if isinstance(candidate.get("nodes"), list):
        return candidate
    wrapped = candidate.get("graph_manifest")
    return wrapped if isinstance(wrapped, dict) and isinstance(wrapped.get("nodes"), list) else None


def _manifest(node_count: int) -> dict[str, Any]:
    code = 'def check(row):\n    return {"id": row["id"], "ok": row.get("ok", {})}\n'
    nodes = [
        {
            "node_id": f"step_{i}",
            "node_type": "impl",
            "depends_on": [f"step_{i - 1}"] if i else [],
            "task_prompt": f"Implement part {i} from this:\n```python\n{code}```\nKeep the tests green.",
            "judgment": {"kind": "llm", "judge_prompt": "Is this complete code?\n\n{content}"},
            "on_fail": {"action": "retry_self", "max_attempts": 2},
        }
        for i in range(node_count)
    ]
    edges = [
        {"from": f"step_{i - 1}", "to": f"step_{i}", "edge_type": "needs_judgment"}
        for i in range(1, node_count)
    ]
    return {"nodes": nodes, "edges": edges}


def _response(prose_bytes: int, manifest: dict[str, Any]) -> str:
    paragraph = (
        'I read the design and the "benchmark" notes. Each step maps to {one module}; the dict '
        "literal {a: 1} in the old code is replaced. Unicode stays: résumé, 数据, ✓.\n"
    )
    prose = paragraph * (prose_bytes // len(paragraph) + 1)
    return (
        prose[:prose_bytes] + "\n```json\n" + json.dumps(manifest, indent=2, ensure_ascii=False) + "\n```\n"
    )


def _inputs() -> list[tuple[str, str, dict[str, Any], int]]:
    small = _manifest(12)
    big = _manifest(1_500)
    fragments = '{"a": [' * (1_000_000 // 7)
    # Every brace sits inside a string with an escaped quote, as the lexer's first path reads it
    # (quadratic for ours once; the naive scan is, so the input is kept small).
    escaped = '{"a": "\\"' * (250_000 // 9)
    return [
        ("10 KB response", _response(10_000 - len(json.dumps(small, indent=2)), small), small, 200),
        ("1 MB response", _response(1_000_000 - len(json.dumps(big, indent=2)), big), big, 9),
        ("1 MB adversarial", fragments + "\n```json\n" + json.dumps(small) + "\n```", small, 9),
        ("250 KB escaped quotes", escaped + "\n```json\n" + json.dumps(small) + "\n```", small, 5),
    ]


def _times(
    run: Callable[[], Any], repetitions: int, expected: dict[str, Any], budget: float
) -> list[float] | None:
    """Seconds per repetition, or None when a run was stopped by the budget."""
    spent, samples = 0.0, []
    for _ in range(repetitions):
        started = time.perf_counter()
        found = run()
        elapsed = time.perf_counter() - started
        if found is _STOPPED:
            return None
        assert found == expected
        samples.append(elapsed)
        spent += elapsed
        if spent > budget:
            break
    return samples


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[math.ceil(0.95 * len(ordered)) - 1]


def test_extraction_against_the_naive_raw_decode_scan():
    rows, ours_p95 = [], {}
    for name, text, expected, repetitions in _inputs():
        ours = _times(lambda text=text: extract_graph_manifest(text), repetitions, expected, budget=math.inf)
        assert ours is not None
        naive = _times(
            lambda text=text: _naive_extract(text, time.perf_counter() + NAIVE_BUDGET_SECONDS),
            repetitions,
            expected,
            budget=NAIVE_BUDGET_SECONDS,
        )
        ours_median = statistics.median(ours)
        ours_p95[name] = _p95(ours)
        if naive is None:
            naive_cells = [
                f">{NAIVE_BUDGET_SECONDS:.0f}s (stopped)",
                "-",
                f">{NAIVE_BUDGET_SECONDS / ours_median:,.0f}x",
            ]
        else:
            naive_median = statistics.median(naive)
            naive_cells = [f"{naive_median:.4f}", f"{_p95(naive):.4f}", f"{naive_median / ours_median:,.2f}x"]
        rows.append(
            [name, f"{len(text):,}", str(len(ours)), f"{ours_median:.4f}", f"{_p95(ours):.4f}", *naive_cells]
        )

    header = [
        "input",
        "chars",
        "runs",
        "ours median s",
        "ours p95 s",
        "naive median s",
        "naive p95 s",
        "naive/ours",
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    print()
    for row in [header, ["-" * width for width in widths], *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
    for name, target in P95_TARGET_SECONDS.items():
        verdict = "met" if ours_p95[name] < target else "not met"
        print(f"{name} p95 {ours_p95[name] * 1000:.0f} ms — target < {target * 1000:.0f} ms: {verdict}")
