"""The REST API: one NinjaAPI, a router per area, OpenAPI docs at /api/docs."""

from ninja import NinjaAPI

from console.api import (
    audit,
    collaboration,
    dag_specs,
    datasets,
    delivery,
    experiments,
    forge,
    inbox,
    projects,
    reviews,
    revisions,
    runs,
    tasks,
    tokens,
    webhooks,
)
from console.api.auth import AUTH
from console.api.errors import error_handlers_install

api = NinjaAPI(
    title="Work Graph Console API",
    version="1.0",
    description="Plan, run, inspect and repair LLM-agent work graphs.",
    auth=AUTH,
    urls_namespace="api",
)
error_handlers_install(api)
api.add_router("/", projects.router)
api.add_router("/", tasks.router)
api.add_router("/", runs.router)
api.add_router("/", reviews.router)
api.add_router("/", tokens.router)
api.add_router("/", dag_specs.router)
api.add_router("/", webhooks.router)
api.add_router("/", inbox.router)
api.add_router("/", datasets.router)
api.add_router("/", delivery.router)
api.add_router("/", forge.router)
api.add_router("/", revisions.router)
api.add_router("/", audit.router)
api.add_router("/", experiments.router)
api.add_router("/v1/collaboration/tasks", collaboration.router)
