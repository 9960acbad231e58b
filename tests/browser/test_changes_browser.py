"""In a real browser against daphne: the node page's Changes and the run page's change, drawn by
diff2html, unified and side by side, with an agent's hostile file name and content shown as text."""

from __future__ import annotations

import pytest

from graphs.engine import run_start
from tests.browser.conftest import ARTIFACTS, PAGE_WAIT_MS, sign_in
from tests.repos import writes
from tests.run_builders import latest, node, planned_run

pytestmark = pytest.mark.django_db(transaction=True)

HOSTILE = "<img src=x onerror=window.__pwned=1>"


def test_the_changes_of_an_attempt_and_a_run_are_drawn_and_hostile_text_stays_text(
    chromium, console_server, alice, repo_task, scripted_runner, inline_executor
):
    def edits(call):
        writes("src/app.py", "print('hello')\nprint('changed')\n")(call)
        return writes("notes.md", f"{HOSTILE}\n<script>window.__pwned=2</script>\n")(call)

    scripted_runner.replies[("node", "build")] = edits
    run = planned_run(repo_task, {"nodes": [node("build")], "edges": []})
    run_start(run=run)
    inline_executor.drain()
    execution = latest(run)["build"]
    page = chromium.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(PAGE_WAIT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    sign_in(page, f"{console_server}/executions/{execution.pk}/", "alice")
    page.click("a[href='#changes']")
    changes = page.locator("#changes")
    changes.locator(".d2h-file-wrapper").first.wait_for()
    file_names = changes.locator(".d2h-file-header .d2h-file-name").all_inner_texts()
    inserted = changes.locator(".d2h-ins .d2h-code-line-ctn").all_inner_texts()
    page.screenshot(path=str(ARTIFACTS / "node-changes-unified.png"), full_page=True)
    changes.get_by_role("button", name="Side by side").click()
    changes.locator(".d2h-file-side-diff").first.wait_for()
    page.screenshot(path=str(ARTIFACTS / "node-changes-split.png"), full_page=True)

    assert sorted(name.strip() for name in file_names) == ["notes.md", "src/app.py"]
    assert HOSTILE in inserted and "<script>window.__pwned=2</script>" in inserted
    assert "print('changed')" in inserted
    assert changes.locator("img").count() == 0
    assert changes.locator("script:not([type='application/json'])").count() == 0
    assert page.evaluate("() => window.__pwned") is None
    assert errors == []

    page.goto(f"{console_server}/runs/{run.run_id}/")
    run_changes = page.locator("#changes")
    run_changes.locator(".d2h-file-wrapper").first.wait_for()
    rows = run_changes.locator("table.files tbody tr").all_inner_texts()

    assert [row.split("\t")[0] for row in rows] == ["notes.md", "src/app.py"]
    assert all(row.endswith("build") for row in rows)
    assert page.evaluate("() => window.__pwned") is None
