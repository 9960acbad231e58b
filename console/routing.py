"""WebSocket routes, mounted by ``console.asgi`` behind the origin check and session authentication."""

from channels.generic.websocket import AsyncWebsocketConsumer
from django.urls import path, re_path

from console.consumers import CLOSE_NOT_FOUND, InboxConsumer, NodeExecutionLogConsumer, RunEventsConsumer


class UnknownPathConsumer(AsyncWebsocketConsumer):
    """Any other path: accepted and closed as not found, as the browser reads a close code but no
    refused handshake (and the router would otherwise raise on it)."""

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=CLOSE_NOT_FOUND)


websocket_urlpatterns = [
    path("ws/node-executions/<uuid:node_exec_id>/log/", NodeExecutionLogConsumer.as_asgi()),
    path("ws/runs/<uuid:run_id>/", RunEventsConsumer.as_asgi()),
    path("ws/inbox/", InboxConsumer.as_asgi()),
    re_path(r"", UnknownPathConsumer.as_asgi()),
]
