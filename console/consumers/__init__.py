"""WebSocket consumers: one execution's live log, one run's live events, and the person's inbox count.

Each authenticates with the session, authorises by project membership (any role; superusers get no
exception, membership decides), joins its groups and relays. A refused socket is accepted and then
closed, so the browser reads the reason as a close code instead of a failed handshake:

- ``4400`` — ``after`` or ``count`` is not a non-negative integer, ``activity`` is not a fingerprint of runs
  (hex digits), or the client sent a frame that is not JSON text;
- ``4401`` — not signed in;
- ``4404`` — no such execution or run, *or* not a member of its project: one code for both, so a
  stranger cannot learn that an id exists. An open socket is closed with it too once its user leaves
  the project or is deactivated (checked every ``ACCESS_CHECK_SECONDS``, on events and when quiet); the
  inbox socket, which belongs to no one project, only once its user is deactivated;
- ``1000`` — the log is complete: sent right after ``{"type": "end", "last_seq": n}``.

A foreign ``Origin`` never reaches a consumer: ``AllowedHostsOriginValidator`` refuses the handshake.
``console.routing`` names the consumers and close codes through this package. Its modules:

- ``base`` — the close codes, the sign-in check, and ``LiveConsumer``: group joins, fast relay, access rechecks;
- ``execution_log`` — ``NodeExecutionLogConsumer`` and the per-process log watch;
- ``run_events`` — ``RunEventsConsumer``: a run's snapshot, its events, and the resync when none come;
- ``inbox`` — ``InboxConsumer`` (``/ws/inbox/?count=<n>&activity=<fingerprint>``): ``{"type": "changed"}``
  whenever the person's inbox count is not the one their page shows — on the run events of their projects
  that may change an inbox, and checked every few seconds whatever comes. A list page (tasks, runs,
  dashboard, inbox) also gives the fingerprint of the person's runs it was rendered with, and hears
  ``{"type": "activity"}`` — at most once a second — for each event of their projects that changes what a
  list shows (a run's status, progress, nodes' statuses; never a log line), at once when the fingerprint is
  no longer the server's, and whenever a check every few seconds finds it moved. The page fetches the count
  (``/inbox/count/``) or itself again: the socket carries no count, no list and no words.
"""

from console.consumers.base import CLOSE_BAD_REQUEST, CLOSE_NOT_FOUND, CLOSE_UNAUTHENTICATED
from console.consumers.execution_log import NodeExecutionLogConsumer
from console.consumers.inbox import InboxConsumer
from console.consumers.run_events import RunEventsConsumer

__all__ = [
    "CLOSE_BAD_REQUEST",
    "CLOSE_NOT_FOUND",
    "CLOSE_UNAUTHENTICATED",
    "InboxConsumer",
    "NodeExecutionLogConsumer",
    "RunEventsConsumer",
]
