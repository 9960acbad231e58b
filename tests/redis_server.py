"""A ``redis-server`` of the test's own, on a free port, that the test can stop and start again.

The machine's Redis serves every test and session on it, so a test that restarts "the broker" restarts
this one instead. Like the machine's, it keeps nothing on disk: a restart loses every queued message,
which is the harder case for the engine (a restart that reloads its data loses less).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import redis

from tests.celery_worker import wait_until

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class RedisServer:
    port: int
    log_path: Path
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        argv = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        wait_until(self._answers, timeout=10, alive=self.process,
                   message=lambda: f"redis-server did not answer on port {self.port}:\n{self.log_path.read_text()}")

    def stop(self) -> None:
        """Kill the server at once, as a crash or a restarted container would: clients see resets."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None

    def _answers(self) -> bool:
        try:
            return bool(redis.Redis(port=self.port, socket_connect_timeout=0.5).ping())
        except redis.RedisError:
            return False


def redis_server_start(log_dir: Path) -> RedisServer:
    server = RedisServer(port=free_port(), log_path=log_dir / "redis-server.log")
    server.start()
    return server
