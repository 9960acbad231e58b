"""WebSocket routes, mounted by ``console.asgi`` behind the origin check and session authentication."""

from django.urls import path

from console.consumers import NodeExecutionLogConsumer, RunEventsConsumer

websocket_urlpatterns = [
    path("ws/node-executions/<uuid:node_exec_id>/log/", NodeExecutionLogConsumer.as_asgi()),
    path("ws/runs/<uuid:run_id>/", RunEventsConsumer.as_asgi()),
]
