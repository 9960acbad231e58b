"""The reports page's CSV export: streamed line by line, a header first, UTF-8 with a BOM, dates in UTC.

Standard library only: the task allows no new runtime dependencies.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

COLUMNS = ("id", "title", "owner", "created_at")
# Spreadsheets read a UTF-8 file's accents right only when it starts with a byte order mark.
BOM = "\ufeff"


def reports_filtered(reports: Iterable[Mapping[str, Any]], *, owner: str = "", text: str = "") -> Iterator[Mapping]:
    """The reports the page's filters show: by owner, and by words in the title (case-insensitive)."""
    needle = text.casefold()
    for report in reports:
        if owner and report["owner"] != owner:
            continue
        if needle and needle not in report["title"].casefold():
            continue
        yield report


def csv_lines(reports: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """The CSV file one line at a time: the BOM and the header, then one line per report as it is read."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")

    def line(values: Iterable[Any]) -> str:
        writer.writerow(values)
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        return text

    yield BOM + line(COLUMNS)
    for report in reports:
        yield line([report["id"], report["title"], report["owner"], _utc(report["created_at"])])


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
