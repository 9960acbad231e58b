"""The CSV export against the demo task's acceptance criteria and constraints."""

from __future__ import annotations

import csv
import io
import itertools
import unittest
from datetime import UTC, datetime, timedelta, timezone

from reports.csv_export import BOM, COLUMNS, csv_lines, reports_filtered

PARIS = timezone(timedelta(hours=1))
REPORTS = [
    {"id": 1, "title": "Quarterly revenue", "owner": "ana", "created_at": datetime(2026, 1, 5, 9, 30, tzinfo=PARIS)},
    {"id": 2, "title": 'Churn, by "region"', "owner": "ben", "created_at": datetime(2026, 2, 1, tzinfo=UTC)},
    {"id": 3, "title": "Résumé of refunds", "owner": "ana", "created_at": datetime(2026, 3, 9, 23, 0, tzinfo=UTC)},
]


def read(lines) -> list[list[str]]:
    text = "".join(lines)
    assert text.startswith(BOM)
    return list(csv.reader(io.StringIO(text[len(BOM):])))


class CsvExportTests(unittest.TestCase):
    def test_the_file_has_a_header_and_one_row_per_report(self):
        rows = read(csv_lines(REPORTS))
        self.assertEqual(rows[0], list(COLUMNS))
        self.assertEqual([row[0] for row in rows[1:]], ["1", "2", "3"])

    def test_commas_quotes_and_accents_survive_a_spreadsheet_reading_them(self):
        rows = read(csv_lines(REPORTS))
        self.assertEqual(rows[2][1], 'Churn, by "region"')
        self.assertEqual(rows[3][1], "Résumé of refunds")

    def test_dates_are_utc_iso_8601(self):
        rows = read(csv_lines(REPORTS))
        self.assertEqual(rows[1][3], "2026-01-05T08:30:00Z")

    def test_the_pages_filters_apply_to_the_export(self):
        rows = read(csv_lines(reports_filtered(REPORTS, owner="ana", text="résumé")))
        self.assertEqual([row[0] for row in rows[1:]], ["3"])

    def test_an_export_streams_instead_of_building_the_file_in_memory(self):
        endless = ({**REPORTS[0], "id": n} for n in itertools.count())
        first = list(itertools.islice(csv_lines(endless), 10_001))
        self.assertEqual(len(first), 10_001)
        self.assertTrue(first[-1].startswith("9999,"))


if __name__ == "__main__":
    unittest.main()
