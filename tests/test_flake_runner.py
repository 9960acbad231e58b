"""``make flake`` reads each run's JUnit report: every failure and error named with its first line."""

from __future__ import annotations

from tests.flake import junit_read

REPORT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.browser.test_a" name="test_fits"/>
<testcase classname="tests.browser.test_a" name="test_clicks">
<failure message="TimeoutError: element is outside of the viewport&#10;call log">trace</failure></testcase>
<testcase classname="tests.test_b" name="test_setup"><error message="fixture broke">trace</error></testcase>
<testcase classname="tests.test_b" name="test_skipped"><skipped message="no redis"/></testcase>
</testsuite></testsuites>"""


def test_it_counts_passes_and_names_each_failure_and_error(tmp_path):
    report = tmp_path / "run.xml"
    report.write_text(REPORT)
    outcome = junit_read(report)
    assert outcome.passed == 1
    assert outcome.failures == [
        ("tests.browser.test_a::test_clicks", "TimeoutError: element is outside of the viewport"),
        ("tests.test_b::test_setup", "fixture broke"),
    ]


def test_a_run_that_wrote_no_report_is_a_failure(tmp_path):
    outcome = junit_read(tmp_path / "missing.xml")
    assert outcome.passed == 0 and len(outcome.failures) == 1
