"""What the own-repository journeys share: the one pipeline their API stand-ins play, whatever the runner
(planner, coder and validator, each planning one node), and the clicks of a lead who sets a project up on
their repository and runs it.

The stand-ins answer every call of that pipeline with ``planned_answer``, but the coder's node
(``CODER_ASK`` in its prompt): each runner's script answers it with the tool calls its CLI makes.
"""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from graphs.agents.check import CHECK_PROMPT
from tests.pipeline_answers import VERDICT_ASK, stage_answer

CODER_ASK = "WRITE-GREETING"
# The real CLIs take seconds a call on a shared machine; the pipeline makes about nine.
PIPELINE_TIMEOUT_MS = 240_000
TERMINAL = ("succeeded", "failed", "blocked", "cancelled")



def planned_answer(asked: str, *, file_name: str) -> str | None:
    """The answer to the call whose prompt is ``asked`` (Check the agent's, or one of the pipeline's); None
    for the coder's node, whose task asks for ``file_name``."""
    if CHECK_PROMPT in asked:
        return "ready"
    staged = stage_answer(asked, coder_task=f"{CODER_ASK}: add {file_name} with a greeting.")
    if staged is not None:
        return staged
    if CODER_ASK in asked:
        return None
    if VERDICT_ASK in asked:
        return f"VERDICT: pass\n{file_name} holds the greeting."
    return "# PRD\n\nA greeting file."


def project_create(page: Page, base_url: str, *, slug: str, folder: str, runner: str) -> None:
    """From the dashboard: New project on ``folder`` (a repository whose base ref is ``main``) with
    ``runner``, once the form has checked the folder; ends on the project's page."""
    page.goto(f"{base_url}/")
    page.click("#new-project")
    page.wait_for_url("**/projects/new/")
    page.fill("input[name=slug]", slug)
    page.fill("input[name=name]", slug.capitalize())
    page.fill("input[name=target_folder]", folder)
    page.fill("input[name=base_ref]", "main")
    page.select_option("select[name=agent]", runner)
    expect(page.locator("#folder-check-verdict")).to_have_text("the folder can be used")
    page.click("#project-form button[type=submit]")
    page.wait_for_url(f"**/projects/{slug}/")
    expect(page.locator("#project-agent-runner")).to_have_text(f"agent runner {runner}")


def agent_checked(page: Page) -> None:
    """On the project page: Check the agent, and the page says it works."""
    page.click("#agent-check-button")
    expect(page.locator(".message.success")).to_contain_text("works: it answered", timeout=90_000)


def task_create(page: Page, *, title: str) -> None:
    """From the project page: New task, the project chosen already; ends on the task's page."""
    project = page.url.rstrip("/").rsplit("/", 1)[-1]
    page.click("#project-new-task")
    expect(page.locator("#id_project option:checked")).to_have_text(re.compile(project, re.I))
    page.fill("#id_title", title)
    page.fill("#id_goal_text", "Greet whoever runs the project.")
    page.fill("#id_deliverables", "A greeting file")
    page.fill("#id_acceptance_criteria", "The file holds a greeting")
    page.click("button:has-text('Create task')")
    expect(page.locator("h1")).to_contain_text(title)


def pipeline_run(page: Page) -> str:
    """On the task page: Run pipeline, then wait, without a reload, for its run to show and the task to
    end; the task's status."""
    runs = page.locator(".run-tree").count()
    with page.expect_navigation():  # the form's answer is the task page again
        page.click("#run-pipeline")
    page.wait_for_function(f"() => document.querySelectorAll('.run-tree').length === {runs + 1}",
                           timeout=PIPELINE_TIMEOUT_MS)
    ended = ", ".join(f"#task-status .status[data-status='{status}']" for status in TERMINAL)
    page.wait_for_selector(ended, timeout=PIPELINE_TIMEOUT_MS)
    return page.get_attribute("#task-status .status", "data-status") or ""


def spend_shown(text: str) -> bool:
    """Whether a spend line names a cost in dollars above zero."""
    found = re.search(r"\$(\d+\.\d+)", text)
    return found is not None and float(found.group(1)) > 0


def run_graph_open(page: Page) -> None:
    """From the task page, the latest run's graph page, drawn."""
    page.locator(".run-tree").first.locator("a:has-text('Graph')").click()
    page.wait_for_selector("#dag[data-painted='true']")


def files_changed(page: Page) -> list[list[str]]:
    """The run graph page's Changes table, once drawn: each file's path, its lines added and removed (the
    page's minus sign is U+2212) and the nodes that changed it."""
    rows = page.locator("#changes table.files tbody tr")
    rows.first.wait_for()
    return [[cell.strip() for cell in row.locator("td").all_inner_texts()] for row in rows.all()]


def node_page_open(page: Page, node_id: str) -> None:
    """From the run graph page: the node's box, then its node page from the side panel."""
    page.click(f".dag-box[data-node-id='{node_id}']")
    page.click("#panel-body a:has-text('Open the node page')")
    page.wait_for_selector("#trace .trace-group")
