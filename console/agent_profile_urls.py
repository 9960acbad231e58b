"""URLs of the agent profile pages, mounted at /agents/: the console's profile of an org node, and a
project's override of it under projects/<slug>/."""

from django.urls import path

from console.views import agent_profiles as views

urlpatterns = [
    path("", views.profile_list, name="agent_profile_list"),
    path("new/", views.profile_new, name="agent_profile_new"),
    path("<slug:org_node>/", views.profile_detail, name="agent_profile_detail"),
    path("<slug:org_node>/edit/", views.profile_edit, name="agent_profile_edit"),
    path("<slug:org_node>/diff/", views.profile_diff, name="agent_profile_diff"),
    path("<slug:org_node>/revisions/<int:number>/", views.profile_revision, name="agent_profile_revision"),
    path("<slug:org_node>/override/", views.profile_override, name="agent_profile_override"),
    path("<slug:org_node>/projects/<slug:slug>/", views.profile_detail, name="agent_profile_detail_project"),
    path("<slug:org_node>/projects/<slug:slug>/edit/", views.profile_edit, name="agent_profile_edit_project"),
    path("<slug:org_node>/projects/<slug:slug>/diff/", views.profile_diff, name="agent_profile_diff_project"),
    path("<slug:org_node>/projects/<slug:slug>/revisions/<int:number>/", views.profile_revision,
         name="agent_profile_revision_project"),
    path("<slug:org_node>/projects/<slug:slug>/delete/", views.profile_override_delete,
         name="agent_profile_delete_project"),
]
