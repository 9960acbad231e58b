"""A connection that drops under an agent call — reset, refused, a broken pipe — is a transient
``network`` error, retried like a timeout, whichever runner made the call."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphs.agents import AgentCall, AgentError, ClaudeRunner, OpenAIRunner
from graphs.agents.base import TRANSIENT_KINDS
from graphs.domain.manifest_nodes import RETRYABLE_KINDS

# The fake CLI records its call, and waits for its gates, in the test's folder.
pytestmark = pytest.mark.usefixtures("sandbox_writable")

FAKE_CLAUDE = Path(__file__).parent / "fake_claude.py"
FIXTURES = Path(__file__).parent / "fixtures" / "claude"


def _call(cwd: Path) -> AgentCall:
    return AgentCall(org_node="coder", prompt="Do it.", cwd=cwd, timeout=10.0)


@pytest.mark.parametrize("fixture", ["connection_reset.json", "connection_refused.json", "broken_pipe.json"])
def test_the_claude_cli_failing_on_a_dropped_connection_is_a_transient_network_error(
    monkeypatch, tmp_path, fixture
):
    monkeypatch.setenv("FAKE_CLAUDE_FIXTURE", str(FIXTURES / fixture))
    monkeypatch.setenv("FAKE_CLAUDE_RECORD", str(tmp_path / "record.json"))

    with pytest.raises(AgentError) as caught:
        ClaudeRunner(bin=str(FAKE_CLAUDE)).run(_call(tmp_path))

    assert (caught.value.kind, caught.value.transient) == ("network", True)


@pytest.fixture
def resetting_server() -> Iterator[str]:
    """A server that starts a streamed answer, then resets the connection (RST, not a clean close)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)

    def serve() -> None:
        try:
            connection, _ = listener.accept()
        except OSError:
            return
        with connection:
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                               b"Transfer-Encoding: chunked\r\n\r\n"
                               b"1d\r\ndata: {\"choices\": [{\"delta\": \r\n")
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    listener.close()
    thread.join(5)


def test_an_openai_stream_cut_by_a_connection_reset_is_a_transient_network_error(resetting_server, monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)

    with pytest.raises(AgentError) as caught:
        OpenAIRunner(base_url=resetting_server, model="m").run(_call(Path(".")))

    assert (caught.value.kind, caught.value.transient) == ("network", True)


def test_an_unwrapped_connection_error_from_the_socket_is_a_network_error(monkeypatch):
    def reset(*args, **kwargs):
        raise ConnectionResetError(104, "Connection reset by peer")

    monkeypatch.setattr("httpx.Client.stream", reset)

    with pytest.raises(AgentError) as caught:
        OpenAIRunner(base_url="http://127.0.0.1:9/v1", model="m").run(_call(Path(".")))

    assert (caught.value.kind, caught.value.transient) == ("network", True)


def test_a_retry_policy_may_name_exactly_the_agents_transient_kinds():
    assert set(RETRYABLE_KINDS) == TRANSIENT_KINDS
