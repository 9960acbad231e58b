"""URLs of the skill administration pages, mounted at /skills/."""

from django.urls import path

from console import skill_views

urlpatterns = [
    path("", skill_views.skill_list, name="skill_list"),
    path("new/", skill_views.skill_new, name="skill_new"),
    path("preview/", skill_views.skill_preview, name="skill_preview"),
    path("<slug:skill_id>/", skill_views.skill_detail, name="skill_detail"),
    path("<slug:skill_id>/edit/", skill_views.skill_edit, name="skill_edit"),
    path("<slug:skill_id>/status/", skill_views.skill_status, name="skill_status"),
    path("<slug:skill_id>/diff/", skill_views.skill_diff, name="skill_diff"),
    path("<slug:skill_id>/usage/", skill_views.skill_usage_page, name="skill_usage"),
]
