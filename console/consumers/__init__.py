"""WebSocket consumers: one execution's live log, and one run's live events.

Both authenticate with the session, authorise by project membership (any role; superusers get no
exception, membership decides), join their group and relay. A refused socket is accepted and then
closed, so the browser reads the reason as a close code instead of a failed handshake:

- ``4400`` — ``after`` is not a non-negative integer, or the client sent a frame that is not JSON text;
- ``4401`` — not signed in;
- ``4404`` — no such execution or run, *or* not a member of its project: one code for both, so a
  stranger cannot learn that an id exists. An open socket is closed with it too once its user leaves
  the project or is deactivated (checked every ``ACCESS_CHECK_SECONDS``, on events and when quiet);
- ``1000`` — the log is complete: sent right after ``{"type": "end", "last_seq": n}``.

A foreign ``Origin`` never reaches a consumer: ``AllowedHostsOriginValidator`` refuses the handshake.
``console.routing`` names the consumers and close codes through this package. Its modules:

- ``base`` — the close codes, the sign-in check, and ``LiveConsumer``: group joins, fast relay, access rechecks;
- ``execution_log`` — ``NodeExecutionLogConsumer`` and the per-process log watch;
- ``run_events`` — ``RunEventsConsumer``: a run's snapshot, its events, and the resync when none come.
"""

from console.consumers.base import CLOSE_BAD_REQUEST, CLOSE_NOT_FOUND, CLOSE_UNAUTHENTICATED
from console.consumers.execution_log import NodeExecutionLogConsumer
from console.consumers.run_events import RunEventsConsumer

__all__ = [
    "CLOSE_BAD_REQUEST",
    "CLOSE_NOT_FOUND",
    "CLOSE_UNAUTHENTICATED",
    "NodeExecutionLogConsumer",
    "RunEventsConsumer",
]
