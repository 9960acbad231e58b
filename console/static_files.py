"""Static files, served by WhiteNoise in the mode of the rest of the middleware: async under daphne.

Every middleware of the console can run async, so under ASGI a request's whole chain runs on the event
loop and only its view goes to a thread. A single sync-only middleware would make every request cross
from a thread back into the loop (asgiref's AsyncToSync) to reach the rest of the chain, and a request
caught in that crossing when daphne stops can never finish: the process would wait on it for good.
WhiteNoise's middleware is sync-only; this is WhiteNoise with an async path.
"""

from __future__ import annotations

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from whitenoise.middleware import WhiteNoiseMiddleware


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    """WhiteNoise's middleware, async when the chain below it is."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response) -> None:
        super().__init__(get_response)
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest):
        if self.is_async:
            return self._answer_async(request)
        return super().__call__(request)

    async def _answer_async(self, request: HttpRequest) -> HttpResponseBase:
        if self.autorefresh:  # DEBUG and the tests: each request looks the file up on disk
            static_file = await sync_to_async(self.find_file, thread_sensitive=False)(request.path_info)
        else:
            static_file = self.files.get(request.path_info)
        if static_file is None:
            return await self.get_response(request)
        return self.serve(static_file, request)
