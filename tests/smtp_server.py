"""A real SMTP server for the email tests: aiosmtpd on a free loopback port, keeping what it receives.

Under ``CI=true`` a server that cannot start fails the test; elsewhere it is skipped.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message

import pytest

IN_CI = os.environ.get("CI", "").lower() == "true"


@dataclass
class Mailbox:
    host: str
    port: int
    messages: list[Message] = field(default_factory=list)

    async def handle_DATA(self, server, session, envelope):
        message = message_from_bytes(envelope.original_content or envelope.content)
        message["X-Envelope-To"] = ", ".join(envelope.rcpt_tos)
        self.messages.append(message)
        return "250 OK"

    def wait_for(self, count: int, *, timeout: float = 10.0) -> list[Message]:
        deadline = time.monotonic() + timeout
        while len(self.messages) < count:
            if time.monotonic() > deadline:
                pytest.fail(f"the SMTP server got {len(self.messages)} messages, not {count}, in {timeout} s")
            time.sleep(0.02)
        return list(self.messages)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def smtp_server() -> Iterator[Mailbox]:
    try:
        from aiosmtpd.controller import Controller

        mailbox = Mailbox(host="127.0.0.1", port=_free_port())
        controller = Controller(mailbox, hostname=mailbox.host, port=mailbox.port)
        controller.start()
    except Exception as error:  # the package missing, the port taken: the receiver is unavailable either way
        if IN_CI:
            pytest.fail(f"CI=true needs the SMTP server, which could not start: {error!r}")
        pytest.skip(f"the SMTP server could not start: {error!r}")
    try:
        yield mailbox
    finally:
        controller.stop()
