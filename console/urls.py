from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from console import views
from console.api import api
from console.views import agent_profiles as profile_views
from console.views import audit as audit_views
from console.views import datasets as dataset_views
from console.views import delivery as delivery_views
from console.views import experiments as experiment_views
from console.views import inbox as inbox_views
from console.views import skills as skill_views
from console.views.agent_check import project_agent_check
from console.views.metrics import metrics
from console.views.webhooks import project_notifications, webhook_deliveries_page

# The skill administration pages, under /skills/.
skill_urls = [
    path("", skill_views.skill_list, name="skill_list"),
    path("new/", skill_views.skill_new, name="skill_new"),
    path("preview/", skill_views.skill_preview, name="skill_preview"),
    path("<slug:skill_id>/", skill_views.skill_detail, name="skill_detail"),
    path("<slug:skill_id>/edit/", skill_views.skill_edit, name="skill_edit"),
    path("<slug:skill_id>/status/", skill_views.skill_status, name="skill_status"),
    path("<slug:skill_id>/diff/", skill_views.skill_diff, name="skill_diff"),
    path("<slug:skill_id>/usage/", skill_views.skill_usage_page, name="skill_usage"),
]

# The agent profile pages, under /agents/: the console's profile of an org node, and a project's override
# of it under projects/<slug>/.
agent_profile_urls = [
    path("", profile_views.profile_list, name="agent_profile_list"),
    path("new/", profile_views.profile_new, name="agent_profile_new"),
    path("<slug:org_node>/", profile_views.profile_detail, name="agent_profile_detail"),
    path("<slug:org_node>/edit/", profile_views.profile_edit, name="agent_profile_edit"),
    path("<slug:org_node>/diff/", profile_views.profile_diff, name="agent_profile_diff"),
    path("<slug:org_node>/revisions/<int:number>/", profile_views.profile_revision, name="agent_profile_revision"),
    path("<slug:org_node>/override/", profile_views.profile_override, name="agent_profile_override"),
    path("<slug:org_node>/projects/<slug:slug>/", profile_views.profile_detail, name="agent_profile_detail_project"),
    path("<slug:org_node>/projects/<slug:slug>/edit/", profile_views.profile_edit, name="agent_profile_edit_project"),
    path("<slug:org_node>/projects/<slug:slug>/diff/", profile_views.profile_diff, name="agent_profile_diff_project"),
    path("<slug:org_node>/projects/<slug:slug>/revisions/<int:number>/", profile_views.profile_revision,
         name="agent_profile_revision_project"),
    path("<slug:org_node>/projects/<slug:slug>/delete/", profile_views.profile_override_delete,
         name="agent_profile_delete_project"),
]

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("projects/new/", views.project_new, name="project_new"),
    path("projects/<slug:slug>/", views.project_detail, name="project_detail"),
    path("projects/<slug:slug>/agent-check/", project_agent_check, name="project_agent_check"),
    path("projects/<slug:slug>/edit/", views.project_edit, name="project_edit"),
    path("projects/<slug:slug>/members/", views.project_members_page, name="project_members"),
    path("projects/<slug:slug>/members/<str:username>/", views.project_member_change, name="project_member_change"),
    path("projects/<slug:slug>/notifications/", project_notifications, name="project_notifications"),
    path("projects/<slug:slug>/delivery/", delivery_views.project_delivery_page, name="project_delivery"),
    path("projects/<slug:slug>/datasets/", dataset_views.project_datasets_page, name="project_datasets"),
    path("experiments/compare/", experiment_views.experiments_compare, name="experiments_compare"),
    path("experiments/<int:experiment_id>/", experiment_views.experiment_detail, name="experiment_detail"),
    path("projects/<slug:slug>/audit/", audit_views.project_audit, name="project_audit"),
    path("projects/<slug:slug>/webhooks/<int:webhook_id>/", webhook_deliveries_page, name="webhook_deliveries"),
    path("tasks/", views.task_list, name="task_list"),
    path("tasks/new/", views.task_new, name="task_new"),
    path("tasks/<uuid:task_id>/", views.task_detail, name="task_detail"),
    path("tasks/<uuid:task_id>/plan/", views.task_plan, name="task_plan"),
    path("tasks/<uuid:task_id>/pipeline/", views.task_pipeline, name="task_pipeline"),
    path("inbox/", inbox_views.inbox, name="inbox"),
    path("audit/", audit_views.audit_log, name="audit_log"),
    path("inbox/count/", inbox_views.inbox_count_badge, name="inbox_count"),
    path("runs/", views.run_list, name="run_list"),
    path("runs/<uuid:run_id>/", views.run_graph, name="run_graph"),
    path("runs/<uuid:run_id>/graph.json", views.run_graph_json, name="run_graph_json"),
    path("runs/<uuid:run_id>/live/", views.run_graph_live, name="run_graph_live"),
    path("runs/<uuid:run_id>/panel/", views.run_node_panel, name="run_node_panel"),
    path("runs/<uuid:run_id>/changes.patch", views.run_diff_download, name="run_diff"),
    path("runs/<uuid:run_id>/dag-spec.json", views.run_dag_spec_download, name="run_dag_spec"),
    path("runs/<uuid:run_id>/compare/<uuid:other_run_id>/", views.runs_compare, name="runs_compare"),
    path("runs/<uuid:run_id>/planning/", views.run_planning, name="run_planning"),
    path("runs/<uuid:run_id>/stages/<str:org_node>/", views.run_stage_nodes, name="run_stage_nodes"),
    path("runs/<uuid:run_id>/start/", views.run_start_view, name="run_start"),
    path("runs/<uuid:run_id>/cancel/", views.run_cancel_view, name="run_cancel"),
    path("runs/<uuid:run_id>/budget/", inbox_views.run_budget_resume_view, name="run_budget_resume"),
    path("runs/<uuid:run_id>/fork/", views.run_fork_view, name="run_fork"),
    path("runs/<uuid:run_id>/fork/edit/", views.run_fork_edit, name="run_fork_edit"),
    path("runs/<uuid:run_id>/add-to-dataset/", dataset_views.run_add_to_dataset, name="run_add_to_dataset"),
    path("runs/<uuid:run_id>/deliver/", delivery_views.run_deliver_view, name="run_deliver"),
    path("runs/<uuid:run_id>/approve/", views.run_review_view, {"decision": "approve"}, name="run_approve"),
    path("runs/<uuid:run_id>/reject/", views.run_review_view, {"decision": "reject"}, name="run_reject"),
    path("executions/<uuid:node_exec_id>/", views.execution_detail, name="execution_detail"),
    path("executions/<uuid:node_exec_id>/compare/<uuid:other_exec_id>/", views.attempts_compare,
         name="attempts_compare"),
    path("executions/<uuid:node_exec_id>/detail.json", views.execution_json, name="execution_json"),
    path("executions/<uuid:node_exec_id>/review", views.execution_review, name="execution_review"),
    path("executions/<uuid:node_exec_id>/log.jsonl", views.execution_log_download, name="execution_log"),
    path("executions/<uuid:node_exec_id>/changes.patch", views.execution_diff_download, name="execution_diff"),
    path("api/", api.urls),
    path("metrics", metrics, name="metrics"),  # Prometheus, behind WORKGRAPH_METRICS_TOKEN
    path("skills/", include(skill_urls)),
    path("agents/", include(agent_profile_urls)),
    path("admin/", admin.site.urls),
]

# The console's own error pages (the API answers JSON errors of its own).
handler400 = "console.error_pages.bad_request"
handler403 = "console.error_pages.permission_denied"
handler404 = "console.error_pages.page_not_found"
handler500 = "console.error_pages.server_error"
