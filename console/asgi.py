"""ASGI entry point, served by daphne: HTTP through Django, WebSockets through Channels.

WebSockets pass the Origin check against ALLOWED_HOSTS (a page of another site cannot open a socket
with the user's cookies), then session authentication, then the routes of ``console.routing``.
"""

import gc
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
django_asgi_app = get_asgi_application()

# These need the app registry loaded above.
from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from console.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)

# Everything loaded so far lives as long as the process: kept out of the garbage collector's full
# collections, which otherwise walk every module and class each time, a pause of 100 ms and more in
# the middle of a request that builds a large page (the task page at 1,000 nodes).
gc.collect()
gc.freeze()
