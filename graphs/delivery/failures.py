"""Why a delivery failed, said to the lead who reads it: in words, naming settings and variables, never a
secret's value; and whether trying again later may help (a remote that did not answer) or not (a token the
remote refused, a branch that moved under the console)."""

from __future__ import annotations

from graphs.errors import WorkGraphError


class DeliveryFailed(WorkGraphError):
    """A delivery could not be carried out. ``transient``: the cause may pass (an unreachable remote, a
    timeout, a forge answering 5xx), so the delivery is tried again after a backoff."""

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient
