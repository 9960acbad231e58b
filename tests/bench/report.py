"""What the benchmarks print: percentiles, milliseconds, the machine's load, and tables in two forms."""

from __future__ import annotations

import os
import statistics


def p95(values: list[float]) -> float:
    """The 95th percentile of ``values`` (the value itself when there is one)."""
    return statistics.quantiles(values, n=20)[18] if len(values) > 1 else values[0]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f}"


def tables(header: list[str], rows: list[list[str]]) -> str:
    """The rows as a plain-text table, then as a markdown table."""
    cells = [header, *rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    text = [" ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)) for line in cells]
    text.insert(1, "-" * len(text[0]))
    markdown = ["| " + " | ".join(line) + " |" for line in cells]
    markdown.insert(1, "|" + "---|" * len(header))
    return "\n".join(text) + "\n\n" + "\n".join(markdown)


def load_average() -> str:
    """The machine's load over 1, 5 and 15 minutes."""
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())
