"""Server-rendered console pages and their form actions. Live parts are enhanced by static/js.

``console.urls`` and ``AXES_LOCKOUT_CALLABLE`` name the views through this package. Its modules:

- ``pages`` — the dashboard, a project (and its DAG spec import), the task and run lists, a task, a new task;
- ``skills`` — the skill administration pages: list, editor with a live preview, status, revisions, usage;
- ``agent_profiles`` — the agent profile pages: list, a profile or a project's override, editor, revisions;
- ``projects`` — a new project, a project's settings and its members;
- ``runs`` — a run's graph page and its graph.json, and its planning page;
- ``actions`` — the forms that plan, start, cancel, fork and review runs;
- ``inbox`` — what waits on the person ("Waiting on you"), the navigation's count of it alone, and raising a
  stopped run's budget to resume it;
- ``fork_edit`` — the page that re-runs a run from a node with its prompt or argv edited;
- ``executions`` — an attempt's page and its change review form, and the detail.json of the run graph's side
  panel;
- ``compare`` — two attempts of a node, or two runs of a task, side by side;
- ``downloads`` — the patches, an attempt's log as JSONL, the DAG spec file;
- ``common`` — what several pages show alike: a change's diff, pretty JSON;
- ``agent_check`` — the project page's Check the agent button, and the words it shows;
- ``webhooks`` — a project's notifications page (email choices, webhooks) and a webhook's delivery log;
- ``datasets`` — a project's datasets page, and the "Add to dataset" form of a run's pages;
- ``experiments`` — an experiment's page, and two experiments compared;
- ``delivery`` — a project's delivery settings page, and the task page's Deliver / Retry of a run;
- ``metrics`` — ``/metrics``, Prometheus' scrape of the console, behind a bearer token;
- ``auth`` — the answer to a sign-in while it is locked out;
- ``audit`` — the audit log's pages: a project's, and the whole log for administrators.
"""

from console.views.actions import (
    run_cancel_view,
    run_fork_view,
    run_review_view,
    run_start_view,
    task_pipeline,
    task_plan,
)
from console.views.auth import login_locked_out
from console.views.compare import attempts_compare, runs_compare
from console.views.downloads import (
    execution_diff_download,
    execution_log_download,
    run_dag_spec_download,
    run_diff_download,
)
from console.views.executions import execution_detail, execution_json, execution_review
from console.views.fork_edit import run_fork_edit
from console.views.pages import dashboard, project_detail, run_list, task_detail, task_list, task_new
from console.views.projects import project_edit, project_member_change, project_members_page, project_new
from console.views.runs import (
    run_graph,
    run_graph_json,
    run_graph_live,
    run_node_panel,
    run_planning,
    run_stage_nodes,
)

__all__ = [
    "attempts_compare",
    "dashboard",
    "execution_detail",
    "execution_diff_download",
    "execution_json",
    "execution_log_download",
    "execution_review",
    "login_locked_out",
    "project_detail",
    "project_edit",
    "project_member_change",
    "project_members_page",
    "project_new",
    "run_cancel_view",
    "run_dag_spec_download",
    "run_diff_download",
    "run_fork_edit",
    "run_fork_view",
    "run_graph",
    "run_graph_json",
    "run_graph_live",
    "run_list",
    "run_node_panel",
    "run_planning",
    "run_review_view",
    "run_stage_nodes",
    "run_start_view",
    "runs_compare",
    "task_detail",
    "task_list",
    "task_new",
    "task_pipeline",
    "task_plan",
]
